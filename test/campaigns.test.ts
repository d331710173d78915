// Campaigns CRUD (DESIGN.md §12 "Campaign") over HTTP: create with defaults and in full, the
// Idempotency-Key, every validation rule (status, code and the exact field path), partial
// PUT (nested objects too) checked against the stored campaign, the list with meta and its
// filters, each derived status through the view and through the SQL of the `status` filter,
// soft delete, the tenant cases (another partner's campaign 404; another partner's
// programme, shop, product or category, or another programme's tier, 422 on that field), and
// the caps (100 campaigns that have not ended per programme, 1,000 entries per list).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { campaigns } from '../src/modules/campaigns/campaigns.tables.js';
import { catalogCategories, catalogProducts } from '../src/modules/catalog/catalog.tables.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { keysOf } from './helpers/engagement.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { createCustomer, createProgramme, createShop, TestClock } from './helpers/loyalty.js';

// Every assert.ok has a message: without one, a failing assert.ok makes Node re-read and parse
// the (tsx-transformed) source to describe the expression, which spun for minutes here.
const CAMPAIGN_KEYS = [
  'budget_left',
  'conditions',
  'created_at',
  'description',
  'effect',
  'ends_at',
  'exclusive',
  'id',
  'is_active',
  'limits',
  'name',
  'partner_card_id',
  'points_awarded',
  'priority',
  'schedule',
  'shop_ids',
  'starts_at',
  'status',
  'tier_ids',
  'updated_at',
  'uses_count',
];

describe('campaigns CRUD', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let other: PartnerFixture;
  let programme: number;
  let otherProgramme: number;
  let shop: number;
  let otherShop: number;
  let product: number;
  let otherProduct: number;
  let category: number;
  let otherCategory: number;
  let gold: number;
  let silver: number;
  let otherTier: number;
  const clock = new TestClock();
  const HOUR = 3_600_000;
  const inHours = (h: number) => new Date(clock.now().getTime() + h * HOUR).toISOString();

  const post = (who: PartnerFixture, json: unknown, headers: Record<string, string> = {}) =>
    request(t.url, 'POST', '/en/partners/campaigns', { headers: { ...bearer(who.token), ...headers }, json });
  const put = (who: PartnerFixture, id: number, json: unknown) => request(t.url, 'PUT', `/en/partners/campaigns/${id}`, { headers: bearer(who.token), json });
  const get = (who: PartnerFixture, id: number) => request(t.url, 'GET', `/en/partners/campaigns/${id}`, { headers: bearer(who.token) });
  const list = (who: PartnerFixture, query = '') => request(t.url, 'GET', `/en/partners/campaigns${query}`, { headers: bearer(who.token) });
  const minimal = () => ({ partner_card_id: programme, name: 'Double points', effect: { type: 'multiplier', value: 2 } });
  const create = async (body: Record<string, unknown> = {}, who = p) => {
    const res = await post(who, { ...minimal(), ...(who === p ? {} : { partner_card_id: otherProgramme }), ...body });
    assert.equal(res.status, 201, res.text);
    return res.body.data;
  };
  const total = async (who = p) => (await list(who)).body.meta.total as number;
  const setCounters = (id: number, values: { usesCount?: number; pointsAwarded?: number }) =>
    t.app.context.database.db.update(campaigns).set(values).where(eq(campaigns.id, id));

  async function catalogue(partnerId: number): Promise<{ product: number; category: number }> {
    const db = t.app.context.database.db;
    const key = randomBytes(4).toString('hex');
    const [prod] = await db
      .insert(catalogProducts)
      .values({ partnerId, importKey: `k${key}`, name: 'Espresso', sku: `ESP-${key}`, contentHash: key })
      .returning({ id: catalogProducts.id });
    const [cat] = await db
      .insert(catalogCategories)
      .values({ partnerId, externalKey: `id:${key}`, name: 'Coffee', path: 'Coffee' })
      .returning({ id: catalogCategories.id });
    return { product: prod!.id, category: cat!.id };
  }

  async function tier(who: PartnerFixture, partnerCardId: number, threshold: number): Promise<number> {
    const res = await request(t.url, 'POST', `/en/partners/cards/${partnerCardId}/tiers`, {
      headers: bearer(who.token),
      json: { name: { en: `T${threshold}`, lt: `T${threshold}` }, threshold },
    });
    assert.equal(res.status, 201, res.text);
    return res.body.data.id as number;
  }

  before(async () => {
    t = await startTestApp({}, undefined, { clock });
    p = await createPartner(t, 'Kavinė');
    other = await createPartner(t, 'Other');
    programme = await createProgramme(t, p.id);
    otherProgramme = await createProgramme(t, other.id);
    shop = await createShop(t, p.id);
    otherShop = await createShop(t, other.id);
    ({ product, category } = await catalogue(p.id));
    ({ product: otherProduct, category: otherCategory } = await catalogue(other.id));
    gold = await tier(p, programme, 100_000);
    silver = await tier(p, programme, 50_000);
    otherTier = await tier(other, otherProgramme, 100_000);
  });
  after(() => t.close());

  describe('create and read', () => {
    it('creates with the defaults and answers the whole campaign', async () => {
      const res = await post(p, { ...minimal(), name: '  Double points ' });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.code, 201);
      assert.equal(res.body.message, 'Campaign created');
      const c = res.body.data;
      assert.deepEqual(keysOf(c), CAMPAIGN_KEYS);
      assert.ok(Number.isInteger(c.id), 'an integer id');
      assert.deepEqual(
        { ...c, id: 0 },
        {
          id: 0,
          partner_card_id: programme,
          name: 'Double points',
          description: null,
          is_active: true,
          starts_at: null,
          ends_at: null,
          schedule: { days_of_week: [], from_time: null, to_time: null, time_zone: 'Europe/Vilnius' },
          shop_ids: [],
          tier_ids: [],
          conditions: { min_amount: null, product_ids: [], category_ids: [], skus: [], first_purchase_only: false },
          effect: { type: 'multiplier', value: 2 },
          priority: 0,
          exclusive: false,
          limits: { per_customer: null, per_customer_per_day: null, uses: null, points_budget: null },
          status: 'running',
          uses_count: 0,
          points_awarded: 0,
          budget_left: null,
          created_at: clock.now().toISOString(),
          updated_at: clock.now().toISOString(),
        },
      );
      const read = await get(p, c.id);
      assert.equal(read.status, 200, read.text);
      assert.deepEqual(read.body.data, c);
    });

    it('stores every field as sent: exact decimals as JSON numbers, days sorted, the zone in its canonical spelling', async () => {
      const body = {
        partner_card_id: programme,
        name: 'Coffee mornings',
        description: 'Weekday mornings',
        is_active: true,
        starts_at: '2026-02-01T00:00:00.000Z',
        ends_at: '2026-06-01T00:00:00.000Z',
        schedule: { days_of_week: [5, 1, 3], from_time: '22:00', to_time: '02:00', time_zone: 'america/new_york' },
        shop_ids: [shop],
        tier_ids: [gold, silver],
        conditions: { min_amount: 12.3456, product_ids: [product], category_ids: [category], skus: ['ESP-1', 'lat te'], first_purchase_only: true },
        effect: { type: 'per_currency', value: 1.25 },
        priority: -5,
        exclusive: true,
        limits: { per_customer: 3, per_customer_per_day: 1, uses: 2_000_000_000, points_budget: 1000 },
      };
      const c = await create(body);
      assert.deepEqual(c.schedule, { days_of_week: [1, 3, 5], from_time: '22:00', to_time: '02:00', time_zone: 'America/New_York' });
      assert.deepEqual(c.conditions, body.conditions);
      assert.deepEqual(c.effect, { type: 'per_currency', value: 1.25 });
      assert.deepEqual(c.limits, body.limits);
      assert.deepEqual([c.shop_ids, c.tier_ids, c.priority, c.exclusive, c.description], [[shop], [gold, silver], -5, true, 'Weekday mornings']);
      assert.equal(c.budget_left, 1000);
      const [row] = await t.app.context.database.db.select().from(campaigns).where(eq(campaigns.id, c.id));
      assert.equal(row!.minAmount, '12.3456');
      assert.equal(row!.effectValue, '1.25');
      assert.equal(row!.partnerId, p.id);
    });

    it('accepts each effect at the edges of its range, and UTC', async () => {
      for (const effect of [
        { type: 'multiplier', value: 1.01 },
        { type: 'multiplier', value: 10 },
        { type: 'bonus', value: 1 },
        { type: 'bonus', value: 50 },
        { type: 'per_currency', value: 0.01 },
        { type: 'per_item', value: 2.5 },
      ]) {
        const c = await create({ effect, schedule: { time_zone: 'UTC' } });
        assert.deepEqual(c.effect, effect);
        assert.equal(c.schedule.time_zone, 'UTC');
      }
    });

    it('a replayed Idempotency-Key creates one campaign and answers it again', async () => {
      const before = await total();
      const first = await post(p, minimal(), { 'idempotency-key': 'campaign-1' });
      const again = await post(p, minimal(), { 'idempotency-key': 'campaign-1' });
      assert.equal(first.status, 201, first.text);
      assert.equal(again.status, 201, again.text);
      assert.equal(again.body.data.id, first.body.data.id);
      assert.equal(await total(), before + 1);
    });

    it('answers in Lithuanian under /lt', async () => {
      const res = await request(t.url, 'POST', '/lt/partners/campaigns', { headers: bearer(p.token), json: minimal() });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.message, 'Kampanija sukurta');
    });

    it('needs a partner token', async () => {
      assert.equal((await request(t.url, 'GET', '/en/partners/campaigns')).status, 401);
      assert.equal((await request(t.url, 'GET', '/en/partners/campaigns', { headers: apiHeaders(p.apiKey) })).status, 401);
      const c = await createCustomer(t);
      assert.equal((await request(t.url, 'GET', '/en/partners/campaigns', { headers: bearer(c.token) })).status, 403);
      assert.equal((await request(t.url, 'POST', '/en/partners/campaigns', { headers: bearer(c.token), json: minimal() })).status, 403);
    });
  });

  describe('validation: one 422 (code 422) on the exact field path, nothing stored', () => {
    const long = (n: number) => 'x'.repeat(n);
    const ids = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
    const cases: Array<[label: string, body: () => Record<string, unknown>, fields: string[]]> = [
      ['required fields', () => ({}), ['effect', 'name', 'partner_card_id']],
      ['blank name', () => ({ ...minimal(), name: '   ' }), ['name']],
      ['name over 255', () => ({ ...minimal(), name: long(256) }), ['name']],
      ['description over 5000', () => ({ ...minimal(), description: long(5001) }), ['description']],
      ['unknown effect type', () => ({ ...minimal(), effect: { type: 'double', value: 2 } }), ['effect.type']],
      ['effect without value', () => ({ ...minimal(), effect: { type: 'bonus' } }), ['effect.value']],
      ['multiplier 1', () => ({ ...minimal(), effect: { type: 'multiplier', value: 1 } }), ['effect.value']],
      ['multiplier over 10', () => ({ ...minimal(), effect: { type: 'multiplier', value: 10.01 } }), ['effect.value']],
      ['multiplier with 3 decimals', () => ({ ...minimal(), effect: { type: 'multiplier', value: 1.555 } }), ['effect.value']],
      ['bonus not whole', () => ({ ...minimal(), effect: { type: 'bonus', value: 1.5 } }), ['effect.value']],
      ['bonus 0', () => ({ ...minimal(), effect: { type: 'bonus', value: 0 } }), ['effect.value']],
      ['per_currency 0', () => ({ ...minimal(), effect: { type: 'per_currency', value: 0 } }), ['effect.value']],
      ['per_currency with 3 decimals', () => ({ ...minimal(), effect: { type: 'per_currency', value: 0.005 } }), ['effect.value']],
      ['per_item negative', () => ({ ...minimal(), effect: { type: 'per_item', value: -1 } }), ['effect.value']],
      ['per_item with 3 decimals', () => ({ ...minimal(), effect: { type: 'per_item', value: 2.125 } }), ['effect.value']],
      ['effect value over the cap', () => ({ ...minimal(), effect: { type: 'bonus', value: 10_000_001 } }), ['effect.value']],
      ['day 0', () => ({ ...minimal(), schedule: { days_of_week: [0] } }), ['schedule.days_of_week.0']],
      ['day 8', () => ({ ...minimal(), schedule: { days_of_week: [1, 8] } }), ['schedule.days_of_week.1']],
      ['repeated day', () => ({ ...minimal(), schedule: { days_of_week: [2, 2] } }), ['schedule.days_of_week']],
      ['time 24:00', () => ({ ...minimal(), schedule: { from_time: '24:00', to_time: '02:00' } }), ['schedule.from_time']],
      ['time without leading zero', () => ({ ...minimal(), schedule: { from_time: '08:00', to_time: '9:00' } }), ['schedule.to_time']],
      ['from_time alone', () => ({ ...minimal(), schedule: { from_time: '08:00' } }), ['schedule.to_time']],
      ['to_time alone', () => ({ ...minimal(), schedule: { from_time: null, to_time: '08:00' } }), ['schedule.from_time']],
      ['equal times', () => ({ ...minimal(), schedule: { from_time: '08:00', to_time: '08:00' } }), ['schedule.to_time']],
      ['unknown zone', () => ({ ...minimal(), schedule: { time_zone: 'Mars/Olympus_Mons' } }), ['schedule.time_zone']],
      ['an offset is not a zone', () => ({ ...minimal(), schedule: { time_zone: '+02:00' } }), ['schedule.time_zone']],
      ['ends_at before starts_at', () => ({ ...minimal(), starts_at: '2026-05-01T00:00:00Z', ends_at: '2026-04-01T00:00:00Z' }), ['ends_at']],
      ['ends_at equal to starts_at', () => ({ ...minimal(), starts_at: '2026-05-01T00:00:00Z', ends_at: '2026-05-01T00:00:00Z' }), ['ends_at']],
      ['not a date-time', () => ({ ...minimal(), starts_at: 'tomorrow' }), ['starts_at']],
      ['budget 0', () => ({ ...minimal(), limits: { points_budget: 0 } }), ['limits.points_budget']],
      ['uses over 2,000,000,000', () => ({ ...minimal(), limits: { uses: 2_000_000_001 } }), ['limits.uses']],
      ['per_customer not whole', () => ({ ...minimal(), limits: { per_customer: 1.5 } }), ['limits.per_customer']],
      ['per_customer_per_day negative', () => ({ ...minimal(), limits: { per_customer_per_day: -1 } }), ['limits.per_customer_per_day']],
      ['min_amount negative', () => ({ ...minimal(), conditions: { min_amount: -0.01 } }), ['conditions.min_amount']],
      ['min_amount with 5 decimals', () => ({ ...minimal(), conditions: { min_amount: 1.23456 } }), ['conditions.min_amount']],
      // At most 1,000 entries per list (DESIGN.md §12), refused by the schema on the field.
      ['1,001 product ids', () => ({ ...minimal(), conditions: { product_ids: ids(1001) } }), ['conditions.product_ids']],
      ['1,001 category ids', () => ({ ...minimal(), conditions: { category_ids: ids(1001) } }), ['conditions.category_ids']],
      ['1,001 skus', () => ({ ...minimal(), conditions: { skus: ids(1001).map(String) } }), ['conditions.skus']],
      ['sku over 64', () => ({ ...minimal(), conditions: { skus: ['ok', long(65)] } }), ['conditions.skus.1']],
      ['blank sku', () => ({ ...minimal(), conditions: { skus: [' '] } }), ['conditions.skus.0']],
      ['repeated product id', () => ({ ...minimal(), conditions: { product_ids: [product, product] } }), ['conditions.product_ids']],
      ['1,001 shop ids', () => ({ ...minimal(), shop_ids: ids(1001) }), ['shop_ids']],
      ['1,001 tier ids', () => ({ ...minimal(), tier_ids: ids(1001) }), ['tier_ids']],
      ['tier id 0', () => ({ ...minimal(), tier_ids: [0] }), ['tier_ids.0']],
      ['tier id over int4', () => ({ ...minimal(), tier_ids: [2147483648] }), ['tier_ids.0']],
      ['priority not whole', () => ({ ...minimal(), priority: 1.5 }), ['priority']],
    ];

    for (const [label, body, fields] of cases) {
      it(label, async () => {
        const before = await total();
        const res = await post(p, body());
        assert.equal(res.status, 422, res.text);
        assert.equal(res.body.code, 422);
        assert.deepEqual(keysOf(res.body.errors), fields, res.text);
        assert.equal(await total(), before);
      });
    }

    it('lists every problem of a body in one answer', async () => {
      const res = await post(p, {
        partner_card_id: otherProgramme,
        name: '',
        effect: { type: 'multiplier', value: 11 },
        schedule: { from_time: '08:00', time_zone: 'Nowhere/Land' },
        starts_at: '2026-05-01T00:00:00Z',
        ends_at: '2026-04-01T00:00:00Z',
        shop_ids: [otherShop],
        conditions: { product_ids: [otherProduct], category_ids: [otherCategory], min_amount: 0.00001 },
        limits: { uses: 0 },
      });
      assert.equal(res.status, 422, res.text);
      assert.deepEqual(keysOf(res.body.errors), [
        'conditions.category_ids',
        'conditions.min_amount',
        'conditions.product_ids',
        'effect.value',
        'ends_at',
        'limits.uses',
        'name',
        'partner_card_id',
        'schedule.time_zone',
        'schedule.to_time',
        'shop_ids',
      ]);
    });
  });

  describe('tenancy', () => {
    it("another partner's programme, shop, product or category is 422 on that field; its own are fine", async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ partner_card_id: otherProgramme }, 'partner_card_id'],
        [{ shop_ids: [shop, otherShop] }, 'shop_ids'],
        [{ conditions: { product_ids: [product, otherProduct] } }, 'conditions.product_ids'],
        [{ conditions: { category_ids: [otherCategory, category] } }, 'conditions.category_ids'],
        [{ conditions: { product_ids: [2147483647] } }, 'conditions.product_ids'],
        // tier_ids: tiers of the campaign's programme only (DESIGN.md §12).
        [{ tier_ids: [gold, otherTier] }, 'tier_ids'],
        [{ tier_ids: [2147483647] }, 'tier_ids'],
      ];
      for (const [body, field] of cases) {
        const before = await total();
        const res = await post(p, { ...minimal(), ...body });
        assert.equal(res.status, 422, `${field}: ${res.text}`);
        assert.deepEqual(keysOf(res.body.errors), [field]);
        assert.equal(await total(), before);
      }
      const foreignShop = await post(p, { ...minimal(), shop_ids: [shop, otherShop] });
      assert.deepEqual(foreignShop.body.errors.shop_ids, [`These shops are not yours: ${otherShop}`]);
      const foreignTier = await post(p, { ...minimal(), tier_ids: [gold, otherTier] });
      assert.deepEqual(foreignTier.body.errors.tier_ids, [`These are not tiers of the campaign's programme: ${otherTier}`]);
      const mine = await create({ shop_ids: [shop], tier_ids: [gold], conditions: { product_ids: [product], category_ids: [category] } });
      assert.deepEqual([mine.conditions.product_ids, mine.tier_ids], [[product], [gold]]);
    });

    it("a tier of the partner's other programme is 422 on tier_ids; moving a campaign to another programme checks its stored tier_ids", async () => {
      const second = await createProgramme(t, p.id);
      const secondTier = await tier(p, second, 10);
      const res = await post(p, { ...minimal(), tier_ids: [secondTier] });
      assert.equal(res.status, 422, res.text);
      assert.deepEqual(keysOf(res.body.errors), ['tier_ids']);
      const c = await create({ tier_ids: [gold] });
      const moved = await put(p, c.id, { partner_card_id: second });
      assert.equal(moved.status, 422, moved.text);
      assert.deepEqual(keysOf(moved.body.errors), ['tier_ids']);
      const withTiers = await put(p, c.id, { partner_card_id: second, tier_ids: [secondTier] });
      assert.equal(withTiers.status, 200, withTiers.text);
      assert.deepEqual([withTiers.body.data.partner_card_id, withTiers.body.data.tier_ids], [second, [secondTier]]);
      const back = await put(p, c.id, { tier_ids: [gold] });
      assert.equal(back.status, 422, back.text);
      assert.deepEqual(keysOf(back.body.errors), ['tier_ids']);
    });

    it('a deleted programme of the partner is 422 on partner_card_id', async () => {
      const gone = await createProgramme(t, p.id);
      assert.ok(await t.app.context.services.partnerCards.deleteCard(p.id, gone), 'programme deleted');
      const res = await post(p, { ...minimal(), partner_card_id: gone });
      assert.equal(res.status, 422, res.text);
      assert.deepEqual(keysOf(res.body.errors), ['partner_card_id']);
    });

    it("PUT checks the same: another partner's programme, shop, product or category is 422 and changes nothing", async () => {
      const c = await create({ shop_ids: [shop] });
      for (const [body, field] of [
        [{ partner_card_id: otherProgramme }, 'partner_card_id'],
        [{ shop_ids: [otherShop] }, 'shop_ids'],
        [{ conditions: { product_ids: [otherProduct] } }, 'conditions.product_ids'],
        [{ conditions: { category_ids: [otherCategory] } }, 'conditions.category_ids'],
        [{ tier_ids: [otherTier] }, 'tier_ids'],
      ] as const) {
        const res = await put(p, c.id, body);
        assert.equal(res.status, 422, `${field}: ${res.text}`);
        assert.deepEqual(keysOf(res.body.errors), [field]);
      }
      assert.deepEqual((await get(p, c.id)).body.data, c);
    });

    it("another partner's campaign is 404 on GET, PUT (valid or not) and DELETE, and stays as it was", async () => {
      const theirs = await create({}, other);
      const checks = [
        await get(p, theirs.id),
        await put(p, theirs.id, { name: 'Mine now' }),
        await put(p, theirs.id, { name: '' }),
        await request(t.url, 'DELETE', `/en/partners/campaigns/${theirs.id}`, { headers: bearer(p.token) }),
      ];
      for (const res of checks) {
        assert.equal(res.status, 404, res.text);
        assert.equal(res.body.code, 'RESOURCE_NOT_FOUND');
      }
      assert.deepEqual((await get(other, theirs.id)).body.data, theirs);
      assert.ok(!(await list(p, '?per_page=100')).body.data.some((c: any) => c.id === theirs.id), "not in the other partner's list");
    });
  });

  describe('update', () => {
    it('changes only what is sent, nested objects field by field, and answers the whole campaign', async () => {
      const c = await create({
        schedule: { days_of_week: [1, 2], from_time: '08:00', to_time: '10:00', time_zone: 'Europe/Riga' },
        conditions: { product_ids: [product], skus: ['A'], min_amount: 5 },
        effect: { type: 'multiplier', value: 1.5 },
        limits: { uses: 10, points_budget: 500 },
      });
      clock.advanceMs(60_000);
      const res = await put(p, c.id, {
        name: 'Renamed',
        schedule: { time_zone: 'UTC' },
        conditions: { skus: ['B', 'C'] },
        effect: { value: 3 },
        limits: { uses: null },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.message, 'Campaign updated');
      const u = res.body.data;
      assert.deepEqual(keysOf(u), CAMPAIGN_KEYS);
      assert.equal(u.name, 'Renamed');
      assert.deepEqual(u.schedule, { days_of_week: [1, 2], from_time: '08:00', to_time: '10:00', time_zone: 'UTC' });
      assert.deepEqual(u.conditions, { min_amount: 5, product_ids: [product], category_ids: [], skus: ['B', 'C'], first_purchase_only: false });
      assert.deepEqual(u.effect, { type: 'multiplier', value: 3 });
      assert.deepEqual(u.limits, { per_customer: null, per_customer_per_day: null, uses: null, points_budget: 500 });
      assert.equal(u.created_at, c.created_at);
      assert.equal(u.updated_at, clock.now().toISOString());
      assert.deepEqual((await get(p, c.id)).body.data, u);
    });

    it('checks the campaign as it will be, against the stored fields', async () => {
      const c = await create({
        starts_at: '2026-04-01T00:00:00Z',
        schedule: { from_time: '08:00', to_time: '10:00' },
        effect: { type: 'per_item', value: 1.5 },
      });
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ ends_at: '2026-03-15T00:00:00Z' }, 'ends_at'],
        [{ effect: { type: 'bonus' } }, 'effect.value'],
        [{ effect: { type: 'multiplier', value: 12 } }, 'effect.value'],
        [{ schedule: { to_time: '08:00' } }, 'schedule.to_time'],
        [{ schedule: { to_time: null } }, 'schedule.to_time'],
        [{ schedule: { from_time: null } }, 'schedule.from_time'],
        [{ schedule: { time_zone: 'Europe/Atlantis' } }, 'schedule.time_zone'],
        [{ limits: { points_budget: 0 } }, 'limits.points_budget'],
        [{ name: 'x'.repeat(256) }, 'name'],
      ];
      for (const [body, field] of cases) {
        const res = await put(p, c.id, body);
        assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
        assert.equal(res.body.code, 422);
        assert.deepEqual(keysOf(res.body.errors), [field], JSON.stringify(body));
      }
      assert.deepEqual((await get(p, c.id)).body.data, c);
      // Both times cleared together, an effect type that fits the stored value: fine.
      const ok1 = await put(p, c.id, { schedule: { from_time: null, to_time: null }, effect: { type: 'per_currency' } });
      assert.equal(ok1.status, 200, ok1.text);
      assert.deepEqual([ok1.body.data.schedule.from_time, ok1.body.data.schedule.to_time, ok1.body.data.effect], [null, null, { type: 'per_currency', value: 1.5 }]);
    });

    it('never changes the counters; lowering the budget below what was given makes it exhausted with budget_left 0', async () => {
      const c = await create({ limits: { points_budget: 100 } });
      await setCounters(c.id, { usesCount: 4, pointsAwarded: 60 });
      const res = await put(p, c.id, { limits: { points_budget: 50 } });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual([res.body.data.uses_count, res.body.data.points_awarded, res.body.data.budget_left, res.body.data.status], [4, 60, 0, 'exhausted']);
      const raised = await put(p, c.id, { limits: { points_budget: 200 } });
      assert.deepEqual([raised.body.data.budget_left, raised.body.data.status], [140, 'running']);
    });

    it('PUT of an unknown id is 404', async () => {
      const res = await put(p, 2147483647, { name: 'x' });
      assert.equal(res.status, 404, res.text);
      assert.equal(res.body.code, 'RESOURCE_NOT_FOUND');
    });
  });

  describe('status, through the view and through the status filter', () => {
    let fresh: PartnerFixture;
    let freshProgramme: number;
    const made: Record<string, number> = {};

    const statusesByFilter = async () => {
      const out: Record<string, string> = {};
      for (const status of ['scheduled', 'running', 'paused', 'ended', 'exhausted']) {
        const res = await list(fresh, `?status=${status}&per_page=100`);
        assert.equal(res.status, 200, res.text);
        for (const c of res.body.data) {
          assert.equal(c.status, status, `${c.name} listed under ${status}`);
          out[c.name] = status;
        }
      }
      return out;
    };
    const statusesByView = async () => {
      const out: Record<string, string> = {};
      for (const c of (await list(fresh, '?per_page=100')).body.data) out[c.name] = c.status;
      return out;
    };

    before(async () => {
      fresh = await createPartner(t);
      freshProgramme = await createProgramme(t, fresh.id);
      const mk = async (name: string, body: Record<string, unknown>) => {
        const res = await post(fresh, { partner_card_id: freshProgramme, name, effect: { type: 'bonus', value: 5 }, ...body });
        assert.equal(res.status, 201, res.text);
        made[name] = res.body.data.id;
      };
      await mk('running', {});
      await mk('paused', { is_active: false, starts_at: inHours(1) });
      await mk('scheduled', { starts_at: inHours(1), ends_at: inHours(2) });
      await mk('starts now', { starts_at: inHours(0) });
      await mk('ends now', { starts_at: inHours(-2), ends_at: inHours(0) });
      await mk('ended', { ends_at: inHours(-1), limits: { points_budget: 10 } });
      await mk('budget used', { limits: { points_budget: 100 } });
      await mk('budget left', { limits: { points_budget: 100 } });
      await mk('uses used', { limits: { uses: 3 } });
      await mk('uses left', { limits: { uses: 3 } });
      await mk('scheduled and spent', { starts_at: inHours(1), limits: { uses: 1 } });
      await mk('outside its hours', { schedule: { days_of_week: [7], from_time: '03:00', to_time: '04:00' } });
      await setCounters(made['budget used']!, { pointsAwarded: 100, usesCount: 7 });
      await setCounters(made['budget left']!, { pointsAwarded: 99, usesCount: 7 });
      await setCounters(made['uses used']!, { usesCount: 3, pointsAwarded: 15 });
      await setCounters(made['uses left']!, { usesCount: 2, pointsAwarded: 10 });
      await setCounters(made['scheduled and spent']!, { usesCount: 1 });
      await setCounters(made['ended']!, { pointsAwarded: 10 });
    });

    it('each case has its status, the same in the view and in the filter', async () => {
      const expected = {
        running: 'running',
        paused: 'paused',
        scheduled: 'scheduled',
        'starts now': 'running',
        'ends now': 'ended',
        ended: 'ended',
        'budget used': 'exhausted',
        'budget left': 'running',
        'uses used': 'exhausted',
        'uses left': 'running',
        'scheduled and spent': 'scheduled',
        'outside its hours': 'running',
      };
      assert.deepEqual(await statusesByView(), expected);
      assert.deepEqual(await statusesByFilter(), expected);
      const one = await get(fresh, made['budget used']!);
      assert.deepEqual([one.body.data.status, one.body.data.budget_left], ['exhausted', 0]);
      assert.equal((await get(fresh, made['budget left']!)).body.data.budget_left, 1);
    });

    it('moves with the clock: scheduled becomes running at starts_at, running becomes ended at ends_at', async () => {
      clock.advanceMs(HOUR);
      const expected = {
        running: 'running',
        paused: 'paused',
        scheduled: 'running',
        'starts now': 'running',
        'ends now': 'ended',
        ended: 'ended',
        'budget used': 'exhausted',
        'budget left': 'running',
        'uses used': 'exhausted',
        'uses left': 'running',
        'scheduled and spent': 'exhausted',
        'outside its hours': 'running',
      };
      assert.deepEqual(await statusesByView(), expected);
      assert.deepEqual(await statusesByFilter(), expected);
      clock.advanceMs(HOUR);
      assert.equal((await get(fresh, made['scheduled']!)).body.data.status, 'ended');
      assert.deepEqual((await list(fresh, '?status=ended')).body.data.map((c: any) => c.name), ['scheduled', 'ends now', 'ended']);
    });

    it('a return that frees budget makes an exhausted campaign running again', async () => {
      await setCounters(made['budget used']!, { pointsAwarded: 95 });
      const c = (await get(fresh, made['budget used']!)).body.data;
      assert.deepEqual([c.status, c.budget_left], ['running', 5]);
      assert.ok((await list(fresh, '?status=running&per_page=100')).body.data.some((x: any) => x.id === c.id), 'listed as running');
    });

    it('pausing is paused whatever else holds, and the filter follows', async () => {
      const res = await put(fresh, made['uses used']!, { is_active: false });
      assert.equal(res.body.data.status, 'paused');
      assert.ok((await list(fresh, '?status=paused')).body.data.some((x: any) => x.id === made['uses used']), 'listed as paused');
      assert.ok(!(await list(fresh, '?status=exhausted')).body.data.some((x: any) => x.id === made['uses used']), 'no longer listed as exhausted');
    });

    it('an unknown status is 422 on status', async () => {
      const res = await list(fresh, '?status=live');
      assert.equal(res.status, 422, res.text);
      assert.deepEqual(keysOf(res.body.errors), ['status']);
    });
  });

  describe('caps (DESIGN.md §12): 100 campaigns that have not ended per programme, 1,000 entries per list', () => {
    const quotaError = [{ field: 'partner_card_id', code: 'QUOTA_EXCEEDED', message: 'A programme has at most 100 campaigns that have not ended', meta: { limit: 100 } }];
    /** `n` campaigns of the programme written straight to the table (100 creates over HTTP would only be slower). */
    async function planted(partnerId: number, partnerCardId: number, n: number, fields: Partial<typeof campaigns.$inferInsert> = {}): Promise<number[]> {
      const rows = Array.from({ length: n }, (_, i) => ({ partnerId, partnerCardId, name: `Planted ${i}`, effectType: 'bonus' as const, effectValue: '1', ...fields }));
      const out = await t.app.context.database.db.insert(campaigns).values(rows).returning({ id: campaigns.id });
      return out.map((r) => r.id);
    }

    it('each list of 1,001 entries is 422 on its field with the schema\'s bound (create and update)', async () => {
      const many = Array.from({ length: 1001 }, (_, i) => i + 1);
      const c = await create();
      for (const [body, field] of [
        [{ shop_ids: many }, 'shop_ids'],
        [{ tier_ids: many }, 'tier_ids'],
        [{ conditions: { product_ids: many } }, 'conditions.product_ids'],
        [{ conditions: { category_ids: many } }, 'conditions.category_ids'],
        [{ conditions: { skus: many.map(String) } }, 'conditions.skus'],
      ] as const) {
        for (const res of [await post(p, { ...minimal(), ...body }), await put(p, c.id, body)]) {
          assert.equal(res.status, 422, `${field}: ${res.text}`);
          assert.deepEqual(keysOf(res.body.errors), [field]);
          assert.ok(res.body.errors[field].includes('May not have more than 1000 items'), `${field}: ${res.text}`);
        }
      }
      assert.deepEqual((await get(p, c.id)).body.data, c);
    });

    it('lists of 1,000 entries are accepted (1,001 is 422 on the field, see validation)', async () => {
      const skus = Array.from({ length: 1000 }, (_, i) => `SKU-${i}`);
      const c = await create({ conditions: { skus } });
      assert.equal(c.conditions.skus.length, 1000);
    });

    it('the 101st campaign that has not ended is 422 QUOTA_EXCEEDED; ended and deleted ones do not count, nor other programmes', async () => {
      const fresh = await createPartner(t);
      const prog = await createProgramme(t, fresh.id);
      const otherProg = await createProgramme(t, fresh.id);
      const past = new Date(clock.now().getTime() - HOUR);
      // 99 that count (paused and exhausted ones too), and some that do not.
      await planted(fresh.id, prog, 97);
      await planted(fresh.id, prog, 1, { isActive: false });
      await planted(fresh.id, prog, 1, { limitUses: 1, usesCount: 1 });
      const [ended] = await planted(fresh.id, prog, 1, { startsAt: new Date(past.getTime() - HOUR), endsAt: past });
      await planted(fresh.id, prog, 1, { deletedAt: past, isActive: false });
      const body = { partner_card_id: prog, name: 'C', effect: { type: 'bonus', value: 1 } };
      const hundredth = await post(fresh, body);
      assert.equal(hundredth.status, 201, hundredth.text);
      const count = async () => (await list(fresh, `?partner_card_id=${prog}`)).body.meta.total as number;
      assert.equal(await count(), 101);

      const refused = await post(fresh, { ...body, name: 'One too many' });
      assert.equal(refused.status, 422, refused.text);
      assert.equal(refused.body.code, 'QUOTA_EXCEEDED');
      assert.deepEqual(refused.body.errors, quotaError);
      assert.equal(await count(), 101);
      // One that ends in the future counts; one that has already ended does not.
      assert.equal((await post(fresh, { ...body, ends_at: inHours(1) })).status, 422);
      const endedAlready = await post(fresh, { ...body, starts_at: inHours(-3), ends_at: inHours(-2) });
      assert.equal(endedAlready.status, 201, endedAlready.text);
      assert.equal(endedAlready.body.data.status, 'ended');
      // The quota is per programme.
      assert.equal((await post(fresh, { ...body, partner_card_id: otherProg })).status, 201);

      // Updates: editing, pausing and resuming a counted one is fine; bringing an ended one back is not.
      const live = hundredth.body.data.id as number;
      assert.equal((await put(fresh, live, { is_active: false })).status, 200);
      assert.equal((await put(fresh, live, { is_active: true, name: 'Renamed' })).status, 200);
      assert.equal((await put(fresh, ended!, { name: 'Still ended' })).status, 200);
      for (const change of [{ ends_at: null }, { ends_at: inHours(24) }]) {
        const back = await put(fresh, ended!, change);
        assert.equal(back.status, 422, back.text);
        assert.deepEqual(back.body.errors, quotaError);
      }
      // Moving a live campaign of another programme into the full one is refused too.
      const elsewhere = (await post(fresh, { ...body, partner_card_id: otherProg })).body.data.id as number;
      const moved = await put(fresh, elsewhere, { partner_card_id: prog });
      assert.equal(moved.status, 422, moved.text);
      assert.deepEqual(moved.body.errors, quotaError);
      assert.equal((await get(fresh, elsewhere)).body.data.partner_card_id, otherProg);

      // Room again once one is deleted: the ended one may come back.
      assert.equal((await request(t.url, 'DELETE', `/en/partners/campaigns/${live}`, { headers: bearer(fresh.token) })).status, 200);
      const revived = await put(fresh, ended!, { ends_at: null });
      assert.equal(revived.status, 200, revived.text);
      assert.equal(revived.body.data.status, 'running');
      assert.equal((await post(fresh, body)).status, 422);
    });
  });

  describe('list and delete', () => {
    it('lists with meta, ordered by id, filtered by partner_card_id and is_active (1/0 too)', async () => {
      const fresh = await createPartner(t);
      const progA = await createProgramme(t, fresh.id);
      const progB = await createProgramme(t, fresh.id);
      const mk = async (body: Record<string, unknown>) => {
        const res = await post(fresh, { name: 'C', effect: { type: 'bonus', value: 1 }, ...body });
        assert.equal(res.status, 201, res.text);
        return res.body.data.id as number;
      };
      const a = await mk({ partner_card_id: progA });
      const b = await mk({ partner_card_id: progB, is_active: false });
      const c = await mk({ partner_card_id: progA });
      const page = await list(fresh, '?per_page=2&page=2');
      assert.equal(page.status, 200, page.text);
      assert.deepEqual(page.body.meta, { current_page: 2, per_page: 2, total: 3, last_page: 2 });
      assert.deepEqual(page.body.data.map((x: any) => x.id), [c]);
      assert.deepEqual((await list(fresh)).body.data.map((x: any) => x.id), [a, b, c]);
      assert.deepEqual((await list(fresh, `?partner_card_id=${progA}`)).body.data.map((x: any) => x.id), [a, c]);
      assert.deepEqual((await list(fresh, `?partner_card_id=${otherProgramme}`)).body.data, []);
      assert.deepEqual((await list(fresh, '?is_active=false')).body.data.map((x: any) => x.id), [b]);
      assert.deepEqual((await list(fresh, '?is_active=0')).body.data.map((x: any) => x.id), [b]);
      assert.deepEqual((await list(fresh, '?is_active=1')).body.data.map((x: any) => x.id), [a, c]);
      assert.deepEqual((await list(fresh, `?is_active=true&partner_card_id=${progB}`)).body.data, []);
      const bad = await list(fresh, '?per_page=101&partner_card_id=0');
      assert.equal(bad.status, 422, bad.text);
    });

    it('DELETE hides the campaign (404 afterwards, not listed); the row stays, inactive, for its earned points', async () => {
      const fresh = await createPartner(t);
      const prog = await createProgramme(t, fresh.id);
      const res = await post(fresh, { partner_card_id: prog, name: 'Gone soon', effect: { type: 'bonus', value: 1 } });
      const id = res.body.data.id as number;
      const del = await request(t.url, 'DELETE', `/en/partners/campaigns/${id}`, { headers: bearer(fresh.token) });
      assert.equal(del.status, 200, del.text);
      assert.equal(del.body.message, 'Campaign deleted');
      assert.equal((await get(fresh, id)).status, 404);
      assert.equal((await put(fresh, id, { name: 'back' })).status, 404);
      assert.equal((await request(t.url, 'DELETE', `/en/partners/campaigns/${id}`, { headers: bearer(fresh.token) })).status, 404);
      const after = await list(fresh);
      assert.deepEqual([after.body.data, after.body.meta.total], [[], 0]);
      const [row] = await t.app.context.database.db.select().from(campaigns).where(eq(campaigns.id, id));
      assert.equal(row!.deletedAt?.toISOString(), clock.now().toISOString());
      assert.equal(row!.isActive, false);
    });
  });
});
