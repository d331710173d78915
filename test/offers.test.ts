// Offers (DESIGN.md §8): the partner's CRUD (one 422 for every problem, defaults, partial PUT,
// soft delete), what tills and apps see, sync-status, and the claim — its coupon, its points
// through the ledger (type redeem) in the same transaction, every refusal with its code and
// meta, a replayed Idempotency-Key that charges once, and a transaction killed between the
// debit and the coupon that leaves nothing behind.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { assertLedgerConsistent, balanceOf, createCustomer, createProgramme, createShop, joinProgramme, TestClock } from './helpers/loyalty.js';
import { assertRefused, claim, claimCoupon, COUPON_KEYS, createOffer, keysOf, OFFER_KEYS } from './helpers/engagement.js';

describe('offers', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let other: PartnerFixture;
  let programme: number;
  let shop: number;
  const clock = new TestClock();

  const rows = async (query: ReturnType<typeof sql>) => ((await t.app.context.database.db.execute(query)) as unknown as { rows: any[] }).rows;

  before(async () => {
    t = await startTestApp({}, undefined, { clock });
    p = await createPartner(t, 'Kavinė');
    other = await createPartner(t, 'Other');
    programme = await createProgramme(t, p.id, { initialBonusPoints: 100, defaultCouponValidityDays: 7 });
    shop = await createShop(t, p.id);
  });
  after(() => t.close());

  describe('partner CRUD', () => {
    it('creates with defaults and answers the whole offer', async () => {
      const res = await request(t.url, 'POST', '/en/partners/offers', { headers: bearer(p.token), json: { title: '  Free coffee ', discount_type: 'gift' } });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.code, 201);
      const o = res.body.data;
      assert.deepEqual(keysOf(o), OFFER_KEYS);
      assert.deepEqual(
        { ...o, id: 0, created_at: '', updated_at: '' },
        {
          id: 0,
          partner_card_id: null,
          title: 'Free coffee',
          description: null,
          discount_type: 'gift',
          discount_value: null,
          reward_type: 'coupon',
          reward_details: null,
          points_cost: 0,
          starts_at: null,
          ends_at: null,
          is_active: true,
          featured: false,
          shop_ids: [],
          product_ids: [],
          category_ids: [],
          max_claims: null,
          max_claims_per_customer: 1,
          claims_count: 0,
          coupon_validity_days: null,
          source: 'api',
          created_at: '',
          updated_at: '',
        },
      );
    });

    it('reports every problem in one Shape A 422 and stores nothing', async () => {
      const before = await request(t.url, 'GET', '/en/partners/offers', { headers: bearer(p.token) });
      const foreignShop = await createShop(t, other.id);
      const res = await request(t.url, 'POST', '/en/partners/offers', {
        headers: bearer(p.token),
        json: {
          title: '',
          discount_type: 'percent',
          discount_value: 120.12345,
          points_cost: 10,
          shop_ids: [shop, foreignShop],
          starts_at: '2026-05-01T00:00:00Z',
          ends_at: '2026-04-01T00:00:00Z',
          max_claims: 0,
        },
      });
      assert.equal(res.status, 422, res.text);
      assert.equal(res.body.code, 422);
      assert.deepEqual(keysOf(res.body.errors), ['discount_value', 'ends_at', 'max_claims', 'partner_card_id', 'shop_ids', 'title']);
      const missingValue = await request(t.url, 'POST', '/en/partners/offers', { headers: bearer(p.token), json: { title: 'x', discount_type: 'fixed' } });
      assert.deepEqual(keysOf(missingValue.body.errors), ['discount_value']);
      const foreignCard = await request(t.url, 'POST', '/en/partners/offers', {
        headers: bearer(p.token),
        json: { title: 'x', discount_type: 'gift', partner_card_id: await createProgramme(t, other.id) },
      });
      assert.deepEqual(keysOf(foreignCard.body.errors), ['partner_card_id']);
      const after = await request(t.url, 'GET', '/en/partners/offers', { headers: bearer(p.token) });
      assert.equal(after.body.meta.total, before.body.meta.total);
    });

    it('PUT changes only what is sent, checks against the stored offer, and answers the whole offer', async () => {
      const o = await createOffer(t, p, { discount_type: 'percent', discount_value: 10, starts_at: '2026-01-01T00:00:00Z' });
      const res = await request(t.url, 'PUT', `/en/partners/offers/${o.id}`, { headers: bearer(p.token), json: { featured: true, discount_value: 15.5 } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.featured, true);
      assert.equal(res.body.data.discount_value, 15.5);
      assert.equal(res.body.data.title, 'Free coffee');
      assert.deepEqual(keysOf(res.body.data), OFFER_KEYS);
      const bad = await request(t.url, 'PUT', `/en/partners/offers/${o.id}`, { headers: bearer(p.token), json: { ends_at: '2025-12-31T00:00:00Z', discount_value: 101 } });
      assert.deepEqual(keysOf(bad.body.errors), ['discount_value', 'ends_at']);
      const needsCard = await request(t.url, 'PUT', `/en/partners/offers/${o.id}`, { headers: bearer(p.token), json: { points_cost: 5 } });
      assert.deepEqual(keysOf(needsCard.body.errors), ['partner_card_id']);
      const unchanged = await request(t.url, 'GET', `/en/partners/offers/${o.id}`, { headers: bearer(p.token) });
      assert.equal(unchanged.body.data.discount_value, 15.5);
      assert.equal(unchanged.body.data.points_cost, 0);
    });

    it('lists with meta and the is_active / featured filters; DELETE hides the offer', async () => {
      const fresh = await createPartner(t);
      const a = await createOffer(t, fresh, { featured: true });
      const b = await createOffer(t, fresh, { is_active: false });
      const list = await request(t.url, 'GET', '/en/partners/offers?per_page=1', { headers: bearer(fresh.token) });
      assert.deepEqual(list.body.meta, { current_page: 1, per_page: 1, total: 2, last_page: 2 });
      assert.deepEqual(list.body.data.map((o: any) => o.id), [a.id]);
      const featured = await request(t.url, 'GET', '/en/partners/offers?featured=1', { headers: bearer(fresh.token) });
      assert.deepEqual(featured.body.data.map((o: any) => o.id), [a.id]);
      const inactive = await request(t.url, 'GET', '/en/partners/offers?is_active=false', { headers: bearer(fresh.token) });
      assert.deepEqual(inactive.body.data.map((o: any) => o.id), [b.id]);
      const del = await request(t.url, 'DELETE', `/en/partners/offers/${a.id}`, { headers: bearer(fresh.token) });
      assert.equal(del.status, 200);
      assert.equal((await request(t.url, 'GET', `/en/partners/offers/${a.id}`, { headers: bearer(fresh.token) })).status, 404);
      assert.equal((await request(t.url, 'DELETE', `/en/partners/offers/${a.id}`, { headers: bearer(fresh.token) })).status, 404);
      const rest = await request(t.url, 'GET', '/en/partners/offers', { headers: bearer(fresh.token) });
      assert.deepEqual(rest.body.data.map((o: any) => o.id), [b.id]);
    });

    it('needs a partner token', async () => {
      assert.equal((await request(t.url, 'GET', '/en/partners/offers')).status, 401);
      assert.equal((await request(t.url, 'GET', '/en/partners/offers', { headers: apiHeaders(p.apiKey) })).status, 401);
      const c = await createCustomer(t);
      assert.equal((await request(t.url, 'GET', '/en/partners/offers', { headers: bearer(c.token) })).status, 403);
    });
  });

  describe('what tills and apps see', () => {
    let fresh: PartnerFixture;
    let live: any;
    let featured: any;
    let shopA: number;
    let shopB: number;

    before(async () => {
      fresh = await createPartner(t);
      shopA = await createShop(t, fresh.id);
      shopB = await createShop(t, fresh.id);
      live = await createOffer(t, fresh, { shop_ids: [shopA], category_ids: [7] });
      featured = await createOffer(t, fresh, { featured: true });
      await createOffer(t, fresh, { is_active: false });
      await createOffer(t, fresh, { starts_at: new Date(clock.now().getTime() + 86_400_000).toISOString() });
      await createOffer(t, fresh, { ends_at: new Date(clock.now().getTime() - 1000).toISOString() });
    });

    it('API credentials: the partner\'s active, started, unexpired offers, filtered by shop and category', async () => {
      const all = await request(t.url, 'GET', '/en/shop/offers', { headers: apiHeaders(fresh.apiKey) });
      assert.equal(all.status, 200, all.text);
      assert.deepEqual(all.body.data.map((o: any) => o.id), [live.id, featured.id]);
      assert.deepEqual(all.body.meta, { current_page: 1, per_page: 20, total: 2, last_page: 1 });
      const atB = await request(t.url, 'GET', `/en/shop/offers?shop_id=${shopB}`, { headers: apiHeaders(fresh.apiKey) });
      assert.deepEqual(atB.body.data.map((o: any) => o.id), [featured.id]);
      const inCategory = await request(t.url, 'GET', '/en/shop/offers?category_id=7', { headers: apiHeaders(fresh.apiKey) });
      assert.deepEqual(inCategory.body.data.map((o: any) => o.id), [live.id]);
      const feat = await request(t.url, 'GET', '/en/shop/offers/featured', { headers: apiHeaders(fresh.apiKey) });
      assert.deepEqual(feat.body.data.map((o: any) => o.id), [featured.id]);
      assert.ok(feat.body.meta);
    });

    it("a customer token: the offers of the partners the customer holds a card of, or only the QR-login partner's", async () => {
      const c = await createCustomer(t);
      const none = await request(t.url, 'GET', '/en/shop/offers', { headers: bearer(c.token) });
      assert.deepEqual(none.body.data, []);
      await joinProgramme(t, c, await createProgramme(t, fresh.id));
      await joinProgramme(t, c, programme);
      const app = await request(t.url, 'GET', '/en/shop/offers?per_page=100', { headers: bearer(c.token) });
      const ids = app.body.data.map((o: any) => o.id);
      assert.ok(ids.includes(live.id) && ids.includes(featured.id));
      assert.ok(app.body.data.some((o: any) => o.id !== live.id && o.id !== featured.id), "and the other partner's");
      const scoped = await createCustomer(t, fresh.id);
      const qr = await request(t.url, 'GET', '/en/shop/offers', { headers: bearer(scoped.token) });
      assert.deepEqual(qr.body.data.map((o: any) => o.id), [live.id, featured.id]);
    });

    it('sync-status counts every offer of the partner; last_sync is the last change', async () => {
      const res = await request(t.url, 'GET', '/en/shop/sync-status', { headers: apiHeaders(fresh.apiKey) });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(keysOf(res.body.data), ['active_offers', 'expired_offers', 'last_sync', 'total_offers']);
      assert.equal(res.body.data.total_offers, 5);
      assert.equal(res.body.data.active_offers, 2);
      assert.equal(res.body.data.expired_offers, 1);
      assert.equal(res.body.data.last_sync, clock.now().toISOString());
      const empty = await createPartner(t);
      const none = await request(t.url, 'GET', '/en/shop/sync-status', { headers: apiHeaders(empty.apiKey) });
      assert.deepEqual(none.body.data, { total_offers: 0, active_offers: 0, expired_offers: 0, last_sync: null });
    });
  });

  describe('claim', () => {
    it('issues the coupon and takes the points in the same transaction (ledger type redeem)', async () => {
      const offer = await createOffer(t, p, {
        title: 'Cake',
        description: 'Any cake',
        discount_type: 'percent',
        discount_value: 50,
        reward_details: 'Half price',
        points_cost: 30,
        partner_card_id: programme,
        product_ids: [3, 4],
        category_ids: [9],
        shop_ids: [shop],
      });
      const c = await createCustomer(t);
      const card = await joinProgramme(t, c, programme);
      const res = await claim(t, c, offer.id);
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.code, 201);
      const coupon = res.body.data.coupon;
      assert.deepEqual(keysOf(coupon), COUPON_KEYS);
      assert.match(coupon.code, /^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/);
      assert.equal(coupon.qr_code, `loyalty://app/coupon/${coupon.code}`);
      assert.equal(coupon.status, 'active');
      assert.equal(coupon.is_used, false);
      assert.equal(coupon.is_pending, false);
      assert.deepEqual(coupon.offer, { id: offer.id, title: 'Cake', description: 'Any cake', discount_type: 'percent', reward_type: 'coupon', reward_details: 'Half price' });
      assert.equal(coupon.game, null);
      assert.deepEqual(coupon.user, { id: c.id, name: '', email: '' });
      assert.deepEqual(coupon.products, [{ id: 3 }, { id: 4 }]);
      assert.deepEqual(coupon.categories, [{ id: 9 }]);
      assert.equal(coupon.requires_product_selection, true);
      assert.equal(coupon.partner_id, p.id);
      assert.equal(coupon.card_id, card.id);
      // No validity on the offer: the programme's deprecated default (7 days).
      assert.equal(coupon.expires_at, new Date(clock.now().getTime() + 7 * 86_400_000).toISOString());
      assert.equal(coupon.created_at, clock.now().toISOString());
      assert.equal(await balanceOf(t, p, card.id), 70);
      const ledger = await request(t.url, 'GET', `/en/shop/points?card_id=${card.id}`, { headers: apiHeaders(p.apiKey) });
      assert.equal(ledger.body.data[0].type, 'redeem');
      assert.equal(ledger.body.data[0].points, -30);
      const after = await request(t.url, 'GET', `/en/partners/offers/${offer.id}`, { headers: bearer(p.token) });
      assert.equal(after.body.data.claims_count, 1);
      await assertLedgerConsistent(t);
    });

    it('a free offer without a programme takes a card of the partner; its validity comes from the offer', async () => {
      const offer = await createOffer(t, p, { coupon_validity_days: 2 });
      const c = await createCustomer(t);
      const card = await joinProgramme(t, c, programme);
      const coupon = await claimCoupon(t, c, offer.id);
      assert.equal(coupon.card_id, card.id);
      assert.equal(coupon.expires_at, new Date(clock.now().getTime() + 2 * 86_400_000).toISOString());
      assert.equal(await balanceOf(t, p, card.id), 100);
    });

    it('refuses, with the code and meta of DESIGN §8, and changes nothing', async () => {
      const c = await createCustomer(t);
      const card = await joinProgramme(t, c, programme);
      const ended = await createOffer(t, p, { ends_at: new Date(clock.now().getTime() - 60_000).toISOString() });
      assertRefused(await claim(t, c, ended.id), 422, 'EXPIRED_OFFER', { expired_at: ended.ends_at }, 'ended');
      const inactive = await createOffer(t, p, { is_active: false });
      assertRefused(await claim(t, c, inactive.id), 409, 'INVALID_STATE', { reason: 'inactive' }, 'inactive');
      const later = new Date(clock.now().getTime() + 3_600_000).toISOString();
      const notYet = await createOffer(t, p, { starts_at: later });
      assertRefused(await claim(t, c, notYet.id), 409, 'INVALID_STATE', { reason: 'not_started', starts_at: later }, 'not started');
      const soldOut = await createOffer(t, p, { max_claims: 1 });
      await claimCoupon(t, await joinedCustomer(), soldOut.id);
      assertRefused(await claim(t, c, soldOut.id), 409, 'INVALID_STATE', { reason: 'sold_out' }, 'sold out');
      const once = await createOffer(t, p, {});
      await claimCoupon(t, c, once.id);
      assertRefused(await claim(t, c, once.id), 409, 'INVALID_STATE', { reason: 'claim_limit', limit: 1 }, 'claim limit');
      const dear = await createOffer(t, p, { points_cost: 1000, partner_card_id: programme });
      const poor = await claim(t, c, dear.id);
      assertRefused(poor, 422, 'INSUFFICIENT_BALANCE', { available_points: 100, requested_points: 1000 }, 'balance');
      assert.equal(poor.body.errors[0].field, 'points_cost');
      const elsewhere = await createOffer(t, p, { points_cost: 1, partner_card_id: await createProgramme(t, p.id) });
      assertRefused(await claim(t, c, elsewhere.id), 409, 'INVALID_STATE', { reason: 'no_card' }, 'no card');
      assert.equal((await claim(t, c, 999_999)).status, 404);
      assert.equal(await balanceOf(t, p, card.id), 100);
      const coupons = await rows(sql`select count(*)::int as n from coupons where customer_id = ${c.id}`);
      assert.equal(coupons[0].n, 1, 'only the one successful claim');
      const claims = await request(t.url, 'GET', `/en/partners/offers/${dear.id}`, { headers: bearer(p.token) });
      assert.equal(claims.body.data.claims_count, 0);

      async function joinedCustomer() {
        const x = await createCustomer(t);
        await joinProgramme(t, x, programme);
        return x;
      }
    });

    it("a QR-login token only claims its partner's offers; API credentials cannot claim", async () => {
      const offer = await createOffer(t, p, {});
      const c = await createCustomer(t);
      await joinProgramme(t, c, programme);
      const { token } = await t.app.context.tokens.sign({ kind: 'customer', subject: c.id, partnerId: other.id });
      assert.equal((await claim(t, { ...c, token }, offer.id)).status, 404);
      const { token: own } = await t.app.context.tokens.sign({ kind: 'customer', subject: c.id, partnerId: p.id });
      assert.equal((await claim(t, { ...c, token: own }, offer.id)).status, 201);
      const asTill = await request(t.url, 'POST', `/en/shop/offers/${offer.id}/claim`, { headers: apiHeaders(p.apiKey) });
      assert.equal(asTill.status, 401);
    });

    it('a replayed Idempotency-Key charges once and answers the first coupon', async () => {
      const offer = await createOffer(t, p, { points_cost: 10, partner_card_id: programme, max_claims_per_customer: 5 });
      const c = await createCustomer(t);
      const card = await joinProgramme(t, c, programme);
      const first = await claim(t, c, offer.id, { 'idempotency-key': 'claim-1' });
      const again = await claim(t, c, offer.id, { 'idempotency-key': 'claim-1' });
      assert.equal(first.status, 201);
      assert.equal(again.status, 201);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(again.body.data, first.body.data);
      assert.notEqual(again.body.request_id, first.body.request_id);
      assert.equal(await balanceOf(t, p, card.id), 90);
      const other = await claim(t, c, offer.id, { 'idempotency-key': 'claim-2' });
      assert.equal(other.status, 201);
      assert.notEqual(other.body.data.coupon.id, first.body.data.coupon.id);
      assert.equal(await balanceOf(t, p, card.id), 80);
    });

    it('a transaction killed between the debit and the coupon leaves the points, the coupon and the count as they were', async () => {
      const offer = await createOffer(t, p, { points_cost: 25, partner_card_id: programme });
      const c = await createCustomer(t);
      const card = await joinProgramme(t, c, programme);
      const offers = t.app.context.services.offers;
      let reached = false;
      offers.hooks.afterDebit = async () => {
        reached = true;
        throw new Error('killed between the ledger write and the coupon insert');
      };
      try {
        const res = await claim(t, c, offer.id, { 'idempotency-key': 'killed-1' });
        assert.equal(res.status, 500, res.text);
        assert.equal(reached, true, 'the debit happened before the kill');
      } finally {
        delete offers.hooks.afterDebit;
      }
      assert.equal(await balanceOf(t, p, card.id), 100);
      const ledger = await request(t.url, 'GET', `/en/shop/points?card_id=${card.id}&type=redeem`, { headers: apiHeaders(p.apiKey) });
      assert.deepEqual(ledger.body.data, []);
      assert.equal((await rows(sql`select count(*)::int as n from coupons where customer_id = ${c.id}`))[0].n, 0);
      const stored = await request(t.url, 'GET', `/en/partners/offers/${offer.id}`, { headers: bearer(p.token) });
      assert.equal(stored.body.data.claims_count, 0);
      await assertLedgerConsistent(t);
      // The key was not stored with the failure: the retry does the claim, once.
      const retry = await claim(t, c, offer.id, { 'idempotency-key': 'killed-1' });
      assert.equal(retry.status, 201, retry.text);
      assert.equal(await balanceOf(t, p, card.id), 75);
    });

    it("an unlimited offer counts its coupons; a limit set later counts the claims already made", async () => {
      const offer = await createOffer(t, p, {});
      for (let i = 0; i < 3; i++) {
        const x = await createCustomer(t);
        await joinProgramme(t, x, programme);
        await claimCoupon(t, x, offer.id);
      }
      const shown = await request(t.url, 'GET', `/en/partners/offers/${offer.id}`, { headers: bearer(p.token) });
      assert.equal(shown.body.data.claims_count, 3);
      const limited = await request(t.url, 'PUT', `/en/partners/offers/${offer.id}`, { headers: bearer(p.token), json: { max_claims: 4 } });
      assert.equal(limited.body.data.claims_count, 3);
      const fourth = await createCustomer(t);
      await joinProgramme(t, fourth, programme);
      await claimCoupon(t, fourth, offer.id);
      const fifth = await createCustomer(t);
      await joinProgramme(t, fifth, programme);
      assertRefused(await claim(t, fifth, offer.id), 409, 'INVALID_STATE', { reason: 'sold_out' });
      const lifted = await request(t.url, 'PUT', `/en/partners/offers/${offer.id}`, { headers: bearer(p.token), json: { max_claims: null } });
      assert.equal(lifted.body.data.claims_count, 4);
      assert.equal((await claim(t, fifth, offer.id)).status, 201);
    });

    it('a coupon keeps the terms it was claimed with when the offer changes or is deleted', async () => {
      const offer = await createOffer(t, p, { title: 'Before', max_claims_per_customer: 2 });
      const c = await createCustomer(t);
      await joinProgramme(t, c, programme);
      const coupon = await claimCoupon(t, c, offer.id);
      await request(t.url, 'PUT', `/en/partners/offers/${offer.id}`, { headers: bearer(p.token), json: { title: 'After' } });
      await request(t.url, 'DELETE', `/en/partners/offers/${offer.id}`, { headers: bearer(p.token) });
      const list = await request(t.url, 'GET', `/en/shop/coupons?user_id=${c.id}`, { headers: apiHeaders(p.apiKey) });
      const shown = list.body.data.coupons.find((x: any) => x.id === coupon.id);
      assert.equal(shown.offer.title, 'Before');
      assert.equal(shown.offer.id, offer.id);
      assert.equal((await claim(t, c, offer.id)).status, 404, 'a deleted offer cannot be claimed');
    });
  });
});
