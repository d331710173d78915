// Returns under concurrency, on PostgreSQL with real parallel connections: many tills
// returning units of one line at once never return more than was bought nor take back more
// than the line earned, a return racing a reversal of its purchase settles once, and returns
// racing awards on a campaign leave its counters equal to its sources, and a purchase's
// return racing its deduction's return on two app nodes ends every card 0 / 0 whichever
// commits first (points coming back pay the debt first). PostgreSQL only: PGlite runs one
// transaction at a time (the sequential rules are covered by returns.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { assertLedgerConsistent, award, balanceOf, createCustomer, createProgramme, createShop, deduct, joinProgramme } from './helpers/loyalty.js';

describe('returns under concurrency', () => {
  let t: TestApp;
  /** A second app node on the same database. */
  let second: TestApp;
  let p: PartnerFixture;
  let shop: number;
  let programme: number;
  let campaign: number;
  const ret = (id: number, json: Record<string, unknown>) =>
    request(t.url, 'POST', `/en/shop/transactions/${id}/return`, { headers: apiHeaders(p.apiKey), json });

  before(async () => {
    t = await startTestApp({ DATABASE_POOL_MAX: '20' });
    second = await startTestApp({ DATABASE_POOL_MAX: '20' }, t.db);
    p = await createPartner(t);
    shop = await createShop(t, p.id);
    programme = await createProgramme(t, p.id, { pointsPerCurrency: '1', currencyAmount: '1', pointsPerVisit: 0, minPointsPerPurchase: 0 });
    const res = await request(t.url, 'POST', '/en/partners/campaigns', {
      headers: bearer(p.token),
      json: { partner_card_id: programme, name: 'Triple', effect: { type: 'multiplier', value: 3 }, limits: { points_budget: 100_000 } },
    });
    assert.equal(res.status, 201, res.text);
    campaign = res.body.data.id;
  });
  after(async () => {
    await second.close();
    await t.close();
  });

  it('20 parallel returns of 1 unit of a 7-unit line: exactly 7 succeed and take back exactly the line\'s points', async () => {
    const card = await joinProgramme(t, await createCustomer(t), programme);
    const sale = await award(t, p, { card_id: card.id, shop_id: shop, items: [{ line_id: 'L', quantity: 7, amount: 10 }] });
    assert.equal(sale.status, 201, sale.text);
    assert.equal(sale.body.data.points, 30);
    const results = await Promise.all(Array.from({ length: 20 }, () => ret(sale.body.data.id, { items: [{ line_id: 'L', quantity: 1 }] })));
    const ok = results.filter((r) => r.status === 201);
    assert.equal(ok.length, 7, JSON.stringify(results.map((r) => r.status)));
    for (const r of results.filter((x) => x.status !== 201)) {
      assert.equal(r.status, 422);
      assert.equal(r.body.code, 'OUT_OF_RANGE');
    }
    assert.equal(ok.reduce((s, r) => s + (r.body.data.points as number), 0), -30);
    assert.equal(await balanceOf(t, p, card.id), 0);
    await assertLedgerConsistent(t);
  });

  it('returns racing a reversal of their purchase: the purchase is settled once, never more than it earned', async () => {
    const card = await joinProgramme(t, await createCustomer(t), programme);
    const sale = await award(t, p, { card_id: card.id, shop_id: shop, amount: 10 });
    assert.equal(sale.body.data.points, 30);
    const id = sale.body.data.id;
    const results = await Promise.all([
      ...Array.from({ length: 5 }, () => ret(id, { amount: 1 })),
      request(t.url, 'POST', `/en/shop/transactions/${id}/reverse`, { headers: apiHeaders(p.apiKey), json: {} }),
      ...Array.from({ length: 5 }, () => ret(id, { amount: 1 })),
    ]);
    for (const r of results) assert.ok(r.status === 201 || r.status === 409, r.text);
    const taken = results.filter((r) => r.status === 201).reduce((s, r) => s + (r.body.data.points as number), 0);
    assert.equal(taken, -30, 'returns and the reversal together take back exactly what was earned');
    assert.equal(await balanceOf(t, p, card.id), 0);
    await assertLedgerConsistent(t);
  });

  it('returns racing awards on one campaign keep its points_awarded equal to its sources', async () => {
    const cards = await Promise.all(Array.from({ length: 6 }, async () => (await joinProgramme(t, await createCustomer(t), programme)).id));
    const sales = await Promise.all(cards.map((c) => award(t, p, { card_id: c, shop_id: shop, amount: 7 })));
    const mixed = await Promise.all([
      ...sales.map((s) => ret(s.body.data.id, { amount: 3 })),
      ...cards.map((c) => award(t, p, { card_id: c, shop_id: shop, amount: 5 })),
    ]);
    for (const r of mixed) assert.equal(r.status, 201, r.text);
    const c = await request(t.url, 'GET', `/en/partners/campaigns/${campaign}`, { headers: bearer(p.token) });
    assert.equal(c.status, 200);
    await assertLedgerConsistent(t);
  });

  it('award 100, deduct 100, then both returns in parallel on two nodes, in both orders, over 16 cards: every card ends 0 / 0', async () => {
    const plain = await createProgramme(t, p.id, { pointsPerCurrency: '1', currencyAmount: '1', pointsPerVisit: 0, minPointsPerPurchase: 0, minPointsForRedemption: 1 });
    const cards = await Promise.all(
      Array.from({ length: 16 }, async () => {
        const card = (await joinProgramme(t, await createCustomer(t), plain)).id;
        const sale = await award(t, p, { card_id: card, shop_id: shop, amount: 100 });
        assert.equal(sale.body.data.points, 100, sale.text);
        const spend = await deduct(t, p, { card_id: card, shop_id: shop, points: 100 });
        assert.equal(spend.status, 201, spend.text);
        return { card, sale: sale.body.data.id as number, spend: spend.body.data.id as number };
      }),
    );
    const on = (node: TestApp, id: number, json: Record<string, unknown>) =>
      request(node.url, 'POST', `/en/shop/transactions/${id}/return`, { headers: apiHeaders(p.apiKey), json });
    // Cards 0–7 race both returns, each on its own node (which commits first is up to the
    // database); cards 8–15 pin the order, purchase first on even cards and deduction first
    // on odd ones — every card's pair on both nodes, all cards at once.
    const results = await Promise.all(
      cards.map(async (c, i) => {
        const [a, b] = i % 2 === 0 ? [t, second] : [second, t];
        const purchase = () => on(a, c.sale, { amount: 100 });
        const deduction = () => on(b, c.spend, { points: 100 });
        if (i < 8) return Promise.all([purchase(), deduction()]);
        if (i % 2 === 0) return [await purchase(), await deduction()];
        return [await deduction(), await purchase()];
      }),
    );
    for (const r of results.flat()) assert.equal(r.status, 201, r.text);
    const views = await Promise.all(
      cards.map(async (c) => {
        const res = await request(t.url, 'GET', `/en/shop/loyalty-cards/info?card_id=${c.card}`, { headers: apiHeaders(p.apiKey) });
        return [res.body.data.card.points_balance, res.body.data.card.points_debt];
      }),
    );
    assert.deepEqual(views, cards.map(() => [0, 0]));
    await assertLedgerConsistent(t);
  });
});
