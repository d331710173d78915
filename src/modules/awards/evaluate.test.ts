// The pure evaluator (DESIGN.md §12): every rule without a database. The same function runs
// in preview and in the award's transaction (test/campaign-awards.test.ts drives those).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { campaignFacts } from '../../../test/helpers/campaign-facts.js';
import { basePoints, evaluate, inSchedule, shareOut, type BaseRule, type BasketLine, type CampaignFacts, type EvaluationInput } from './evaluate.js';

const base: BaseRule = {
  pointsEnabled: true,
  pointsPerCurrency: '1',
  currencyAmount: '1',
  roundPointsUp: false,
  minPointsPerPurchase: 0,
  maxPointsPerPurchase: null,
  pointsPerVisit: 0,
};

const eur = (v: string) => BigInt(Math.round(Number(v) * 10_000));
function line(position: number, amount: string, opts: Partial<BasketLine> & { qty?: string } = {}): BasketLine {
  return {
    position,
    lineId: String(position),
    amountUnits: eur(amount),
    quantityMilli: BigInt(Math.round(Number(opts.qty ?? '1') * 1000)),
    sku: opts.sku ?? null,
    product: opts.product ?? null,
  };
}

const campaign = campaignFacts;

const now = new Date('2026-11-27T10:00:00Z'); // Friday, 12:00 in Vilnius
function run(lines: BasketLine[], campaigns: CampaignFacts[], extra: Partial<EvaluationInput> = {}) {
  return evaluate({ lines, base, campaigns, card: { tierId: null, tierMultiplierHundredths: 100n, firstPurchase: false, hasCard: true }, shopId: 1, now, ...extra });
}

describe('shareOut (largest remainder)', () => {
  it('adds up exactly and gives ties to the earlier line', () => {
    assert.deepEqual(shareOut(10n, [1n, 1n, 1n]), [4n, 3n, 3n]);
    assert.deepEqual(shareOut(7n, [50n, 25n, 25n]), [3n, 2n, 2n]); // 3.5, 1.75, 1.75: the two .75 get the spare points
    assert.deepEqual(shareOut(5n, [0n, 0n]), [3n, 2n]);
  });
});

describe('basePoints', () => {
  it('is the programme rule of §6, clamped', () => {
    assert.equal(basePoints(eur('12.99'), base), 12n);
    assert.equal(basePoints(eur('12.01'), { ...base, roundPointsUp: true }), 13n);
    assert.equal(basePoints(eur('10'), { ...base, pointsPerCurrency: '3', currencyAmount: '2', pointsPerVisit: 5 }), 20n);
    assert.equal(basePoints(eur('1000'), { ...base, maxPointsPerPurchase: 100 }), 100n);
    assert.equal(basePoints(eur('1'), { ...base, minPointsPerPurchase: 7 }), 7n);
    assert.equal(basePoints(eur('1000'), { ...base, pointsEnabled: false }), 0n);
  });
});

describe('effects', () => {
  const coffee = { id: 10, sku: 'COF', categoryIds: [3, 1] };
  const lines = [line(1, '10', { product: coffee, qty: '2' }), line(2, '5.5'), line(3, '4.5', { sku: 'TEA' })];

  it('multiplier: the matching lines base × (value − 1), on top of the base', () => {
    const r = run(lines, [campaign({ effectType: 'multiplier', effectHundredths: 200n, categoryIds: [1] })]);
    assert.equal(r.base.points, 20);
    assert.deepEqual(
      r.campaigns.map((c) => [c.points, [...c.perLine], c.lineIds]),
      [[10, [[1, 10]], ['1']]],
    );
    assert.equal(r.points, 30);
  });
  it('bonus once per purchase, per_currency on matching amount, per_item per whole unit', () => {
    const r = run(lines, [
      campaign({ effectType: 'bonus', effectHundredths: 5000n, priority: 3 }),
      campaign({ effectType: 'per_currency', effectHundredths: 150n, skus: ['TEA'], priority: 2 }),
      campaign({ effectType: 'per_item', effectHundredths: 500n, productIds: [10], priority: 1 }),
    ]);
    assert.deepEqual(
      r.campaigns.map((c) => c.points),
      [50, 6, 10],
    ); // 4.5 × 1.5 = 6.75 → 6; 2 units × 5
    assert.equal(r.points, 20 + 66);
    // the bonus is shared over all lines by amount: 25 + 13.75 + 11.25 → 25, 14, 11
    assert.deepEqual([...r.campaigns[0]!.perLine], [[1, 25], [2, 14], [3, 11]]);
  });
  it('a line meets skus by its own sku or its product sku', () => {
    const r = run(lines, [campaign({ skus: ['COF'] })]);
    assert.deepEqual(r.campaigns[0]!.lineIds, ['1']);
  });
  it('rounds up with round_points_up', () => {
    const r = evaluate({
      lines,
      base: { ...base, roundPointsUp: true },
      campaigns: [campaign({ effectType: 'per_currency', effectHundredths: 150n, skus: ['TEA'] })],
      card: { tierId: null, tierMultiplierHundredths: 100n, firstPurchase: false, hasCard: true },
      shopId: 1,
      now,
    });
    assert.equal(r.campaigns[0]!.points, 7);
  });
  it('a campaign whose points come to 0 does not apply', () => {
    const r = run([line(1, '0.5')], [campaign({ effectType: 'multiplier', effectHundredths: 150n })]);
    assert.equal(r.campaigns.length, 0);
    assert.equal(r.skipped[0]!.reason, 'conditions');
  });
  it('max_points_per_purchase clamps the base only', () => {
    const r = evaluate({ lines, base: { ...base, maxPointsPerPurchase: 5 }, campaigns: [campaign()], card: { tierId: null, tierMultiplierHundredths: 100n, firstPurchase: false, hasCard: true }, shopId: 1, now });
    assert.equal(r.points, 55);
  });
});

describe('priority, exclusive, gates', () => {
  it('higher priority first, ties by lower id; an exclusive one that applies ends the evaluation', () => {
    const a = campaign({ priority: 1, effectHundredths: 100n });
    const b = campaign({ priority: 5, exclusive: true, effectHundredths: 200n });
    const c = campaign({ priority: 5, effectHundredths: 300n });
    const r = run([line(1, '10')], [a, c, b]);
    assert.deepEqual(
      r.campaigns.map((x) => x.campaignId),
      [b.id < c.id ? b.id : c.id, ...(b.id < c.id ? [] : [b.id])],
    );
    assert.ok(r.skipped.some((s) => s.campaign_id === a.id && s.reason === 'exclusive'));
  });
  it('an exclusive one that does not apply does not end it', () => {
    const x = campaign({ priority: 9, exclusive: true, shopIds: [2] });
    const y = campaign({ priority: 1 });
    const r = run([line(1, '10')], [x, y]);
    assert.deepEqual(
      r.campaigns.map((c) => c.campaignId),
      [y.id],
    );
    assert.deepEqual(r.skipped, [{ campaign_id: x.id, name: 'C', reason: 'shop' }]);
  });
  it('dates, shop, tier, first purchase, min_amount counting only the matching lines (met at ≥)', () => {
    const reasons = run(
      [line(1, '10', { sku: 'A' }), line(2, '30')],
      [
        campaign({ startsAt: new Date('2026-11-28T00:00:00Z') }),
        campaign({ endsAt: now }),
        campaign({ shopIds: [2] }),
        campaign({ tierIds: [4] }),
        campaign({ firstPurchaseOnly: true }),
        campaign({ skus: ['A'], minAmountUnits: eur('10.0001') }),
        campaign({ skus: ['B'] }),
      ],
    ).skipped.map((s) => s.reason);
    assert.deepEqual(reasons, ['outside_dates', 'outside_dates', 'shop', 'tier', 'conditions', 'conditions', 'conditions']);
    const met = run([line(1, '10', { sku: 'A' })], [campaign({ skus: ['A'], minAmountUnits: eur('10'), firstPurchaseOnly: true })], {
      card: { tierId: null, tierMultiplierHundredths: 100n, firstPurchase: true, hasCard: true },
    });
    assert.equal(met.campaigns.length, 1);
  });
  it('limits: uses, per customer, per customer per day (in the zone), budget', () => {
    const day = '2026-11-27';
    const r = run(
      [line(1, '10')],
      [
        campaign({ limitUses: 3, usesCount: 3 }),
        campaign({ limitPerCustomer: 2, cardUses: { total: 2, byDay: new Map() } }),
        campaign({ limitPerCustomerPerDay: 1, cardUses: { total: 1, byDay: new Map([[day, 1]]) } }),
        campaign({ pointsBudget: 100, pointsAwarded: 100 }),
      ],
    );
    assert.deepEqual(
      r.skipped.map((s) => s.reason),
      ['limit', 'limit', 'limit', 'budget'],
    );
    const yesterday = run([line(1, '10')], [campaign({ limitPerCustomerPerDay: 1, cardUses: { total: 1, byDay: new Map([['2026-11-26', 1]]) } })]);
    assert.equal(yesterday.campaigns.length, 1);
  });
  it('less budget left than its points: gives what is left', () => {
    const r = run([line(1, '10'), line(2, '30')], [campaign({ pointsBudget: 100, pointsAwarded: 93 })]);
    assert.equal(r.campaigns[0]!.points, 7);
    assert.equal(r.campaigns[0]!.cutToBudget, true);
    assert.deepEqual([...r.campaigns[0]!.perLine], [[1, 2], [2, 5]]);
  });
});

describe('schedules in the campaign time zone', () => {
  const friday22to02 = { daysOfWeek: [5], fromTime: '22:00', toTime: '02:00', timeZone: 'Europe/Vilnius' };
  it('a window across midnight belongs to the day it opened', () => {
    assert.equal(inSchedule(friday22to02, new Date('2026-11-27T20:30:00Z')), true); // Fri 22:30 local
    assert.equal(inSchedule(friday22to02, new Date('2026-11-27T23:30:00Z')), true); // Sat 01:30 local
    assert.equal(inSchedule(friday22to02, new Date('2026-11-28T00:00:00Z')), false); // Sat 02:00 local: to is exclusive
    assert.equal(inSchedule(friday22to02, new Date('2026-11-27T19:59:00Z')), false); // Fri 21:59
    assert.equal(inSchedule(friday22to02, new Date('2026-11-26T23:30:00Z')), false); // Fri 01:30 (Thursday's night)
  });
  it('follows the DST change: 09:00–10:00 local is 06:00 UTC in summer and 07:00 UTC in winter', () => {
    const morning = { daysOfWeek: [], fromTime: '09:00', toTime: '10:00', timeZone: 'Europe/Vilnius' };
    assert.equal(inSchedule(morning, new Date('2026-10-24T06:30:00Z')), true); // Sat, EEST (+3)
    assert.equal(inSchedule(morning, new Date('2026-10-26T06:30:00Z')), false); // Mon, EET (+2): 08:30
    assert.equal(inSchedule(morning, new Date('2026-10-26T07:30:00Z')), true);
  });
  it('days of week are local days: Monday 00:30 in Vilnius is Sunday in UTC', () => {
    const mondays = { daysOfWeek: [1], fromTime: null, toTime: null, timeZone: 'Europe/Vilnius' };
    assert.equal(inSchedule(mondays, new Date('2026-11-29T22:30:00Z')), true);
    assert.equal(inSchedule({ ...mondays, timeZone: 'UTC' }, new Date('2026-11-29T22:30:00Z')), false);
  });
});
