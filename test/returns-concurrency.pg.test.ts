// Returns under concurrency, on PostgreSQL with real parallel connections: many tills
// returning units of one line at once never return more than was bought nor take back more
// than the line earned, a return racing a reversal of its purchase settles once, and returns
// racing awards on a campaign leave its counters equal to its sources. PostgreSQL only: PGlite
// runs one transaction at a time (the sequential rules are covered by returns.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { assertLedgerConsistent, award, balanceOf, createCustomer, createProgramme, createShop, joinProgramme } from './helpers/loyalty.js';

describe('returns under concurrency', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let shop: number;
  let programme: number;
  let campaign: number;
  const ret = (id: number, json: Record<string, unknown>) =>
    request(t.url, 'POST', `/en/shop/transactions/${id}/return`, { headers: apiHeaders(p.apiKey), json });

  before(async () => {
    t = await startTestApp({ DATABASE_POOL_MAX: '20' });
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
  after(() => t.close());

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
});
