// The arithmetic of returns (DESIGN.md §12 "Returns") without a database: what a return of
// lines, quantities or an amount takes back, cumulatively. test/returns.test.ts drives the
// shell (returns.ts) through the HTTP interface.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  deductionReturnAmount,
  exceeding,
  forgivenPoints,
  measureJson,
  milliText,
  ownLotDraw,
  qualifyingDelta,
  returnTake,
  type Returning,
  type SourcePoints,
} from './return-arithmetic.js';

/** A line of `bought` units (thousandths), `before` returned, `now` coming back, worth `eur` ten-thousandths. */
const line = (position: number, bought: number, before: number, now: number, eur = 0n): Returning => ({
  position,
  field: `items.${position}.quantity`,
  bought: BigInt(bought * 1000),
  before: BigInt(before * 1000),
  now: BigInt(now * 1000),
  amountUnits: eur,
});
const source = (position: number, points: number, returnedPoints = 0, s: Partial<SourcePoints> = {}): SourcePoints => ({
  position,
  source: 'base',
  campaignId: 0,
  points,
  returnedPoints,
  ...s,
});

/** Returns `steps` one after another, feeding each one's take back as the sources' returned points. */
function returnInSteps(bought: number, steps: number[], sources: SourcePoints[]): number[] {
  let before = 0;
  const state = sources.map((s) => ({ ...s }));
  return steps.map((n) => {
    const take = returnTake([line(1, bought, before, n)], state, 1);
    for (const t of take.sources) state.find((s) => s.source === t.source && s.campaignId === t.campaignId)!.returnedPoints += t.points;
    before += n;
    return take.points;
  });
}

describe('return arithmetic', () => {
  it('takes back ⌊points × returned ÷ bought⌋ cumulatively: one unit at a time takes what all at once would', () => {
    const sources = [source(1, 7)];
    const ones = returnInSteps(20, Array<number>(19).fill(1), sources);
    assert.equal(
      ones.reduce((a, b) => a + b, 0),
      Math.floor((7 * 19) / 20),
    );
    assert.equal(returnTake([line(1, 20, 0, 19)], sources, 1).points, 6);
    // 20 single units each rounded on its own would take nothing; the cumulative rule takes all 7.
    assert.equal(
      returnInSteps(20, Array<number>(20).fill(1), sources).reduce((a, b) => a + b, 0),
      7,
    );
  });

  it('the return that completes a line takes exactly what is left of each source', () => {
    const take = returnTake([line(1, 3, 2, 1)], [source(1, 10, 6), source(1, 5, 3, { source: 'campaign', campaignId: 9 })], 1);
    assert.deepEqual(take.sources, [
      { position: 1, source: 'base', campaignId: 0, points: 4 },
      { position: 1, source: 'campaign', campaignId: 9, points: 2 },
    ]);
    assert.equal(take.points, 6);
  });

  it('gives campaign points back to their budgets, summed per campaign over lines; base and tier points to none', () => {
    const take = returnTake(
      [line(1, 1, 0, 1), line(2, 2, 0, 1)],
      [
        source(1, 4),
        source(1, 2, 0, { source: 'tier' }),
        source(1, 3, 0, { source: 'campaign', campaignId: 5 }),
        source(2, 6, 0, { source: 'campaign', campaignId: 5 }),
        source(2, 5, 0, { source: 'campaign', campaignId: 8 }),
        source(3, 100),
      ],
      1,
    );
    assert.deepEqual(take.campaigns, [
      { id: 5, points: 3 + 3 },
      { id: 8, points: 2 },
    ]);
    assert.equal(take.points, 4 + 2 + 3 + 3 + 2);
    assert.deepEqual(take.lines, [
      { position: 1, quantity: '1.000' },
      { position: 2, quantity: '1.000' },
    ]);
  });

  it("a line's EUR comes back by its cumulative quantity, so its returns add up to its amount", () => {
    const eur = 100_000n; // 10.0000 EUR for 3 units
    const steps = [line(1, 3, 0, 1, eur), line(1, 3, 1, 1, eur), line(1, 3, 2, 1, eur)].map((r) => returnTake([r], [], 1).amountUnits);
    assert.deepEqual(steps, [33_333n, 33_333n, 33_334n]);
  });

  it('without lines: the amount is the measure and comes back as given', () => {
    const whole: Returning = { position: 0, field: 'amount', bought: 200_000n, before: 50_000n, now: 50_000n, amountUnits: 200_000n };
    const take = returnTake([whole], [source(0, 9, 2)], 1);
    assert.deepEqual(take.sources, [{ position: 0, source: 'base', campaignId: 0, points: 4 - 2 }]);
    assert.equal(take.amountUnits, 50_000n);
    assert.deepEqual(take.lines, []);
    assert.equal(measureJson(whole, whole.bought - whole.before), 15);
  });

  it('refuses to go on when a source gave back more than the rule allows', () => {
    assert.throws(() => returnTake([line(1, 4, 0, 1)], [source(1, 8, 3)], 42), /purchase 42: a source took back 3 of at most 2 points/);
  });

  it('finds the lines returned beyond what was bought; quantities show with 3 decimals', () => {
    const over = line(2, 2, 1, 1.5);
    assert.deepEqual(exceeding([line(1, 2, 1, 1), over]), [over]);
    assert.equal(measureJson(over, over.bought - over.before), 1);
    assert.equal(milliText(1_250n), '1.250');
  });

  it('does not take again what expired from the purchase lot, less what earlier returns let go of', () => {
    assert.equal(forgivenPoints(10, 0, 0, 0), 0);
    assert.equal(forgivenPoints(10, 4, 0, 0), 4);
    assert.equal(forgivenPoints(3, 4, 0, 0), 3);
    // An earlier return's sources gave back 5, its entry took 3: 2 were forgiven already.
    assert.equal(forgivenPoints(10, 4, 5, -3), 2);
    assert.equal(forgivenPoints(10, 4, 9, -3), 0);
  });

  it("draws from the purchase's own lot first, as much as it holds", () => {
    assert.deepEqual(ownLotDraw({ id: 7, remaining: 10 }, 4), { draws: [{ lotId: 7, points: 4 }], exhausted: [] });
    assert.deepEqual(ownLotDraw({ id: 7, remaining: 3 }, 4), { draws: [{ lotId: 7, points: 3 }], exhausted: [7] });
    assert.deepEqual(ownLotDraw({ id: 7, remaining: 0 }, 4), { draws: [], exhausted: [] });
    assert.deepEqual(ownLotDraw(undefined, 4), { draws: [], exhausted: [] });
    assert.deepEqual(ownLotDraw({ id: 7, remaining: 5 }, 0), { draws: [], exhausted: [] });
  });

  it('the tier value drops by the points or the EUR, by the basis', () => {
    assert.equal(qualifyingDelta('points_earned', 3, 50_000n), -30_000n);
    assert.equal(qualifyingDelta('amount_spent', 3, 50_000n), -50_000n);
  });

  it("a deduction's returns give back its EUR by cumulative points, adding up to its amount", () => {
    // 10 EUR for 3 points, returned a point at a time; the entry's amount is the opposite sign.
    const steps = [0, 1, 2].map((settled) => deductionReturnAmount(100_000n, 3, settled, 1));
    assert.deepEqual(steps, [-33_333n, -33_333n, -33_334n]);
    assert.equal(deductionReturnAmount(100_000n, 3, 0, 3), -100_000n);
    assert.equal(deductionReturnAmount(null, 3, 0, 1), null);
    assert.equal(deductionReturnAmount(100_000n, 0, 0, 0), null);
  });
});
