// Coupons at the till (DESIGN.md §8): the spec's verification result field for field; the
// states — verify reserves for one shop for 10 minutes (renewed there, lapsing back to
// active), redeem once, release, rollback within 24 h at the same shop, expiry — with every
// refusal's code and meta; the lists (`data: {coupons, pagination}`), the partner's filters,
// CSV export and history.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { createCustomer, createProgramme, createShop, joinProgramme, TestClock, type CustomerFixture } from './helpers/loyalty.js';
import { assertRefused, claimCoupon, COUPON_KEYS, couponAction, createOffer, keysOf, verify } from './helpers/engagement.js';

describe('coupons at the till', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let programme: number;
  let shop: number;
  let shop2: number;
  let c: CustomerFixture;
  let card: { id: number; card_number: string };
  const clock = new TestClock();

  const newCoupon = async (offerFields: Record<string, unknown> = {}, holder = c) =>
    claimCoupon(t, holder, (await createOffer(t, p, { max_claims_per_customer: 1000, ...offerFields })).id);

  before(async () => {
    t = await startTestApp({}, undefined, { clock });
    p = await createPartner(t, 'Kavinė');
    programme = await createProgramme(t, p.id, { initialBonusPoints: 40, pointsPerCurrency: '2', currencyAmount: '1', pointsPerCurrencyRedemption: '100', currencyAmountRedemption: '1' });
    shop = await createShop(t, p.id, 'Centras');
    shop2 = await createShop(t, p.id, 'Akropolis');
    c = await createCustomer(t);
    card = await joinProgramme(t, c, programme);
    await request(t.url, 'PUT', '/en/shop/auth/profile', { headers: bearer(c.token), json: { name: 'Ona', email: 'ona@example.com' } });
  });
  after(() => t.close());

  describe('verify', () => {
    it('reserves the coupon for the shop and answers the spec\'s verification result', async () => {
      await request(t.url, 'POST', '/en/partners/games', {
        headers: bearer(p.token),
        json: { type: 'spin_wheel', name: 'W', rewards: [{ label: 'x', probability: 1, reward_type: 'none' }] },
      });
      const coupon = await newCoupon({ title: 'Tea', description: 'Green', reward_details: 'One tea', coupon_validity_days: 3 });
      const res = await verify(t, p, coupon.code, shop);
      assert.equal(res.status, 200, res.text);
      const v = res.body.data;
      assert.deepEqual(keysOf(v), ['card', 'coupon', 'coupons_count', 'games_count', 'points_rules', 'user']);
      assert.deepEqual(v.coupon, {
        id: coupon.id,
        code: coupon.code,
        status: 'pending',
        expiry_time: new Date(clock.now().getTime() + 3 * 86_400_000).toISOString(),
        is_pending: true,
        pending_shop_id: shop,
        offer: coupon.offer,
      });
      assert.deepEqual(v.user, { id: c.id, name: 'Ona', email: 'ona@example.com', phone: c.phone, default_card_id: card.id, points_balance: 40 });
      // The card's tier (DESIGN.md §13; tiers-api.test.ts): this programme has none.
      const { tier_progress: progress, ...cardFields } = v.card;
      assert.deepEqual(cardFields, { id: card.id, card_number: card.card_number, user_id: c.id, points_balance: 40, tier: null });
      assert.deepEqual({ ...progress, value: 0 }, { basis: 'points_earned', window: 'rolling_12_months', value: 0, next: null, keep_until: null });
      assert.deepEqual(v.points_rules, { points_enabled: true, points_redemption_enabled: true, points_per_euro: 2, euro_per_point: 0.01 });
      assert.equal(v.games_count, 1);
      assert.ok(v.coupons_count >= 1);
      // The till's list shows it pending until the reservation ends.
      const list = await request(t.url, 'GET', `/en/shop/coupons?card_id=${card.id}`, { headers: apiHeaders(p.apiKey) });
      const listed = list.body.data.coupons.find((x: any) => x.id === coupon.id);
      assert.equal(listed.status, 'pending');
      assert.equal(listed.is_pending, true);
      assert.equal(listed.pending_until, new Date(clock.now().getTime() + 10 * 60_000).toISOString());
    });

    it('takes the code in any case, without dashes, or the QR text', async () => {
      const coupon = await newCoupon();
      for (const input of [coupon.code.toLowerCase(), coupon.code.replace(/-/g, ''), coupon.qr_code]) {
        const res = await verify(t, p, input, shop);
        assert.equal(res.status, 200, `${input}: ${res.text}`);
        assert.equal(res.body.data.coupon.id, coupon.id);
      }
    });

    it('renews at the same shop, refuses another shop until the reservation lapses after 10 minutes', async () => {
      const coupon = await newCoupon();
      assert.equal((await verify(t, p, coupon.code, shop)).status, 200);
      clock.advanceMs(9 * 60_000);
      assert.equal((await verify(t, p, coupon.code, shop)).status, 200, 'renewed');
      clock.advanceMs(9 * 60_000);
      assertRefused(await verify(t, p, coupon.code, shop2), 409, 'INVALID_STATE', { status: 'pending', pending_shop_id: shop }, 'still reserved (renewed)');
      assertRefused(await couponAction(t, p, coupon.id, 'redeem', { shop_id: shop2 }), 409, 'INVALID_STATE', { status: 'pending', pending_shop_id: shop });
      clock.advanceMs(60_000 + 1);
      const lapsed = await request(t.url, 'GET', `/en/shop/coupons?card_id=${card.id}&status=all&per_page=100`, { headers: apiHeaders(p.apiKey) });
      assert.equal(lapsed.body.data.coupons.find((x: any) => x.id === coupon.id).status, 'active', 'lapsed back to active');
      const taken = await verify(t, p, coupon.code, shop2);
      assert.equal(taken.status, 200, taken.text);
      assert.equal(taken.body.data.coupon.pending_shop_id, shop2);
    });

    it('refuses an unknown code, a used, expired or shop-limited coupon', async () => {
      assertRefused(await verify(t, p, 'ZZZZ-ZZZZ-ZZZZ', shop), 404, 'RESOURCE_NOT_FOUND');
      assertRefused(await verify(t, p, 'not a code', shop), 404, 'RESOURCE_NOT_FOUND');
      const used = await newCoupon();
      assert.equal((await couponAction(t, p, used.id, 'redeem', { shop_id: shop })).status, 200);
      assertRefused(await verify(t, p, used.code, shop), 409, 'INVALID_STATE', { status: 'used' });
      const expiring = await newCoupon({ coupon_validity_days: 1 });
      clock.advanceDays(1);
      assertRefused(await verify(t, p, expiring.code, shop), 422, 'EXPIRED_OFFER', { expired_at: expiring.expires_at });
      const limited = await newCoupon({ shop_ids: [shop] });
      const denied = await verify(t, p, limited.code, shop2);
      assertRefused(denied, 403, 'STORE_ACCESS_DENIED', { shop_ids: [shop] });
      assert.equal((await verify(t, p, limited.code, shop)).status, 200);
      const foreignShop = await createShop(t, (await createPartner(t)).id);
      const wrongShop = await verify(t, p, (await newCoupon()).code, foreignShop);
      assertRefused(wrongShop, 404, 'RESOURCE_NOT_FOUND');
      assert.equal(wrongShop.body.errors[0].field, 'shop_id');
    });
  });

  describe('redeem, release, rollback', () => {
    it('redeems an active coupon or one this shop reserved, once; the history keeps receipt and amount', async () => {
      const coupon = await newCoupon();
      assert.equal((await verify(t, p, coupon.code, shop)).status, 200);
      const res = await couponAction(t, p, coupon.id, 'redeem', { shop_id: shop, receipt_number: 'R-1', amount: '12.3400' });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(keysOf(res.body.data), ['coupon']);
      const used = res.body.data.coupon;
      assert.deepEqual(keysOf(used), COUPON_KEYS);
      assert.equal(used.status, 'used');
      assert.equal(used.is_used, true);
      assert.equal(used.is_pending, false);
      assert.equal(used.used_shop_id, shop);
      assert.equal(used.used_at, clock.now().toISOString());
      assert.equal(used.pending_until, null);
      assertRefused(await couponAction(t, p, coupon.id, 'redeem', { shop_id: shop }), 409, 'INVALID_STATE', { status: 'used' });
      const direct = await newCoupon();
      assert.equal((await couponAction(t, p, direct.id, 'redeem', { shop_id: shop2 })).status, 200, 'no verify needed');
      const detail = await request(t.url, 'GET', `/en/partners/coupons/${coupon.id}`, { headers: bearer(p.token) });
      assert.deepEqual(
        detail.body.data.history.map((h: any) => [h.event, h.shop_id, h.receipt_number, h.amount]),
        [
          ['issued', null, null, null],
          ['verified', shop, null, null],
          ['redeemed', shop, 'R-1', 12.34],
        ],
      );
    });

    it('release ends this shop\'s reservation; refuses an unreserved or another shop\'s', async () => {
      const coupon = await newCoupon();
      assertRefused(await couponAction(t, p, coupon.id, 'release', { shop_id: shop }), 409, 'INVALID_STATE', { status: 'active' });
      await verify(t, p, coupon.code, shop);
      assertRefused(await couponAction(t, p, coupon.id, 'release', { shop_id: shop2 }), 409, 'INVALID_STATE', { status: 'pending', pending_shop_id: shop });
      const res = await couponAction(t, p, coupon.id, 'release', { shop_id: shop });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.coupon.status, 'active');
      assert.equal((await verify(t, p, coupon.code, shop2)).status, 200, 'free for another shop');
    });

    it('rollback undoes a redemption at the same shop within 24 hours, with its reason in the history', async () => {
      const coupon = await newCoupon();
      await couponAction(t, p, coupon.id, 'redeem', { shop_id: shop });
      assertRefused(await couponAction(t, p, coupon.id, 'rollback', { shop_id: shop2 }), 409, 'INVALID_STATE', { status: 'used', reason: 'other_shop', used_shop_id: shop });
      const res = await couponAction(t, p, coupon.id, 'rollback', { shop_id: shop, reason: 'Sale cancelled' });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.coupon.status, 'active');
      assert.equal(res.body.data.coupon.used_at, null);
      assert.equal(res.body.data.coupon.used_shop_id, null);
      assertRefused(await couponAction(t, p, coupon.id, 'rollback', { shop_id: shop }), 409, 'INVALID_STATE', { status: 'active' });
      assert.equal((await couponAction(t, p, coupon.id, 'redeem', { shop_id: shop })).status, 200, 'redeemable again');
      const redeemedAt = clock.now().toISOString();
      clock.advanceMs(24 * 3_600_000);
      assertRefused(await couponAction(t, p, coupon.id, 'rollback', { shop_id: shop }), 409, 'INVALID_STATE', {
        status: 'used',
        reason: 'rollback_window_passed',
        used_at: redeemedAt,
      });
      const detail = await request(t.url, 'GET', `/en/partners/coupons/${coupon.id}`, { headers: bearer(p.token) });
      assert.deepEqual(detail.body.data.history.map((h: any) => h.event), ['issued', 'redeemed', 'rolled_back', 'redeemed']);
      assert.equal(detail.body.data.history[2].reason, 'Sale cancelled');
    });

    it('an Idempotency-Key replays a redeem instead of refusing it as used', async () => {
      const coupon = await newCoupon();
      const first = await couponAction(t, p, coupon.id, 'redeem', { shop_id: shop }, { 'idempotency-key': 'till-7-redeem' });
      const again = await couponAction(t, p, coupon.id, 'redeem', { shop_id: shop }, { 'idempotency-key': 'till-7-redeem' });
      assert.equal(first.status, 200);
      assert.equal(again.status, 200);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(again.body.data, first.body.data);
    });

    it('refuses expired coupons and unknown ids; validates the body', async () => {
      const coupon = await newCoupon({ coupon_validity_days: 1 });
      clock.advanceDays(2);
      assertRefused(await couponAction(t, p, coupon.id, 'redeem', { shop_id: shop }), 422, 'EXPIRED_OFFER', { expired_at: coupon.expires_at });
      assertRefused(await couponAction(t, p, 99_999_999, 'redeem', { shop_id: shop }), 404, 'RESOURCE_NOT_FOUND');
      const bad = await couponAction(t, p, coupon.id, 'redeem', { shop_id: 'x', amount: -1 });
      assert.equal(bad.status, 422);
      assert.deepEqual(keysOf(bad.body.errors), ['amount', 'shop_id']);
      const inexact = await couponAction(t, p, (await newCoupon()).id, 'redeem', { shop_id: shop, amount: 1.23456 });
      assert.equal(inexact.status, 422);
      assert.deepEqual(keysOf(inexact.body.errors), ['amount']);
    });
  });

  describe('lists', () => {
    let holder: CustomerFixture;
    let active: any;
    let used: any;
    let limited: any;

    before(async () => {
      holder = await createCustomer(t);
      await joinProgramme(t, holder, programme);
      active = await newCoupon({}, holder);
      used = await newCoupon({}, holder);
      limited = await newCoupon({ shop_ids: [shop2] }, holder);
      await couponAction(t, p, used.id, 'redeem', { shop_id: shop, receipt_number: 'R-9' });
    });

    it('GET shop/coupons answers data: {coupons, pagination}, active (with pending) by default, newest first', async () => {
      const res = await request(t.url, 'GET', `/en/shop/coupons?user_id=${holder.id}`, { headers: apiHeaders(p.apiKey) });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(keysOf(res.body.data), ['coupons', 'pagination']);
      assert.deepEqual(res.body.data.pagination, { current_page: 1, per_page: 20, total: 2, last_page: 1 });
      assert.deepEqual(res.body.data.coupons.map((x: any) => x.id), [limited.id, active.id]);
      for (const x of res.body.data.coupons) assert.deepEqual(keysOf(x), COUPON_KEYS);
      const usedOnly = await request(t.url, 'GET', `/en/shop/coupons?user_id=${holder.id}&status=used`, { headers: apiHeaders(p.apiKey) });
      assert.deepEqual(usedOnly.body.data.coupons.map((x: any) => x.id), [used.id]);
      const all = await request(t.url, 'GET', `/en/shop/coupons?user_id=${holder.id}&status=all&per_page=2&page=2`, { headers: apiHeaders(p.apiKey) });
      assert.deepEqual(all.body.data.pagination, { current_page: 2, per_page: 2, total: 3, last_page: 2 });
      const atShop = await request(t.url, 'GET', `/en/shop/coupons?user_id=${holder.id}&shop_id=${shop}`, { headers: apiHeaders(p.apiKey) });
      assert.deepEqual(atShop.body.data.coupons.map((x: any) => x.id), [active.id]);
      const tooMany = await request(t.url, 'GET', '/en/shop/coupons?per_page=101', { headers: apiHeaders(p.apiKey) });
      assert.equal(tooMany.status, 422);
      const badStatus = await request(t.url, 'GET', '/en/shop/coupons?status=lost', { headers: apiHeaders(p.apiKey) });
      assert.equal(badStatus.status, 422);
    });

    it("a customer token lists the customer's own coupons", async () => {
      const res = await request(t.url, 'GET', '/en/shop/coupons?status=all', { headers: bearer(holder.token) });
      assert.deepEqual(res.body.data.coupons.map((x: any) => x.id).sort(), [active.id, used.id, limited.id].sort());
      const someoneElse = await request(t.url, 'GET', `/en/shop/coupons?user_id=${holder.id}`, { headers: bearer(c.token) });
      assert.deepEqual(someoneElse.body.data.coupons, []);
    });

    it('the partner lists with filters and exports CSV', async () => {
      const list = await request(t.url, 'GET', `/en/partners/coupons?user_id=${holder.id}&status=used`, { headers: bearer(p.token) });
      assert.equal(list.status, 200, list.text);
      assert.deepEqual(list.body.data.coupons.map((x: any) => x.id), [used.id]);
      const byShop = await request(t.url, 'GET', `/en/partners/coupons?shop_id=${shop}&user_id=${holder.id}`, { headers: bearer(p.token) });
      assert.deepEqual(byShop.body.data.coupons.map((x: any) => x.id), [used.id]);
      const byCode = await request(t.url, 'GET', `/en/partners/coupons?code=${active.code.toLowerCase()}`, { headers: bearer(p.token) });
      assert.deepEqual(byCode.body.data.coupons.map((x: any) => x.id), [active.id]);
      const byOffer = await request(t.url, 'GET', `/en/partners/coupons?offer_id=${active.offer.id}`, { headers: bearer(p.token) });
      assert.deepEqual(byOffer.body.data.coupons.map((x: any) => x.id), [active.id]);
      const today = clock.now().toISOString().slice(0, 10);
      const ranged = await request(t.url, 'GET', `/en/partners/coupons?user_id=${holder.id}&from=${today}&to=${today}`, { headers: bearer(p.token) });
      assert.equal(ranged.body.data.pagination.total, 3);
      const csv = await fetch(`${t.url}/en/partners/coupons/export?user_id=${holder.id}`, { headers: bearer(p.token) });
      assert.equal(csv.status, 200);
      assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
      const lines = (await csv.text()).trim().split('\r\n');
      assert.equal(lines[0], 'id,code,status,created_at,expires_at,used_at,used_shop_id,offer_id,game_id,title,discount_type,discount_value,user_id,user_name,user_email,card_id');
      assert.deepEqual(lines.slice(1).map((l) => Number(l.split(',')[0])), [active.id, used.id, limited.id]);
      assert.match(lines[2]!, new RegExp(`^${used.id},${used.code},used,`));
    });
  });
});
