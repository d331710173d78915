// Tiers in the console (DESIGN.md §13 "Console", issue 23) in a real browser at 375 px, against
// the real app: the programme's tier settings are saved with its form; tiers are added (a
// taken threshold shows the API's 409 on the Threshold field and in the summary), edited (a
// changed threshold re-sorts the list) and deleted after a confirmation; a customer whose
// award crosses a threshold (over HTTP, as a till would) shows the tier on Customers, and the
// customer view shows where the card stands and its tier history; the Overview charts cards
// per tier. axe-core finds no serious or critical violation on each page with its data.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { DemoCredentials } from '../../src/modules/demo/demo.service.js';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';
import { apiHeaders, bearer, request } from '../../test/helpers/http.js';
import { createCustomer, joinProgramme, type CustomerFixture } from '../../test/helpers/loyalty.js';
import { launchBrowser, type Browser } from './helpers/browser.js';
import { fieldError, openNav, signIn } from './helpers/console.js';
import { checkPage } from './helpers/pages.js';
import { seed } from './helpers/seed.js';

const PROGRAMME = 'Demo Shop loyalty card';

describe('partner console: tiers on the programme, customers and Overview (375 px)', () => {
  let t: TestApp;
  let demo: DemoCredentials;
  let browser: Browser;
  let page: Page;
  let token = '';

  const tiersOf = async () => {
    const res = await request(t.url, 'GET', `/en/partners/cards/${demo.partner_card.id}/tiers`, { headers: bearer(token) });
    assert.equal(res.status, 200, res.text);
    return res.body.data as Array<{ id: number; name: { en: string }; threshold: number; earn_multiplier: number; color: string | null }>;
  };
  /** Waits until the tier list shows these names in this order (the list reloads after the notice shows). */
  const expectTiers = async (names: string[]) => {
    const cells = page.getByRole('table', { name: 'Tiers of this programme' }).locator('tbody tr td:first-child');
    let shown: string[] = [];
    for (let i = 0; i < 50; i++) {
      shown = (await cells.allInnerTexts()).map((x) => x.trim());
      if (JSON.stringify(shown) === JSON.stringify(names)) return;
      await page.waitForTimeout(100);
    }
    assert.deepEqual(shown, names);
  };

  before(async () => {
    t = await startTestApp({ APP_TEST_PHONES: '+37060000000:123456', SMS_SIMULATOR_DELAY_MS: '50' });
    demo = await seed(t);
    browser = await launchBrowser();
    page = await browser.page({ width: 375, height: 800 });
    const login = await request(t.url, 'POST', '/en/partners/auth/login', { json: { email: demo.partner.email, password: demo.partner.password } });
    assert.equal(login.status, 200, login.text);
    token = login.body.data.token;
    await signIn(page, `${t.url}/dashboard/`, demo.partner.email, demo.partner.password, 'Overview');
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('saves the tier settings, adds tiers (a taken threshold shown on its field), edits one (the list re-sorts) and deletes one', async () => {
    await openNav(page, 'Card programmes');
    await page.getByRole('link', { name: PROGRAMME }).click();
    await page.getByRole('heading', { level: 1, name: PROGRAMME }).waitFor();
    await page.getByRole('table', { name: 'Tiers of this programme' }).getByText('No tiers yet.').waitFor();

    // The settings, in the programme's own form.
    const settings = page.getByRole('form', { name: 'Save' });
    assert.equal(await settings.getByLabel('Which period counts').inputValue(), 'rolling_12_months', 'the default window');
    await settings.getByLabel('What qualifies').selectOption('points_earned');
    await settings.getByLabel('Which period counts').selectOption('lifetime');
    await settings.getByLabel('Falling to a lower tier').selectOption('never');
    await settings.getByLabel('Time zone of the year').fill('Mars/Olympus');
    await settings.getByRole('button', { name: 'Save' }).click();
    await settings.getByLabel('Time zone of the year').and(page.locator('[aria-invalid="true"]')).waitFor();
    assert.notEqual(await fieldError(page, 'Time zone of the year'), '');
    await settings.getByLabel('Time zone of the year').fill('Europe/Vilnius');
    await settings.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
    const card = await request(t.url, 'GET', `/en/partners/cards/${demo.partner_card.id}`, { headers: bearer(token) });
    assert.deepEqual(
      [card.body.data.tier_basis, card.body.data.tier_window, card.body.data.tier_downgrade, card.body.data.tier_time_zone],
      ['points_earned', 'lifetime', 'never', 'Europe/Vilnius'],
    );

    const add = async (en: string, lt: string, threshold: string, extra: { multiplier?: string; color?: string; benefits?: string } = {}) => {
      const form = page.getByRole('form', { name: 'Add tier' });
      await form.getByLabel('Name (English)').fill(en);
      await form.getByLabel('Name (Lithuanian)').fill(lt);
      await form.getByLabel('Threshold').fill(threshold);
      if (extra.multiplier) await form.getByLabel('Points multiplier').fill(extra.multiplier);
      if (extra.color) await form.getByLabel('Colour', { exact: true }).fill(extra.color);
      if (extra.benefits) {
        await form.getByLabel('Benefits (English)').fill(extra.benefits);
        await form.getByLabel('Benefits (Lithuanian)').fill(`${extra.benefits} LT`);
      }
      await form.getByRole('button', { name: 'Add tier' }).click();
    };
    await add('Gold', 'Auksinis', '500', { multiplier: '2', color: '#D4AF37', benefits: 'Free coffee' });
    await page.getByRole('status').filter({ hasText: 'Tier “Gold” added.' }).waitFor();
    await add('Silver', 'Sidabrinis', '1000', { multiplier: '1.5', color: '#C0C0C0' });
    await page.getByRole('status').filter({ hasText: 'Tier “Silver” added.' }).waitFor();

    // A threshold another tier has: the API's 409 on the field, and in the summary.
    await add('Platinum', 'Platininis', '500');
    const form = page.getByRole('form', { name: 'Add tier' });
    await form.getByLabel('Threshold').and(page.locator('[aria-invalid="true"]')).waitFor();
    assert.equal(await fieldError(page, 'Threshold'), 'Another tier of this programme has this threshold');
    const summary = page.getByRole('alert').filter({ hasText: 'There is a problem' });
    assert.match(await summary.innerText(), /Threshold/, 'the summary links the field by its label');
    await checkPage(page, 'Tiers with a taken threshold at 375');
    await form.getByLabel('Threshold').fill('2000');
    await form.getByRole('button', { name: 'Add tier' }).click();
    await page.getByRole('status').filter({ hasText: 'Tier “Platinum” added.' }).waitFor();
    await expectTiers(['Gold', 'Silver', 'Platinum']);
    const gold = page.getByRole('row').filter({ hasText: 'Gold' });
    assert.match(await gold.innerText(), /500[\s\S]*× 2[\s\S]*#D4AF37[\s\S]*Free coffee/);
    await gold.locator('svg.swatch rect[fill="#D4AF37"]').waitFor();

    // Edit: Silver's threshold below Gold's moves it up the list.
    await page.getByRole('row').filter({ hasText: 'Silver' }).getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('form', { name: 'Edit tier “Silver”' });
    assert.equal(await edit.getByLabel('Threshold').inputValue(), '1000', 'the form shows what was stored');
    assert.equal(await edit.getByLabel('Colour', { exact: true }).inputValue(), '#C0C0C0');
    await edit.getByLabel('Threshold').fill('100');
    await edit.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Tier “Silver” saved.' }).waitFor();
    await page.getByRole('form', { name: 'Add tier' }).waitFor();
    await expectTiers(['Silver', 'Gold', 'Platinum']);

    // Delete, after a confirmation.
    await page.getByRole('row').filter({ hasText: 'Platinum' }).getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete tier “Platinum”?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('status').filter({ hasText: 'Tier “Platinum” deleted.' }).waitFor();
    await expectTiers(['Silver', 'Gold']);
    await checkPage(page, 'Card programme with tiers at 375');
    assert.deepEqual(
      (await tiersOf()).map((x) => [x.name.en, x.threshold, x.earn_multiplier, x.color]),
      [
        ['Silver', 100, 1.5, '#C0C0C0'],
        ['Gold', 500, 2, '#D4AF37'],
      ],
    );
  });

  let customer: CustomerFixture;
  it('shows the tier a purchase reached on Customers, and in the customer view where the card stands and its history', async () => {
    // A till's award crosses Silver's threshold (1 point per EUR on the demo programme).
    customer = await createCustomer(t);
    const joined = await joinProgramme(t, customer, demo.partner_card.id);
    const award = await request(t.url, 'POST', '/en/shop/transactions/create', {
      headers: apiHeaders(demo.api_key),
      json: { card_id: joined.id, shop_id: demo.shop.id, amount: 120, receipt_number: 'R-TIER' },
    });
    assert.equal(award.status, 201, award.text);
    const cards = await request(t.url, 'GET', `/en/partners/customers?search=${encodeURIComponent(customer.phone)}`, { headers: bearer(token) });
    const stored = cards.body.data[0].cards[0] as { tier: { name: { en: string } } | null; tier_progress: { value: number; next: { remaining: number } | null } };
    assert.equal(stored.tier?.name.en, 'Silver', cards.text);

    await openNav(page, 'Customers');
    await page.getByLabel('Find a customer').fill(customer.phone);
    await page.getByRole('button', { name: 'Search' }).click();
    const row = page.getByRole('row').filter({ hasText: joined.card_number });
    await row.waitFor();
    await row.locator('.tier-badge').filter({ hasText: 'Silver' }).waitFor();
    await row.locator('svg.swatch rect[fill="#C0C0C0"]').waitFor();
    await checkPage(page, 'Customers with a tier at 375');

    await row.getByRole('button', { name: 'View' }).click();
    const view = page.getByRole('region', { name: `Customer ${customer.phone}` });
    await view.waitFor();
    const facts = await view.locator('dl.facts').nth(1).innerText();
    assert.match(facts, /Tier\s+Silver/);
    assert.match(facts, new RegExp(`Qualifying value \\(Points earned\\)\\s+${stored.tier_progress.value.toLocaleString('en-GB')} points`));
    assert.match(facts, new RegExp(`Next tier\\s+Gold: ${stored.tier_progress.next!.remaining.toLocaleString('en-GB')} points to go`));
    assert.match(facts, /Tier kept until\s+—/, 'lifetime keeps no date');
    const history = view.getByRole('table', { name: `Tier history of card ${joined.card_number}` });
    const moves = history.locator('tbody tr');
    await moves.filter({ hasText: 'Silver' }).first().waitFor();
    const cells = await moves.first().locator('td').allInnerTexts();
    assert.deepEqual(cells.slice(1), ['—', 'Silver', 'Earned']);
    await checkPage(page, 'Customer view with tier history at 375');
  });

  it('charts cards per tier on the Overview', async () => {
    await openNav(page, 'Overview');
    const chart = page.getByRole('figure', { name: `Cards per tier: ${PROGRAMME}` });
    await chart.waitFor();
    await chart.locator('canvas').first().waitFor();
    await chart.getByText(`Figures of “Cards per tier: ${PROGRAMME}”`).click();
    const table = chart.getByRole('table');
    const rows = await table.locator('tbody tr').allInnerTexts();
    assert.deepEqual(
      rows.map((r) => r.split('\t')[0]),
      ['No tier', 'Silver', 'Gold'],
    );
    const summary = await request(t.url, 'GET', '/en/partners/tiers/summary', { headers: bearer(token) });
    const silver = (summary.body.data[0].tiers as Array<{ name: { en: string } | null; cards: number }>).find((x) => x.name?.en === 'Silver')!;
    assert.ok(silver.cards >= 1, summary.text);
    assert.match(rows[1]!, /^Silver\t\d+$/);
    await checkPage(page, 'Overview with the tier chart at 375');
  });

  it('produced no script errors, CSP violations or failed requests', () => {
    assert.deepEqual(browser.problems, []);
  });
});
