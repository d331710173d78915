// The page-by-page checks, shared by the pages-*.test.ts files (one browser and one app per
// console): every page of a console with data on it, axe-core finds no serious or critical
// violation and nothing scrolls sideways at the given width.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { DemoCredentials } from '../../../src/modules/demo/demo.service.js';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { createAdmin, type AdminFixture } from '../../../test/helpers/fixtures.js';
import { launchBrowser, type Browser } from './browser.js';
import { seed } from './seed.js';
import { axeViolations, horizontalOverflow, openNav, signIn } from './console.js';

export const PARTNER_PAGES = ['Overview', 'API keys', 'Shops', 'Card programmes', 'Games', 'Offers', 'Campaigns', 'Coupons', 'Customers', 'Transactions', 'SMS', 'Webhooks', 'Wallet', 'Products', 'Imports', 'Messages'];
export const ADMIN_PAGES = ['Partners', 'SMS accounts', 'Commission', 'Statistics', 'Messages'];

export async function checkPage(page: Page, where: string) {
  assert.deepEqual(await axeViolations(page), [], `axe on ${where}`);
  assert.equal(await horizontalOverflow(page), 0, `sideways scroll on ${where}`);
}

export interface Seeded {
  t: TestApp;
  demo: DemoCredentials;
  admin: AdminFixture;
  browser: Browser;
}

/** An app with the demo partner and some data, an admin, and a browser; closed after the suite. */
export function seededApp(): Seeded {
  const s = {} as Seeded;
  before(async () => {
    s.t = await startTestApp({ APP_TEST_PHONES: '+37060000000:123456', SMS_SIMULATOR_DELAY_MS: '50' });
    s.demo = await seed(s.t);
    s.admin = await createAdmin(s.t);
    s.browser = await launchBrowser();
  });
  after(async () => {
    await s.browser?.close();
    await s.t?.close();
  });
  return s;
}

export function partnerPagesAt(width: number, pages: string[] = PARTNER_PAGES, extra = true) {
  describe(`partner console at ${width} px: ${pages.join(', ')}`, () => {
    const s = seededApp();
    it('has no serious or critical axe violation and no sideways scroll on any page', async () => {
      const { t, demo, browser } = s;
      const page = await browser.page({ width, height: 800 });
      await page.goto(`${t.url}/dashboard/`);
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      await checkPage(page, `sign-in at ${width}`);
      await signIn(page, `${t.url}/dashboard/`, demo.partner.email, demo.partner.password, 'Overview');
      for (const name of pages) {
        await openNav(page, name);
        if (name === 'Overview') await page.getByRole('figure').first().waitFor();
        await checkPage(page, `${name} at ${width}`);
      }
      if (!extra) return;
      await page.goto(`${t.url}/dashboard/card-programmes/${demo.partner_card.id}`);
      await page.getByRole('heading', { level: 1, name: 'Demo Shop loyalty card' }).waitFor();
      await checkPage(page, `a card programme at ${width}`);
    });
    it('produced no script errors, CSP violations or failed requests', () => {
      assert.deepEqual(s.browser.problems, []);
      assert.deepEqual(s.browser.httpErrors, []);
    });
  });
}

export function adminPagesAt(widths: number[]) {
  describe(`admin console at ${widths.join(' and ')} px`, () => {
    const s = seededApp();
    for (const width of widths) {
      it(`has no serious or critical axe violation and no sideways scroll on any page at ${width} px`, async () => {
        const { t, demo, admin, browser } = s;
        const page = await browser.context.newPage();
        await page.setViewportSize({ width, height: 800 });
        await page.goto(`${t.url}/dashboard/admin/`);
        await page.getByRole('button', { name: 'Sign in' }).waitFor();
        await checkPage(page, `admin sign-in at ${width}`);
        await signIn(page, `${t.url}/dashboard/admin/`, admin.email, admin.password, 'Partners');
        for (const name of ADMIN_PAGES) {
          await openNav(page, name);
          if (name === 'Commission' || name === 'Messages') {
            await page.getByLabel('Partner', { exact: true }).selectOption(String(demo.partner.id));
            await page.getByText('Loading…').first().waitFor({ state: 'detached' });
          }
          if (name === 'SMS accounts') await page.getByRole('button', { name: 'Manage' }).click();
          if (name === 'Statistics') await page.getByRole('figure').first().waitFor();
          await checkPage(page, `admin ${name} at ${width}`);
        }
        await page.close();
      });
    }
    it('produced no script errors, CSP violations or failed requests', () => {
      assert.deepEqual(s.browser.problems, []);
      assert.deepEqual(s.browser.httpErrors, []);
    });
  });
}
