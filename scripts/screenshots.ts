// Regenerates docs/screenshots/*.png: the main console pages with demo data, in Debian's
// Chromium. `npm run screenshots` (builds the console first).
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startTestApp } from '../test/helpers/app.js';
import { createAdmin } from '../test/helpers/fixtures.js';
import { launchBrowser } from '../web/e2e/helpers/browser.js';
import { openNav, signIn } from '../web/e2e/helpers/console.js';
import { seed } from '../web/e2e/helpers/seed.js';

const OUT = path.resolve(import.meta.dirname, '../docs/screenshots');

const t = await startTestApp({ APP_TEST_PHONES: '+37060000000:123456', SMS_SIMULATOR_DELAY_MS: '50' });
const browser = await launchBrowser();
try {
  await mkdir(OUT, { recursive: true });
  const demo = await seed(t);
  const admin = await createAdmin(t);
  const page = await browser.page({ width: 1280, height: 860 });
  const shot = async (name: string) => {
    await page.getByText('Loading…').first().waitFor({ state: 'detached' });
    await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: true });
    process.stdout.write(`docs/screenshots/${name}.png\n`);
  };

  await page.goto(`${t.url}/dashboard/`);
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  await shot('sign-in');
  await signIn(page, `${t.url}/dashboard/`, demo.partner.email, demo.partner.password, 'Overview');
  await page.getByRole('figure').first().waitFor();
  await shot('overview');
  await openNav(page, 'API keys');
  await page.getByLabel('Name', { exact: true }).fill('Till 2, Kaunas');
  await page.getByRole('button', { name: 'Create API key' }).click();
  await page.getByTestId('api-secret').waitFor();
  await shot('api-keys');
  await openNav(page, 'Card programmes');
  await page.getByLabel('Title (English)').fill('Coffee card');
  await page.getByLabel('Background colour').fill('blue');
  await page.getByRole('button', { name: 'Create card programme' }).click();
  await page.getByRole('alert').waitFor();
  await shot('card-programme-errors');
  for (const [name, file] of [['Offers', 'offers'], ['Coupons', 'coupons'], ['Transactions', 'transactions'], ['SMS', 'sms'], ['Imports', 'imports'], ['Messages', 'messages']] as const) {
    await openNav(page, name);
    await shot(file);
  }
  // Products: a YML feed imported on the Imports page first (the test fixture), then the list
  // and one product's view.
  await openNav(page, 'Imports');
  await page.getByLabel('Feed file').setInputFiles(path.resolve(import.meta.dirname, '../test/fixtures/feeds/yml.xml'));
  await page.getByRole('button', { name: 'Upload and import' }).click();
  await page.getByRole('row').filter({ hasText: 'yml.xml' }).getByText('Done').waitFor({ timeout: 20_000 });
  await openNav(page, 'Products');
  await shot('products');
  await page.getByRole('link', { name: 'Išmanusis telefonas X' }).click();
  await page.getByRole('heading', { level: 1, name: 'Išmanusis telefonas X' }).waitFor();
  await shot('product');
  await page.setViewportSize({ width: 375, height: 760 });
  await openNav(page, 'Overview');
  await page.getByRole('figure').first().waitFor();
  await shot('overview-375');

  await page.setViewportSize({ width: 1280, height: 860 });
  await signIn(page, `${t.url}/dashboard/admin/`, admin.email, admin.password, 'Partners');
  await shot('admin-partners');
  await openNav(page, 'Statistics');
  await page.getByRole('figure').first().waitFor();
  await shot('admin-statistics');
} finally {
  await browser.close();
  await t.close();
}
