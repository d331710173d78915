// Returns (DESIGN.md §12 "Returns") over HTTP: line by line and source by source in any
// number of steps (1+1+1 of 3 units take back exactly the line's points, campaign points
// included), cumulatively (19 of 20 units one at a time take what 19 at once take; 101 returns
// of 0.99 EUR of 100 EUR), by amount on purchases without lines (fast path and engine), more than bought,
// unknown lines, campaign budgets given back, points debt and its payoff by a purchase and by
// an adjustment, returns of deductions, reversed purchases, reverse after partial returns,
// replays with Idempotency-Key, another partner's transaction, points coming back paying the
// debt first (either order of returns ends the same) — and the ledger verifier clean after all
// of it, and finding each kind of leak planted in the tables.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { verifyLedger } from '../src/cli/ledger-verify.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { assertLedgerConsistent, award, balanceOf, createCustomer, createProgramme, createShop, deduct, joinProgramme, TestClock } from './helpers/loyalty.js';

describe('returns', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let other: PartnerFixture;
  let shop: number;
  /** 1 point per EUR, no campaigns: amount-only awards take the one-statement fast path. */
  let plain: number;
  /** 1 point per EUR with two campaigns: double points, and 10 bonus points from a budget of 1000. */
  let promo: number;
  let multiplier: number;
  let bonus: number;
  const clock = new TestClock();
  const rules = { pointsPerCurrency: '1', currencyAmount: '1', pointsPerVisit: 0, minPointsPerPurchase: 0, minPointsForRedemption: 1 };

  const ret = (id: number, json: Record<string, unknown>, who = p, headers: Record<string, string> = {}) =>
    request(t.url, 'POST', `/en/shop/transactions/${id}/return`, { headers: { ...apiHeaders(who.apiKey), ...headers }, json });
  const reverse = (id: number) => request(t.url, 'POST', `/en/shop/transactions/${id}/reverse`, { headers: apiHeaders(p.apiKey), json: {} });
  const details = async (id: number) => {
    const res = await request(t.url, 'GET', `/en/shop/transactions/${id}`, { headers: apiHeaders(p.apiKey) });
    assert.equal(res.status, 200, res.text);
    return res.body.data;
  };
  const campaign = async (id: number) => (await request(t.url, 'GET', `/en/partners/campaigns/${id}`, { headers: bearer(p.token) })).body.data;
  const cardView = async (cardId: number) => {
    const res = await request(t.url, 'GET', `/en/shop/loyalty-cards/info?card_id=${cardId}`, { headers: apiHeaders(p.apiKey) });
    assert.equal(res.status, 200, res.text);
    return res.body.data.card;
  };
  const newCard = async (programme: number) => (await joinProgramme(t, await createCustomer(t), programme)).id;
  const earn = async (body: Record<string, unknown>) => {
    const res = await award(t, p, { shop_id: shop, ...body });
    assert.equal(res.status, 201, res.text);
    return res.body.data;
  };
  const adjust = async (cardId: number, points: number) => {
    const res = await request(t.url, 'POST', '/en/shop/points', { headers: apiHeaders(p.apiKey), json: { card_id: cardId, points, reason: 'test' } });
    assert.equal(res.status, 201, res.text);
    return res.body.data;
  };
  /** The fields an error names: Shape B lists items with `field`, a validation error keys them. */
  const field = (res: { body: { errors?: Array<{ field: string }> | Record<string, unknown> } }) => {
    const errors = res.body.errors ?? {};
    return Array.isArray(errors) ? errors.map((e) => e.field) : Object.keys(errors);
  };

  before(async () => {
    t = await startTestApp({}, undefined, { clock });
    p = await createPartner(t, 'Kavinė');
    other = await createPartner(t, 'Other');
    shop = await createShop(t, p.id);
    plain = await createProgramme(t, p.id, rules);
    promo = await createProgramme(t, p.id, rules);
    const mk = async (body: Record<string, unknown>) => {
      const res = await request(t.url, 'POST', '/en/partners/campaigns', { headers: bearer(p.token), json: { partner_card_id: promo, ...body } });
      assert.equal(res.status, 201, res.text);
      return res.body.data.id as number;
    };
    multiplier = await mk({ name: 'Double points', effect: { type: 'multiplier', value: 2 }, priority: 2 });
    bonus = await mk({ name: 'Bonus 10', effect: { type: 'bonus', value: 10 }, priority: 1, limits: { points_budget: 1000 } });
  });
  after(async () => {
    // Everything the tests did leaves the ledger consistent (returns and debt included).
    try {
      const report = await verifyLedger(t.app.context.database.db, 100, clock.now());
      assert.deepEqual(report.differences, []);
    } finally {
      await t.close();
    }
  });

  it('1+1+1 of 3 units take back exactly the line\'s points, source by source, and give the campaign its budget back', async () => {
    const card = await newCard(promo);
    const purchase = await earn({
      card_id: card,
      items: [
        { line_id: 'A', sku: 'COF', quantity: 3, amount: 10 },
        { line_id: 'B', sku: 'TEA', quantity: 1, amount: 5 },
      ],
    });
    // base 15 (A 10, B 5); multiplier +15 (A 10, B 5); bonus 10 by amount (A 6.67 → 7, B 3).
    assert.deepEqual(
      purchase.breakdown.map((b: { source: string; points: number }) => [b.source, b.points]),
      [['base', 15], ['campaign', 15], ['campaign', 10]],
    );
    assert.deepEqual(purchase.items.map((i: { line_id: string; points: number }) => [i.line_id, i.points]), [['A', 27], ['B', 13]]);
    assert.equal(purchase.points, 40);
    const before = { multiplier: (await campaign(multiplier)).points_awarded, bonus: await campaign(bonus) };

    const takes: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await ret(purchase.id, { items: [{ line_id: 'A', quantity: 1 }], receipt_number: `R-${i}`, reason: 'changed mind' });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.message, 'Return recorded');
      const e = res.body.data;
      assert.equal(e.type, 'return');
      assert.equal(e.returns_id, purchase.id);
      assert.equal(e.receipt_number, `R-${i}`);
      assert.equal(e.reason, 'changed mind');
      // The EUR of a line comes back by its cumulative quantity: 3.3333, 3.3333, 3.3334.
      assert.equal(e.amount, i < 2 ? -3.3333 : -3.3334);
      takes.push(e.points);
    }
    // Each source ⌊points × 1 ÷ 3⌋ (base 3, multiplier 3, bonus 2), the last return what is left.
    assert.deepEqual(takes, [-8, -8, -11]);
    assert.equal(takes.reduce((a, b) => a + b, 0), -27);
    assert.equal(await balanceOf(t, p, card), 13);

    const d = await details(purchase.id);
    assert.deepEqual(d.items.map((i: { line_id: string; returned_quantity: number }) => [i.line_id, i.returned_quantity]), [['A', 3], ['B', 0]]);
    assert.equal(d.returns.length, 3);
    // The campaigns got back exactly their share of line A: 10 and 7 points.
    assert.equal((await campaign(multiplier)).points_awarded, before.multiplier - 10);
    const after = await campaign(bonus);
    assert.equal(after.points_awarded, before.bonus.points_awarded - 7);
    assert.equal(after.budget_left, before.bonus.budget_left + 7);
    assert.equal(after.uses_count, before.bonus.uses_count, 'uses do not come back');

    // More than bought (cumulative), on each offending line; nothing changes.
    const over = await ret(purchase.id, { items: [{ line_id: 'B', quantity: 1 }, { line_id: 'A', quantity: 0.001 }] });
    assert.equal(over.status, 422, over.text);
    assert.equal(over.body.code, 'OUT_OF_RANGE');
    assert.deepEqual(field(over), ['items.1.quantity']);
    const over2 = await ret(purchase.id, { items: [{ line_id: 'B', quantity: 1.5 }] });
    assert.equal(over2.status, 422);
    assert.equal(over2.body.code, 'OUT_OF_RANGE');
    assert.deepEqual(field(over2), ['items.0.quantity']);
    const unknown = await ret(purchase.id, { items: [{ line_id: 'Z', quantity: 1 }] });
    assert.equal(unknown.status, 422, unknown.text);
    assert.deepEqual(field(unknown), ['items.0.line_id']);
    const byAmount = await ret(purchase.id, { amount: 1 });
    assert.equal(byAmount.status, 422);
    assert.deepEqual(field(byAmount), ['amount']);
    const both = await ret(purchase.id, { amount: 1, items: [{ line_id: 'B', quantity: 1 }] });
    assert.equal(both.status, 422);
    assert.deepEqual(field(both), ['items']);
    assert.equal(await balanceOf(t, p, card), 13);
    assert.equal((await details(purchase.id)).returns.length, 3);
    assert.equal((await details(purchase.id)).items[1].returned_quantity, 0);
  });

  it('19 single-unit returns of a 20-unit line take back ⌊19 × 19 ÷ 20⌋ = 18 points in all, the 20th the last one', async () => {
    const card = await newCard(plain);
    // 20 × 0.95 EUR: 19 points on the line.
    const sale = await earn({ card_id: card, items: [{ line_id: 'L', quantity: 20, amount: 19 }] });
    assert.equal(sale.points, 19);
    const takes: number[] = [];
    for (let k = 1; k <= 20; k++) {
      const res = await ret(sale.id, { items: [{ line_id: 'L', quantity: 1 }] });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.data.amount, -0.95);
      takes.push(-res.body.data.points);
      // Cumulative: after k units, ⌊19 × k ÷ 20⌋ taken back in all (the 20th: everything).
      assert.equal(takes.reduce((a, b) => a + b, 0), k === 20 ? 19 : Math.floor((19 * k) / 20), `after ${k} returns`);
    }
    assert.equal(takes.slice(0, 19).reduce((a, b) => a + b, 0), 18);
    assert.equal(takes[19], 1, 'the last return takes what is left');
    // Exactly what returning 19 at once, then 1, takes.
    const card2 = await newCard(plain);
    const sale2 = await earn({ card_id: card2, items: [{ line_id: 'L', quantity: 20, amount: 19 }] });
    assert.equal((await ret(sale2.id, { items: [{ line_id: 'L', quantity: 19 }] })).body.data.points, -18);
    assert.equal((await ret(sale2.id, { items: [{ line_id: 'L', quantity: 1 }] })).body.data.points, -1);
    assert.equal(await balanceOf(t, p, card), 0);
    assert.equal(await balanceOf(t, p, card2), 0);
    assert.deepEqual((await verifyLedger(t.app.context.database.db, 100, clock.now())).differences, []);
  });

  it('campaign sources on a line returned one unit at a time: each source cumulative, each campaign exact', async () => {
    const card = await newCard(promo);
    const before = { double: await campaign(multiplier), bonus: await campaign(bonus) };
    const sale = await earn({ card_id: card, items: [{ line_id: 'L', quantity: 20, amount: 19 }] });
    // base 19, Double points +19, Bonus 10: 48.
    assert.deepEqual(
      sale.breakdown.map((b: { source: string; points: number }) => [b.source, b.points]),
      [['base', 19], ['campaign', 19], ['campaign', 10]],
    );
    let taken = 0;
    for (let k = 1; k <= 19; k++) {
      const res = await ret(sale.id, { items: [{ line_id: 'L', quantity: 1 }] });
      assert.equal(res.status, 201, res.text);
      taken -= res.body.data.points;
    }
    // ⌊19 × 19 ÷ 20⌋ + ⌊19 × 19 ÷ 20⌋ + ⌊10 × 19 ÷ 20⌋ = 18 + 18 + 9.
    assert.equal(taken, 45);
    const mid = { double: await campaign(multiplier), bonus: await campaign(bonus) };
    assert.equal(mid.double.points_awarded, before.double.points_awarded + 19 - 18);
    assert.equal(mid.bonus.points_awarded, before.bonus.points_awarded + 10 - 9);
    assert.equal(mid.bonus.budget_left, before.bonus.budget_left - 10 + 9);
    const last = await ret(sale.id, { items: [{ line_id: 'L', quantity: 1 }] });
    assert.equal(last.body.data.points, -3, 'what is left of each source: 1 + 1 + 1');
    const end = { double: await campaign(multiplier), bonus: await campaign(bonus) };
    assert.equal(end.double.points_awarded, before.double.points_awarded, 'the campaign got back exactly its share');
    assert.equal(end.bonus.points_awarded, before.bonus.points_awarded);
    assert.equal(end.bonus.budget_left, before.bonus.budget_left);
    assert.equal(end.bonus.uses_count, before.bonus.uses_count + 1, 'uses do not come back');
    assert.equal(await balanceOf(t, p, card), 0);
  });

  it('by amount, cumulatively: 101 returns of 0.99 EUR of a 100 EUR purchase take back 99 points, the rest the last one', async () => {
    const card = await newCard(plain);
    const fast = await earn({ card_id: card, amount: 100 });
    assert.equal(fast.points, 100);
    let taken = 0;
    for (let k = 1; k <= 101; k++) {
      const res = await ret(fast.id, { amount: 0.99 });
      assert.equal(res.status, 201, res.text);
      taken -= res.body.data.points;
      assert.equal(taken, Math.floor((100 * 99 * k) / 10_000), `after ${k} returns`);
    }
    assert.equal(taken, 99, '⌊100 × 99.99 ÷ 100⌋');
    const rest = await ret(fast.id, { amount: 0.01 });
    assert.equal(rest.status, 201, rest.text);
    assert.equal(rest.body.data.points, -1, 'the last return takes what is left');
    assert.equal(await balanceOf(t, p, card), 0);

    // The engine (campaigns): every source by the cumulative amount, the campaign exact.
    const card2 = await newCard(promo);
    const before = await campaign(bonus);
    const engine = await earn({ card_id: card2, amount: 10 });
    assert.equal(engine.points, 30);
    taken = 0;
    for (let k = 1; k <= 10; k++) taken -= (await ret(engine.id, { amount: 0.99 })).body.data.points;
    assert.equal(taken, 27, 'each source ⌊10 × 9.9 ÷ 10⌋ = 9');
    assert.equal((await campaign(bonus)).points_awarded, before.points_awarded + 1);
    assert.equal((await ret(engine.id, { amount: 0.1 })).body.data.points, -3);
    assert.equal((await campaign(bonus)).points_awarded, before.points_awarded);
    assert.equal(await balanceOf(t, p, card2), 0);
  });

  it('the worked example of docs/loyalty.md: two partial returns, the debt and its payoff', async () => {
    const card = await newCard(promo);
    const sale = await earn({ card_id: card, items: [{ line_id: 'A', quantity: 3, amount: 10 }, { line_id: 'B', quantity: 1, amount: 5 }] });
    assert.equal(sale.points, 40);
    assert.equal((await deduct(t, p, { card_id: card, shop_id: shop, points: 30 })).status, 201);
    const before = { double: (await campaign(multiplier)).points_awarded, bonus: (await campaign(bonus)).points_awarded };
    const one = await ret(sale.id, { items: [{ line_id: 'A', quantity: 1 }] });
    assert.deepEqual([one.body.data.points, one.body.data.amount, one.body.data.balance_after], [-8, -3.3333, 2]);
    assert.equal((await campaign(multiplier)).points_awarded, before.double - 3);
    assert.equal((await campaign(bonus)).points_awarded, before.bonus - 2);
    const two = await ret(sale.id, { items: [{ line_id: 'A', quantity: 2 }] });
    assert.deepEqual([two.body.data.points, two.body.data.amount, two.body.data.balance_after], [-19, -6.6667, 0]);
    assert.equal((await cardView(card)).points_debt, 17);
    const pays = await earn({ card_id: card, amount: 5 });
    assert.deepEqual([pays.points, pays.balance_after], [20, 3]);
    const view = await cardView(card);
    assert.deepEqual([view.points_balance, view.points_debt], [3, 0]);
  });

  it('by amount: a fast-path purchase and an engine purchase without lines', async () => {
    const card = await newCard(plain);
    const fast = await earn({ card_id: card, amount: 20 });
    assert.equal(fast.points, 20);
    const r1 = await ret(fast.id, { amount: '5.5' });
    assert.equal(r1.status, 201, r1.text);
    assert.equal(r1.body.data.points, -5);
    assert.equal(r1.body.data.amount, -5.5);
    const tooMuch = await ret(fast.id, { amount: '14.5001' });
    assert.equal(tooMuch.status, 422, tooMuch.text);
    assert.equal(tooMuch.body.code, 'OUT_OF_RANGE');
    assert.deepEqual(field(tooMuch), ['amount']);
    const items = await ret(fast.id, { items: [{ line_id: '1', quantity: 1 }] });
    assert.equal(items.status, 422);
    assert.deepEqual(field(items), ['items']);
    const r2 = await ret(fast.id, { amount: '14.5' });
    assert.equal(r2.status, 201, r2.text);
    assert.equal(r2.body.data.points, -15, 'the last return takes what is left');
    assert.equal(await balanceOf(t, p, card), 0);
    const d = await details(fast.id);
    assert.deepEqual(d.breakdown.map((b: { source: string; points: number }) => [b.source, b.points]), [['base', 20]]);
    const summary = await request(t.url, 'GET', `/en/shop/points/summary?card_id=${card}`, { headers: apiHeaders(p.apiKey) });
    assert.equal(summary.body.data.purchase_amount, 0, 'purchase_amount is net of returns');

    const card2 = await newCard(promo);
    const before = await campaign(bonus);
    const engine = await earn({ card_id: card2, amount: 10 });
    assert.equal(engine.points, 30);
    const e1 = await ret(engine.id, { amount: '3.33' });
    assert.equal(e1.status, 201, e1.text);
    assert.equal(e1.body.data.points, -9, 'each source ⌊10 × 3.33 ÷ 10⌋ = 3');
    const e2 = await ret(engine.id, { amount: '6.67' });
    assert.equal(e2.body.data.points, -21);
    const afterReturns = await campaign(bonus);
    assert.equal(afterReturns.points_awarded, before.points_awarded, 'the bonus came back in full');
    assert.equal(afterReturns.uses_count, before.uses_count + 1);
  });

  it('debt: a return the balance cannot cover, paid off by a purchase then by an adjustment', async () => {
    const card = await newCard(plain);
    const purchase = await earn({ card_id: card, amount: 20 });
    assert.equal((await deduct(t, p, { card_id: card, shop_id: shop, points: 15 })).status, 201);
    const r = await ret(purchase.id, { amount: 20 });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.data.points, -20, 'the whole amount taken back: balance and debt');
    assert.equal(r.body.data.balance_after, 0);
    let view = await cardView(card);
    assert.equal(view.points_balance, 0);
    assert.equal(view.points_debt, 15);
    const mine = await request(t.url, 'GET', `/en/partners/customers`, { headers: bearer(p.token) });
    const row = mine.body.data.find((c: { cards: Array<{ id: number }> }) => c.cards.some((x) => x.id === card));
    assert.equal(row.points_debt, 15);
    assert.equal(row.cards[0].points_debt, 15);
    // Spending sees only the balance.
    const spend = await deduct(t, p, { card_id: card, shop_id: shop, points: 1 });
    assert.equal(spend.status, 422);
    assert.equal(spend.body.code, 'INSUFFICIENT_BALANCE');

    const pays = await earn({ card_id: card, amount: 10 });
    assert.equal(pays.points, 10);
    assert.equal(pays.balance_after, 0, 'the purchase paid 10 of the debt');
    view = await cardView(card);
    assert.deepEqual([view.points_balance, view.points_debt], [0, 5]);
    const adj = await adjust(card, 8);
    assert.equal(adj.points, 8);
    assert.equal(adj.balance_after, 3, 'the adjustment paid the last 5');
    view = await cardView(card);
    assert.deepEqual([view.points_balance, view.points_debt], [3, 0]);
    const balance = await request(t.url, 'GET', `/en/shop/points/card/${card}/balance`, { headers: apiHeaders(p.apiKey) });
    assert.equal(balance.body.data.points_debt, 0);
    const ledger = await request(t.url, 'GET', `/en/shop/points?card_id=${card}`, { headers: apiHeaders(p.apiKey) });
    assert.deepEqual(
      ledger.body.data.map((e: { type: string; points: number; balance_after: number }) => [e.type, e.points, e.balance_after]).reverse(),
      [['purchase', 20, 20], ['deduct', -15, 5], ['return', -20, 0], ['purchase', 10, 0], ['adjust', 8, 3]],
    );
    // The 3 points left are spendable.
    assert.equal((await deduct(t, p, { card_id: card, shop_id: shop, points: 3 })).status, 201);
  });

  it('reversing a purchase that paid debt off owes that debt again', async () => {
    const card = await newCard(plain);
    const first = await earn({ card_id: card, amount: 20 });
    assert.equal((await deduct(t, p, { card_id: card, shop_id: shop, points: 20 })).status, 201);
    assert.equal((await ret(first.id, { amount: 20 })).status, 201);
    const owing = await cardView(card);
    assert.deepEqual([owing.points_balance, owing.points_debt], [0, 20]);
    const pays = await earn({ card_id: card, amount: 12 });
    assert.deepEqual([pays.points, pays.balance_after], [12, 0]);
    const rev = await reverse(pays.id);
    assert.equal(rev.status, 201, rev.text);
    assert.equal(rev.body.data.points, -12, 'the whole purchase is taken back');
    assert.equal(rev.body.data.balance_after, 0);
    assert.equal(rev.body.data.points_not_recovered, 0, 'nothing is lost: the paid part is owed again');
    const view = await cardView(card);
    assert.deepEqual([view.points_balance, view.points_debt], [0, 20]);
    await assertLedgerConsistent(t);
  });

  it('points coming back pay the debt first: award 100, deduct 100, both returns in either order end 0 / 0', async () => {
    const owe = async () => {
      const card = await newCard(plain);
      const sale = await earn({ card_id: card, amount: 100 });
      const spend = await deduct(t, p, { card_id: card, shop_id: shop, points: 100 });
      assert.equal(spend.status, 201, spend.text);
      return { card, sale: sale.id as number, spend: spend.body.data.id as number };
    };
    const state = async (card: number) => {
      const v = await cardView(card);
      return [v.points_balance, v.points_debt];
    };
    // The purchase first (debt 100), then the deduction: its 100 points pay the debt.
    const a = await owe();
    assert.equal((await ret(a.sale, { amount: 100 })).body.data.points, -100);
    assert.deepEqual(await state(a.card), [0, 100]);
    const back = await ret(a.spend, { points: 100 });
    assert.equal(back.status, 201, back.text);
    assert.deepEqual([back.body.data.points, back.body.data.balance_after], [100, 0]);
    assert.deepEqual(await state(a.card), [0, 0]);
    assert.equal((await deduct(t, p, { card_id: a.card, shop_id: shop, points: 1 })).body.code, 'INSUFFICIENT_BALANCE');
    // The deduction first, then the purchase: the same end.
    const b = await owe();
    assert.equal((await ret(b.spend, { points: 100 })).body.data.balance_after, 100);
    assert.equal((await ret(b.sale, { amount: 100 })).body.data.balance_after, 0);
    assert.deepEqual(await state(b.card), [0, 0]);
    // A reversal of the deduction instead of its return: the same.
    const c = await owe();
    assert.equal((await ret(c.sale, { amount: 100 })).status, 201);
    const rev = await reverse(c.spend);
    assert.equal(rev.status, 201, rev.text);
    assert.deepEqual([rev.body.data.points, rev.body.data.balance_after], [100, 0]);
    assert.deepEqual(await state(c.card), [0, 0]);
    // In parts, and a negative adjustment's reversal: the debt first, the rest into lots.
    const d = await owe();
    assert.equal((await ret(d.sale, { amount: 60 })).body.data.points, -60);
    assert.deepEqual(await state(d.card), [0, 60]);
    assert.equal((await ret(d.spend, { points: 30 })).body.data.balance_after, 0);
    assert.deepEqual(await state(d.card), [0, 30]);
    const more = await ret(d.spend, { points: 50 });
    assert.deepEqual([more.body.data.points, more.body.data.balance_after], [50, 20]);
    assert.deepEqual(await state(d.card), [20, 0]);
    assert.equal((await reverse(d.spend)).body.data.points, 20, 'the reversal gives back what the returns did not');
    assert.deepEqual(await state(d.card), [40, 0]);
    const e = await newCard(plain);
    const sale = await earn({ card_id: e, amount: 10 });
    const minus = await adjust(e, -10);
    assert.equal((await ret(sale.id, { amount: 10 })).status, 201);
    assert.deepEqual(await state(e), [0, 10]);
    assert.equal((await reverse(minus.id)).body.data.balance_after, 0);
    assert.deepEqual(await state(e), [0, 0]);
    await assertLedgerConsistent(t);
  });

  it('reversing an earning that paid debt off takes from the balance first: the card never holds points while it owes some', async () => {
    const card = await newCard(plain);
    const first = await earn({ card_id: card, amount: 50 });
    assert.equal((await deduct(t, p, { card_id: card, shop_id: shop, points: 50 })).status, 201);
    assert.equal((await ret(first.id, { amount: 50 })).status, 201);
    const pays = await earn({ card_id: card, amount: 100 });
    assert.equal(pays.balance_after, 50, '50 paid the debt');
    await adjust(card, 200);
    const rev = await reverse(pays.id);
    assert.equal(rev.status, 201, rev.text);
    assert.deepEqual([rev.body.data.points, rev.body.data.balance_after, rev.body.data.points_not_recovered], [-100, 150, 0]);
    const view = await cardView(card);
    assert.deepEqual([view.points_balance, view.points_debt], [150, 0]);
    await assertLedgerConsistent(t);
  });

  it('a return of a deduction gives back up to what was deducted, into its lots', async () => {
    const card = await newCard(plain);
    await adjust(card, 50);
    const d = await deduct(t, p, { card_id: card, shop_id: shop, points: 20 });
    assert.equal(d.status, 201);
    const r1 = await ret(d.body.data.id, { points: 5 });
    assert.equal(r1.status, 201, r1.text);
    assert.equal(r1.body.data.type, 'return');
    assert.equal(r1.body.data.points, 5);
    assert.equal(r1.body.data.returns_id, d.body.data.id);
    assert.equal(await balanceOf(t, p, card), 35);
    const over = await ret(d.body.data.id, { points: 16 });
    assert.equal(over.status, 422, over.text);
    assert.equal(over.body.code, 'OUT_OF_RANGE');
    assert.deepEqual(field(over), ['points']);
    const wrong = await ret(d.body.data.id, { amount: 1 });
    assert.equal(wrong.status, 422);
    assert.deepEqual(field(wrong).sort(), ['amount', 'points']);
    // Reversing the deduction restores only what its return did not.
    const rev = await reverse(d.body.data.id);
    assert.equal(rev.status, 201, rev.text);
    assert.equal(rev.body.data.points, 15);
    assert.equal(await balanceOf(t, p, card), 50);
    const late = await ret(d.body.data.id, { points: 1 });
    assert.equal(late.status, 409);
    assert.equal(late.body.code, 'INVALID_STATE');
  });

  it('reversed purchases, other types and return entries: 409; reverse after partial returns takes what is left', async () => {
    const card = await newCard(plain);
    const purchase = await earn({ card_id: card, amount: 20 });
    const r = await ret(purchase.id, { amount: 5 });
    assert.equal(r.status, 201);
    const ofReturn = await reverse(r.body.data.id);
    assert.equal(ofReturn.status, 409, ofReturn.text);
    assert.equal(ofReturn.body.code, 'INVALID_STATE');
    const returnOfReturn = await ret(r.body.data.id, { points: 1 });
    assert.equal(returnOfReturn.status, 409);
    const adj = await adjust(card, 4);
    const ofAdjust = await ret(adj.id, { points: 1 });
    assert.equal(ofAdjust.status, 409);
    assert.equal(ofAdjust.body.code, 'INVALID_STATE');

    const rev = await reverse(purchase.id);
    assert.equal(rev.status, 201, rev.text);
    assert.equal(rev.body.data.points, -15, 'what the return left');
    assert.equal(rev.body.data.amount, -15);
    assert.equal(rev.body.data.points_not_recovered, 0);
    assert.equal(await balanceOf(t, p, card), 4);
    const summary = await request(t.url, 'GET', `/en/shop/points/summary?card_id=${card}`, { headers: apiHeaders(p.apiKey) });
    assert.equal(summary.body.data.purchase_amount, 0, 'the return and the reversal net the purchase out');
    const after = await ret(purchase.id, { amount: 1 });
    assert.equal(after.status, 409, after.text);
    assert.equal(after.body.code, 'INVALID_STATE');
    assert.equal(await balanceOf(t, p, card), 4);
  });

  it('points of the purchase that expired are not taken again by its returns', async () => {
    const expiring = await createProgramme(t, p.id, { ...rules, pointsExpirationDays: 30 });
    const card = await newCard(expiring);
    const purchase = await earn({ card_id: card, amount: 10 });
    clock.advanceDays(31);
    const kept = await adjust(card, 5);
    assert.equal(kept.balance_after, 5, 'the purchase\'s 10 points expired');
    const r1 = await ret(purchase.id, { amount: 6 });
    assert.equal(r1.status, 201, r1.text);
    assert.equal(r1.body.data.points, 0, 'the 6 points were already gone by expiry');
    const r2 = await ret(purchase.id, { amount: 4 });
    assert.equal(r2.body.data.points, 0);
    const view = await cardView(card);
    assert.deepEqual([view.points_balance, view.points_debt], [5, 0]);
    const rev = await reverse(purchase.id);
    assert.equal(rev.body.data.points, 0);
    assert.equal(await balanceOf(t, p, card), 5);
  });

  it('a replay with its Idempotency-Key answers the same and changes nothing', async () => {
    const card = await newCard(plain);
    const purchase = await earn({ card_id: card, amount: 10 });
    const headers = { 'idempotency-key': `ret-${purchase.id}` };
    const first = await ret(purchase.id, { amount: 4 }, p, headers);
    assert.equal(first.status, 201, first.text);
    const again = await ret(purchase.id, { amount: 4 }, p, headers);
    assert.equal(again.status, 201, again.text);
    assert.deepEqual(again.body.data, first.body.data);
    assert.equal((await details(purchase.id)).returns.length, 1);
    assert.equal(await balanceOf(t, p, card), 6);
  });

  it('the ledger verifier catches each broken invariant of debt and returns (and nothing else)', async () => {
    const db = t.app.context.database.db;
    const card = await newCard(promo);
    const sale = await earn({ card_id: card, items: [{ line_id: 'A', quantity: 2, amount: 4 }] });
    assert.equal((await deduct(t, p, { card_id: card, shop_id: shop, points: sale.points })).status, 201);
    const r = await ret(sale.id, { items: [{ line_id: 'A', quantity: 1 }] });
    assert.equal(r.status, 201, r.text);
    assert.equal((await cardView(card)).points_debt, -r.body.data.points);
    assert.deepEqual((await verifyLedger(db, 100, clock.now())).differences, []);
    // Each corruption, then its undo: the verifier names exactly the checks it breaks.
    const cases: Array<[string, string, string, string[]]> = [
      ['debt column', `update loyalty_cards set points_debt = points_debt + 1 where id = ${card}`, `update loyalty_cards set points_debt = points_debt - 1 where id = ${card}`, ['card_vs_transactions', 'card_debt']],
      ['debt entry', `update points_debt_entries set points = points + 1 where transaction_id = ${r.body.data.id}`, `update points_debt_entries set points = points - 1 where transaction_id = ${r.body.data.id}`, ['balance_after', 'card_debt', 'transaction_vs_lots']],
      ['returns past the purchase', `update points_transactions set points = points - 1000 where id = ${r.body.data.id}`, `update points_transactions set points = points + 1000 where id = ${r.body.data.id}`, ['balance_after', 'card_vs_transactions', 'returns_vs_purchase', 'tier_value', 'transaction_vs_lots']],
      ['line returned', `alter table points_transaction_lines drop constraint points_transaction_lines_returned; update points_transaction_lines set returned_quantity = 5 where transaction_id = ${sale.id}`, `update points_transaction_lines set returned_quantity = 1 where transaction_id = ${sale.id}; alter table points_transaction_lines add constraint points_transaction_lines_returned check (returned_quantity >= 0 and returned_quantity <= quantity)`, ['line_return_rounding', 'line_returned']],
      ['campaign counter', `update campaigns set points_awarded = points_awarded + 1 where id = ${bonus}`, `update campaigns set points_awarded = points_awarded - 1 where id = ${bonus}`, ['campaign_points']],
      ['source returned', `update points_transaction_sources set returned_points = returned_points - 1 where transaction_id = ${sale.id} and campaign_id = ${bonus} and returned_points > 0`, `update points_transaction_sources set returned_points = returned_points + 1 where transaction_id = ${sale.id} and campaign_id = ${bonus}`, ['campaign_points', 'line_return_rounding']],
    ];
    for (const [name, corrupt, undo, checks] of cases) {
      for (const q of corrupt.split('; ')) await db.execute(sql.raw(q));
      const found = [...new Set((await verifyLedger(db, 100, clock.now())).differences.map((d) => d.check))].sort();
      for (const q of undo.split('; ')) await db.execute(sql.raw(q));
      assert.deepEqual(found, [...checks].sort(), name);
    }
    assert.deepEqual((await verifyLedger(db, 100, clock.now())).differences, []);
  });

  it('the verifier finds a planted leak of each kind: returns rounded one by one (by line, by amount) and points back before the debt', async () => {
    const db = t.app.context.database.db;
    const rows = async (q: string) => ((await db.execute(sql.raw(q))) as unknown as { rows: Array<Record<string, unknown>> }).rows;
    const found = async () => (await verifyLedger(db, 100, clock.now())).differences;
    /** Return entries as the per-return rounding wrote them: each took 0 points, the balance unchanged. */
    const zeroReturns = (sale: number, card: number, n: number, amount: string) => `
      insert into points_transactions (partner_id, card_id, customer_id, shop_id, type, points, amount, balance_after, returns_id, created_at)
      select t.partner_id, t.card_id, t.customer_id, t.shop_id, 'return', 0, -${amount}, c.points_balance, t.id, t.created_at
      from points_transactions t join loyalty_cards c on c.id = t.card_id, generate_series(1, ${n})
      where t.id = ${sale} and c.id = ${card}`;
    assert.deepEqual(await found(), []);

    // 1. A 20-unit line returned one unit at a time 19 times, each return rounded down on its
    //    own: every source took back 0. Cumulatively they owe 18, 18 and 9.
    const card1 = await newCard(promo);
    const sale1 = await earn({ card_id: card1, items: [{ line_id: 'L', quantity: 20, amount: 19 }] });
    await rows(zeroReturns(sale1.id, card1, 19, '0.95'));
    await rows(`update points_transaction_lines set returned_quantity = 19 where transaction_id = ${sale1.id}`);
    const leak1 = await found();
    assert.deepEqual(
      leak1.map((d) => [d.check, d.transaction_id, d.line_id, d.campaign_id ?? null, d.expected, d.actual]).sort(),
      [
        ['line_return_rounding', sale1.id, 'L', null, 18, 0],
        ['line_return_rounding', sale1.id, 'L', bonus, 9, 0],
        ['line_return_rounding', sale1.id, 'L', multiplier, 18, 0],
      ].sort(),
    );
    assert.ok(leak1.every((d) => d.card_id === card1));
    await rows(`delete from points_transactions where returns_id = ${sale1.id}`);
    await rows(`update points_transaction_lines set returned_quantity = 0 where transaction_id = ${sale1.id}`);
    assert.deepEqual(await found(), []);

    // 2. 101 returns of 0.99 EUR of a 100 EUR purchase without lines, each rounded on its own: 0 of 99.
    const card2 = await newCard(plain);
    const sale2 = await earn({ card_id: card2, amount: 100 });
    await rows(`insert into points_transaction_sources (transaction_id, position, source, campaign_id, ordinal, points) values (${sale2.id}, 0, 'base', 0, 0, 100) on conflict do nothing`);
    await rows(zeroReturns(sale2.id, card2, 101, '0.99'));
    assert.deepEqual(
      (await found()).map((d) => [d.check, d.card_id, d.transaction_id, d.expected, d.actual]),
      [['amount_return_rounding', card2, sale2.id, 99, 0]],
    );
    await rows(`delete from points_transactions where returns_id = ${sale2.id}`);
    assert.deepEqual(await found(), []);

    // 3. Award 100, deduct 100, return the purchase (debt 100), return the deduction — as the
    //    old order left it: the 100 back into the lot, the debt still owed.
    const card3 = await newCard(plain);
    const sale3 = await earn({ card_id: card3, amount: 100 });
    const spend = (await deduct(t, p, { card_id: card3, shop_id: shop, points: 100 })).body.data;
    assert.equal((await ret(sale3.id, { amount: 100 })).status, 201);
    const back = (await ret(spend.id, { points: 100 })).body.data;
    assert.deepEqual(await found(), []);
    const [lot] = await rows(`select id from points_lots where transaction_id = ${sale3.id}`);
    await rows(`delete from points_debt_entries where transaction_id = ${back.id}`);
    await rows(`insert into points_lot_draws (transaction_id, lot_id, points) values (${back.id}, ${lot!.id}, -100)`);
    await rows(`update points_lots set remaining = 100 where id = ${lot!.id}`);
    await rows(`update points_transactions set balance_after = 100 where id = ${back.id}`);
    await rows(`update loyalty_cards set points_balance = 100, points_debt = 100 where id = ${card3}`);
    // Every sum still adds up (balance − debt = the ledger's net 0): only the debt order is wrong.
    assert.deepEqual(
      (await found()).map((d) => [d.check, d.card_id, d.transaction_id ?? null, d.expected, d.actual]),
      [
        ['debt_with_balance', card3, null, 0, 100],
        ['debt_with_balance', card3, back.id, 0, 100],
      ],
    );
    await rows(`delete from points_lot_draws where transaction_id = ${back.id}`);
    await rows(`update points_lots set remaining = 0 where id = ${lot!.id}`);
    await rows(`insert into points_debt_entries (transaction_id, card_id, points) values (${back.id}, ${card3}, -100)`);
    await rows(`update points_transactions set balance_after = 0 where id = ${back.id}`);
    await rows(`update loyalty_cards set points_balance = 0, points_debt = 0 where id = ${card3}`);
    assert.deepEqual(await found(), []);
  });

  it("another partner's transaction is 404, and a missing one", async () => {
    const card = await newCard(plain);
    const purchase = await earn({ card_id: card, amount: 10 });
    const res = await ret(purchase.id, { amount: 1 }, other);
    assert.equal(res.status, 404, res.text);
    assert.equal(res.body.code, 'RESOURCE_NOT_FOUND');
    assert.equal((await ret(2_000_000_000, { amount: 1 })).status, 404);
    assert.equal((await details(purchase.id)).returns.length, 0);
    assert.equal(await balanceOf(t, p, card), 10);
  });
});
