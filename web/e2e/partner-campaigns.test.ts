// Campaigns, the Preview panel and transaction details in a real browser at 375 px, against
// the real app (DESIGN.md §12 "Console", issue 22): a small feed is imported so the catalogue
// has products; a campaign is refused with the API's field error next to its field and in
// the summary, then created through the form with a product picked from the catalogue and
// a budget, and listed as running with its budget left; the Preview panel builds a basket
// from the catalogue and shows the campaign's breakdown row; a purchase with that basket and
// a partial return (over HTTP, as a till would) show on the transaction's detail view with
// its lines, breakdown and return; the campaign is edited (the form shows what was stored)
// and paused; the customer spends every point and returns the rest, and Customers shows the
// card's points debt. axe-core finds no serious or critical violation on each page with its data.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { DemoCredentials } from '../../src/modules/demo/demo.service.js';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';
import { apiHeaders, bearer, request } from '../../test/helpers/http.js';
import { launchBrowser, type Browser } from './helpers/browser.js';
import { fieldError, openNav, signIn } from './helpers/console.js';
import { checkPage } from './helpers/pages.js';
import { seed } from './helpers/seed.js';

const FEED = `<?xml version="1.0" encoding="UTF-8"?>
<products>
  <product><id>C-1</id><name>Espresso beans 1 kg</name><price>19.99</price></product>
  <product><id>C-2</id><name>Oat milk</name><price>2.49</price></product>
</products>
`;
const ESPRESSO = 'Espresso beans 1 kg';

describe('partner console: campaigns, preview, transaction details (375 px)', () => {
  let t: TestApp;
  let demo: DemoCredentials;
  let browser: Browser;
  let page: Page;
  let token = '';

  before(async () => {
    t = await startTestApp({ APP_TEST_PHONES: '+37060000000:123456', SMS_SIMULATOR_DELAY_MS: '50' });
    demo = await seed(t);
    browser = await launchBrowser();
    page = await browser.page({ width: 375, height: 800 });
    const login = await request(t.url, 'POST', '/en/partners/auth/login', { json: { email: demo.partner.email, password: demo.partner.password } });
    assert.equal(login.status, 200, login.text);
    token = login.body.data.token;
    await signIn(page, `${t.url}/dashboard/`, demo.partner.email, demo.partner.password, 'Overview');
    await openNav(page, 'Imports');
    await page.getByLabel('Feed file').setInputFiles({ name: 'coffee.xml', mimeType: 'application/xml', buffer: Buffer.from(FEED) });
    await page.getByRole('button', { name: 'Upload and import' }).click();
    await page.getByRole('row').filter({ hasText: 'coffee.xml' }).getByText('Done').waitFor({ timeout: 20_000 });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('shows the API’s field error next to its field, then creates the campaign', async () => {
    await openNav(page, 'Campaigns');
    const form = page.getByRole('form', { name: 'Create campaign' });
    await form.getByLabel('Name', { exact: true }).fill('Double coffee');
    await form.getByLabel('Card programme').selectOption(String(demo.partner_card.id));
    await form.getByLabel('Effect type').selectOption('multiplier');
    await form.getByLabel('Effect value').fill('20');
    await form.getByLabel('Find a product', { exact: true }).fill('Espresso');
    await form.getByRole('button', { name: 'Find', exact: true }).click();
    await form.getByRole('button', { name: `Add ${ESPRESSO}` }).click();
    await form.getByRole('list', { name: 'Chosen products' }).getByRole('listitem').filter({ hasText: ESPRESSO }).waitFor();
    await form.getByLabel('Points budget').fill('1000');
    // An item of a list box (tier_ids.0) is shown on the box itself.
    await form.getByLabel('Tier IDs').fill('gold');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await form.getByLabel('Tier IDs').and(page.locator('[aria-invalid="true"]')).waitFor();
    assert.notEqual(await fieldError(page, 'Tier IDs'), '');
    await form.getByLabel('Tier IDs').fill('');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await form.getByLabel('Effect value').and(page.locator('[aria-invalid="true"]')).waitFor();
    assert.notEqual(await fieldError(page, 'Effect value'), '');
    const summary = page.getByRole('alert').filter({ hasText: 'There is a problem' });
    assert.match(await summary.innerText(), /Effect value/, 'the summary links the field by its label');
    await checkPage(page, 'Campaigns with a field error at 375');

    await form.getByLabel('Effect value').fill('2');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.getByRole('status').filter({ hasText: 'Campaign “Double coffee” created.' }).waitFor();
    const row = page.getByRole('row').filter({ hasText: 'Double coffee' });
    await row.getByText('Running').waitFor();
    assert.match(await row.innerText(), /1,000 \/ 1,000/, 'budget left of the budget');
    assert.match(await row.innerText(), /× 2/);
    await checkPage(page, 'Campaigns at 375');

    const stored = await request(t.url, 'GET', '/en/partners/campaigns?per_page=100', { headers: bearer(token) });
    const c = (stored.body.data as Array<{ name: string; conditions: { product_ids: number[] }; effect: { type: string; value: number }; limits: { points_budget: number | null }; schedule: { time_zone: string } }>).find(
      (x) => x.name === 'Double coffee',
    );
    assert.ok(c, stored.text);
    assert.equal(c.conditions.product_ids.length, 1);
    assert.deepEqual(c.effect, { type: 'multiplier', value: 2 });
    assert.equal(c.limits.points_budget, 1000);
    assert.equal(c.schedule.time_zone, 'Europe/Vilnius');
  });

  it('previews a basket built from the catalogue: points, the campaign’s breakdown row, the skipped', async () => {
    const panel = page.getByRole('region', { name: 'Preview', exact: true });
    await panel.getByLabel('Programme', { exact: true }).selectOption(String(demo.partner_card.id));
    await panel.getByLabel('Shop', { exact: true }).selectOption(String(demo.shop.id));
    await panel.getByLabel('Find a product for the basket').fill('Espresso');
    await panel.getByRole('button', { name: 'Find', exact: true }).click();
    await panel.getByRole('button', { name: `Add ${ESPRESSO} to the basket` }).click();
    await panel.getByLabel(`Quantity of ${ESPRESSO}`).fill('2');
    assert.equal(await panel.getByLabel(`Amount of ${ESPRESSO} (EUR)`).inputValue(), '19.99', 'the line starts at the catalogue price');
    await panel.getByLabel(`Amount of ${ESPRESSO} (EUR)`).fill('39.98');
    await panel.getByLabel('Find a product for the basket').fill('Oat');
    await panel.getByRole('button', { name: 'Find', exact: true }).click();
    await panel.getByRole('button', { name: 'Add Oat milk to the basket' }).click();
    await panel.getByRole('button', { name: 'Preview', exact: true }).click();
    const result = page.getByRole('region', { name: 'Preview result' });
    await result.waitFor();
    const campaignRow = result.getByRole('row').filter({ hasText: 'Double coffee' });
    await campaignRow.waitFor();
    const cells = await campaignRow.locator('td').allInnerTexts();
    assert.equal(cells[0], 'Campaign');
    assert.ok(Number(cells[2]!.replace(/,/g, '')) > 0, cells.join(' | '));
    assert.equal(cells[3], `1 (${ESPRESSO})`, 'the campaign sits on the espresso line only');
    const base = await result.getByRole('row').filter({ hasText: 'Base' }).locator('td').allInnerTexts();
    assert.equal(base[3], `1 (${ESPRESSO}), 2 (Oat milk)`);
    const points = Number((await result.locator('dd').first().innerText()).replace(/,/g, ''));
    assert.equal(points, Number(base[2]!.replace(/,/g, '')) + Number(cells[2]!.replace(/,/g, '')), 'points = the breakdown’s sum');
    await result.getByRole('region', { name: 'Campaigns not applied' }).getByText('None.').waitFor();
    await checkPage(page, 'Campaigns with a preview at 375');

    // Without the espresso the campaign does not apply, and the panel says why.
    await panel.getByRole('button', { name: `Remove ${ESPRESSO}` }).click();
    await panel.getByRole('button', { name: 'Preview', exact: true }).click();
    const skipped = result.getByRole('region', { name: 'Campaigns not applied' }).getByRole('row').filter({ hasText: 'Double coffee' });
    await skipped.waitFor();
    assert.equal((await skipped.locator('td').allInnerTexts())[1], 'Basket does not meet its conditions');
    await result.getByRole('region', { name: 'Breakdown' }).getByRole('row').filter({ hasText: 'Double coffee' }).waitFor({ state: 'detached' });
  });

  it('opens a transaction: its lines, breakdown and return', async () => {
    const products = await request(t.url, 'GET', '/en/shop/products?q=Espresso', { headers: bearer(token) });
    const productId: number = products.body.data[0].id;
    const customers = await request(t.url, 'GET', '/en/partners/customers', { headers: bearer(token) });
    const cardId: number = customers.body.data[0].cards.find((k: { partner_card_id: number }) => k.partner_card_id === demo.partner_card.id).id;
    const api = apiHeaders(demo.api_key);
    const sale = await request(t.url, 'POST', '/en/shop/transactions/create', {
      headers: api,
      json: { card_id: cardId, shop_id: demo.shop.id, receipt_number: 'R-CAMPAIGN', items: [{ product_id: productId, quantity: 3, amount: 59.97 }, { name: 'Bag', quantity: 1, amount: 0.1 }] },
    });
    assert.equal(sale.status, 201, sale.text);
    const saleId: number = sale.body.data.id;
    assert.ok(saleId, sale.text);
    const ret = await request(t.url, 'POST', `/en/shop/transactions/${saleId}/return`, { headers: api, json: { items: [{ line_id: '1', quantity: 1 }], reason: 'Broken bag' } });
    assert.equal(ret.status, 201, ret.text);

    await openNav(page, 'Transactions');
    await page.getByRole('link', { name: `Transaction ${saleId}`, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: `Transaction ${saleId}` }).waitFor();
    const lines = page.getByRole('region', { name: 'Lines' });
    await lines.getByRole('row').filter({ hasText: ESPRESSO }).waitFor();
    const espresso = await lines.getByRole('row').filter({ hasText: ESPRESSO }).locator('td').allInnerTexts();
    assert.equal(espresso[0], '1');
    assert.equal(espresso[3], '3', 'quantity');
    assert.equal(espresso[6], '1', 'returned quantity');
    await lines.getByRole('row').filter({ hasText: 'Bag' }).waitFor();
    const breakdown = page.getByRole('region', { name: 'Breakdown' });
    await breakdown.getByRole('row').filter({ hasText: 'Double coffee' }).waitFor();
    const row = await breakdown.getByRole('row').filter({ hasText: 'Double coffee' }).locator('td').allInnerTexts();
    assert.equal(row[3], `1 (${ESPRESSO})`);
    const returns = page.getByRole('region', { name: 'Returns' });
    const retRow = returns.getByRole('row').filter({ hasText: 'Broken bag' });
    await retRow.waitFor();
    assert.match(await retRow.innerText(), /-\d/, 'the return took points back');
    await checkPage(page, 'a transaction at 375');
  });

  it('edits the campaign (the form shows what was stored) and pauses it', async () => {
    await openNav(page, 'Campaigns');
    const row = page.getByRole('row').filter({ hasText: 'Double coffee' });
    await row.getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: 'Edit campaign “Double coffee”' });
    await form.waitFor();
    await form.getByRole('list', { name: 'Chosen products' }).getByRole('listitem').filter({ hasText: ESPRESSO }).waitFor();
    assert.equal(await form.getByLabel('Effect value').inputValue(), '2');
    assert.equal(await form.getByLabel('Points budget').inputValue(), '1000');
    await form.getByLabel('Name', { exact: true }).fill('Double coffee, weekdays');
    for (const day of ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday']) await form.getByRole('group', { name: 'Days of the week' }).getByLabel(day).check();
    await form.getByLabel('From time').fill('07:00');
    await form.getByLabel('To time').fill('11:00');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Campaign “Double coffee, weekdays” saved.' }).waitFor();
    const stored = await request(t.url, 'GET', '/en/partners/campaigns?per_page=100', { headers: bearer(token) });
    const c = (stored.body.data as Array<{ id: number; name: string; schedule: { days_of_week: number[]; from_time: string | null; to_time: string | null }; conditions: { product_ids: number[] } }>).find(
      (x) => x.name === 'Double coffee, weekdays',
    );
    assert.ok(c, stored.text);
    assert.deepEqual(c.schedule.days_of_week, [1, 2, 3, 4, 5]);
    assert.equal(c.schedule.from_time, '07:00');
    assert.equal(c.schedule.to_time, '11:00');
    assert.equal(c.conditions.product_ids.length, 1, 'the product stayed');

    const edited = page.getByRole('row').filter({ hasText: 'Double coffee, weekdays' });
    await edited.getByRole('button', { name: 'Pause' }).click();
    await page.getByRole('status').filter({ hasText: 'Campaign “Double coffee, weekdays” paused.' }).waitFor();
    await edited.getByText('Paused').waitFor();
    await edited.getByRole('button', { name: 'Resume' }).waitFor();
    await page.getByLabel('Status', { exact: true }).selectOption('running');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/status=running/);
    await edited.waitFor({ state: 'detached' });
    await page.getByLabel('Status', { exact: true }).selectOption('paused');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/status=paused/);
    await edited.waitFor();
    await checkPage(page, 'Campaigns with a paused campaign at 375');
  });

  it('shows a card’s points debt on Customers after a return the balance could not cover', async () => {
    const api = apiHeaders(demo.api_key);
    const customers = await request(t.url, 'GET', '/en/partners/customers', { headers: bearer(token) });
    const card = customers.body.data[0].cards.find((k: { partner_card_id: number }) => k.partner_card_id === demo.partner_card.id) as { id: number; card_number: string; points_balance: number };
    // The customer spends every point, then returns the rest of the espresso: what the
    // return takes back beyond the balance becomes debt.
    const spend = await request(t.url, 'POST', '/en/shop/transactions/deduct-points', { headers: api, json: { card_id: card.id, shop_id: demo.shop.id, points: card.points_balance } });
    assert.equal(spend.status, 201, spend.text);
    const sales = await request(t.url, 'GET', '/en/partners/transactions?per_page=100', { headers: bearer(token) });
    const sale = (sales.body.data as Array<{ id: number; receipt_number: string | null }>).find((x) => x.receipt_number === 'R-CAMPAIGN');
    assert.ok(sale, sales.text);
    const ret = await request(t.url, 'POST', `/en/shop/transactions/${sale.id}/return`, { headers: api, json: { items: [{ line_id: '1', quantity: 2 }] } });
    assert.equal(ret.status, 201, ret.text);
    const after = await request(t.url, 'GET', '/en/partners/customers', { headers: bearer(token) });
    const debt: number = after.body.data[0].cards.find((k: { id: number }) => k.id === card.id).points_debt;
    assert.ok(debt > 0, after.text);

    await openNav(page, 'Customers');
    const row = page.getByRole('row').filter({ hasText: card.card_number });
    await row.getByText(`debt ${debt.toLocaleString('en-GB')}`).waitFor();
    const cells = await row.locator('td').allInnerTexts();
    assert.equal(cells[5], '0', 'the balance');
    assert.equal(cells[6], debt.toLocaleString('en-GB'), 'the debt column');
    await checkPage(page, 'Customers with a debt at 375');
  });

  it('produced no script errors, CSP violations or failed requests', () => {
    assert.deepEqual(browser.problems, []);
  });
});
