// Offers, coupons and games under concurrency, on whichever store the suite runs (PGlite, or
// PostgreSQL with real parallel connections): 20 parallel redeems of one coupon → one; 10
// parallel claims of an offer's last unit → one coupon; 6 parallel starts with a limit of 3
// → 3; parallel claims of one reward → one; a claim replayed with one Idempotency-Key → one
// charge. After each storm the ledger still equals the balances. (What only PostgreSQL can
// show — a claim held open while another commits — is in engagement-races.pg.test.ts.)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { bearer, request } from './helpers/http.js';
import { assertLedgerConsistent, balanceOf, createCustomer, createProgramme, createShop, joinProgramme } from './helpers/loyalty.js';
import { claim, claimCoupon, claimReward, couponAction, createGame, createOffer, progress, startGame, verify } from './helpers/engagement.js';

describe('engagement under concurrency', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let programme: number;
  let shop: number;

  const count = async (query: ReturnType<typeof sql>) =>
    Number(((await t.app.context.database.db.execute(query)) as unknown as { rows: Array<{ n: number }> }).rows[0]!.n);
  const member = async (bonus = false) => {
    const c = await createCustomer(t);
    const card = await joinProgramme(t, c, programme);
    if (bonus) await request(t.url, 'POST', '/en/shop/points', { headers: { 'x-api-key': p.apiKey.key, 'x-api-secret': p.apiKey.secret }, json: { card_id: card.id, points: 100, reason: 'test' } });
    return { c, card };
  };

  before(async () => {
    t = await startTestApp({ DATABASE_POOL_MAX: '24' });
    p = await createPartner(t);
    programme = await createProgramme(t, p.id);
    shop = await createShop(t, p.id);
  });
  after(() => t.close());

  it('20 parallel redeems of one coupon: exactly one succeeds, 19 get 409 {status: used}', async () => {
    const { c } = await member();
    const coupon = await claimCoupon(t, c, (await createOffer(t, p, {})).id);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => couponAction(t, p, coupon.id, 'redeem', { shop_id: shop, receipt_number: `R-${i}` })));
    const statuses = results.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 200).length, 1, JSON.stringify(statuses));
    const losers = results.filter((r) => r.status !== 200);
    assert.equal(losers.length, 19);
    for (const r of losers) {
      assert.equal(r.status, 409, r.text);
      assert.equal(r.body.code, 'INVALID_STATE');
      assert.deepEqual(r.body.errors[0].meta, { status: 'used' });
    }
    assert.equal(await count(sql`select count(*)::int as n from coupon_events where coupon_id = ${coupon.id} and event = 'redeemed'`), 1);
  });

  it('verify from two shops at once: one reserves, the other is told where it is pending', async () => {
    const { c } = await member();
    const coupon = await claimCoupon(t, c, (await createOffer(t, p, {})).id);
    const other = await createShop(t, p.id);
    const results = await Promise.all([verify(t, p, coupon.code, shop), verify(t, p, coupon.code, other)]);
    const won = results.filter((r) => r.status === 200);
    assert.equal(won.length, 1, results.map((r) => r.text).join('\n'));
    const lost = results.find((r) => r.status !== 200)!;
    assert.equal(lost.status, 409);
    assert.deepEqual(lost.body.errors[0].meta, { status: 'pending', pending_shop_id: won[0]!.body.data.coupon.pending_shop_id });
  });

  it("10 parallel claims of an offer's last unit: exactly one coupon; the others keep their points", async () => {
    const offer = await createOffer(t, p, { max_claims: 3, points_cost: 30, partner_card_id: programme });
    for (let i = 0; i < 2; i++) await claimCoupon(t, (await member(true)).c, offer.id);
    const racers = await Promise.all(Array.from({ length: 10 }, () => member(true)));
    const results = await Promise.all(racers.map(({ c }) => claim(t, c, offer.id)));
    const statuses = results.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 201).length, 1, JSON.stringify(statuses));
    for (const r of results.filter((x) => x.status !== 201)) {
      assert.equal(r.status, 409, r.text);
      assert.deepEqual(r.body.errors[0].meta, { reason: 'sold_out' });
    }
    assert.equal(await count(sql`select count(*)::int as n from coupons where offer_id = ${offer.id}`), 3);
    const stored = await request(t.url, 'GET', `/en/partners/offers/${offer.id}`, { headers: bearer(p.token) });
    assert.equal(stored.body.data.claims_count, 3);
    const balances = await Promise.all(racers.map(({ card }) => balanceOf(t, p, card.id)));
    assert.deepEqual(balances.sort((a, b) => a - b), [70, ...Array(9).fill(100)]);
    await assertLedgerConsistent(t);
  });

  it('10 parallel claims by one customer with a limit of 2: exactly two coupons, charged twice', async () => {
    const offer = await createOffer(t, p, { max_claims_per_customer: 2, points_cost: 10, partner_card_id: programme });
    const { c, card } = await member(true);
    const results = await Promise.all(Array.from({ length: 10 }, () => claim(t, c, offer.id)));
    assert.equal(results.filter((r) => r.status === 201).length, 2, JSON.stringify(results.map((r) => r.status)));
    for (const r of results.filter((x) => x.status !== 201)) assert.deepEqual(r.body.errors[0].meta, { reason: 'claim_limit', limit: 2 });
    assert.equal(await balanceOf(t, p, card.id), 80);
  });

  it('the same claim sent 10 times at once with one Idempotency-Key charges once', async () => {
    const offer = await createOffer(t, p, { max_claims_per_customer: 10, points_cost: 15, partner_card_id: programme });
    const { c, card } = await member(true);
    const results = await Promise.all(Array.from({ length: 10 }, () => claim(t, c, offer.id, { 'idempotency-key': 'tap-tap-tap' })));
    for (const r of results) assert.ok(r.status === 201 || (r.status === 409 && r.body.code === 'CONCURRENT_LIMIT_EXCEEDED'), r.text);
    const coupons = new Set(results.filter((r) => r.status === 201).map((r) => r.body.data.coupon.id));
    assert.equal(coupons.size, 1, 'every 201 is the one coupon');
    assert.equal(await balanceOf(t, p, card.id), 85);
    assert.equal(await count(sql`select count(*)::int as n from coupons where offer_id = ${offer.id}`), 1);
  });

  it('6 parallel starts with a limit of 3 a day: exactly 3 plays', async () => {
    const game = await createGame(t, p, { partner_card_id: programme, plays_per_customer_per_day: 3 });
    const { c } = await member();
    const results = await Promise.all(Array.from({ length: 6 }, () => startGame(t, c, game.id)));
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [201, 201, 201, 429, 429, 429], results.map((r) => r.text).join('\n'));
    for (const r of results.filter((x) => x.status === 429)) assert.equal(r.body.code, 'DAILY_QUOTA_EXCEEDED');
    assert.equal(await count(sql`select count(*)::int as n from game_sessions where game_id = ${game.id}`), 3);
  });

  it('5 parallel claims of one reward: one credit', async () => {
    const game = await createGame(t, p, { partner_card_id: programme, rewards: [{ label: '40', probability: 1, reward_type: 'points', points: 40 }] });
    const { c, card } = await member();
    const s = (await startGame(t, c, game.id)).body.data;
    await progress(t, bearer(c.token), s.session_key, { progress: 100, completed: true });
    const results = await Promise.all(Array.from({ length: 5 }, () => claimReward(t, bearer(c.token), s.session_key)));
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) assert.deepEqual(r.body.errors[0].meta, { status: 'claimed' });
    assert.equal(await balanceOf(t, p, card.id), 40);
    await assertLedgerConsistent(t);
  });

  it('redeem and rollback racing on one coupon leave a consistent state and history', async () => {
    const { c } = await member();
    const coupon = await claimCoupon(t, c, (await createOffer(t, p, {})).id);
    await couponAction(t, p, coupon.id, 'redeem', { shop_id: shop });
    const ops = Array.from({ length: 12 }, (_, i) => couponAction(t, p, coupon.id, i % 2 === 0 ? 'rollback' : 'redeem', { shop_id: shop }));
    const results = await Promise.all(ops);
    assert.ok(results.every((r) => r.status === 200 || r.status === 409), results.map((r) => r.text).join('\n'));
    const history = (await request(t.url, 'GET', `/en/partners/coupons/${coupon.id}`, { headers: bearer(p.token) })).body.data.history.map((h: any) => h.event);
    // Redemptions and rollbacks alternate, starting and ending as the coupon's status says.
    const moves = history.filter((e: string) => e === 'redeemed' || e === 'rolled_back');
    moves.forEach((e: string, i: number) => assert.equal(e, i % 2 === 0 ? 'redeemed' : 'rolled_back', history.join(',')));
    const status = (await request(t.url, 'GET', `/en/partners/coupons/${coupon.id}`, { headers: bearer(p.token) })).body.data.status;
    assert.equal(status, moves.length % 2 === 1 ? 'used' : 'active');
    assert.equal(results.filter((r) => r.status === 200).length, moves.length - 1);
  });
});
