// The one-statement award on a programme with tiers and unlimited campaigns (issue 31,
// Deliver 2): the held tier's multiplier and the tier rules of an earning are computed in the
// award's statement (awards/award-statement.ts), the campaigns' points evaluated before it
// for each card fact they depend on (awards/earn-rules.ts); the engine only takes over when a
// higher tier is reached, tier work is due, or the node's copy of the campaigns is stale.
// Proved by equivalence: two partners run the same programmes, campaigns and purchases on the
// same clock — one on the one-statement path, the other on the engine (a limited campaign for
// another shop sends every award there, changing nothing it awards) — and after every purchase
// the responses, the transactions' breakdowns, the cards' whole tier state and, at the end, a
// return of some purchases must be the same. A spy on the statement (not a mock: it calls the
// real one) proves the first partner's awards really took the one statement.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eq, sql } from 'drizzle-orm';
import { awardStatement } from '../src/modules/awards/award-statement.js';
import { loyaltyCards } from '../src/modules/loyalty-cards/loyalty-cards.tables.js';
import { tiers } from '../src/modules/tiers/tiers.tables.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { assertLedgerConsistent, award, createCustomer, createProgramme, createShop, joinProgramme, TestClock, type ProgrammeRules } from './helpers/loyalty.js';
import { seededRandom } from './helpers/random.js';

type Breakdown = Array<{ source: string; points: number }>;

describe('the one-statement award with tiers gives what the engine gives', () => {
  let t: TestApp;
  let fast: PartnerFixture;
  let engine: PartnerFixture;
  const shops = new Map<number, number>();
  const clock = new TestClock(Date.parse('2026-11-25T10:00:00Z'));
  const db = () => t.app.context.database.db;
  const realAward = awardStatement.award;
  /** Cards whose award the one statement wrote, how many times (with a tier's points: `tiered`; with a campaign's: `campaigned`). */
  const written = new Map<number, number>();
  let tiered = 0;
  let campaigned = 0;

  before(async () => {
    t = await startTestApp({}, undefined, { clock, workers: false });
    fast = await createPartner(t, 'One statement');
    engine = await createPartner(t, 'Engine');
    shops.set(fast.id, await createShop(t, fast.id));
    shops.set(engine.id, await createShop(t, engine.id));
    awardStatement.award = async (exec, a) => {
      const result = await realAward.call(awardStatement, exec, a);
      if (result?.transactionId != null) {
        written.set(a.cardId, (written.get(a.cardId) ?? 0) + 1);
        if (result.tierPoints > 0) tiered++;
        if (result.variant !== null && (a.campaignVariants?.apps.variant.includes(result.variant + 1) ?? false)) campaigned++;
      }
      return result;
    };
  });
  after(async () => {
    awardStatement.award = realAward;
    await t.close();
  });

  /** Campaign bodies for a programme, given its shop, another shop of the partner and its tier ids (lowest threshold first). */
  type Campaigns = (c: { shop: number; other: number; tierIds: number[] }) => Array<Record<string, unknown>>;
  const others = new Map<number, number>();
  const campaign = async (p: PartnerFixture, body: Record<string, unknown>) => {
    const res = await request(t.url, 'POST', '/en/partners/campaigns', { headers: bearer(p.token), json: body });
    assert.equal(res.status, 201, res.text);
    return res.body.data.id as number;
  };

  async function programmeOf(p: PartnerFixture, rules: ProgrammeRules, tierRows: Array<[number, string]>, campaigns?: Campaigns): Promise<number> {
    const id = await createProgramme(t, p.id, rules);
    const tierIds: number[] = [];
    for (const [threshold, earnMultiplier] of tierRows) {
      const [row] = await db()
        .insert(tiers)
        .values({ partnerId: p.id, partnerCardId: id, name: { en: `T${threshold}`, lt: `T${threshold}` }, threshold, earnMultiplier })
        .returning({ id: tiers.id });
      tierIds.push(row!.id);
    }
    if (!others.has(p.id)) others.set(p.id, await createShop(t, p.id, 'Elsewhere'));
    const other = others.get(p.id)!;
    for (const body of campaigns?.({ shop: shops.get(p.id)!, other, tierIds }) ?? []) await campaign(p, { partner_card_id: id, ...body });
    if (p === engine) {
      // A limited campaign that never applies here (another shop): every award of this partner goes to the engine.
      await campaign(p, { partner_card_id: id, name: 'Elsewhere only', effect: { type: 'bonus', value: 10 }, shop_ids: [other], limits: { uses: 2_000_000_000 } });
    }
    return id;
  }

  const tierState = async (card: number) => {
    const [row] = await db()
      .select({
        tierId: loyaltyCards.tierId,
        value: loyaltyCards.tierValue,
        valueUntil: loyaltyCards.tierValueUntil,
        reachedAt: loyaltyCards.tierReachedAt,
        keepUntil: loyaltyCards.tierKeepUntil,
        balance: loyaltyCards.pointsBalance,
      })
      .from(loyaltyCards)
      .where(eq(loyaltyCards.id, card));
    return row!;
  };
  /** The card's tier as a threshold (ids differ between the two partners' programmes). */
  const tierThreshold = async (tierId: number | null) =>
    tierId === null ? null : (await db().select({ threshold: tiers.threshold }).from(tiers).where(eq(tiers.id, tierId)))[0]!.threshold;
  const comparable = async (card: number) => {
    const s = await tierState(card);
    return { ...s, tierId: await tierThreshold(s.tierId) };
  };
  const sources = (b: Breakdown) => b.map((r) => [r.source, r.points]);

  /** Random purchases from `start`, or scripted ones (`steps`: when, EUR) at the rules' edges; time only moves on. */
  const configs: Array<{ name: string; rules: ProgrammeRules; tiers: Array<[number, string]>; campaigns?: Campaigns; start?: string; steps?: Array<[string, number]> }> = [
    { name: 'lifetime, points, rounded down', start: '2026-11-25T10:00:00Z', rules: { tierWindow: 'lifetime' }, tiers: [[0, '1.25'], [150, '1.5'], [600, '2.35']] },
    { name: 'calendar year in Vilnius, amount, rounded up', start: '2027-12-20T12:00:00Z', rules: { tierWindow: 'calendar_year', tierBasis: 'amount_spent', roundPointsUp: true }, tiers: [[50, '1.1'], [400, '3']] },
    {
      // Vilnius' new year while UTC's is still the old one: the kept tier met again is kept to
      // the end of the zone's next year (2034), not UTC's (2033).
      name: 'calendar year in Vilnius, met again in the first hour of its year',
      rules: { tierWindow: 'calendar_year', tierBasis: 'amount_spent' },
      tiers: [[50, '1.5']],
      steps: [['2030-06-01T10:00:00Z', 60], ['2030-06-02T10:00:00Z', 5], ['2031-03-01T10:00:00Z', 60], ['2031-12-31T22:10:00Z', 10], ['2031-12-31T22:40:00Z', 45], ['2031-12-31T23:00:00Z', 1]],
    },
    {
      // A year on from 29 February is 1 March, as tier-rules.ts keepUntilFor counts it.
      name: 'rolling 12 months, met again on 29 February',
      rules: {},
      tiers: [[0, '1.5']],
      steps: [['2032-02-28T10:00:00Z', 20], ['2032-02-29T10:00:00Z', 20], ['2032-02-29T11:00:00Z', 3]],
    },
    { name: 'rolling 12 months, points, never falls, 0.7 per EUR', start: '2033-02-20T09:00:00Z', rules: { tierDowngrade: 'never', pointsPerCurrency: '0.7', minPointsPerPurchase: 1 }, tiers: [[0, '1.5'], [200, '2']] },
    {
      name: 'campaigns: weekday hours, min amount, per EUR, tier-targeted, first purchase, exclusive',
      start: '2037-03-02T06:00:00Z',
      rules: { tierWindow: 'lifetime', roundPointsUp: true },
      tiers: [[0, '1.2'], [300, '1.5']],
      campaigns: ({ tierIds }) => [
        { name: 'Weekday double', effect: { type: 'multiplier', value: 2 }, schedule: { days_of_week: [1, 2, 3, 4, 5], from_time: '08:00', to_time: '20:00', time_zone: 'Europe/Vilnius' } },
        { name: 'Big basket', effect: { type: 'bonus', value: 15 }, conditions: { min_amount: 25 } },
        { name: 'Half a point a EUR', effect: { type: 'per_currency', value: 0.5 }, priority: -1 },
        { name: 'Gold extra', effect: { type: 'bonus', value: 7 }, tier_ids: [tierIds[1]] },
        { name: 'Welcome', effect: { type: 'bonus', value: 100 }, conditions: { first_purchase_only: true }, priority: 50, exclusive: true },
      ],
    },
    {
      name: 'campaigns: another shop, a night window, per item, not yet started, ended',
      start: '2038-01-10T18:00:00Z',
      rules: { pointsPerCurrency: '2', currencyAmount: '3' },
      tiers: [],
      campaigns: ({ other }) => [
        { name: 'Elsewhere', effect: { type: 'bonus', value: 40 }, shop_ids: [other] },
        { name: 'Night owls', effect: { type: 'per_item', value: 3 }, schedule: { from_time: '22:00', to_time: '02:00', time_zone: 'America/New_York' } },
        { name: 'Later', effect: { type: 'bonus', value: 9 }, starts_at: '2038-02-01T00:00:00Z' },
        { name: 'Over', effect: { type: 'bonus', value: 9 }, ends_at: '2038-01-20T00:00:00Z' },
      ],
    },
    { name: 'calendar year in New York, points, per visit, capped', start: '2039-12-24T20:00:00Z', rules: { tierWindow: 'calendar_year', tierTimeZone: 'America/New_York', pointsPerVisit: 3, maxPointsPerPurchase: 90 }, tiers: [[100, '1.05'], [250, '1.99']] },
  ];

  for (const [n, config] of configs.entries()) {
    it(config.name, async () => {
      // The ledger's check counts windows at the clock's now: cards of earlier cases must not see it go back.
      const setClock = (iso: string) => {
        assert.ok(Date.parse(iso) >= clock.now().getTime(), `the clock would go back to ${iso}`);
        clock.advanceMs(Date.parse(iso) - clock.now().getTime());
      };
      setClock(config.start ?? config.steps![0]![0]);
      const rules: ProgrammeRules = { pointsPerCurrency: '1', currencyAmount: '1', ...config.rules };
      const pair: Array<{ p: PartnerFixture; card: number }> = [];
      for (const p of [fast, engine]) pair.push({ p, card: (await joinProgramme(t, await createCustomer(t), await programmeOf(p, rules, config.tiers, config.campaigns))).id });
      const random = seededRandom(`tiers-fast-${n}`);
      const purchases: Array<[number, number]> = [];
      const before = written.get(pair[0]!.card) ?? 0;
      const count = config.steps?.length ?? 24;
      for (let step = 0; step < count; step++) {
        let amount: number;
        if (config.steps) {
          setClock(config.steps[step]![0]);
          amount = config.steps[step]![1];
        } else {
          // Days pass (some steps cross a year's end or 29 February), then a purchase of 0.01–80 EUR.
          clock.advanceMs(random(3) === 0 ? random(40) * 86_400_000 + random(86_400) * 1000 : random(3_600) * 1000);
          amount = (1 + random(8_000)) / 100;
        }
        const [a, b] = await Promise.all(
          pair.map(async ({ p, card }) => {
            const res = await award(t, p, { card_id: card, shop_id: shops.get(p.id), amount, receipt_number: `R-${n}-${step}` });
            assert.equal(res.status, 201, res.text);
            return res.body.data as { id: number; points: number; balance_after: number; breakdown: Breakdown };
          }),
        );
        const at = `${config.name}, step ${step}, ${amount} EUR at ${clock.now().toISOString()}`;
        assert.deepEqual([a!.points, a!.balance_after, sources(a!.breakdown)], [b!.points, b!.balance_after, sources(b!.breakdown)], at);
        assert.deepEqual(await comparable(pair[0]!.card), await comparable(pair[1]!.card), at);
        const shown = await Promise.all(
          [a!, b!].map(async (r, i) => sources((await request(t.url, 'GET', `/en/partners/transactions/${r.id}`, { headers: bearer(pair[i]!.p.token) })).body.data.breakdown)),
        );
        assert.deepEqual(shown[0], sources(a!.breakdown), `${at}: GET shows what create answered`);
        assert.deepEqual(shown[1], shown[0], at);
        purchases.push([a!.id, b!.id]);
      }
      // Most awards took the one statement (the rest reached a tier or found tier work due).
      const fastOnes = (written.get(pair[0]!.card) ?? 0) - before;
      assert.ok(fastOnes >= (config.steps ? 2 : 12), `one-statement awards: ${fastOnes} of ${count}`);
      // Returns read the sources the statement wrote as they read the engine's.
      for (const [i, [x, y]] of purchases.entries()) {
        if (i % 3 !== 0) continue;
        const [ra, rb] = await Promise.all(
          [x, y].map((id, k) => request(t.url, 'POST', `/en/shop/transactions/${id}/return`, { headers: apiHeaders(pair[k]!.p.apiKey), json: { amount: 0.37 } })),
        );
        assert.equal(ra!.status, rb!.status, ra!.text);
        if (ra!.status === 201) assert.equal(ra!.body.data.points, rb!.body.data.points, `return of purchase ${i}`);
      }
      assert.deepEqual(await comparable(pair[0]!.card), await comparable(pair[1]!.card), 'after the returns');
      // The card's uses of each campaign (what per-customer limits would count), by name.
      const uses = async (card: number) =>
        (
          (await db().execute(sql`select c.name, sum(u.uses)::int as uses from campaign_card_uses u join campaigns c on c.id = u.campaign_id
                                 where u.card_id = ${card} group by c.name order by c.name`)) as unknown as { rows: unknown[] }
        ).rows;
      assert.deepEqual(await uses(pair[0]!.card), await uses(pair[1]!.card), 'campaign uses');
      await assertLedgerConsistent(t);
    });
  }

  it('a change of the campaigns or the earning rules made anywhere is awarded from the next purchase on', async () => {
    const setClock = (iso: string) => clock.advanceMs(Date.parse(iso) - clock.now().getTime());
    setClock('2041-05-06T10:00:00Z');
    const programme = await programmeOf(fast, { pointsPerCurrency: '1', currencyAmount: '1' }, [], () => [{ name: 'Bonus', effect: { type: 'bonus', value: 5 } }, { name: 'Double', effect: { type: 'multiplier', value: 2 } }]);
    const card = (await joinProgramme(t, await createCustomer(t), programme)).id;
    // Another programme of the partner, without campaigns.
    const plainCard = (await joinProgramme(t, await createCustomer(t), await programmeOf(fast, { pointsPerCurrency: '1', currencyAmount: '1' }, []))).id;
    let receipt = 0;
    const buy = async (amount: number) => {
      const before = written.get(card) ?? 0;
      const res = await award(t, fast, { card_id: card, shop_id: shops.get(fast.id), amount, receipt_number: `S-${++receipt}` });
      assert.equal(res.status, 201, res.text);
      return { breakdown: sources(res.body.data.breakdown as Breakdown), fast: (written.get(card) ?? 0) > before };
    };
    await buy(10); // the node reads its copy
    assert.deepEqual(await buy(10), { breakdown: [['base', 10], ['campaign', 5], ['campaign', 10]], fast: true });
    // As another node or an operator would: straight in the table, no API call on this node.
    await db().execute(sql`update campaigns set effect_value = 8 where partner_card_id = ${programme} and name = 'Bonus'`);
    assert.deepEqual((await buy(10)).breakdown, [['base', 10], ['campaign', 8], ['campaign', 10]], 'the stale copy is not used');
    assert.deepEqual(await buy(10), { breakdown: [['base', 10], ['campaign', 8], ['campaign', 10]], fast: true });
    await db().execute(sql`update partner_cards set points_per_currency = 3 where id = ${programme}`);
    assert.deepEqual((await buy(10)).breakdown, [['base', 30], ['campaign', 8], ['campaign', 30]], 'the new rule');
    assert.deepEqual(await buy(10), { breakdown: [['base', 30], ['campaign', 8], ['campaign', 30]], fast: true });
    await db().execute(sql`delete from campaigns where partner_card_id = ${programme} and name = 'Double'`);
    assert.deepEqual((await buy(10)).breakdown, [['base', 30], ['campaign', 8]], 'a campaign deleted in SQL');
    await campaign(fast, { partner_card_id: programme, name: 'Capped', effect: { type: 'bonus', value: 1 }, limits: { points_budget: 1000 } });
    assert.deepEqual(await buy(10), { breakdown: [['base', 30], ['campaign', 8], ['campaign', 1]], fast: false }, 'a limited campaign: the engine');
    assert.deepEqual((await buy(10)).fast, false);
    // The limited campaign sends only its programme's awards to the engine, not the partner's
    // (the card's first earning starts its value's window: the engine's, as for any new card).
    for (let i = 0; i < 3; i++) {
      const res = await award(t, fast, { card_id: plainCard, shop_id: shops.get(fast.id), amount: 10, receipt_number: `S-${++receipt}` });
      assert.equal(res.status, 201, res.text);
    }
    assert.equal(written.get(plainCard), 2, 'the other programme: the one statement');
    await assertLedgerConsistent(t);
  });

  it('wrote awards with a tier row and with campaigns through the one statement', () => {
    assert.ok(tiered >= 20, `one-statement awards with tier points: ${tiered}`);
    assert.ok(campaigned >= 20, `one-statement awards with campaign points: ${campaigned}`);
  });
});
