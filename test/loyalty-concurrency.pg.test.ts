// The ledger under concurrency, on PostgreSQL with real parallel connections: many tills at
// once never overdraw a card, an idempotent retry racing its original awards once, and after
// each storm the balance is still the sum of the ledger. PostgreSQL only: PGlite runs one
// transaction at a time, so there these pass with the card's row lock removed and prove
// nothing (the ledger's sequential behaviour is covered by loyalty-ledger and ledger-property).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, request } from './helpers/http.js';
import { assertLedgerConsistent, award, balanceOf, createCustomer, createProgramme, createShop, deduct, joinProgramme } from './helpers/loyalty.js';

describe('ledger under concurrency', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let shop: number;
  let programme: number;

  before(async () => {
    t = await startTestApp({ DATABASE_POOL_MAX: '20' });
    p = await createPartner(t);
    shop = await createShop(t, p.id);
    programme = await createProgramme(t, p.id);
  });
  after(() => t.close());

  it('50 concurrent deductions of 10 from 100: exactly 10 succeed, the balance is 0 and never negative', async () => {
    const card = await joinProgramme(t, await createCustomer(t), programme);
    assert.equal((await award(t, p, { card_id: card.id, shop_id: shop, amount: 100 })).status, 201);
    const results = await Promise.all(Array.from({ length: 50 }, () => deduct(t, p, { card_id: card.id, shop_id: shop, points: 10 })));
    const statuses = results.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 201).length, 10, JSON.stringify(statuses));
    assert.equal(statuses.filter((s) => s === 422).length, 40);
    for (const r of results.filter((x) => x.status === 422)) assert.equal(r.body.code, 'INSUFFICIENT_BALANCE');
    // Each success saw the balance its predecessor left: 90, 80, … 0, each exactly once.
    const after = results.filter((r) => r.status === 201).map((r) => r.body.data.balance_after as number);
    assert.deepEqual(after.sort((a, b) => a - b), [0, 10, 20, 30, 40, 50, 60, 70, 80, 90]);
    assert.equal(await balanceOf(t, p, card.id), 0);
    await assertLedgerConsistent(t);
  });

  it('40 awards at once on one card: each answered with its own award, receipts earn once, balances chain', async () => {
    // One card's concurrent awards go through the database together (one transaction, each
    // seeing the balance the one before left): every response must still be its own request's.
    const card = await joinProgramme(t, await createCustomer(t), programme);
    const start = await balanceOf(t, p, card.id);
    const bodies = Array.from({ length: 40 }, (_, i) => ({ card_id: card.id, shop_id: shop, amount: 10 + i, receipt_number: `HOT-${i % 30}` }));
    const results = await Promise.all(bodies.map((b) => award(t, p, b)));
    const won = new Set<string>();
    results.forEach((r, i) => {
      if (r.status === 201) {
        assert.equal(r.body.data.amount, bodies[i]!.amount, 'the response is this request’s award');
        assert.equal(r.body.data.receipt_number, bodies[i]!.receipt_number);
        won.add(bodies[i]!.receipt_number);
      } else {
        assert.equal(r.status, 409, r.text);
        assert.equal(r.body.code, 'DUPLICATE_VALUE');
      }
    });
    assert.equal(won.size, 30, 'each of the 30 receipts earned exactly once');
    assert.equal(results.filter((r) => r.status === 201).length, 30);
    let balance = start;
    for (const tx of results.filter((r) => r.status === 201).map((r) => r.body.data).sort((a, b) => a.id - b.id)) {
      balance += tx.points;
      assert.equal(tx.balance_after, balance, 'each award starts from the balance the one before left');
    }
    assert.equal(await balanceOf(t, p, card.id), balance);
    await assertLedgerConsistent(t);
  });

  it('30 awards at once on one card, each with its own Idempotency-Key (more than the pool holds): all awarded, balances chain', async () => {
    // A keyed award runs in its key's transaction, which holds a pooled connection (20 here):
    // it must not wait behind the card's other awards for a second connection.
    const card = await joinProgramme(t, await createCustomer(t), programme);
    const start = await balanceOf(t, p, card.id);
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => award(t, p, { card_id: card.id, shop_id: shop, amount: 5 + i }, { 'idempotency-key': `hot-key-${card.id}-${i}` })),
    );
    assert.deepEqual(
      results.map((r) => r.status),
      results.map(() => 201),
      JSON.stringify(results.map((r) => r.body?.code)),
    );
    let balance = start;
    for (const tx of results.map((r) => r.body.data).sort((a, b) => a.id - b.id)) {
      balance += tx.points;
      assert.equal(tx.balance_after, balance);
    }
    assert.equal(await balanceOf(t, p, card.id), balance);
    await assertLedgerConsistent(t);
  });

  it('awards, deductions and reversals interleaved on one card keep the ledger exact', async () => {
    const card = await joinProgramme(t, await createCustomer(t), programme);
    await award(t, p, { card_id: card.id, shop_id: shop, amount: 500 });
    const ops = Array.from({ length: 60 }, (_, i) =>
      i % 3 === 0
        ? award(t, p, { card_id: card.id, shop_id: shop, amount: 7, receipt_number: `MIX-${i}` })
        : i % 3 === 1
          ? deduct(t, p, { card_id: card.id, shop_id: shop, points: 13 })
          : request(t.url, 'POST', '/en/shop/points', { headers: apiHeaders(p.apiKey), json: { card_id: card.id, points: -3, reason: 'mix' } }),
    );
    const results = await Promise.all(ops);
    assert.ok(results.every((r) => r.status === 201 || r.body?.code === 'INSUFFICIENT_BALANCE'), JSON.stringify(results.map((r) => r.status)));
    // Reverse every successful deduction at once: each restores its own lots.
    const deductions = results.filter((r) => r.status === 201 && r.body.data.type === 'deduct');
    const reversals = await Promise.all(
      deductions.map((d) => request(t.url, 'POST', `/en/shop/transactions/${d.body.data.id}/reverse`, { headers: apiHeaders(p.apiKey) })),
    );
    assert.ok(reversals.every((r) => r.status === 201));
    await assertLedgerConsistent(t);
    const expected = 500 + results.reduce((sum, r) => (r.status === 201 && r.body.data.type !== 'deduct' ? sum + r.body.data.points : sum), 0);
    assert.equal(await balanceOf(t, p, card.id), expected);
  });

  it('the same Idempotency-Key sent 10 times at once awards once', async () => {
    const card = await joinProgramme(t, await createCustomer(t), programme);
    const body = { card_id: card.id, shop_id: shop, amount: 25 };
    const results = await Promise.all(Array.from({ length: 10 }, () => award(t, p, body, { 'idempotency-key': 'storm-1' })));
    for (const r of results) assert.ok(r.status === 201 || (r.status === 409 && r.body.code === 'CONCURRENT_LIMIT_EXCEEDED'), r.text);
    const ids = new Set(results.filter((r) => r.status === 201).map((r) => r.body.data.id));
    assert.equal(ids.size, 1, 'every 201 is the one award');
    assert.equal(await balanceOf(t, p, card.id), 25);
  });

  it('two reversals of one transaction at once: one wins, the other is 409', async () => {
    const card = await joinProgramme(t, await createCustomer(t), programme);
    const bought = await award(t, p, { card_id: card.id, shop_id: shop, amount: 40 });
    const results = await Promise.all(
      Array.from({ length: 5 }, () => request(t.url, 'POST', `/en/shop/transactions/${bought.body.data.id}/reverse`, { headers: apiHeaders(p.apiKey) })),
    );
    assert.deepEqual(results.map((r) => r.status).sort(), [201, 409, 409, 409, 409]);
    assert.equal(await balanceOf(t, p, card.id), 0);
    await assertLedgerConsistent(t);
  });
});
