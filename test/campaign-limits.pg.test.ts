// Campaign limits under concurrency (DESIGN.md §12 "Limits are exact under concurrency"), on
// PostgreSQL with real parallel connections: N awards at once never give more than the
// budget, more uses than `uses`, or more than the per-customer limits allow — and awards on
// one card (the hot-card batching) still answer each with its own award; campaign rows are
// locked in one global order (no deadlock), and the per-programme quota holds against
// parallel creates. Limits are split over 16 shards (campaigns.tables.ts): awards take from
// their card's shard side by side, and borrow (lock every shard, spread what is left) when
// theirs runs dry. PostgreSQL only:
// PGlite runs one transaction at a time, so there these would pass without the locks.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { sql } from 'drizzle-orm';
import { campaigns } from '../src/modules/campaigns/campaigns.tables.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { bearer, request } from './helpers/http.js';
import { assertLedgerConsistent, award, createCustomer, createProgramme, createShop, joinProgramme } from './helpers/loyalty.js';

describe('campaign limits under concurrency', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let shop: number;

  before(async () => {
    t = await startTestApp({ DATABASE_POOL_MAX: '20' });
    p = await createPartner(t);
    shop = await createShop(t, p.id);
  });
  after(() => t.close());

  async function campaign(programme: number, body: Record<string, unknown>) {
    const res = await request(t.url, 'POST', '/en/partners/campaigns', {
      headers: bearer(p.token),
      json: { partner_card_id: programme, name: 'C', effect: { type: 'bonus', value: 7 }, ...body },
    });
    assert.equal(res.status, 201, res.text);
    return res.body.data as { id: number };
  }
  const getCampaign = async (id: number) => (await request(t.url, 'GET', `/en/partners/campaigns/${id}`, { headers: bearer(p.token) })).body.data;
  const cards = async (programme: number, n: number) => Promise.all(Array.from({ length: n }, async () => (await joinProgramme(t, await createCustomer(t), programme)).id));
  const campaignPoints = (res: { body: any }, id: number) =>
    res.body.data.breakdown.filter((r: { campaign_id: number | null }) => r.campaign_id === id).reduce((s: number, r: { points: number }) => s + r.points, 0);

  it('30 parallel awards against a budget of 100: exactly 100 given, the last cut to what was left', async () => {
    const programme = await createProgramme(t, p.id, { pointsPerCurrency: '1', currencyAmount: '1' });
    const c = await campaign(programme, { limits: { points_budget: 100 } });
    const other = await campaign(programme, { name: 'Unlimited', effect: { type: 'bonus', value: 1 } });
    const ids = await cards(programme, 30);
    const results = await Promise.all(ids.map((card) => award(t, p, { card_id: card, shop_id: shop, items: [{ sku: 'X', quantity: 1, amount: 3 }] })));
    for (const r of results) assert.equal(r.status, 201, r.text);
    const given = results.map((r) => campaignPoints(r, c.id));
    assert.equal(
      given.reduce((a, b) => a + b, 0),
      100,
      JSON.stringify(given),
    );
    assert.deepEqual(
      given.filter((g) => g > 0).sort((a, b) => a - b),
      [2, ...Array.from({ length: 14 }, () => 7)],
    );
    const after = await getCampaign(c.id);
    assert.deepEqual([after.points_awarded, after.uses_count, after.budget_left, after.status], [100, 15, 0, 'exhausted']);
    // The unlimited campaign applied to every award, and its counters are exact too.
    const unlimited = await getCampaign(other.id);
    assert.deepEqual([unlimited.uses_count, unlimited.points_awarded], [30, 30]);
    await assertLedgerConsistent(t);
  });

  it('uses: 25 parallel awards on a campaign of 10 uses give it exactly 10 times', async () => {
    const programme = await createProgramme(t, p.id);
    const c = await campaign(programme, { limits: { uses: 10 } });
    const ids = await cards(programme, 25);
    const results = await Promise.all(ids.map((card) => award(t, p, { card_id: card, shop_id: shop, amount: 1 })));
    for (const r of results) assert.equal(r.status, 201, r.text);
    assert.equal(results.filter((r) => campaignPoints(r, c.id) > 0).length, 10);
    assert.equal((await getCampaign(c.id)).uses_count, 10);
  });

  it('per customer: 12 parallel awards on one card (batched together) use a per-customer limit of 3 exactly 3 times', async () => {
    const programme = await createProgramme(t, p.id);
    const c = await campaign(programme, { limits: { per_customer: 3 } });
    const daily = await campaign(programme, { name: 'Daily', limits: { per_customer_per_day: 2 } });
    const [card] = await cards(programme, 1);
    const bodies = Array.from({ length: 12 }, (_, i) => ({ card_id: card, shop_id: shop, amount: 1 + i, receipt_number: `PC-${i}` }));
    const results = await Promise.all(bodies.map((b) => award(t, p, b)));
    results.forEach((r, i) => {
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.data.receipt_number, bodies[i]!.receipt_number, 'each answered with its own award');
    });
    assert.equal(results.filter((r) => campaignPoints(r, c.id) > 0).length, 3);
    assert.equal(results.filter((r) => campaignPoints(r, daily.id) > 0).length, 2);
    // The balances chain: each award saw the one before it.
    const afters = results.map((r) => r.body.data.balance_after as number).sort((a, b) => a - b);
    assert.equal(new Set(afters).size, 12);
    await assertLedgerConsistent(t);
  });

  it('per customer across two nodes: awards on one card sent to both use a limit of 3 exactly 3 times', async () => {
    // One node batches a card's awards in process; a second node on the same database does
    // not share those batches, so only the card's row lock keeps the count exact.
    const second = await startTestApp({ DATABASE_POOL_MAX: '20' }, t.db);
    try {
      const programme = await createProgramme(t, p.id);
      const c = await campaign(programme, { limits: { per_customer: 3 } });
      const [card] = await cards(programme, 1);
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, i) => award(i % 2 === 0 ? t : second, p, { card_id: card, shop_id: shop, amount: 1 + i, receipt_number: `N2-${i}` })),
      );
      for (const r of results) assert.equal(r.status, 201, r.text);
      assert.equal(results.filter((r) => campaignPoints(r, c.id) > 0).length, 3);
      assert.equal((await getCampaign(c.id)).uses_count, 3);
      await assertLedgerConsistent(t);
    } finally {
      await second.close();
    }
  });

  it('awards that share no limited campaign do not wait on each other’s campaign rows', async () => {
    // Two programmes, each with its own budgeted campaign: their awards interleave freely,
    // and each budget is still exact.
    const a = await createProgramme(t, p.id);
    const b = await createProgramme(t, p.id);
    const ca = await campaign(a, { limits: { points_budget: 50 } });
    const cb = await campaign(b, { limits: { points_budget: 50 } });
    const cardsA = await cards(a, 10);
    const cardsB = await cards(b, 10);
    const results = await Promise.all([...cardsA, ...cardsB].map((card) => award(t, p, { card_id: card, shop_id: shop, amount: 1 })));
    for (const r of results) assert.equal(r.status, 201, r.text);
    assert.equal((await getCampaign(ca.id)).points_awarded, 50);
    assert.equal((await getCampaign(cb.id)).points_awarded, 50);
  });

  it('40 parallel awards over three limited campaigns whose priorities reorder their locks: no 5xx, budgets and uses exact', async () => {
    // DESIGN.md §12: locks are taken in one global order in every round. Ids low → A, B, X;
    // evaluation order B (10), X (5, exclusive, only at shopX, 5 uses), A (1). An award at the
    // other shop applies B and A: it locks A then B. One at shopX applies B and X (X closes A);
    // once X's 5 uses are gone under its lock it is evaluated again and A applies — locking A
    // in a later round, after B, was the opposite order, and the two deadlocked (a 500).
    const programme = await createProgramme(t, p.id, { pointsPerCurrency: '1', currencyAmount: '1' });
    const shopX = await createShop(t, p.id, 'X');
    const a = await campaign(programme, { name: 'A', priority: 1, effect: { type: 'bonus', value: 2 }, limits: { uses: 30 } });
    const b = await campaign(programme, { name: 'B', priority: 10, effect: { type: 'bonus', value: 3 }, limits: { points_budget: 100 } });
    const x = await campaign(programme, { name: 'X', priority: 5, exclusive: true, shop_ids: [shopX], effect: { type: 'bonus', value: 5 }, limits: { uses: 5 } });
    const ids = await cards(programme, 40);
    const results = await Promise.all(ids.map((card, i) => award(t, p, { card_id: card, shop_id: i % 2 === 0 ? shopX : shop, amount: 1 })));
    const statuses = results.map((r) => r.status);
    assert.deepEqual(
      statuses.filter((s) => s !== 201),
      [],
      results.filter((r) => r.status !== 201).map((r) => r.text).join('\n'),
    );
    const given = (id: number) => results.map((r) => campaignPoints(r, id));
    const uses = (id: number) => given(id).filter((g) => g > 0).length;
    const sum = (id: number) => given(id).reduce((s, g) => s + g, 0);
    // X: exactly its 5 uses; B: exactly its budget of 100 (33 × 3 and the last cut to 1);
    // A: exactly its 30 uses (20 awards at the other shop and 15 at shopX after X's uses want it).
    assert.deepEqual([uses(x.id), sum(x.id)], [5, 25]);
    assert.deepEqual([uses(b.id), sum(b.id)], [34, 100]);
    assert.deepEqual([uses(a.id), sum(a.id)], [30, 60]);
    // No award at shopX got X and A together (X is exclusive).
    assert.equal(results.filter((r) => campaignPoints(r, x.id) > 0 && campaignPoints(r, a.id) > 0).length, 0);
    const views = await Promise.all([a, b, x].map((c) => getCampaign(c.id)));
    assert.deepEqual(
      views.map((v) => [v.uses_count, v.points_awarded, v.status]),
      [
        [30, 60, 'exhausted'],
        [34, 100, 'exhausted'],
        [5, 25, 'exhausted'],
      ],
    );
    await assertLedgerConsistent(t);
  });

  const shardTotals = async (id: number) => {
    const rows = (await t.app.context.database.db.execute(
      sql`select count(*)::int as n, coalesce(sum(uses_left), 0)::int as uses, coalesce(sum(points_left), 0)::int as points from campaign_limit_shards where campaign_id = ${id}`,
    )) as unknown as { rows: Array<{ n: number; uses: number; points: number }> };
    return rows.rows[0]!;
  };

  it('budget and uses split over 16 shards that run dry while 30 parallel awards on two nodes borrow: exact, and the shards hold what is left', async () => {
    const second = await startTestApp({ DATABASE_POOL_MAX: '20' }, t.db);
    try {
      const programme = await createProgramme(t, p.id, { pointsPerCurrency: '1', currencyAmount: '1' });
      // 1,000 points of 50 each: 20 awards; spread over 16 shards (~62 each) every shard runs
      // dry after one award, so most of these borrow. 22 uses of 1 point each.
      const budget = await campaign(programme, { name: 'Budget', effect: { type: 'bonus', value: 50 }, limits: { points_budget: 1000 } });
      const uses = await campaign(programme, { name: 'Uses', effect: { type: 'bonus', value: 1 }, limits: { uses: 22 } });
      const ids = await cards(programme, 31);
      // The first award finds no shard and spreads what is left after it.
      const first = await award(t, p, { card_id: ids[0], shop_id: shop, amount: 1 });
      assert.equal(first.status, 201, first.text);
      assert.deepEqual(await shardTotals(budget.id), { n: 16, uses: 0, points: 950 });
      assert.deepEqual(await shardTotals(uses.id), { n: 16, uses: 21, points: 0 });
      const results = await Promise.all(ids.slice(1).map((card, i) => award(i % 2 === 0 ? t : second, p, { card_id: card, shop_id: shop, amount: 1 })));
      for (const r of results) assert.equal(r.status, 201, r.text);
      const all = [first, ...results];
      const given = all.map((r) => campaignPoints(r, budget.id));
      assert.equal(given.reduce((a, b) => a + b, 0), 1000, JSON.stringify(given));
      assert.equal(given.filter((g) => g > 0).length, 20);
      assert.equal(all.filter((r) => campaignPoints(r, uses.id) > 0).length, 22);
      const views = await Promise.all([budget, uses].map((c) => getCampaign(c.id)));
      assert.deepEqual(
        views.map((v) => [v.uses_count, v.points_awarded, v.status]),
        [
          [20, 1000, 'exhausted'],
          [22, 22, 'exhausted'],
        ],
      );
      assert.deepEqual(await shardTotals(budget.id), { n: 16, uses: 0, points: 0 });
      assert.deepEqual(await shardTotals(uses.id), { n: 16, uses: 0, points: 0 });
      await assertLedgerConsistent(t);
    } finally {
      await second.close();
    }
  });

  it('an award that takes from its shard does not wait for the campaign row (no hot row)', async () => {
    const programme = await createProgramme(t, p.id);
    const c = await campaign(programme, { limits: { points_budget: 100_000, uses: 1000 } });
    const [warm, card] = await cards(programme, 2);
    assert.equal((await award(t, p, { card_id: warm, shop_id: shop, amount: 1 })).status, 201);
    // Another session holds the campaign row as the slow path and an update take it.
    const holder = new pg.Client({ connectionString: t.db.url });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select id from campaigns where id = $1 for no key update', [c.id]);
      const res = await Promise.race([
        award(t, p, { card_id: card, shop_id: shop, amount: 1 }),
        new Promise<'waited'>((resolve) => setTimeout(() => resolve('waited'), 5000).unref()),
      ]);
      assert.notEqual(res, 'waited', 'the award waited for the campaign row');
      assert.equal((res as Awaited<ReturnType<typeof award>>).status, 201);
      assert.equal(campaignPoints(res as { body: any }, c.id), 7);
    } finally {
      await holder.query('rollback');
      await holder.end();
    }
    assert.deepEqual(await shardTotals(c.id), { n: 16, uses: 1000 - 2, points: 100_000 - 14 });
  });

  it('lowering a budget below what shards hold: the shards go, the next award takes exactly what the new budget leaves', async () => {
    const programme = await createProgramme(t, p.id);
    const c = await campaign(programme, { effect: { type: 'bonus', value: 20 }, limits: { points_budget: 100 } });
    const ids = await cards(programme, 6);
    for (const card of ids.slice(0, 3)) assert.equal(campaignPoints(await award(t, p, { card_id: card, shop_id: shop, amount: 1 }), c.id), 20);
    assert.equal((await shardTotals(c.id)).points, 40);
    const put = await request(t.url, 'PUT', `/en/partners/campaigns/${c.id}`, { headers: bearer(p.token), json: { limits: { points_budget: 70 } } });
    assert.equal(put.status, 200, put.text);
    assert.equal((await shardTotals(c.id)).n, 0);
    const rest = await Promise.all(ids.slice(3).map((card) => award(t, p, { card_id: card, shop_id: shop, amount: 1 })));
    assert.deepEqual(rest.map((r) => campaignPoints(r, c.id)).sort((a, b) => a - b), [0, 0, 10]);
    const view = await getCampaign(c.id);
    assert.deepEqual([view.points_awarded, view.budget_left, view.status], [70, 0, 'exhausted']);
    await assertLedgerConsistent(t);
  });

  it('a budget lowered in SQL (not through the API) drops the shards too: parallel awards take exactly what it leaves', async () => {
    const programme = await createProgramme(t, p.id);
    const c = await campaign(programme, { effect: { type: 'bonus', value: 20 }, limits: { points_budget: 1000 } });
    const ids = await cards(programme, 13);
    for (const card of ids.slice(0, 3)) assert.equal(campaignPoints(await award(t, p, { card_id: card, shop_id: shop, amount: 1 }), c.id), 20);
    assert.equal((await shardTotals(c.id)).points, 940);
    // As an operator's script would: the row only.
    await t.app.context.database.db.execute(sql`update campaigns set points_budget = 110 where id = ${c.id}`);
    assert.equal((await shardTotals(c.id)).n, 0);
    const rest = await Promise.all(ids.slice(3).map((card) => award(t, p, { card_id: card, shop_id: shop, amount: 1 })));
    for (const r of rest) assert.equal(r.status, 201, r.text);
    assert.equal(rest.reduce((sum, r) => sum + campaignPoints(r, c.id), 0), 50);
    const view = await getCampaign(c.id);
    assert.deepEqual([view.points_awarded, view.budget_left, view.status], [110, 0, 'exhausted']);
    await assertLedgerConsistent(t);
  });

  it('the quota of 100 campaigns per programme holds under 10 parallel creates', async () => {
    // DESIGN.md §12: the 101st campaign that has not ended is 422 QUOTA_EXCEEDED — also when
    // the creates race (the count is taken under the programme's quota lock).
    const programme = await createProgramme(t, p.id);
    await t.app.context.database.db
      .insert(campaigns)
      .values(Array.from({ length: 95 }, (_, i) => ({ partnerId: p.id, partnerCardId: programme, name: `P${i}`, effectType: 'bonus' as const, effectValue: '1' })));
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        request(t.url, 'POST', '/en/partners/campaigns', { headers: bearer(p.token), json: { partner_card_id: programme, name: `R${i}`, effect: { type: 'bonus', value: 1 } } }),
      ),
    );
    assert.deepEqual(
      results.map((r) => r.status).sort(),
      [201, 201, 201, 201, 201, 422, 422, 422, 422, 422],
    );
    for (const r of results.filter((x) => x.status === 422)) assert.equal(r.body.code, 'QUOTA_EXCEEDED');
    const list = await request(t.url, 'GET', `/en/partners/campaigns?partner_card_id=${programme}`, { headers: bearer(p.token) });
    assert.equal(list.body.meta.total, 100);
  });
});
