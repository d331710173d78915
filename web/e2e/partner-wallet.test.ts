// The Wallet page (DESIGN.md §15, issue 25) in a real browser at 375 px against the real app:
// nothing configured at first; an Apple configuration made by the test (its own CA, WWDR and
// Pass Type ID certificate) is refused with a key of another certificate — the API's 422 on
// the Private key field — then saved and shown configured without any secret; a Google
// service-account key file is saved and shown by its e-mail. axe-clean with its data.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { DemoCredentials } from '../../src/modules/demo/demo.service.js';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';
import { makeWalletCerts, type WalletCerts } from '../../test/helpers/wallet.js';
import { launchBrowser, type Browser } from './helpers/browser.js';
import { fieldError, openNav, signIn } from './helpers/console.js';
import { checkPage } from './helpers/pages.js';
import { seed } from './helpers/seed.js';

describe('partner console: Wallet (375 px)', () => {
  let t: TestApp;
  let demo: DemoCredentials;
  let browser: Browser;
  let page: Page;
  let certs: WalletCerts;

  before(async () => {
    certs = makeWalletCerts();
    t = await startTestApp({
      APP_TEST_PHONES: '+37060000000:123456',
      LOYALTY_SECRETS_KEY: randomBytes(32).toString('hex'),
      LOYALTY_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'wallet-e2e-')),
    });
    demo = await seed(t);
    browser = await launchBrowser();
    page = await browser.page({ width: 375, height: 800 });
    await signIn(page, `${t.url}/dashboard/`, demo.partner.email, demo.partner.password, 'Overview');
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('saves an Apple and a Google configuration made by the test and shows them configured, without secrets', async () => {
    await openNav(page, 'Wallet');
    const apple = page.getByRole('region', { name: 'Apple Wallet' });
    const google = page.getByRole('region', { name: 'Google Wallet' });
    await apple.getByText('Not configured').waitFor();
    await google.getByText('Not configured').waitFor();
    await checkPage(page, 'Wallet, nothing configured, at 375');

    const form = page.getByRole('form', { name: 'Apple Wallet' });
    await form.getByLabel('Pass type identifier').fill(certs.passTypeIdentifier);
    await form.getByLabel('Team identifier').fill(certs.teamIdentifier);
    await form.getByLabel('Pass Type ID certificate', { exact: true }).fill(certs.certificate);
    await form.getByLabel('Private key', { exact: true }).fill(certs.otherKey);
    await form.getByLabel('Apple WWDR certificate', { exact: true }).fill(certs.wwdr);
    await form.getByRole('button', { name: 'Save Apple Wallet' }).click();
    await form.getByLabel('Private key', { exact: true }).and(page.locator('[aria-invalid="true"]')).waitFor();
    assert.match(await fieldError(page, 'Private key'), /Does not belong to the certificate/);
    await checkPage(page, 'Wallet with a refused key at 375');

    await form.getByLabel('Private key', { exact: true }).fill(certs.privateKey);
    await form.getByRole('button', { name: 'Save Apple Wallet' }).click();
    await apple.getByText('Configured', { exact: true }).waitFor();
    const shown = await page.getByTestId('apple-config').innerText();
    assert.match(shown, /pass\.test\.loyalty/);
    assert.match(shown, /TEAM123456/);

    const gform = page.getByRole('form', { name: 'Google Wallet' });
    await gform.getByLabel('Issuer id').fill('3388000000012345678');
    await gform.getByLabel('Service account key (JSON)', { exact: true }).fill(JSON.stringify(certs.serviceAccount));
    await gform.getByRole('button', { name: 'Save Google Wallet' }).click();
    await google.getByText('Configured', { exact: true }).waitFor();
    assert.match(await page.getByTestId('google-config').innerText(), /wallet@test-project\.iam\.gserviceaccount\.com/);

    // No key, passphrase or key file is on the page after saving.
    const html = await page.content();
    assert.doesNotMatch(html, /PRIVATE KEY/);
    await checkPage(page, 'Wallet configured at 375');
  });

  it('produced no script errors, CSP violations or failed requests other than the refused key', () => {
    assert.deepEqual(browser.problems, []);
    assert.deepEqual(
      browser.httpErrors.filter((e) => !String(e).includes('/partners/wallet/apple')),
      [],
    );
  });
});
