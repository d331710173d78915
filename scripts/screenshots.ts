// Regenerates docs/screenshots/*.png: the main console pages with demo data, in Debian's
// Chromium. `npm run screenshots` (builds the console first).
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startTestApp } from '../test/helpers/app.js';
import { createAdmin } from '../test/helpers/fixtures.js';
import { apiHeaders, bearer, request } from '../test/helpers/http.js';
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
  // Campaigns: one made on the form with a product from that catalogue, the Preview panel's
  // answer for a basket of it; then a purchase of that basket and its transaction's view.
  await openNav(page, 'Campaigns');
  const campaignForm = page.getByRole('form', { name: 'Create campaign' });
  await campaignForm.getByLabel('Name', { exact: true }).fill('Double points on phones');
  await campaignForm.getByLabel('Effect value').fill('2');
  await campaignForm.getByLabel('Find a product', { exact: true }).fill('telefonas');
  await campaignForm.getByRole('button', { name: 'Find', exact: true }).click();
  await campaignForm.getByRole('button', { name: 'Add Išmanusis telefonas X' }).click();
  await campaignForm.getByLabel('Points budget').fill('5000');
  await page.getByRole('button', { name: 'Create campaign' }).click();
  await page.getByRole('status').filter({ hasText: 'created' }).waitFor();
  const preview = page.getByRole('region', { name: 'Preview', exact: true });
  await preview.getByLabel('Find a product for the basket').fill('telefonas');
  await preview.getByRole('button', { name: 'Find', exact: true }).click();
  await preview.getByRole('button', { name: 'Add Išmanusis telefonas X to the basket' }).click();
  await preview.getByRole('button', { name: 'Preview', exact: true }).click();
  await page.getByRole('region', { name: 'Preview result' }).waitFor();
  await shot('campaigns');
  const partnerToken = (await request(t.url, 'POST', '/en/partners/auth/login', { json: { email: demo.partner.email, password: demo.partner.password } })).body.data.token as string;
  const customer = (await request(t.url, 'GET', '/en/partners/customers', { headers: bearer(partnerToken) })).body.data[0] as { cards: Array<{ id: number; partner_card_id: number }> };
  const phone = (await request(t.url, 'GET', '/en/shop/products?q=telefonas', { headers: bearer(partnerToken) })).body.data[0] as { id: number };
  const sale = await request(t.url, 'POST', '/en/shop/transactions/create', {
    headers: apiHeaders(demo.api_key),
    json: {
      card_id: customer.cards.find((c) => c.partner_card_id === demo.partner_card.id)!.id,
      shop_id: demo.shop.id,
      receipt_number: 'R-3',
      items: [{ product_id: phone.id, quantity: 2, amount: 79.8 }, { name: 'Dėklas', quantity: 1, amount: 9.9 }],
    },
  });
  await request(t.url, 'POST', `/en/shop/transactions/${sale.body.data.id}/return`, { headers: apiHeaders(demo.api_key), json: { items: [{ line_id: '1', quantity: 1 }], reason: 'Returned one phone' } });
  await page.goto(`${t.url}/dashboard/transactions/${sale.body.data.id}`);
  await page.getByRole('heading', { level: 1, name: `Transaction ${sale.body.data.id}` }).waitFor();
  await page.getByRole('region', { name: 'Returns' }).getByText('Returned one phone').waitFor();
  await shot('transaction');
  // Tiers: two on the demo programme (over HTTP), the programme's page with them, the customer
  // view once the background re-evaluation has given the card its tier.
  for (const tier of [
    { name: { en: 'Silver', lt: 'Sidabrinis' }, threshold: 50, earn_multiplier: 1.25, color: '#A8A9AD' },
    { name: { en: 'Gold', lt: 'Auksinis' }, threshold: 200, earn_multiplier: 1.5, color: '#D4AF37', benefits: { en: 'Free coffee on Fridays', lt: 'Nemokama kava penktadieniais' } },
  ]) {
    await request(t.url, 'POST', `/en/partners/cards/${demo.partner_card.id}/tiers`, { headers: bearer(partnerToken), json: tier });
  }
  await page.goto(`${t.url}/dashboard/card-programmes/${demo.partner_card.id}`);
  await page.getByRole('table', { name: 'Tiers of this programme' }).getByText('Gold').waitFor();
  await shot('card-programme-tiers');
  await openNav(page, 'Customers');
  const holder = page.getByRole('row').filter({ has: page.locator('.tier-badge svg') }).first();
  for (let i = 0; i < 50 && (await holder.count()) === 0; i++) {
    await page.waitForTimeout(200);
    await page.reload();
  }
  await holder.getByRole('button', { name: 'View' }).click();
  await page.getByRole('table', { name: /^Tier history of card/ }).locator('tbody tr').first().waitFor();
  await shot('customer');
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
