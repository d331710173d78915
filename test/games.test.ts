// Partner games configuration (/{locale}/partners/games, partner JWT): validation as one
// Shape A 422 (exact probability sum on `rewards`, reward-type fields, window order),
// happy paths, rewards replaced as a whole (old rows kept, retired), list with `meta`,
// 404/401/403 and Idempotency-Key.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createAdmin, createPartner, type AdminFixture, type PartnerFixture } from './helpers/fixtures.js';
import { bearer, request, type Response } from './helpers/http.js';

const GAME_KEYS = [
  'coupon_validity_days',
  'created_at',
  'description',
  'ends_at',
  'id',
  'is_active',
  'name',
  'partner_card_id',
  'plays_per_customer_per_day',
  'rewards',
  'starts_at',
  'type',
  'updated_at',
];
const REWARD_KEYS = ['coupon', 'id', 'label', 'points', 'probability', 'reward_type'];

const wheel = () => ({
  type: 'spin_wheel',
  name: 'Summer wheel',
  rewards: [
    { label: '10 points', probability: 0.1, reward_type: 'points', points: 10 },
    { label: '5% off', probability: 0.2, reward_type: 'coupon', coupon: { title: '5% off coffee', discount_type: 'percent', discount_value: 5 } },
    { label: 'Try again', probability: 0.7, reward_type: 'none' },
  ],
});

const keysOf = (o: object) => Object.keys(o).sort();

function assertInvalid(res: Response, fields: string[], label = '') {
  assert.equal(res.status, 422, `${label}: ${res.text}`);
  assert.equal(res.body.success, false);
  assert.equal(res.body.code, 422);
  assert.ok(res.body.errors && !Array.isArray(res.body.errors), `${label}: Shape A`);
  assert.deepEqual(keysOf(res.body.errors), [...fields].sort(), `${label}: ${res.text}`);
}

describe('partner games', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let admin: AdminFixture;
  let cardId: number;
  let deletedCardId: number;

  before(async () => {
    t = await startTestApp();
    p = await createPartner(t);
    admin = await createAdmin(t);
    const card = { title: { en: 'Card', lt: 'Kortelė' }, description: {}, terms_conditions: {}, card_design: {} };
    const created = await request(t.url, 'POST', '/en/partners/cards', { headers: bearer(p.token), json: card });
    cardId = created.body.data.id;
    const doomed = await request(t.url, 'POST', '/en/partners/cards', { headers: bearer(p.token), json: card });
    deletedCardId = doomed.body.data.id;
    await request(t.url, 'DELETE', `/en/partners/cards/${deletedCardId}`, { headers: bearer(p.token) });
  });
  after(() => t.close());

  const post = (json: unknown, who: PartnerFixture = p, headers: Record<string, string> = {}) =>
    request(t.url, 'POST', '/en/partners/games', { headers: { ...bearer(who.token), ...headers }, json });
  const get = (id: number, who: PartnerFixture = p) => request(t.url, 'GET', `/en/partners/games/${id}`, { headers: bearer(who.token) });
  const put = (id: number, json: unknown, who: PartnerFixture = p) => request(t.url, 'PUT', `/en/partners/games/${id}`, { headers: bearer(who.token), json });
  const list = (query = '', who: PartnerFixture = p) => request(t.url, 'GET', `/en/partners/games${query}`, { headers: bearer(who.token) });

  async function create(json: unknown = wheel()) {
    const res = await post(json);
    assert.equal(res.status, 201, res.text);
    return res.body.data;
  }

  it('creates a game: 201, code 201, the whole game with its defaults and rewards', async () => {
    const res = await post(wheel());
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.code, 201);
    const g = res.body.data;
    assert.deepEqual(keysOf(g), GAME_KEYS);
    for (const r of g.rewards) assert.deepEqual(keysOf(r), REWARD_KEYS);
    assert.deepEqual(
      { ...g, id: 0, created_at: '', updated_at: '', rewards: g.rewards.map((r: { id: number }) => ({ ...r, id: 0 })) },
      {
        id: 0,
        partner_card_id: null,
        type: 'spin_wheel',
        name: 'Summer wheel',
        description: null,
        is_active: true,
        starts_at: null,
        ends_at: null,
        coupon_validity_days: null,
        plays_per_customer_per_day: 1,
        created_at: '',
        updated_at: '',
        rewards: [
          { id: 0, label: '10 points', probability: 0.1, reward_type: 'points', points: 10, coupon: null },
          { id: 0, label: '5% off', probability: 0.2, reward_type: 'coupon', points: null, coupon: { title: '5% off coffee', discount_type: 'percent', discount_value: 5 } },
          { id: 0, label: 'Try again', probability: 0.7, reward_type: 'none', points: null, coupon: null },
        ],
      },
    );
    assert.deepEqual((await get(g.id)).body.data, g);
  });

  it('stores every field, with the partner card, window and coupon settings', async () => {
    const body = {
      type: 'slot_machine',
      name: 'Slots',
      description: 'Three in a row wins',
      partner_card_id: cardId,
      is_active: false,
      starts_at: '2026-06-01T09:00:00+03:00',
      ends_at: '2026-08-31T21:00:00Z',
      coupon_validity_days: 30,
      plays_per_customer_per_day: 1000,
      rewards: [
        { label: 'Jackpot', probability: 0.0001, reward_type: 'coupon', coupon: { title: '50 EUR off', discount_type: 'fixed', discount_value: 50.25 } },
        { label: 'Nothing', probability: 0.9999, reward_type: 'none', points: null, coupon: null },
      ],
    };
    const g = await create(body);
    assert.equal(g.partner_card_id, cardId);
    assert.equal(g.starts_at, '2026-06-01T06:00:00.000Z', 'stored and shown in UTC');
    assert.equal(g.ends_at, '2026-08-31T21:00:00.000Z');
    assert.equal(g.is_active, false);
    assert.equal(g.coupon_validity_days, 30);
    assert.equal(g.plays_per_customer_per_day, 1000);
    assert.deepEqual(g.rewards[0].coupon, { title: '50 EUR off', discount_type: 'fixed', discount_value: 50.25 });
    assert.equal(g.rewards[0].probability, 0.0001);
  });

  it('adds probabilities as exact decimals (0.7 + 0.2 + 0.1 is 1; binary floats say 0.9999999999999999)', async () => {
    assert.notEqual(0.7 + 0.2 + 0.1, 1);
    const rewards = [0.7, 0.2, 0.1].map((probability, i) => ({ label: `r${i}`, probability, reward_type: 'none' }));
    assert.equal((await post({ ...wheel(), rewards })).status, 201);
    const thirds = [0.3333, 0.3333, 0.3334].map((probability, i) => ({ label: `r${i}`, probability, reward_type: 'none' }));
    assert.equal((await post({ ...wheel(), rewards: thirds })).status, 201);
    const fifty = Array.from({ length: 50 }, (_, i) => ({ label: `r${i}`, probability: 0.02, reward_type: 'none' }));
    assert.equal((await post({ ...wheel(), rewards: fifty })).status, 201);
  });

  const none = (probability: number, label = 'x') => ({ label, probability, reward_type: 'none' });
  const cases: Array<[label: string, patch: Record<string, unknown>, keys: string[]]> = [
    ['sum below 1', { rewards: [none(0.5), none(0.4)] }, ['rewards']],
    ['sum above 1', { rewards: [none(0.6), none(0.5)] }, ['rewards']],
    ['sum off by 0.0001', { rewards: [none(0.3333), none(0.3333), none(0.3333)] }, ['rewards']],
    ['rewards missing', { rewards: undefined }, ['rewards']],
    ['rewards empty', { rewards: [] }, ['rewards']],
    ['51 rewards', { rewards: Array.from({ length: 51 }, () => none(0.02)) }, ['rewards']],
    ['rewards not an array', { rewards: { label: 'x' } }, ['rewards']],
    ['probability 0', { rewards: [none(0), none(1)] }, ['rewards.0.probability']],
    ['probability above 1', { rewards: [none(1.5)] }, ['rewards.0.probability']],
    ['probability with 5 decimals', { rewards: [none(0.99999), none(0.00001)] }, ['rewards.0.probability', 'rewards.1.probability']],
    ['probability a string', { rewards: [{ label: 'x', probability: '1', reward_type: 'none' }] }, ['rewards.0.probability']],
    ['label empty', { rewards: [none(1, '')] }, ['rewards.0.label']],
    ['label 256 chars', { rewards: [none(1, 'x'.repeat(256))] }, ['rewards.0.label']],
    ['reward_type unknown', { rewards: [{ label: 'x', probability: 1, reward_type: 'cash' }] }, ['rewards.0.reward_type']],
    ['points reward without points', { rewards: [{ label: 'x', probability: 1, reward_type: 'points' }] }, ['rewards.0.points']],
    ['points 0', { rewards: [{ label: 'x', probability: 1, reward_type: 'points', points: 0 }] }, ['rewards.0.points']],
    ['points fractional', { rewards: [{ label: 'x', probability: 1, reward_type: 'points', points: 2.5 }] }, ['rewards.0.points']],
    ['points on a none reward', { rewards: [{ label: 'x', probability: 1, reward_type: 'none', points: 5 }] }, ['rewards.0.points']],
    ['coupon reward without coupon', { rewards: [{ label: 'x', probability: 1, reward_type: 'coupon' }] }, ['rewards.0.coupon']],
    [
      'coupon on a points reward',
      { rewards: [{ label: 'x', probability: 1, reward_type: 'points', points: 1, coupon: { title: 'c', discount_type: 'fixed', discount_value: 1 } }] },
      ['rewards.0.coupon'],
    ],
    ['coupon discount_type unknown', { rewards: [{ label: 'x', probability: 1, reward_type: 'coupon', coupon: { title: 'c', discount_type: 'bogof', discount_value: 1 } }] }, ['rewards.0.coupon.discount_type']],
    ['coupon discount_value 0', { rewards: [{ label: 'x', probability: 1, reward_type: 'coupon', coupon: { title: 'c', discount_type: 'fixed', discount_value: 0 } }] }, ['rewards.0.coupon.discount_value']],
    ['coupon percent over 100', { rewards: [{ label: 'x', probability: 1, reward_type: 'coupon', coupon: { title: 'c', discount_type: 'percent', discount_value: 100.5 } }] }, ['rewards.0.coupon.discount_value']],
    ['coupon amount with 5 decimals', { rewards: [{ label: 'x', probability: 1, reward_type: 'coupon', coupon: { title: 'c', discount_type: 'fixed', discount_value: 1.00001 } }] }, ['rewards.0.coupon.discount_value']],
    ['coupon title missing', { rewards: [{ label: 'x', probability: 1, reward_type: 'coupon', coupon: { discount_type: 'fixed', discount_value: 1 } }] }, ['rewards.0.coupon.title']],
    ['type unknown', { type: 'lottery' }, ['type']],
    ['type missing', { type: undefined }, ['type']],
    ['name missing', { name: undefined }, ['name']],
    ['name blank', { name: '  ' }, ['name']],
    ['name 256 chars', { name: 'n'.repeat(256) }, ['name']],
    ['description a number', { description: 5 }, ['description']],
    ['is_active a string', { is_active: 'true' }, ['is_active']],
    ['starts_at not a date-time', { starts_at: 'tomorrow' }, ['starts_at']],
    ['starts_at without a time zone', { starts_at: '2026-06-01T09:00:00' }, ['starts_at']],
    ['ends_at before starts_at', { starts_at: '2026-06-02T00:00:00Z', ends_at: '2026-06-01T00:00:00Z' }, ['ends_at']],
    ['ends_at equal to starts_at', { starts_at: '2026-06-01T00:00:00Z', ends_at: '2026-06-01T03:00:00+03:00' }, ['ends_at']],
    ['starts_at in year 0', { starts_at: '0000-01-01T00:00:00Z' }, ['starts_at']],
    ['coupon_validity_days 0', { coupon_validity_days: 0 }, ['coupon_validity_days']],
    ['coupon_validity_days 3651', { coupon_validity_days: 3651 }, ['coupon_validity_days']],
    ['plays_per_customer_per_day 0', { plays_per_customer_per_day: 0 }, ['plays_per_customer_per_day']],
    ['plays_per_customer_per_day 1001', { plays_per_customer_per_day: 1001 }, ['plays_per_customer_per_day']],
    ['partner_card_id unknown', { partner_card_id: 2_000_000_000 }, ['partner_card_id']],
    ['partner_card_id beyond any id', { partner_card_id: 9_000_000_000 }, ['partner_card_id']],
    ['partner_card_id a string', { partner_card_id: 'gold' }, ['partner_card_id']],
  ];
  for (const [label, patch, keys] of cases) {
    it(`POST 422 on ${keys.join(', ')}: ${label}`, async () => {
      assertInvalid(await post(JSON.parse(JSON.stringify({ ...wheel(), ...patch }))), keys, label);
    });
  }

  it('reads no body as {} and names the required fields', async () => {
    assertInvalid(await request(t.url, 'POST', '/en/partners/games', { headers: bearer(p.token) }), ['name', 'rewards', 'type']);
  });

  it('refuses a deleted partner card', async () => {
    assertInvalid(await post({ ...wheel(), partner_card_id: deletedCardId }), ['partner_card_id']);
  });

  it('reports every problem in one response', async () => {
    const res = await post({ type: 'x', name: '', ends_at: '2020-01-01T00:00:00Z', starts_at: '2021-01-01T00:00:00Z', rewards: [none(0.5), { label: 'p', probability: 0.4, reward_type: 'points' }] });
    assertInvalid(res, ['type', 'name', 'ends_at', 'rewards', 'rewards.1.points']);
    assert.match(res.body.errors.rewards[0], /0\.9/);
  });

  describe('PUT /{locale}/partners/games/{id}', () => {
    it('changes only what is sent and answers the whole game; rewards stay when not sent', async () => {
      const g = await create();
      const res = await put(g.id, { name: 'Autumn wheel', is_active: false, description: 'New' });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.code, 200);
      assert.deepEqual(keysOf(res.body.data), GAME_KEYS);
      assert.deepEqual({ ...res.body.data, updated_at: g.updated_at }, { ...g, name: 'Autumn wheel', is_active: false, description: 'New' });
      assert.deepEqual((await get(g.id)).body.data, res.body.data);
    });

    it('replaces the rewards as a whole; the old rows are retired, not deleted', async () => {
      const g = await create();
      const res = await put(g.id, { rewards: [{ label: 'Everyone wins', probability: 1, reward_type: 'points', points: 1 }] });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.rewards.length, 1);
      assert.ok(!g.rewards.some((r: { id: number }) => r.id === res.body.data.rewards[0].id));
      const rows = (await t.app.context.database.db.execute(
        sql`select count(*) filter (where retired_at is null)::int as live, count(*) filter (where retired_at is not null)::int as retired from games_rewards where game_id = ${g.id}`,
      )) as unknown as { rows: Array<{ live: number; retired: number }> };
      assert.deepEqual(rows.rows[0], { live: 1, retired: 3 });
    });

    it('validates what is sent: sum, types, the window against the stored start', async () => {
      const g = await create({ ...wheel(), starts_at: '2026-06-01T00:00:00Z' });
      assertInvalid(await put(g.id, { rewards: [none(0.5)] }), ['rewards']);
      assertInvalid(await put(g.id, { ends_at: '2026-05-31T00:00:00Z' }), ['ends_at']);
      assertInvalid(await put(g.id, { type: 'dice', plays_per_customer_per_day: 0 }), ['type', 'plays_per_customer_per_day']);
      assertInvalid(await put(g.id, { partner_card_id: deletedCardId }), ['partner_card_id']);
      assert.equal((await put(g.id, { starts_at: null, ends_at: '2026-05-31T00:00:00Z' })).status, 200);
      const after = (await get(g.id)).body.data;
      assert.deepEqual([after.starts_at, after.ends_at, after.rewards.length], [null, '2026-05-31T00:00:00.000Z', 3]);
      assert.equal((await put(g.id, { partner_card_id: cardId })).body.data.partner_card_id, cardId);
      assert.equal((await put(g.id, { partner_card_id: null })).body.data.partner_card_id, null);
    });

    it('answers 404 for a missing game', async () => {
      const res = await put(2_000_000_000, { name: 'x' });
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 'RESOURCE_NOT_FOUND');
      assert.match(res.body.message, /Game/);
    });
  });

  describe('GET', () => {
    let lister: PartnerFixture;

    before(async () => {
      lister = await createPartner(t);
      for (let i = 1; i <= 25; i++) {
        const res = await post({ ...wheel(), name: `Game ${i}`, is_active: i % 5 !== 0 }, lister);
        assert.equal(res.status, 201);
      }
    });

    it('lists with meta pagination, ordered by id, and filters by is_active', async () => {
      const res = await list('', lister);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.meta, { current_page: 1, per_page: 20, total: 25, last_page: 2 });
      assert.equal(res.body.pagination, undefined);
      assert.equal(res.body.data.length, 20);
      for (const g of res.body.data) assert.deepEqual(keysOf(g), GAME_KEYS);
      assert.equal(res.body.data[0].name, 'Game 1');
      assert.equal(res.body.data[0].rewards.length, 3);
      const ids = res.body.data.map((g: { id: number }) => g.id);
      assert.deepEqual(ids, [...ids].sort((a, b) => a - b));
      assert.deepEqual((await list('?page=2', lister)).body.data.map((g: { name: string }) => g.name), ['Game 21', 'Game 22', 'Game 23', 'Game 24', 'Game 25']);
      const inactive = await list('?is_active=false', lister);
      assert.deepEqual(inactive.body.data.map((g: { name: string }) => g.name), ['Game 5', 'Game 10', 'Game 15', 'Game 20', 'Game 25']);
      assert.equal(inactive.body.meta.total, 5);
      assert.equal((await list('?is_active=1', lister)).body.meta.total, 20);
      assertInvalid(await list('?per_page=101', lister), ['per_page']);
      assertInvalid(await list('?is_active=perhaps', lister), ['is_active']);
    });

    it('answers 404 for a missing game', async () => {
      const res = await get(2_000_000_000);
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 'RESOURCE_NOT_FOUND');
    });
  });

  it('honours Idempotency-Key on create', async () => {
    const key = `game-${Date.now()}`;
    const first = await post(wheel(), p, { 'idempotency-key': key });
    const again = await post(wheel(), p, { 'idempotency-key': key });
    assert.equal(first.status, 201);
    assert.equal(again.status, 201);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.body.data.id, first.body.data.id);
  });

  it('answers 401 without a token and 403 to admin and customer tokens', async () => {
    const g = await create();
    const customer = (await t.app.context.tokens.sign({ kind: 'customer', subject: 1 })).token;
    const routes: Array<[string, string, unknown?]> = [
      ['POST', '/en/partners/games', wheel()],
      ['GET', '/en/partners/games'],
      ['GET', `/en/partners/games/${g.id}`],
      ['PUT', `/en/partners/games/${g.id}`, { name: 'Taken' }],
    ];
    for (const [method, path, json] of routes) {
      const none = await request(t.url, method, path, { json });
      assert.equal(none.status, 401, `${method} ${path}`);
      assert.equal(none.body.code, 'MISSING_AUTHENTICATION');
      for (const token of [admin.token, customer]) {
        const res = await request(t.url, method, path, { json, headers: bearer(token) });
        assert.equal(res.status, 403, `${method} ${path}`);
        assert.equal(res.body.code, 'INSUFFICIENT_PERMISSIONS');
      }
    }
    assert.equal((await get(g.id)).body.data.name, g.name);
  });
});
