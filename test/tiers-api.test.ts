// Tiers (DESIGN.md §13) over HTTP: the tier CRUD of a programme (defaults, every validation
// error on its exact field, the unique threshold — 409 on create, on PUT and under a race —
// the quota, the order, the version bump every change makes and a failed one does not), the
// programme's tier settings on the partner card (defaults, a bad zone, a change bumps
// tiers_version), `tier` and `tier_progress` with exact keys on every card view, and the
// tier history; the tenant cases of each.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eq, sql } from 'drizzle-orm';
import { loyaltyCards } from '../src/modules/loyalty-cards/loyalty-cards.tables.js';
import { partnerCards } from '../src/modules/partner-cards/partner-cards.tables.js';
import { tiersRepository } from '../src/modules/tiers/tiers.repository.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { claimCoupon, createOffer, keysOf, verify } from './helpers/engagement.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { createCustomer, createProgramme, createShop, joinProgramme, TestClock, type CustomerFixture } from './helpers/loyalty.js';
import { connectPusher, nextEvent, subscribe } from './helpers/realtime.js';

const TIER_KEYS = ['benefits', 'color', 'earn_multiplier', 'id', 'name', 'threshold'];
const PROGRESS_KEYS = ['basis', 'keep_until', 'next', 'value', 'window'];
const en = (name: string) => ({ en: name, lt: `${name} LT` });

describe('tiers API', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let other: PartnerFixture;
  let programme: number;
  let otherProgramme: number;
  const clock = new TestClock();

  const url = (prog: number, tierId?: number) => `/en/partners/cards/${prog}/tiers${tierId === undefined ? '' : `/${tierId}`}`;
  const post = (prog: number, json: unknown, who = p, headers: Record<string, string> = {}) =>
    request(t.url, 'POST', url(prog), { headers: { ...bearer(who.token), ...headers }, json });
  const put = (prog: number, id: number, json: unknown, who = p) => request(t.url, 'PUT', url(prog, id), { headers: bearer(who.token), json });
  const del = (prog: number, id: number, who = p) => request(t.url, 'DELETE', url(prog, id), { headers: bearer(who.token) });
  const list = (prog: number, who = p) => request(t.url, 'GET', url(prog), { headers: bearer(who.token) });
  const create = async (prog: number, body: Record<string, unknown>, who = p) => {
    const res = await post(prog, { name: en('Tier'), ...body }, who);
    assert.equal(res.status, 201, res.text);
    return res.body.data;
  };
  const version = async (prog: number) => {
    const [row] = await t.app.context.database.db.select({ v: partnerCards.tiersVersion }).from(partnerCards).where(eq(partnerCards.id, prog));
    return row!.v;
  };
  const count = async (prog: number) => (await list(prog)).body.data.length as number;

  before(async () => {
    t = await startTestApp({}, undefined, { clock });
    p = await createPartner(t, 'Kavinė');
    other = await createPartner(t, 'Other');
    programme = await createProgramme(t, p.id);
    otherProgramme = await createProgramme(t, other.id);
  });
  after(() => t.close());

  describe('CRUD', () => {
    it('creates with the defaults and answers the whole tier', async () => {
      const before = await version(programme);
      const res = await post(programme, { name: { en: '  Silver ', lt: 'Sidabrinis' }, threshold: 100 });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.code, 201);
      assert.equal(res.body.message, 'Tier created');
      assert.deepEqual(keysOf(res.body.data), TIER_KEYS);
      assert.deepEqual({ ...res.body.data, id: 0 }, { id: 0, name: { en: 'Silver', lt: 'Sidabrinis' }, threshold: 100, earn_multiplier: 1, benefits: null, color: null });
      assert.equal(await version(programme), before + 1);
    });

    it('lists by threshold, every field as stored', async () => {
      const prog = await createProgramme(t, p.id);
      await create(prog, { name: en('Gold'), threshold: 1000, earn_multiplier: 1.5, benefits: en('Free coffee'), color: '#D4AF37' });
      await create(prog, { name: en('Bronze'), threshold: 0 });
      await create(prog, { name: en('Silver'), threshold: 250, earn_multiplier: 1.25 });
      const res = await list(prog);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        res.body.data.map((x: Record<string, unknown>) => [x.threshold, x.earn_multiplier, (x.name as { en: string }).en]),
        [
          [0, 1, 'Bronze'],
          [250, 1.25, 'Silver'],
          [1000, 1.5, 'Gold'],
        ],
      );
      assert.deepEqual(res.body.data[2].benefits, en('Free coffee'));
      assert.equal(res.body.data[2].color, '#D4AF37');
      for (const tier of res.body.data) assert.deepEqual(keysOf(tier), TIER_KEYS);
    });

    it('PUT changes only the fields sent and answers the whole tier; each change bumps the version', async () => {
      const tier = await create(programme, { name: en('Gold'), threshold: 900, earn_multiplier: 2, color: '#112233', benefits: en('Lounge') });
      const before = await version(programme);
      const res = await put(programme, tier.id, { threshold: 950, color: null });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.message, 'Tier updated');
      assert.deepEqual(res.body.data, { ...tier, threshold: 950, color: null });
      assert.equal(await version(programme), before + 1);
      const same = await put(programme, tier.id, {});
      assert.equal(same.status, 200, same.text);
      assert.deepEqual(same.body.data, { ...tier, threshold: 950, color: null });
      assert.equal(await version(programme), before + 1, 'an empty PUT changes nothing');
      const renamed = await put(programme, tier.id, { name: en('Platinum'), earn_multiplier: 3.25, benefits: null });
      assert.deepEqual(renamed.body.data, { ...tier, threshold: 950, color: null, name: en('Platinum'), earn_multiplier: 3.25, benefits: null });
      assert.equal(await version(programme), before + 2);
    });

    it('DELETE removes the tier (404 afterwards) and bumps the version', async () => {
      const tier = await create(programme, { threshold: 4242 });
      const before = await version(programme);
      const res = await del(programme, tier.id);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.message, 'Tier deleted');
      assert.equal(res.body.data, undefined);
      assert.equal(await version(programme), before + 1);
      assert.ok(!(await list(programme)).body.data.some((x: { id: number }) => x.id === tier.id), 'gone from the list');
      for (const again of [await del(programme, tier.id), await put(programme, tier.id, { threshold: 1 })]) {
        assert.equal(again.status, 404, again.text);
        assert.equal(again.body.code, 'RESOURCE_NOT_FOUND');
      }
      assert.equal(await version(programme), before + 1);
    });

    describe('validation: one 422 on the exact field, nothing stored', () => {
      const long = (n: number) => 'x'.repeat(n);
      const ok = () => ({ name: en('T'), threshold: 7000 });
      const cases: Array<[label: string, body: () => Record<string, unknown>, fields: string[]]> = [
        ['required fields', () => ({}), ['name', 'threshold']],
        ['name without lt', () => ({ ...ok(), name: { en: 'Gold' } }), ['name.lt']],
        ['blank name.en', () => ({ ...ok(), name: { en: '  ', lt: 'x' } }), ['name.en']],
        ['name.lt over 100', () => ({ ...ok(), name: { en: 'x', lt: long(101) } }), ['name.lt']],
        ['name not an object', () => ({ ...ok(), name: 'Gold' }), ['name']],
        ['threshold negative', () => ({ ...ok(), threshold: -1 }), ['threshold']],
        ['threshold not whole', () => ({ ...ok(), threshold: 1.5 }), ['threshold']],
        ['threshold a string', () => ({ ...ok(), threshold: '100' }), ['threshold']],
        ['threshold over the cap', () => ({ ...ok(), threshold: 1_000_000_001 }), ['threshold']],
        ['multiplier below 1', () => ({ ...ok(), earn_multiplier: 0.5 }), ['earn_multiplier']],
        ['multiplier over 10', () => ({ ...ok(), earn_multiplier: 10.01 }), ['earn_multiplier']],
        ['multiplier with 3 decimals', () => ({ ...ok(), earn_multiplier: 1.255 }), ['earn_multiplier']],
        ['multiplier null', () => ({ ...ok(), earn_multiplier: null }), ['earn_multiplier']],
        ['benefits without lt', () => ({ ...ok(), benefits: { en: 'x' } }), ['benefits.lt']],
        ['benefits.en blank', () => ({ ...ok(), benefits: { en: ' ', lt: 'x' } }), ['benefits.en']],
        ['color not #RRGGBB', () => ({ ...ok(), color: 'red' }), ['color']],
        ['color short form', () => ({ ...ok(), color: '#FFF' }), ['color']],
        ['every problem at once', () => ({ name: { en: '', lt: 'x' }, threshold: -5, earn_multiplier: 2.005, color: '#GGGGGG' }), ['color', 'earn_multiplier', 'name.en', 'threshold']],
      ];
      for (const [label, body, fields] of cases) {
        it(label, async () => {
          const [n, v] = [await count(programme), await version(programme)];
          const res = await post(programme, body());
          assert.equal(res.status, 422, res.text);
          assert.equal(res.body.code, 422);
          assert.deepEqual(keysOf(res.body.errors), fields, res.text);
          assert.equal(await count(programme), n);
          assert.equal(await version(programme), v);
        });
      }

      it('PUT checks the fields it is sent, and changes nothing on a failure', async () => {
        const tier = await create(programme, { threshold: 7100 });
        const v = await version(programme);
        for (const [body, fields] of [
          [{ threshold: -1 }, ['threshold']],
          [{ earn_multiplier: 1.001 }, ['earn_multiplier']],
          [{ earn_multiplier: 11, color: 'blue' }, ['color', 'earn_multiplier']],
          [{ name: { en: 'x' } }, ['name.lt']],
          [{ benefits: { lt: 'x' } }, ['benefits.en']],
        ] as const) {
          const res = await put(programme, tier.id, body);
          assert.equal(res.status, 422, res.text);
          assert.deepEqual(keysOf(res.body.errors), fields, res.text);
        }
        assert.equal(await version(programme), v);
        assert.deepEqual((await list(programme)).body.data.find((x: { id: number }) => x.id === tier.id), tier);
      });

      it('a body that fails the schema on a tier of another programme is 404, not 422', async () => {
        const res = await put(otherProgramme, 1, { threshold: -1 });
        assert.equal(res.status, 404, res.text);
      });
    });

    describe('the threshold is unique in the programme', () => {
      it('create: 409 DUPLICATE_VALUE on threshold, nothing stored, no version bump', async () => {
        await create(programme, { threshold: 5000 });
        const [n, v] = [await count(programme), await version(programme)];
        const res = await post(programme, { name: en('Again'), threshold: 5000 });
        assert.equal(res.status, 409, res.text);
        assert.equal(res.body.code, 'DUPLICATE_VALUE');
        assert.deepEqual(
          res.body.errors.map((e: { field: string; code: string }) => [e.field, e.code]),
          [['threshold', 'DUPLICATE_VALUE']],
        );
        assert.equal(await count(programme), n);
        assert.equal(await version(programme), v);
      });

      it('PUT to a taken threshold: 409 on threshold, the tier unchanged', async () => {
        await create(programme, { threshold: 5100 });
        const tier = await create(programme, { threshold: 5200 });
        const v = await version(programme);
        const res = await put(programme, tier.id, { threshold: 5100, name: en('Moved') });
        assert.equal(res.status, 409, res.text);
        assert.equal(res.body.code, 'DUPLICATE_VALUE');
        assert.equal(res.body.errors[0].field, 'threshold');
        assert.equal(await version(programme), v);
        assert.deepEqual((await list(programme)).body.data.find((x: { id: number }) => x.id === tier.id), tier);
        const own = await put(programme, tier.id, { threshold: 5200 });
        assert.equal(own.status, 200, 'its own threshold is not a duplicate');
      });

      it('the same threshold in another programme is fine', async () => {
        const prog = await createProgramme(t, p.id);
        await create(prog, { threshold: 5000 });
      });

      it('parallel creates of one threshold: exactly one 201, the rest 409', async () => {
        const prog = await createProgramme(t, p.id);
        const results = await Promise.all(Array.from({ length: 8 }, (_, i) => post(prog, { name: en(`Race ${i}`), threshold: 300 })));
        assert.deepEqual(results.map((r) => r.status).sort(), [201, 409, 409, 409, 409, 409, 409, 409], results.map((r) => r.text).join('\n'));
        assert.equal(await count(prog), 1);
        assert.equal(await version(prog), 1);
      });
    });

    it(`a programme has at most 20 tiers: the 21st is 422 QUOTA_EXCEEDED`, async () => {
      const prog = await createProgramme(t, p.id);
      for (let i = 0; i < 20; i++) await create(prog, { threshold: i * 10 });
      const v = await version(prog);
      const res = await post(prog, { name: en('One too many'), threshold: 9999 });
      assert.equal(res.status, 422, res.text);
      assert.equal(res.body.code, 'QUOTA_EXCEEDED');
      assert.deepEqual(res.body.errors, [{ field: 'tiers', code: 'QUOTA_EXCEEDED', message: 'A programme has at most 20 tiers', meta: { limit: 20 } }]);
      assert.equal(await count(prog), 20);
      assert.equal(await version(prog), v);
      // Room again after a delete.
      assert.equal((await del(prog, (await list(prog)).body.data[0].id)).status, 200);
      await create(prog, { threshold: 9999 });
    });

    describe('tenants', () => {
      it("another partner's programme is 404 for every route, and nothing changes", async () => {
        const theirs = await create(otherProgramme, { threshold: 10 }, other);
        const v = await version(otherProgramme);
        for (const res of [
          await list(otherProgramme),
          await post(otherProgramme, { name: en('X'), threshold: 20 }),
          await put(otherProgramme, theirs.id, { threshold: 30 }),
          await del(otherProgramme, theirs.id),
        ]) {
          assert.equal(res.status, 404, res.text);
          assert.equal(res.body.code, 'RESOURCE_NOT_FOUND');
        }
        assert.equal(await version(otherProgramme), v);
        assert.deepEqual((await list(otherProgramme, other)).body.data, [theirs]);
      });

      it("another partner's tier through one's own programme is 404", async () => {
        const theirs = await create(otherProgramme, { threshold: 11 }, other);
        for (const res of [await put(programme, theirs.id, { threshold: 12 }), await del(programme, theirs.id)]) assert.equal(res.status, 404, res.text);
        assert.ok((await list(otherProgramme, other)).body.data.some((x: { id: number; threshold: number }) => x.id === theirs.id && x.threshold === 11), 'unchanged');
      });

      it('a tier of another programme of the same partner is 404', async () => {
        const prog = await createProgramme(t, p.id);
        const tier = await create(prog, { threshold: 1 });
        for (const res of [await put(programme, tier.id, { threshold: 2 }), await del(programme, tier.id)]) assert.equal(res.status, 404, res.text);
        assert.deepEqual((await list(prog)).body.data, [tier]);
      });

      it('a deleted programme is 404', async () => {
        const prog = await createProgramme(t, p.id);
        const tier = await create(prog, { threshold: 1 });
        assert.equal((await request(t.url, 'DELETE', `/en/partners/cards/${prog}`, { headers: bearer(p.token) })).status, 200);
        for (const res of [await list(prog), await post(prog, { name: en('X'), threshold: 2 }), await put(prog, tier.id, { threshold: 3 }), await del(prog, tier.id)]) {
          assert.equal(res.status, 404, res.text);
        }
      });

      it('without a partner token: 401; with API credentials: 401/403', async () => {
        assert.equal((await request(t.url, 'GET', url(programme))).status, 401);
        const api = await request(t.url, 'GET', url(programme), { headers: apiHeaders(p.apiKey) });
        assert.ok([401, 403].includes(api.status), api.text);
      });
    });
  });

  describe('programme tier settings (partner card fields)', () => {
    const cardUrl = (id?: number) => `/en/partners/cards${id === undefined ? '' : `/${id}`}`;
    const newCard = (extra: Record<string, unknown> = {}) =>
      request(t.url, 'POST', cardUrl(), { headers: bearer(p.token), json: { title: { en: 'C', lt: 'K' }, description: {}, terms_conditions: {}, card_design: {}, ...extra } });
    const getCard = async (id: number) => (await request(t.url, 'GET', cardUrl(id), { headers: bearer(p.token) })).body.data;
    const putCard = (id: number, json: unknown) => request(t.url, 'PUT', cardUrl(id), { headers: bearer(p.token), json });

    it('a new programme takes the defaults; the full view shows them', async () => {
      const res = await newCard();
      assert.equal(res.status, 201, res.text);
      const card = await getCard(res.body.data.id);
      assert.deepEqual(
        { basis: card.tier_basis, window: card.tier_window, downgrade: card.tier_downgrade, zone: card.tier_time_zone },
        { basis: 'points_earned', window: 'rolling_12_months', downgrade: 'end_of_window', zone: 'Europe/Vilnius' },
      );
      assert.equal(await version(res.body.data.id), 0);
    });

    it('create and update store them (the zone in its canonical spelling); PUT answers the fields sent', async () => {
      const res = await newCard({ tier_basis: 'amount_spent', tier_window: 'calendar_year', tier_downgrade: 'never', tier_time_zone: 'europe/riga' });
      assert.equal(res.status, 201, res.text);
      const id = res.body.data.id;
      assert.deepEqual(
        (({ tier_basis, tier_window, tier_downgrade, tier_time_zone }) => ({ tier_basis, tier_window, tier_downgrade, tier_time_zone }))(await getCard(id)),
        { tier_basis: 'amount_spent', tier_window: 'calendar_year', tier_downgrade: 'never', tier_time_zone: 'Europe/Riga' },
      );
      const upd = await putCard(id, { tier_window: 'lifetime', tier_time_zone: 'UTC' });
      assert.equal(upd.status, 200, upd.text);
      assert.deepEqual(keysOf(upd.body.data), ['tier_time_zone', 'tier_window', 'updated_at']);
      assert.equal(upd.body.data.tier_window, 'lifetime');
      assert.equal(upd.body.data.tier_time_zone, 'UTC');
    });

    it('a change of any of them bumps tiers_version; the same values, or other fields, do not', async () => {
      const id = (await newCard()).body.data.id;
      let v = await version(id);
      for (const change of [{ tier_basis: 'amount_spent' }, { tier_window: 'calendar_year' }, { tier_downgrade: 'never' }, { tier_time_zone: 'Europe/Riga' }]) {
        assert.equal((await putCard(id, change)).status, 200);
        assert.equal(await version(id), ++v, JSON.stringify(change));
      }
      assert.equal((await putCard(id, { tier_basis: 'amount_spent', tier_time_zone: 'Europe/Riga', is_active: false })).status, 200);
      assert.equal(await version(id), v, 'nothing of the tiers changed');
    });

    it('an unknown zone or value is 422 on its field (create and update), nothing stored', async () => {
      for (const [body, fields] of [
        [{ tier_time_zone: 'Mars/Olympus_Mons' }, ['tier_time_zone']],
        [{ tier_time_zone: '+02:00' }, ['tier_time_zone']],
        [{ tier_time_zone: '' }, ['tier_time_zone']],
        [{ tier_basis: 'visits' }, ['tier_basis']],
        [{ tier_window: 'monthly' }, ['tier_window']],
        [{ tier_downgrade: 'always' }, ['tier_downgrade']],
      ] as const) {
        const created = await newCard(body);
        assert.equal(created.status, 422, created.text);
        assert.deepEqual(keysOf(created.body.errors), fields, created.text);
        const updated = await putCard(programme, body);
        assert.equal(updated.status, 422, updated.text);
        assert.deepEqual(keysOf(updated.body.errors), fields, updated.text);
      }
      assert.equal((await getCard(programme)).tier_time_zone, 'Europe/Vilnius');
    });
  });

  describe('tier and tier_progress on every card view', () => {
    let prog: number;
    let shop: number;
    let silver: { id: number; name: unknown; color: string | null };
    let gold: { id: number; name: unknown };
    let c: CustomerFixture;
    let card: { id: number; card_number: string };
    const keepUntil = '2027-03-01T10:00:00.000Z';
    const expectedTier = () => ({ id: silver.id, name: silver.name, color: silver.color });
    const expectedProgress = () => ({ basis: 'points_earned', window: 'rolling_12_months', value: 250, next: { id: gold.id, name: gold.name, threshold: 500, remaining: 250 }, keep_until: keepUntil });
    // The card's stored tier state, as the ledger would have left it, evaluated at the programme's
    // current tiers_version (so that no re-evaluation of a changed programme replaces it).
    const setState = (cardId: number, tierId: number | null, value: string, keep: string | null) =>
      t.app.context.database.db
        .update(loyaltyCards)
        .set({
          tierId,
          tierValue: value,
          tierKeepUntil: keep === null ? null : new Date(keep),
          tierReachedAt: tierId === null ? null : clock.now(),
          tierValueUntil: null,
          tierVersion: sql`(select tiers_version from partner_cards where id = ${loyaltyCards.partnerCardId})`,
        })
        .where(eq(loyaltyCards.id, cardId));
    const assertTier = (view: Record<string, unknown>, label: string) => {
      assert.ok('tier' in view && 'tier_progress' in view, `${label}: tier fields present`);
      assert.deepEqual(view.tier, expectedTier(), label);
      assert.deepEqual(keysOf(view.tier_progress as object), PROGRESS_KEYS, label);
      assert.deepEqual(view.tier_progress, expectedProgress(), label);
    };
    const api = () => apiHeaders(p.apiKey);

    before(async () => {
      prog = await createProgramme(t, p.id, { autoAssign: true });
      shop = await createShop(t, p.id);
      silver = await create(prog, { name: en('Silver'), threshold: 100, color: '#C0C0C0' });
      gold = await create(prog, { name: en('Gold'), threshold: 500, earn_multiplier: 2 });
      c = await createCustomer(t);
      card = await joinProgramme(t, c, prog);
      await setState(card.id, silver.id, '250', keepUntil);
    });

    it('loyalty-cards: the list, one card (API credentials) and the customer\'s cards (JWT)', async () => {
      const listed = await request(t.url, 'GET', `/en/shop/loyalty-cards?partner_card_id=${prog}`, { headers: api() });
      assert.equal(listed.status, 200, listed.text);
      assertTier(listed.body.data[0], 'partner list');
      const one = await request(t.url, 'GET', `/en/shop/loyalty-cards/${card.id}`, { headers: api() });
      assertTier(one.body.data, 'one card');
      const own = await request(t.url, 'GET', `/en/shop/loyalty-cards/${c.id}`, { headers: bearer(c.token) });
      assertTier(own.body.data.find((x: { id: number }) => x.id === card.id), "the app's cards");
    });

    it('a new card: no tier yet, the lowest tier next', async () => {
      const c2 = await createCustomer(t);
      const res = await request(t.url, 'POST', '/en/shop/loyalty-cards', { headers: bearer(c2.token), json: { partner_card_id: prog } });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.data.tier, null);
      assert.deepEqual(res.body.data.tier_progress, { basis: 'points_earned', window: 'rolling_12_months', value: 0, next: { id: silver.id, name: silver.name, threshold: 100, remaining: 100 }, keep_until: null });
      const third = await request(t.url, 'POST', '/en/shop/loyalty-cards/third-party', { headers: bearer(c2.token), json: { partner_card_id: programme, card_number: 'EXT-0001' } });
      assert.equal(third.status, 201, third.text);
      assert.deepEqual(keysOf(third.body.data.tier_progress), PROGRESS_KEYS);
    });

    it('info and both balance views', async () => {
      const info = await request(t.url, 'GET', `/en/shop/loyalty-cards/info?card_id=${card.id}`, { headers: api() });
      assert.equal(info.status, 200, info.text);
      assertTier(info.body.data.card, 'info');
      const balance = await request(t.url, 'GET', `/en/shop/loyalty-cards/balance?card_number=${card.card_number}`, { headers: api() });
      assert.equal(balance.status, 200, balance.text);
      assertTier(balance.body.data, 'loyalty-cards/balance');
      assert.deepEqual(keysOf(balance.body.data), ['card_id', 'card_number', 'expiring', 'points_balance', 'points_debt', 'tier', 'tier_progress']);
      for (const headers of [api(), bearer(c.token)]) {
        const b = await request(t.url, 'GET', `/en/shop/points/card/${card.id}/balance`, { headers });
        assert.equal(b.status, 200, b.text);
        assertTier(b.body.data, 'points balance');
        assert.deepEqual(keysOf(b.body.data), ['card_id', 'expiring', 'points_balance', 'points_debt', 'tier', 'tier_progress']);
      }
    });

    it("coupon verify's card", async () => {
      const offer = await createOffer(t, p, { partner_card_id: prog, max_claims_per_customer: 10 });
      const coupon = await claimCoupon(t, c, offer.id);
      const res = await verify(t, p, coupon.code, shop);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(keysOf(res.body.data.card), ['card_number', 'id', 'points_balance', 'tier', 'tier_progress', 'user_id']);
      assertTier(res.body.data.card, 'coupon verify');
    });

    it('the QR card: its event and its status', async () => {
      const gen = await request(t.url, 'POST', '/en/shop/qr-card/generate', { headers: api() });
      assert.equal(gen.status, 200, gen.text);
      const { session_id, qr_content } = gen.body.data;
      const pusher = await connectPusher(t);
      try {
        const channel = await subscribe(pusher, `qr-card.${session_id}`);
        const event = nextEvent<{ card: { card: Record<string, unknown> } }>(channel, 'status_update');
        const share = await request(t.url, 'POST', '/en/app/qr-card/scan', { headers: bearer(c.token), json: { code: qr_content, card_id: card.id } });
        assert.equal(share.status, 200, share.text);
        assertTier((await event).card.card, 'qr-card event');
      } finally {
        pusher.disconnect();
      }
      const status = await request(t.url, 'GET', `/en/shop/qr-card/status/${session_id}`, { headers: api() });
      assertTier(status.body.data.card.card, 'qr-card status');
    });

    it("the QR login's user: its cards with the partner, in the event and the poll", async () => {
      const gen = await request(t.url, 'POST', '/en/shop/auth/qr-login/generate', { headers: api(), json: { device_name: 'Till 1' } });
      const { session_id, qr_content } = gen.body.data;
      const pusher = await connectPusher(t);
      try {
        const channel = await subscribe(pusher, `qr-login.${session_id}`);
        const event = nextEvent<{ status: string; user: { cards: Array<Record<string, unknown>> } }>(channel, 'status_update');
        const confirm = await request(t.url, 'POST', '/en/app/qr-login/confirm', { headers: bearer(c.token), json: { code: qr_content } });
        assert.equal(confirm.status, 200, confirm.text);
        const got = await event;
        assertTier(got.user.cards.find((x) => x.id === card.id)!, 'qr-login event');
      } finally {
        pusher.disconnect();
      }
      const poll = await request(t.url, 'POST', `/en/shop/auth/qr-login/poll/${session_id}`, { headers: api() });
      assert.equal(poll.status, 200, poll.text);
      assert.ok(poll.body.data.user.cards.every((x: { partner_id: number }) => x.partner_id === p.id), "only the partner's cards");
      assertTier(poll.body.data.user.cards.find((x: { id: number }) => x.id === card.id), 'qr-login poll');
    });

    it("the partner console's customers", async () => {
      const res = await request(t.url, 'GET', `/en/partners/customers?search=${encodeURIComponent(c.phone)}`, { headers: bearer(p.token) });
      assert.equal(res.status, 200, res.text);
      assertTier(res.body.data[0].cards.find((x: { id: number }) => x.id === card.id), 'partner customers');
    });

    it('next and remaining: above the tier held; null at the top; amount_spent in EUR with 4 decimals', async () => {
      const c3 = await createCustomer(t);
      const c3card = await joinProgramme(t, c3, prog);
      const view = async () => (await request(t.url, 'GET', `/en/shop/loyalty-cards/${c3card.id}`, { headers: api() })).body.data;

      await setState(c3card.id, null, '99', null);
      assert.deepEqual((await view()).tier_progress.next, { id: silver.id, name: silver.name, threshold: 100, remaining: 1 });
      await setState(c3card.id, gold.id, '800', '2027-01-01T00:00:00.000Z');
      const top = await view();
      assert.deepEqual(top.tier, { id: gold.id, name: gold.name, color: null });
      assert.equal(top.tier_progress.next, null);
      // Gold kept from an earlier window with a value below Silver's threshold: Silver is not "next".
      await setState(c3card.id, gold.id, '40', '2027-01-01T00:00:00.000Z');
      assert.equal((await view()).tier_progress.next, null);
      assert.equal((await view()).tier_progress.value, 40);

      await t.app.context.database.db.update(partnerCards).set({ tierBasis: 'amount_spent', tierWindow: 'calendar_year' }).where(eq(partnerCards.id, prog));
      try {
        await setState(c3card.id, null, '23.4567', null);
        assert.deepEqual((await view()).tier_progress, {
          basis: 'amount_spent',
          window: 'calendar_year',
          value: 23.4567,
          next: { id: silver.id, name: silver.name, threshold: 100, remaining: 76.5433 },
          keep_until: null,
        });
        await setState(c3card.id, silver.id, '499.9999', '2027-01-01T00:00:00.000Z');
        assert.deepEqual((await view()).tier_progress.next, { id: gold.id, name: gold.name, threshold: 500, remaining: 0.0001 });
      } finally {
        await t.app.context.database.db.update(partnerCards).set({ tierBasis: 'points_earned', tierWindow: 'rolling_12_months' }).where(eq(partnerCards.id, prog));
      }
    });

    it('a tier id no longer among the tiers shows as no tier; a programme without tiers shows none', async () => {
      const c4 = await createCustomer(t);
      const c4card = await joinProgramme(t, c4, prog);
      const doomed = await create(prog, { name: en('Doomed'), threshold: 300 });
      assert.equal((await del(prog, doomed.id)).status, 200);
      // The state of a card the background re-evaluation has not reached yet: let the woken
      // job finish first, then put the card back on the deleted tier.
      await t.app.context.workers.tierSweeper.runOnce();
      await setState(c4card.id, doomed.id, '320', keepUntil);
      const v = (await request(t.url, 'GET', `/en/shop/loyalty-cards/${c4card.id}`, { headers: api() })).body.data;
      assert.equal(v.tier, null);
      assert.equal(v.tier_progress.keep_until, null);
      assert.deepEqual(v.tier_progress.next, { id: gold.id, name: gold.name, threshold: 500, remaining: 180 });

      const plain = await createProgramme(t, p.id);
      const c5card = await joinProgramme(t, c4, plain);
      const pv = (await request(t.url, 'GET', `/en/shop/loyalty-cards/${c5card.id}`, { headers: api() })).body.data;
      assert.equal(pv.tier, null);
      assert.deepEqual(pv.tier_progress, { basis: 'points_earned', window: 'rolling_12_months', value: 0, next: null, keep_until: null });
    });

    it("the tiers of another partner's programme never show on a card", async () => {
      // A card's programme is its own: with the other partner's tiers at the same thresholds,
      // the view still names this programme's.
      await create(otherProgramme, { name: en('Theirs'), threshold: 50 }, other);
      await setState(card.id, silver.id, '250', keepUntil);
      const v = (await request(t.url, 'GET', `/en/shop/loyalty-cards/${card.id}`, { headers: api() })).body.data;
      assertTier(v, 'own tiers only');
    });
  });

  describe('tier history', () => {
    let prog: number;
    let c: CustomerFixture;
    let cardId: number;
    let bronze: { id: number; name: { en: string; lt: string } };
    let silver: { id: number; name: { en: string; lt: string } };
    const history = (id: number, headers: Record<string, string>, query = '') => request(t.url, 'GET', `/en/shop/loyalty-cards/${id}/tier-history${query}`, { headers });

    before(async () => {
      prog = await createProgramme(t, p.id);
      bronze = await create(prog, { name: en('Bronze'), threshold: 10 });
      silver = await create(prog, { name: en('Silver'), threshold: 100 });
      c = await createCustomer(t);
      cardId = (await joinProgramme(t, c, prog)).id;
      const names = new Map([
        [bronze.id, bronze.name],
        [silver.id, silver.name],
      ]);
      const db = t.app.context.database.db;
      await tiersRepository.recordMove(db, cardId, { from: null, to: bronze.id, reason: 'earned' }, names, new Date('2026-01-01T10:00:00Z'));
      await tiersRepository.recordMove(db, cardId, { from: bronze.id, to: silver.id, reason: 'earned' }, names, new Date('2026-02-01T10:00:00Z'));
      await tiersRepository.recordMove(db, cardId, { from: silver.id, to: bronze.id, reason: 'returned' }, names, new Date('2026-02-02T10:00:00Z'));
      await tiersRepository.recordMove(db, cardId, { from: bronze.id, to: null, reason: 'window_ended' }, names, new Date('2027-03-01T00:00:00Z'));
    });

    it('newest first, with meta, for the card holder (JWT) and the partner (API credentials) alike', async () => {
      for (const headers of [bearer(c.token), apiHeaders(p.apiKey)]) {
        const res = await history(cardId, headers);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body.meta, { current_page: 1, per_page: 20, total: 4, last_page: 1 });
        assert.deepEqual(res.body.data, [
          { from: { id: bronze.id, name: bronze.name }, to: null, reason: 'window_ended', at: '2027-03-01T00:00:00.000Z' },
          { from: { id: silver.id, name: silver.name }, to: { id: bronze.id, name: bronze.name }, reason: 'returned', at: '2026-02-02T10:00:00.000Z' },
          { from: { id: bronze.id, name: bronze.name }, to: { id: silver.id, name: silver.name }, reason: 'earned', at: '2026-02-01T10:00:00.000Z' },
          { from: null, to: { id: bronze.id, name: bronze.name }, reason: 'earned', at: '2026-01-01T10:00:00.000Z' },
        ]);
      }
      const page2 = await history(cardId, bearer(c.token), '?per_page=3&page=2');
      assert.deepEqual(page2.body.meta, { current_page: 2, per_page: 3, total: 4, last_page: 2 });
      assert.equal(page2.body.data.length, 1);
      assert.equal(page2.body.data[0].at, '2026-01-01T10:00:00.000Z');
    });

    it('a deleted tier keeps its name, with id null', async () => {
      const prog2 = await createProgramme(t, p.id);
      const gone = await create(prog2, { name: en('Gone'), threshold: 5 });
      const c2 = await createCustomer(t);
      const id = (await joinProgramme(t, c2, prog2)).id;
      await tiersRepository.recordMove(t.app.context.database.db, id, { from: null, to: gone.id, reason: 'earned' }, new Map([[gone.id, gone.name]]), new Date('2026-01-05T00:00:00Z'));
      assert.equal((await del(prog2, gone.id)).status, 200);
      const res = await history(id, bearer(c2.token));
      assert.deepEqual(res.body.data, [{ from: null, to: { id: null, name: en('Gone') }, reason: 'earned', at: '2026-01-05T00:00:00.000Z' }]);
    });

    it("another's card is 404 with either credential; so is an unknown one", async () => {
      const stranger = await createCustomer(t);
      const scopedElsewhere = await createCustomer(t, other.id);
      const ownedBy = await t.app.context.database.db.select({ customerId: loyaltyCards.customerId }).from(loyaltyCards).where(eq(loyaltyCards.id, cardId));
      assert.equal(ownedBy[0]!.customerId, c.id);
      for (const [label, res] of [
        ['another customer', await history(cardId, bearer(stranger.token))],
        ['another partner', await history(cardId, apiHeaders(other.apiKey))],
        ['unknown card', await history(2147483647, apiHeaders(p.apiKey))],
      ] as const) {
        assert.equal(res.status, 404, `${label}: ${res.text}`);
        assert.equal(res.body.code, 'RESOURCE_NOT_FOUND', label);
      }
      // The holder's own QR-login token from another partner sees only that partner's cards.
      const { token } = await t.app.context.tokens.sign({ kind: 'customer', subject: c.id, partnerId: other.id });
      assert.equal((await history(cardId, bearer(token))).status, 404);
      assert.equal((await history(cardId, bearer(scopedElsewhere.token))).status, 404);
      assert.equal((await history(cardId, {})).status, 401);
      const rows = await t.app.context.database.db.execute(sql`select count(*)::int as n from card_tier_history where card_id = ${cardId}`);
      assert.equal((rows as unknown as { rows: Array<{ n: number }> }).rows[0]!.n, 4);
    });
  });
});
