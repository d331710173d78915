// Tenancy of the loyalty core (DESIGN.md §2): partner B's API credentials cannot read or
// move points on partner A's cards — every such request is the 404 of a card that does not
// exist, lists never show A's data, and afterwards A's card and ledger are unchanged. A
// customer token from B's QR login sees only B's side of a customer who holds both.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request, type Response } from './helpers/http.js';
import { assertLedgerConsistent, award, createCustomer, createProgramme, createShop, joinProgramme, type CardFixture } from './helpers/loyalty.js';

describe('loyalty tenancy between partners', () => {
  let t: TestApp;
  let a: PartnerFixture;
  let b: PartnerFixture;
  let shopA: number;
  let shopB: number;
  let cardA: CardFixture;
  let cardB: CardFixture;
  let txA: number;
  let customerId: number;

  const snapshot = async () => {
    const balance = await request(t.url, 'GET', `/en/shop/points/card/${cardA.id}/balance`, { headers: apiHeaders(a.apiKey) });
    const history = await request(t.url, 'GET', `/en/shop/points?card_id=${cardA.id}`, { headers: apiHeaders(a.apiKey) });
    return { balance: balance.body.data, history: history.body.data };
  };

  before(async () => {
    t = await startTestApp();
    a = await createPartner(t, 'A');
    b = await createPartner(t, 'B');
    shopA = await createShop(t, a.id);
    shopB = await createShop(t, b.id);
    const customer = await createCustomer(t);
    customerId = customer.id;
    cardA = await joinProgramme(t, customer, await createProgramme(t, a.id, { initialBonusPoints: 10 }));
    cardB = await joinProgramme(t, customer, await createProgramme(t, b.id));
    txA = (await award(t, a, { card_id: cardA.id, shop_id: shopA, amount: 100 })).body.data.id;
  });
  after(() => t.close());

  it("every endpoint that takes A's card or transaction answers B with 404 and changes nothing", async () => {
    const before = await snapshot();
    const asB = { headers: apiHeaders(b.apiKey) };
    const calls: Array<[string, Promise<Response>]> = [
      ['GET card', request(t.url, 'GET', `/en/shop/loyalty-cards/${cardA.id}`, asB)],
      ['GET info by id', request(t.url, 'GET', `/en/shop/loyalty-cards/info?card_id=${cardA.id}`, asB)],
      ['GET info by number', request(t.url, 'GET', `/en/shop/loyalty-cards/info?card_number=${cardA.card_number}`, asB)],
      ['GET balance by number', request(t.url, 'GET', `/en/shop/loyalty-cards/balance?card_number=${cardA.card_number}`, asB)],
      ['GET points balance', request(t.url, 'GET', `/en/shop/points/card/${cardA.id}/balance`, asB)],
      ['award', award(t, b, { card_id: cardA.id, shop_id: shopB, amount: 10 })],
      // A's own card and A's own shop with B's key: only the card's tenant check can refuse
      // this (the shop matches the card's partner).
      ['award at A\'s shop', award(t, b, { card_id: cardA.id, shop_id: shopA, amount: 10 })],
      ['award at A\'s shop with a receipt', award(t, b, { card_id: cardA.id, shop_id: shopA, amount: 10, receipt_number: 'R-1' })],
      ['deduct', request(t.url, 'POST', '/en/shop/transactions/deduct-points', { ...asB, json: { card_id: cardA.id, shop_id: shopB, points: 5 } })],
      ['deduct at A\'s shop', request(t.url, 'POST', '/en/shop/transactions/deduct-points', { ...asB, json: { card_id: cardA.id, shop_id: shopA, points: 5 } })],
      ['adjust', request(t.url, 'POST', '/en/shop/points', { ...asB, json: { card_id: cardA.id, points: -5, reason: 'x' } })],
      ['bulk', request(t.url, 'POST', '/en/shop/points/bulk', { ...asB, json: { rows: [{ card_id: cardA.id, points: 5, reason: 'x' }] } })],
      ['reverse', request(t.url, 'POST', `/en/shop/transactions/${txA}/reverse`, asB)],
      ['reverse with a reason', request(t.url, 'POST', `/en/shop/transactions/${txA}/reverse`, { ...asB, json: { reason: 'refund' } })],
    ];
    for (const [label, pending] of calls) {
      const res = await pending;
      assert.equal(res.status, 404, `${label}: ${res.text}`);
      assert.equal(res.body.code, 'RESOURCE_NOT_FOUND', label);
    }
    // A's own card at B's shop, and B's card at A's shop: the shop is not the caller's.
    const foreignShop = await award(t, b, { card_id: cardB.id, shop_id: shopA, amount: 10 });
    assert.equal(foreignShop.status, 404);
    assert.equal(foreignShop.body.errors[0].field, 'shop_id');
    assert.deepEqual(await snapshot(), before);
    await assertLedgerConsistent(t);
  });

  it("B's lists, summaries and exports never contain A's data", async () => {
    const asB = { headers: apiHeaders(b.apiKey) };
    const points = await request(t.url, 'GET', `/en/shop/points?card_id=${cardA.id}`, asB);
    assert.deepEqual(points.body.data, []);
    const cards = await request(t.url, 'GET', `/en/shop/loyalty-cards?user_id=${customerId}`, asB);
    assert.deepEqual(cards.body.data.map((c: { id: number }) => c.id), [cardB.id]);
    const summary = await request(t.url, 'GET', '/en/shop/points/summary', asB);
    assert.equal(summary.body.data.points_earned, 0);
    assert.equal(summary.body.data.cards, 1);
    const csv = await fetch(`${t.url}/en/shop/transactions/export`, { method: 'POST', headers: apiHeaders(b.apiKey) });
    assert.equal((await csv.text()).trim().split('\r\n').length, 1, 'header only');
  });

  it("a customer token from B's QR login sees only B's card of a customer holding both", async () => {
    const scoped = await t.app.context.tokens.sign({ kind: 'customer', subject: customerId, partnerId: b.id });
    const headers = bearer(scoped.token);
    const own = await request(t.url, 'GET', `/en/shop/loyalty-cards/${customerId}`, { headers });
    assert.deepEqual(own.body.data.map((c: { id: number }) => c.id), [cardB.id]);
    assert.equal((await request(t.url, 'GET', `/en/shop/points/card/${cardA.id}/balance`, { headers })).status, 404);
    assert.equal((await request(t.url, 'GET', `/en/shop/transactions/${txA}`, { headers })).status, 404);
    const list = await request(t.url, 'GET', '/en/shop/transactions', { headers });
    assert.deepEqual(list.body.data, []);
    // The app's own token (not partner-scoped) shows the customer everything.
    const app = await t.app.context.tokens.sign({ kind: 'customer', subject: customerId });
    const all = await request(t.url, 'GET', `/en/shop/loyalty-cards/${customerId}`, { headers: bearer(app.token) });
    assert.deepEqual(all.body.data.map((c: { id: number }) => c.id).sort(), [cardA.id, cardB.id].sort());
  });
});
