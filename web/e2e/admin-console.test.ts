// The admin console in a real browser: an administrator creates a partner (seeing the
// API's field errors first), and that partner signs in to the partner console.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';
import { createAdmin, type AdminFixture } from '../../test/helpers/fixtures.js';
import { bearer, request } from '../../test/helpers/http.js';
import { launchBrowser, type Browser } from './helpers/browser.js';
import { fieldError, signIn } from './helpers/console.js';

describe('admin console', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let admin: AdminFixture;

  before(async () => {
    t = await startTestApp();
    admin = await createAdmin(t);
    browser = await launchBrowser();
    page = await browser.page();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('refuses a wrong password with the API’s message', async () => {
    await page.goto(`${t.url}/dashboard/admin/`);
    await page.getByLabel('Email').fill(admin.email);
    await page.getByLabel('Password').fill('wrong-password-1');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const expected = await request(t.url, 'POST', '/en/admin/auth/login', { json: { email: admin.email, password: 'wrong-password-1' } });
    await page.getByRole('alert').filter({ hasText: expected.body.message }).waitFor();
  });

  it('creates a partner who then signs in to the partner console', async () => {
    await signIn(page, `${t.url}/dashboard/admin/`, admin.email, admin.password, 'Partners');
    const email = `bakery-${Date.now()}@example.com`;
    await page.getByLabel('Name', { exact: true }).fill('Kepykla Riestainis');
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill('short');
    await page.getByRole('button', { name: 'Create partner' }).click();
    await page.getByRole('alert').waitFor();
    const expected = await request(t.url, 'POST', '/en/admin/partners', { headers: bearer(admin.token), json: { name: 'x', email: 'x@example.com', password: 'short' } });
    assert.equal(expected.status, 422);
    assert.equal(await fieldError(page, 'Password'), expected.body.errors.password.join(' '));

    await page.getByLabel('Password', { exact: true }).fill('riestainis-2026');
    await page.getByRole('button', { name: 'Create partner' }).click();
    await page.getByRole('status').filter({ hasText: 'Kepykla Riestainis' }).waitFor();
    await page.getByRole('cell', { name: email }).waitFor();

    const partnerPage = await browser.context.newPage();
    await signIn(partnerPage, `${t.url}/dashboard/`, email, 'riestainis-2026', 'Overview');
    assert.equal(await partnerPage.getByText('Kepykla Riestainis').first().isVisible(), true);
    await partnerPage.close();
  });

  it('produced no script errors, CSP violations or failed requests', () => {
    assert.deepEqual(browser.problems, []);
  });
});
