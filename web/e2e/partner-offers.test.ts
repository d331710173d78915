// Offers, Coupons and Imports in a real browser at 375 px, against the real app: an offer is
// refused with the API's field error next to the field, then created; a customer claims it
// over HTTP and its coupon is on the Coupons page; a feed uploaded on Imports shows its live
// progress (the `import.progress` events on the partner's private channel) until done; the
// offer is edited and deleted, its coupon stays.
// axe-core finds no serious or critical violation on each page with its data on it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { DemoCredentials } from '../../src/modules/demo/demo.service.js';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';
import { bearer, request } from '../../test/helpers/http.js';
import { launchBrowser, type Browser } from './helpers/browser.js';
import { fieldError, openNav, signIn } from './helpers/console.js';
import { checkPage } from './helpers/pages.js';
import { seed } from './helpers/seed.js';

const FEED = `<?xml version="1.0" encoding="UTF-8"?>
<products>
  <product><id>A-1</id><name>Espresso beans 1 kg</name><price>19.99</price></product>
  <product><id>A-2</id><name>Oat milk</name><price>2.49</price><sale_price>1.99</sale_price></product>
  <product><id>A-3</id><price>5</price></product>
</products>
`;

describe('partner console: offers, coupons, imports (375 px)', () => {
  let t: TestApp;
  let demo: DemoCredentials;
  let browser: Browser;
  let page: Page;

  before(async () => {
    t = await startTestApp({ APP_TEST_PHONES: '+37060000000:123456', SMS_SIMULATOR_DELAY_MS: '50' });
    demo = await seed(t);
    browser = await launchBrowser();
    page = await browser.page({ width: 375, height: 800 });
    await signIn(page, `${t.url}/dashboard/`, demo.partner.email, demo.partner.password, 'Overview');
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('shows the API’s field error next to the field, then creates the offer', async () => {
    await openNav(page, 'Offers');
    await page.getByLabel('Title', { exact: true }).fill('Free croissant');
    await page.getByLabel('Discount type').selectOption('percent');
    await page.getByLabel('Discount value').fill('150');
    await page.getByRole('button', { name: 'Create offer' }).click();
    await page.locator('[aria-invalid="true"]').first().waitFor();
    const message = await fieldError(page, 'Discount value');
    assert.notEqual(message, '');
    await checkPage(page, 'Offers with a field error at 375');

    await page.getByLabel('Discount type').selectOption('gift');
    await page.getByLabel('Discount value').fill('');
    await page.getByRole('group', { name: 'Shops' }).getByLabel(demo.shop.name).check();
    await page.getByRole('button', { name: 'Create offer' }).click();
    await page.getByRole('status').filter({ hasText: 'Offer “Free croissant” created.' }).waitFor();
    await page.getByRole('cell', { name: 'Free croissant' }).waitFor();
    await checkPage(page, 'Offers at 375');
  });

  it('lists the coupon a customer got by claiming the offer', async () => {
    const partnerLogin = await request(t.url, 'POST', '/en/partners/auth/login', { json: { email: demo.partner.email, password: demo.partner.password } });
    const offers = await request(t.url, 'GET', '/en/partners/offers?per_page=100', { headers: bearer(partnerLogin.body.data.token) });
    const offer = (offers.body.data as Array<{ id: number; title: string; shop_ids: number[] }>).find((o) => o.title === 'Free croissant');
    assert.ok(offer, offers.text);
    assert.deepEqual(offer.shop_ids, [demo.shop.id]);
    assert.equal((await request(t.url, 'POST', '/en/app/auth/otp/request', { json: { phone: '+37060000000' } })).status, 200);
    const login = await request(t.url, 'POST', '/en/app/auth/otp/verify', { json: { phone: '+37060000000', code: '123456' } });
    assert.equal(login.status, 200, login.text);
    const claim = await request(t.url, 'POST', `/en/shop/offers/${offer.id}/claim`, { headers: bearer(login.body.data.token) });
    assert.equal(claim.status, 201, claim.text);
    const code: string = claim.body.data.coupon.code;

    await openNav(page, 'Coupons');
    await page.getByLabel('Offer', { exact: true }).selectOption(String(offer.id));
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/offer_id=/);
    const row = page.getByRole('row').filter({ hasText: code });
    await row.waitFor();
    assert.match(await row.innerText(), /Free croissant/);
    assert.match(await row.innerText(), /Active/);
    // The row is in the unfiltered list too: wait for the filtered answer to replace it (the
    // URL changes before it arrives), then there are the header and that offer's one coupon.
    let rows = 0;
    for (const until = Date.now() + 10_000; Date.now() < until; await page.waitForTimeout(50)) {
      rows = await page.getByRole('row').count();
      if (rows === 2) break;
    }
    assert.equal(rows, 2, 'the header and the one coupon of that offer');
    await checkPage(page, 'Coupons at 375');
  });

  it('uploads a feed and shows its progress live until done, then in the history', async () => {
    const frames: string[] = [];
    page.on('websocket', (ws) => ws.on('framereceived', (f) => frames.push(String(f.payload))));
    await openNav(page, 'Imports');
    await page.getByLabel('Feed file').setInputFiles({ name: 'catalog.xml', mimeType: 'application/xml', buffer: Buffer.from(FEED) });
    await page.getByRole('button', { name: 'Upload and import' }).click();
    await page.getByText('Live: updates arrive as the import runs.').waitFor();
    const progress = page.getByRole('region', { name: 'Progress' });
    await progress.getByText('Done').waitFor({ timeout: 20_000 });
    assert.match(await progress.innerText(), /3 items read/);
    const events = frames.map((f) => JSON.parse(f) as { event: string; channel?: string; data?: string }).filter((f) => f.event === 'import.progress');
    assert.equal(events[0]?.channel, `private-partner.${demo.partner.id}`);
    assert.ok(events.some((e) => (JSON.parse(e.data!) as { status: string }).status === 'completed'), 'the completed event arrived over the socket');
    const row = page.getByRole('row').filter({ hasText: 'catalog.xml' });
    await row.getByText('Done').waitFor();
    assert.match(await row.innerText(), /3 read, 2 new, 0 updated, 1 skipped/);
    await checkPage(page, 'Imports at 375');
  });

  it('edits the offer and deletes it; its coupon stays', async () => {
    await openNav(page, 'Offers');
    const row = page.getByRole('row').filter({ hasText: 'Free croissant' });
    await row.getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('heading', { name: 'Edit offer “Free croissant”' }).waitFor();
    assert.equal(await page.getByLabel('Discount type').inputValue(), 'gift');
    assert.equal(await page.getByRole('group', { name: 'Shops' }).getByLabel(demo.shop.name).isChecked(), true);
    await page.getByLabel('Title', { exact: true }).fill('Free croissant, large');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Offer “Free croissant, large” saved.' }).waitFor();
    const edited = page.getByRole('row').filter({ hasText: 'Free croissant, large' });
    await edited.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('status').filter({ hasText: 'Offer “Free croissant, large” deleted.' }).waitFor();
    // Gone once the list has been read again (a wait, not a count: the reload may not have
    // started when the notice shows).
    await page.getByRole('row').filter({ hasText: 'Free croissant' }).waitFor({ state: 'detached' });
    await openNav(page, 'Coupons');
    await page.getByRole('row').filter({ hasText: 'Free croissant' }).waitFor();
  });

  it('produced no script errors, CSP violations or failed requests', () => {
    assert.deepEqual(browser.problems, []);
  });
});
