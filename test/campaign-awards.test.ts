// Awards with baskets and campaigns (DESIGN.md §12) over HTTP, on the store the suite runs
// on: lines matched to the catalogue, each effect, priority and exclusive, dates and
// schedules in the campaign's zone (across midnight and across a DST change), shops,
// category descendants, first purchase, min_amount, rounding, limits, the breakdown in the
// create and GET answers, preview = create, replays that never evaluate twice, and the
// tenant cases. The concurrency of limits is test/campaign-limits.pg.test.ts.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { campaigns } from '../src/modules/campaigns/campaigns.tables.js';
import { catalogCategories, catalogProductCategories, catalogProducts } from '../src/modules/catalog/catalog.tables.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { assertLedgerConsistent, award, createCustomer, createProgramme, createShop, joinProgramme, TestClock } from './helpers/loyalty.js';

describe('awards with baskets and campaigns', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let other: PartnerFixture;
  let shop: number;
  let shop2: number;
  let otherShop: number;
  const clock = new TestClock(Date.parse('2026-11-25T10:00:00Z')); // Wednesday, 12:00 in Vilnius
  const setClock = (iso: string) => clock.advanceMs(Date.parse(iso) - clock.now().getTime());
  // Catalogue: Drinks > Coffee > Espresso beans (product ESP), and a tea (TEA) outside it.
  let drinks: number;
  let coffee: number;
  let espresso: number;
  let tea: number;
  let foreignProduct: number;

  const db = () => t.app.context.database.db;
  async function product(partnerId: number, sku: string, categoryId: number | null, ean: string | null = null): Promise<number> {
    const key = randomBytes(4).toString('hex');
    const [row] = await db()
      .insert(catalogProducts)
      .values({ partnerId, importKey: `k${key}`, name: sku, sku, ean, contentHash: key })
      .returning({ id: catalogProducts.id });
    if (categoryId !== null) await db().insert(catalogProductCategories).values({ productId: row!.id, categoryId });
    return row!.id;
  }
  async function category(partnerId: number, name: string, parentId: number | null): Promise<number> {
    const [row] = await db()
      .insert(catalogCategories)
      .values({ partnerId, externalKey: `id:${randomBytes(4).toString('hex')}`, name, path: name, parentId })
      .returning({ id: catalogCategories.id });
    return row!.id;
  }

  let programme: number;
  async function freshProgramme(rules: Parameters<typeof createProgramme>[2] = {}) {
    programme = await createProgramme(t, p.id, { pointsPerCurrency: '1', currencyAmount: '1', ...rules });
    return programme;
  }
  const newCard = async (programmeId = programme) => (await joinProgramme(t, await createCustomer(t), programmeId)).id;
  async function campaign(body: Record<string, unknown>, who = p) {
    const res = await request(t.url, 'POST', '/en/partners/campaigns', {
      headers: bearer(who.token),
      json: { partner_card_id: programme, name: 'C', effect: { type: 'bonus', value: 10 }, ...body },
    });
    assert.equal(res.status, 201, res.text);
    return res.body.data as { id: number; name: string };
  }
  const getCampaign = async (id: number) => (await request(t.url, 'GET', `/en/partners/campaigns/${id}`, { headers: bearer(p.token) })).body.data;
  const preview = (body: Record<string, unknown>, who = p) =>
    request(t.url, 'POST', '/en/shop/transactions/preview', { headers: apiHeaders(who.apiKey), json: body });
  const details = (id: number, who = p) => request(t.url, 'GET', `/en/partners/transactions/${id}`, { headers: bearer(who.token) });
  const rows = (breakdown: Array<{ source: string; campaign_id: number | null; points: number; line_ids: string[] }>) =>
    breakdown.map((r) => [r.source, r.campaign_id, r.points, r.line_ids]);

  before(async () => {
    t = await startTestApp({}, undefined, { clock });
    p = await createPartner(t, 'Kavinė');
    other = await createPartner(t, 'Other');
    shop = await createShop(t, p.id);
    shop2 = await createShop(t, p.id, 'Second');
    otherShop = await createShop(t, other.id);
    drinks = await category(p.id, 'Drinks', null);
    coffee = await category(p.id, 'Coffee', drinks);
    const beans = await category(p.id, 'Espresso beans', coffee);
    espresso = await product(p.id, 'ESP', beans, '4770000000011');
    tea = await product(p.id, 'TEA', null);
    foreignProduct = await product(other.id, 'ESP', null);
  });
  after(() => t.close());
  beforeEach(async () => {
    setClock('2026-11-25T10:00:00Z');
    await freshProgramme();
  });

  // 10 EUR of espresso (2 units) + 5.5 EUR of tea + 4.5 EUR of an unknown line: base 20 at 1 point per EUR.
  const basket = () => [
    { line_id: 'a', product_id: espresso, quantity: 2, amount: 10 },
    { line_id: 'b', sku: 'TEA', quantity: 1, amount: '5.5' },
    { line_id: 'c', name: 'Bag', quantity: '1.5', amount: '4.5' },
  ];

  describe('lines and the base rule', () => {
    it('without campaigns a basket earns what its amount earns, shared over the lines, and keeps its lines', async () => {
      const card = await newCard();
      const res = await award(t, p, { card_id: card, shop_id: shop, items: basket(), receipt_number: 'B-1' });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.data.amount, 20);
      assert.equal(res.body.data.points, 20);
      assert.deepEqual(rows(res.body.data.breakdown), [['base', null, 20, ['a', 'b', 'c']]]);
      assert.deepEqual(
        res.body.data.items.map((i: { line_id: string; product_id: number | null; points: number }) => [i.line_id, i.product_id, i.points]),
        [
          ['a', espresso, 10],
          ['b', tea, 6], // 5.5 and 4.5 share the spare point by largest remainder: .5 each, the earlier line wins
          ['c', null, 4],
        ],
      );
      const read = await details(res.body.data.id);
      assert.equal(read.status, 200, read.text);
      assert.deepEqual(read.body.data.items, res.body.data.items);
      assert.deepEqual(read.body.data.breakdown, res.body.data.breakdown);
      assert.deepEqual(read.body.data.returns, []);
      const amountOnly = await award(t, p, { card_id: card, shop_id: shop, amount: 20 });
      assert.equal(amountOnly.body.data.points, 20);
      assert.deepEqual(rows(amountOnly.body.data.breakdown), [['base', null, 20, []]]);
      assert.deepEqual(amountOnly.body.data.items, []);
    });

    it('matches lines by product_id, else sku, else ean', async () => {
      const card = await newCard();
      const res = await award(t, p, {
        card_id: card,
        shop_id: shop,
        items: [
          { product_id: espresso, sku: 'TEA', quantity: 1, amount: 1 },
          { sku: 'TEA', quantity: 1, amount: 1 },
          { ean: '4770000000011', quantity: 1, amount: 1 },
          { sku: 'NOPE', quantity: 1, amount: 1 },
        ],
      });
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(
        res.body.data.items.map((i: { line_id: string; product_id: number | null }) => [i.line_id, i.product_id]),
        [
          ['1', espresso],
          ['2', tea],
          ['3', espresso],
          ['4', null],
        ],
      );
    });

    it("never matches another partner's product by sku or ean", async () => {
      await product(other.id, 'THEIRS-1', null, '4770000000999');
      const card = await newCard();
      const res = await award(t, p, {
        card_id: card,
        shop_id: shop,
        items: [
          { sku: 'THEIRS-1', quantity: 1, amount: 1 },
          { ean: '4770000000999', quantity: 1, amount: 1 },
        ],
      });
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(
        res.body.data.items.map((i: { product_id: number | null }) => i.product_id),
        [null, null],
      );
    });

    it('refuses a bad basket on the exact field and writes nothing', async () => {
      const card = await newCard();
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ items: [{ line_id: 'x', quantity: 1, amount: 1 }, { line_id: 'x', quantity: 1, amount: 1 }] }, 'items.1.line_id'],
        [{ items: [{ quantity: 1, amount: 1 }], amount: 2 }, 'amount'],
        [{ items: [{ quantity: '0.0001', amount: 1 }] }, 'items.0.quantity'],
        [{ items: [{ quantity: 0, amount: 1 }] }, 'items.0.quantity'],
        [{ items: [{ quantity: 1, amount: '1.00001' }] }, 'items.0.amount'],
        [{ items: [{ quantity: 1, amount: -1 }] }, 'items.0.amount'],
        [{}, 'amount'],
        [{ items: Array.from({ length: 501 }, () => ({ quantity: 1, amount: 1 })) }, 'items'],
        [{ items: [{ product_id: foreignProduct, quantity: 1, amount: 1 }] }, 'items.0.product_id'],
      ];
      for (const [body, field] of cases) {
        const res = await award(t, p, { card_id: card, shop_id: shop, ...body });
        assert.equal(res.status, 422, `${field}: ${res.text}`);
        assert.equal(res.body.code, 422, field);
        assert.ok(Object.keys(res.body.errors).includes(field), `${field}: ${JSON.stringify(res.body.errors)}`);
      }
      const list = await request(t.url, 'GET', `/en/partners/transactions?card_id=${card}`, { headers: bearer(p.token) });
      assert.equal(list.body.meta.total, 0);
    });
  });

  describe('effects, priority and exclusive', () => {
    it('each effect on its matching lines, in priority order, with the breakdown in create and GET', async () => {
      const card = await newCard();
      const double = await campaign({ name: 'Coffee ×2', effect: { type: 'multiplier', value: 2 }, conditions: { category_ids: [drinks] }, priority: 4 });
      const bonus = await campaign({ name: 'Bonus', effect: { type: 'bonus', value: 50 }, priority: 3 });
      const teaRate = await campaign({ name: 'Tea 1.5/EUR', effect: { type: 'per_currency', value: 1.5 }, conditions: { skus: ['TEA'] }, priority: 2 });
      const perUnit = await campaign({ name: 'Espresso 5/unit', effect: { type: 'per_item', value: 5 }, conditions: { product_ids: [espresso] }, priority: 1 });
      const res = await award(t, p, { card_id: card, shop_id: shop, items: basket() });
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(rows(res.body.data.breakdown), [
        ['base', null, 20, ['a', 'b', 'c']],
        ['campaign', double.id, 10, ['a']], // the category's descendant (Drinks > Coffee > beans)
        ['campaign', bonus.id, 50, ['a', 'b', 'c']],
        ['campaign', teaRate.id, 8, ['b']], // 5.5 × 1.5 = 8.25 → 8
        ['campaign', perUnit.id, 10, ['a']], // 2 units × 5
      ]);
      assert.equal(res.body.data.points, 98);
      assert.equal(res.body.data.balance_after, 98);
      assert.deepEqual(
        res.body.data.breakdown.map((r: { name: string | null }) => r.name),
        [null, 'Coffee ×2', 'Bonus', 'Tea 1.5/EUR', 'Espresso 5/unit'],
      );
      // Every point sits on a line: the lines add up to the transaction.
      assert.equal(
        res.body.data.items.reduce((s: number, i: { points: number }) => s + i.points, 0),
        98,
      );
      const read = await details(res.body.data.id);
      assert.deepEqual(read.body.data.breakdown, res.body.data.breakdown);
      assert.deepEqual(read.body.data.items, res.body.data.items);
      const c = await getCampaign(bonus.id);
      assert.equal(c.uses_count, 1);
      assert.equal(c.points_awarded, 50);
      await assertLedgerConsistent(t);
    });

    it('a campaign without conditions applies to an amount-only award; an exclusive one ends the evaluation', async () => {
      const card = await newCard();
      const low = await campaign({ name: 'Low', priority: 1, effect: { type: 'bonus', value: 1 } });
      const excl = await campaign({ name: 'Exclusive', priority: 5, exclusive: true, effect: { type: 'bonus', value: 7 } });
      const high = await campaign({ name: 'High', priority: 9, effect: { type: 'bonus', value: 3 } });
      const res = await award(t, p, { card_id: card, shop_id: shop, amount: 10 });
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(rows(res.body.data.breakdown), [
        ['base', null, 10, []],
        ['campaign', high.id, 3, []],
        ['campaign', excl.id, 7, []],
      ]);
      const skipped = await preview({ card_id: card, shop_id: shop, amount: 10 });
      assert.deepEqual(skipped.body.data.campaigns_skipped, [{ campaign_id: low.id, name: 'Low', reason: 'exclusive' }]);
    });

    it('rounds campaign points down, or up with round_points_up; a campaign worth 0 points does not apply', async () => {
      const card = await newCard();
      await campaign({ effect: { type: 'per_currency', value: 1.5 }, conditions: { skus: ['TEA'] } });
      const down = await award(t, p, { card_id: card, shop_id: shop, items: [{ sku: 'TEA', quantity: 1, amount: '4.5' }] });
      assert.equal(down.body.data.breakdown[1].points, 6);
      await freshProgramme({ roundPointsUp: true });
      const upCard = await newCard();
      await campaign({ effect: { type: 'per_currency', value: 1.5 }, conditions: { skus: ['TEA'] } });
      const up = await award(t, p, { card_id: upCard, shop_id: shop, items: [{ sku: 'TEA', quantity: 1, amount: '4.5' }] });
      assert.equal(up.body.data.breakdown[1].points, 7);
      await freshProgramme();
      const zeroCard = await newCard();
      const zero = await campaign({ effect: { type: 'multiplier', value: 1.5 } });
      const none = await award(t, p, { card_id: zeroCard, shop_id: shop, amount: '1.5' }); // base 1 × 0.5 → 0
      assert.equal(none.body.data.breakdown.length, 1);
      assert.equal((await getCampaign(zero.id)).uses_count, 0);
    });
  });

  describe('dates, schedules, shops and conditions', () => {
    it('a window across midnight in Vilnius, on the day it opened', async () => {
      const card = await newCard();
      const night = await campaign({ schedule: { days_of_week: [5], from_time: '22:00', to_time: '02:00', time_zone: 'Europe/Vilnius' } });
      const applies = async (iso: string) => {
        setClock(iso);
        const res = await award(t, p, { card_id: card, shop_id: shop, amount: 1 });
        assert.equal(res.status, 201, res.text);
        return res.body.data.breakdown.some((r: { campaign_id: number | null }) => r.campaign_id === night.id);
      };
      assert.equal(await applies('2026-11-27T19:59:00Z'), false); // Friday 21:59
      assert.equal(await applies('2026-11-27T20:00:00Z'), true); // Friday 22:00
      assert.equal(await applies('2026-11-27T23:30:00Z'), true); // Saturday 01:30, Friday's night
      assert.equal(await applies('2026-11-28T00:00:00Z'), false); // Saturday 02:00: to_time is exclusive
      assert.equal(await applies('2026-11-28T20:30:00Z'), false); // Saturday 22:30
    });

    it('follows the DST change: 09:00–10:00 local is 06:00 UTC before 25 October 2026 and 07:00 UTC after', async () => {
      const card = await newCard();
      const morning = await campaign({ schedule: { from_time: '09:00', to_time: '10:00', time_zone: 'Europe/Vilnius' } });
      const at = async (iso: string) => {
        setClock(iso);
        const res = await preview({ card_id: card, shop_id: shop, amount: 1 });
        assert.equal(res.status, 200, res.text);
        return res.body.data.breakdown.some((r: { campaign_id: number | null }) => r.campaign_id === morning.id);
      };
      assert.equal(await at('2026-10-24T06:30:00Z'), true);
      assert.equal(await at('2026-10-26T06:30:00Z'), false);
      assert.equal(await at('2026-10-26T07:30:00Z'), true);
    });

    it('dates, shops, first purchase and min_amount on the matching lines; reasons in the preview', async () => {
      const card = await newCard();
      const later = await campaign({ name: 'Later', starts_at: '2026-12-01T00:00:00Z' });
      const elsewhere = await campaign({ name: 'Elsewhere', shop_ids: [shop2] });
      const first = await campaign({ name: 'First', conditions: { first_purchase_only: true } });
      const big = await campaign({ name: 'Big tea', conditions: { skus: ['TEA'], min_amount: 5.5 } });
      const goldTier = await request(t.url, 'POST', `/en/partners/cards/${programme}/tiers`, {
        headers: bearer(p.token),
        json: { name: { en: 'Gold', lt: 'Auksinis' }, threshold: 1_000_000 },
      });
      assert.equal(goldTier.status, 201, goldTier.text);
      const tiered = await campaign({ name: 'Gold', tier_ids: [goldTier.body.data.id] });
      const pv = await preview({ card_id: card, shop_id: shop, items: basket() });
      assert.equal(pv.status, 200, pv.text);
      assert.deepEqual(
        pv.body.data.breakdown.map((r: { campaign_id: number | null }) => r.campaign_id),
        [null, first.id, big.id],
      );
      assert.deepEqual(
        pv.body.data.campaigns_skipped.map((s: { campaign_id: number; reason: string }) => [s.campaign_id, s.reason]).sort(),
        [
          [later.id, 'outside_dates'],
          [elsewhere.id, 'shop'],
          [tiered.id, 'tier'],
        ].sort(),
      );
      const firstAward = await award(t, p, { card_id: card, shop_id: shop2, items: basket() });
      assert.deepEqual(
        firstAward.body.data.breakdown.map((r: { campaign_id: number | null }) => r.campaign_id),
        [null, elsewhere.id, first.id, big.id],
      );
      const second = await award(t, p, { card_id: card, shop_id: shop, items: [{ sku: 'TEA', quantity: 1, amount: '5.4999' }] });
      assert.deepEqual(
        second.body.data.breakdown.map((r: { campaign_id: number | null }) => r.campaign_id),
        [null],
      );
    });
  });

  describe('limits', () => {
    it('per customer, per customer per day (days in the zone), uses, and a budget cut to what is left', async () => {
      const card = await newCard();
      const perCustomer = await campaign({ name: 'Once', limits: { per_customer: 1 } });
      const perDay = await campaign({ name: 'Daily', limits: { per_customer_per_day: 1 } });
      const budget = await campaign({ name: 'Budget', effect: { type: 'bonus', value: 10 }, limits: { points_budget: 25 } });
      const ids = async (iso: string) => {
        setClock(iso);
        const res = await award(t, p, { card_id: card, shop_id: shop, amount: 1 });
        assert.equal(res.status, 201, res.text);
        return res.body.data.breakdown.slice(1).map((r: { campaign_id: number; points: number }) => [r.campaign_id, r.points]);
      };
      assert.deepEqual(await ids('2026-11-25T10:00:00Z'), [
        [perCustomer.id, 10],
        [perDay.id, 10],
        [budget.id, 10],
      ]);
      assert.deepEqual(await ids('2026-11-25T21:00:00Z'), [[budget.id, 10]]); // 23:00 in Vilnius: the same day
      assert.deepEqual(await ids('2026-11-25T22:30:00Z'), [
        [perDay.id, 10],
        [budget.id, 5],
      ]); // 00:30 the next day in Vilnius (still the 25th in UTC)
      const spent = await getCampaign(budget.id);
      assert.deepEqual([spent.status, spent.budget_left, spent.points_awarded, spent.uses_count], ['exhausted', 0, 25, 3]);
      assert.deepEqual(await ids('2026-11-27T10:00:00Z'), [[perDay.id, 10]]);
      const uses = await campaign({ name: 'Two uses', limits: { uses: 2 } });
      for (let i = 0; i < 3; i++) await award(t, p, { card_id: await newCard(), shop_id: shop, amount: 1 });
      assert.equal((await getCampaign(uses.id)).uses_count, 2);
      await assertLedgerConsistent(t);
    });
  });

  describe('preview', () => {
    it('equals what create then awards, and writes nothing', async () => {
      const card = await newCard();
      await award(t, p, { card_id: card, shop_id: shop, amount: 5 });
      const c1 = await campaign({ effect: { type: 'multiplier', value: 3 }, conditions: { category_ids: [coffee] }, limits: { points_budget: 1000 } });
      await campaign({ effect: { type: 'bonus', value: 5 }, limits: { per_customer: 1 } });
      const body = { card_id: card, shop_id: shop, items: basket() };
      const pv = await preview(body);
      assert.equal(pv.status, 200, pv.text);
      assert.deepEqual(Object.keys(pv.body.data).sort(), ['balance_after', 'breakdown', 'campaigns_skipped', 'points', 'tier']);
      const again = await preview(body);
      assert.deepEqual(again.body.data, pv.body.data);
      assert.equal((await getCampaign(c1.id)).points_awarded, 0);
      const created = await award(t, p, body);
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.data.points, pv.body.data.points);
      assert.deepEqual(created.body.data.breakdown, pv.body.data.breakdown);
      assert.equal(created.body.data.balance_after, pv.body.data.balance_after);
      assert.equal(pv.body.data.tier, null);
    });

    it('works for a programme without a card: no per-customer limit, first purchase met', async () => {
      const first = await campaign({ conditions: { first_purchase_only: true }, limits: { per_customer: 1 } });
      const res = await preview({ partner_card_id: programme, shop_id: shop, amount: 10 });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.balance_after, null);
      assert.deepEqual(rows(res.body.data.breakdown), [
        ['base', null, 10, []],
        ['campaign', first.id, 10, []],
      ]);
      const both = await preview({ card_id: await newCard(), partner_card_id: programme, shop_id: shop, amount: 10 });
      assert.equal(both.status, 422, both.text);
      const neither = await preview({ shop_id: shop, amount: 10 });
      assert.equal(neither.status, 422, neither.text);
    });
  });

  describe('replays and tenants', () => {
    it('a replay (Idempotency-Key, or the same receipt) never evaluates twice', async () => {
      const card = await newCard();
      const c = await campaign({ limits: { points_budget: 100 } });
      const key = { 'idempotency-key': `k-${randomBytes(4).toString('hex')}` };
      const body = { card_id: card, shop_id: shop, items: basket(), receipt_number: 'R-77' };
      const a = await award(t, p, body, key);
      const b = await award(t, p, body, key);
      assert.equal(a.status, 201, a.text);
      assert.deepEqual(b.body.data, a.body.data);
      const dup = await award(t, p, body);
      assert.equal(dup.status, 409, dup.text);
      assert.equal(dup.body.code, 'DUPLICATE_VALUE');
      const after = await getCampaign(c.id);
      assert.deepEqual([after.uses_count, after.points_awarded], [1, 10]);
    });

    it("another partner's campaign never applies, and another partner's card, shop, programme or transaction is not found", async () => {
      const card = await newCard();
      const otherProgramme = await createProgramme(t, other.id);
      const res0 = await request(t.url, 'POST', '/en/partners/campaigns', {
        headers: bearer(other.token),
        json: { partner_card_id: otherProgramme, name: 'Theirs', effect: { type: 'bonus', value: 99 } },
      });
      assert.equal(res0.status, 201, res0.text);
      const mine = await award(t, p, { card_id: card, shop_id: shop, amount: 1 });
      assert.deepEqual(rows(mine.body.data.breakdown), [['base', null, 1, []]]);
      assert.equal((await award(t, p, { card_id: card, shop_id: otherShop, items: basket() })).status, 404);
      assert.equal((await award(t, other, { card_id: card, shop_id: otherShop, items: basket() })).status, 404);
      assert.equal((await preview({ partner_card_id: otherProgramme, shop_id: shop, amount: 1 })).status, 404);
      assert.equal((await preview({ card_id: card, shop_id: shop, amount: 1 }, other)).status, 404);
      assert.equal((await details(mine.body.data.id, other)).status, 404);
      const viaApi = await request(t.url, 'GET', `/en/shop/transactions/${mine.body.data.id}`, { headers: apiHeaders(other.apiKey) });
      assert.equal(viaApi.status, 404);
      const own = await request(t.url, 'GET', `/en/shop/transactions/${mine.body.data.id}`, { headers: apiHeaders(p.apiKey) });
      assert.equal(own.status, 200, own.text);
    });

    it('a deleted or paused campaign stops applying at once', async () => {
      const card = await newCard();
      const c = await campaign({});
      await db().update(campaigns).set({ isActive: false }).where(eq(campaigns.id, c.id));
      const paused = await award(t, p, { card_id: card, shop_id: shop, amount: 1 });
      assert.equal(paused.body.data.breakdown.length, 1);
      await db().update(campaigns).set({ isActive: true }).where(eq(campaigns.id, c.id));
      const del = await request(t.url, 'DELETE', `/en/partners/campaigns/${c.id}`, { headers: bearer(p.token) });
      assert.ok(del.status === 200 || del.status === 204, del.text);
      const deleted = await award(t, p, { card_id: card, shop_id: shop, amount: 1 });
      assert.equal(deleted.body.data.breakdown.length, 1);
    });
  });
});
