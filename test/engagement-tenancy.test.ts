// Tenancy of offers, coupons and games (DESIGN.md §2): partner B's credentials — its partner
// token, its API key, a customer token from B's QR login — on A's offers, coupons, games and
// play sessions are the 404 of something that does not exist, for every route that takes an
// id (or a code, or a session key), and afterwards A's data is exactly as it was.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request, type Response } from './helpers/http.js';
import { assertLedgerConsistent, createCustomer, createProgramme, createShop, joinProgramme, type CustomerFixture } from './helpers/loyalty.js';
import { claimCoupon, createGame, createOffer, progress, startGame, verify } from './helpers/engagement.js';

describe('engagement tenancy between partners', () => {
  let t: TestApp;
  let a: PartnerFixture;
  let b: PartnerFixture;
  let shopA: number;
  let shopB: number;
  let offerA: any;
  let gameA: any;
  let couponA: any;
  let usedA: any;
  let sessionA: string;
  let customer: CustomerFixture;
  let asB: { headers: Record<string, string> };
  let qrB: Record<string, string>;

  /** Everything of A's that B's calls could change, as A sees it. */
  const snapshot = async () => {
    const offer = await request(t.url, 'GET', `/en/partners/offers/${offerA.id}`, { headers: bearer(a.token) });
    const game = await request(t.url, 'GET', `/en/partners/games/${gameA.id}`, { headers: bearer(a.token) });
    const coupons = await request(t.url, 'GET', '/en/partners/coupons', { headers: bearer(a.token) });
    const coupon = await request(t.url, 'GET', `/en/partners/coupons/${couponA.id}`, { headers: bearer(a.token) });
    const history = await request(t.url, 'GET', '/en/shop/user/games/history', { headers: bearer(customer.token) });
    const points = await request(t.url, 'GET', '/en/shop/points', { headers: apiHeaders(a.apiKey) });
    return { offer: offer.body.data, game: game.body.data, coupons: coupons.body.data, coupon: coupon.body.data, history: history.body.data, points: points.body.data };
  };

  before(async () => {
    t = await startTestApp();
    a = await createPartner(t, 'A');
    b = await createPartner(t, 'B');
    shopA = await createShop(t, a.id);
    shopB = await createShop(t, b.id);
    const programmeA = await createProgramme(t, a.id, { initialBonusPoints: 100 });
    const programmeB = await createProgramme(t, b.id);
    customer = await createCustomer(t);
    await joinProgramme(t, customer, programmeA);
    await joinProgramme(t, customer, programmeB);
    offerA = await createOffer(t, a, { points_cost: 10, partner_card_id: programmeA, max_claims_per_customer: 5 });
    couponA = await claimCoupon(t, customer, offerA.id);
    usedA = await claimCoupon(t, customer, offerA.id);
    assert.equal((await request(t.url, 'POST', `/en/shop/coupons/${usedA.id}/redeem`, { headers: apiHeaders(a.apiKey), json: { shop_id: shopA } })).status, 200);
    assert.equal((await verify(t, a, couponA.code, shopA)).status, 200);
    gameA = await createGame(t, a, { partner_card_id: programmeA, rewards: [{ label: 'p', probability: 1, reward_type: 'points', points: 5 }] });
    sessionA = (await startGame(t, customer, gameA.id)).body.data.session_key;
    assert.equal((await progress(t, bearer(customer.token), sessionA, { progress: 100, completed: true })).status, 200);
    asB = { headers: apiHeaders(b.apiKey) };
    qrB = bearer((await t.app.context.tokens.sign({ kind: 'customer', subject: customer.id, partnerId: b.id })).token);
  });
  after(() => t.close());

  it("every route that takes A's id, code or session key answers B with 404 and changes nothing", async () => {
    const before = await snapshot();
    const partnerB = { headers: bearer(b.token) };
    const calls: Array<[string, () => Promise<Response>]> = [
      ['GET offer', () => request(t.url, 'GET', `/en/partners/offers/${offerA.id}`, partnerB)],
      ['PUT offer', () => request(t.url, 'PUT', `/en/partners/offers/${offerA.id}`, { ...partnerB, json: { title: 'Hijacked', max_claims: 1 } })],
      ['DELETE offer', () => request(t.url, 'DELETE', `/en/partners/offers/${offerA.id}`, partnerB)],
      ['GET coupon', () => request(t.url, 'GET', `/en/partners/coupons/${couponA.id}`, partnerB)],
      ['GET game', () => request(t.url, 'GET', `/en/partners/games/${gameA.id}`, partnerB)],
      ['PUT game', () => request(t.url, 'PUT', `/en/partners/games/${gameA.id}`, { ...partnerB, json: { is_active: false } })],
      ['claim with B\'s QR-login token', () => request(t.url, 'POST', `/en/shop/offers/${offerA.id}/claim`, { headers: qrB })],
      ['verify at B\'s shop', () => verify(t, b, couponA.code, shopB)],
      ['verify at A\'s shop', () => verify(t, b, couponA.code, shopA)],
      ['redeem at B\'s shop', () => request(t.url, 'POST', `/en/shop/coupons/${couponA.id}/redeem`, { ...asB, json: { shop_id: shopB } })],
      ['redeem at A\'s shop', () => request(t.url, 'POST', `/en/shop/coupons/${couponA.id}/redeem`, { ...asB, json: { shop_id: shopA } })],
      ['release', () => request(t.url, 'POST', `/en/shop/coupons/${couponA.id}/release`, { ...asB, json: { shop_id: shopA } })],
      ['rollback', () => request(t.url, 'POST', `/en/shop/coupons/${usedA.id}/rollback`, { ...asB, json: { shop_id: shopA } })],
      ['start with B\'s QR-login token', () => request(t.url, 'POST', `/en/shop/games/${gameA.id}/start`, { headers: qrB })],
      ['progress as B\'s till', () => progress(t, apiHeaders(b.apiKey), sessionA, { progress: 10 })],
      ['progress with B\'s QR-login token', () => progress(t, qrB, sessionA, { progress: 100, completed: true })],
      ['claim-reward as B\'s till', () => request(t.url, 'POST', `/en/shop/games/sessions/${sessionA}/claim-reward`, asB)],
      ['claim-reward with B\'s QR-login token', () => request(t.url, 'POST', `/en/shop/games/sessions/${sessionA}/claim-reward`, { headers: qrB })],
    ];
    for (const [label, call] of calls) {
      const res = await call();
      assert.equal(res.status, 404, `${label}: ${res.text}`);
      assert.equal(res.body.code, 'RESOURCE_NOT_FOUND', label);
    }
    assert.deepEqual(await snapshot(), before);
    await assertLedgerConsistent(t);
  });

  it("B's lists never show A's offers, coupons or games", async () => {
    const offers = await request(t.url, 'GET', '/en/shop/offers', asB);
    assert.deepEqual(offers.body.data, []);
    const games = await request(t.url, 'GET', '/en/shop/games', asB);
    assert.deepEqual(games.body.data, []);
    const coupons = await request(t.url, 'GET', `/en/shop/coupons?user_id=${customer.id}&status=all`, asB);
    assert.deepEqual(coupons.body.data.coupons, []);
    const partnerList = await request(t.url, 'GET', `/en/partners/coupons?offer_id=${offerA.id}`, { headers: bearer(b.token) });
    assert.deepEqual(partnerList.body.data.coupons, []);
    const csv = await fetch(`${t.url}/en/partners/coupons/export`, { headers: bearer(b.token) });
    assert.equal((await csv.text()).trim().split('\r\n').length, 1, 'the header row only');
    const partnerOffers = await request(t.url, 'GET', '/en/partners/offers', { headers: bearer(b.token) });
    assert.deepEqual(partnerOffers.body.data, []);
    const qrOffers = await request(t.url, 'GET', '/en/shop/offers', { headers: qrB });
    assert.deepEqual(qrOffers.body.data, []);
    const qrCoupons = await request(t.url, 'GET', '/en/shop/coupons?status=all', { headers: qrB });
    assert.deepEqual(qrCoupons.body.data.coupons, []);
    const qrHistory = await request(t.url, 'GET', '/en/shop/user/games/history', { headers: qrB });
    assert.deepEqual(qrHistory.body.data, []);
    const sync = await request(t.url, 'GET', '/en/shop/sync-status', asB);
    assert.equal(sync.body.data.total_offers, 0);
  });
});
