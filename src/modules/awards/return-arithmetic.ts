// The arithmetic of a return of goods (DESIGN.md §12 "Returns"; STYLE.md "The engine":
// returns are effects too): what a return of some lines, quantities or amount gives back —
// per source, per campaign budget, in EUR — from the purchase's stored per-line, per-source
// points, and what a deduction's return gives back in EUR. No I/O and no clock: returns.ts
// loads the basis under the card's lock, calls these, and writes what they answer.
//
//   taken(source, line) after a return = ⌊source points on the line × total returned
//   quantity ÷ line quantity⌋ — what ALL its returns have taken back — and this return takes
//   that less what the earlier ones took; the return that brings the line's returned quantity
//   to its quantity takes exactly what is left of that source on that line
//
// (a purchase without lines: the same by its cumulative returned amount), so the order and
// size of the steps never change what comes back.
import { formatAmount } from '../../shared/money.js';
import { UNITS, type TierBasis } from '../tiers/tier-rules.js';
import type { PointsSource } from '../points/points.tables.js';

/** A line (or the whole amount of a purchase without lines) being returned, in exact units. */
export interface Returning {
  /** The line's position; 0 is the whole amount of a purchase without lines. */
  position: number;
  field: string;
  /** What was bought, what was returned before, what comes back now — in one unit (thousandths of a unit, or ten-thousandths of a euro). */
  bought: bigint;
  before: bigint;
  now: bigint;
  /** The line's EUR amount in ten-thousandths (for a line; the amount itself without lines). */
  amountUnits: bigint;
}

/** A purchase's points from one source on one line, and what its returns took back so far. */
export interface SourcePoints {
  position: number;
  source: PointsSource;
  campaignId: number;
  points: number;
  returnedPoints: number;
}

/** What a return takes back: returns.repository.ts `apply` writes the first three. */
export interface ReturnTake {
  /** Quantity (numeric text) to add to each returned line's returned_quantity. */
  lines: Array<{ position: number; quantity: string }>;
  /** Points this return takes back from each source. */
  sources: Array<{ position: number; source: PointsSource; campaignId: number; points: number }>;
  /** Points given back to each campaign's budget. */
  campaigns: Array<{ id: number; points: number }>;
  /** Σ of the sources' points: what the return takes from the card before expiry is allowed for. */
  points: number;
  /** EUR ten-thousandths that come back (positive). */
  amountUnits: bigint;
}

/** Thousandths → numeric(14,3) text. */
export const milliText = (v: bigint) => `${v / 1000n}.${(v % 1000n).toString().padStart(3, '0')}`;
const quantityJson = (v: bigint) => Number(milliText(v));

/** A quantity (thousandths) or, at position 0, an amount (ten-thousandths) as the JSON number an error shows. */
export const measureJson = (r: Returning, v: bigint) => (r.position === 0 ? Number(formatAmount(v)) : quantityJson(v));

/** The returning lines that would bring their returned total above what was bought. */
export function exceeding(returning: readonly Returning[]): Returning[] {
  return returning.filter((r) => r.before + r.now > r.bought);
}

/**
 * What returning `returning` takes back of a purchase whose sources are `sources`. Throws if a
 * source already gave back more than the cumulative rule allows (`purchase` names it): the
 * ledger would be broken, and writing on would hide it.
 */
export function returnTake(returning: readonly Returning[], sources: readonly SourcePoints[], purchase: number): ReturnTake {
  const take: ReturnTake = { lines: [], sources: [], campaigns: [], points: 0, amountUnits: 0n };
  const budgets = new Map<number, number>();
  for (const r of returning) {
    const full = r.before + r.now === r.bought;
    for (const s of sources.filter((x) => x.position === r.position)) {
      // Cumulative: what all returns of this source have taken back after this one, less what
      // the earlier ones took (never each return rounded on its own: 20 returns of 1/20 each
      // rounding down would take back nothing).
      const total = full ? s.points : Number((BigInt(s.points) * (r.before + r.now)) / r.bought);
      const points = total - s.returnedPoints;
      // Σ of floors ≤ floor of Σ: even returns rounded one by one (before the cumulative rule) took no more.
      if (points < 0) throw new Error(`ledger invariant broken on purchase ${purchase}: a source took back ${s.returnedPoints} of at most ${total} points`);
      if (points === 0) continue;
      take.sources.push({ position: s.position, source: s.source, campaignId: s.campaignId, points });
      if (s.source === 'campaign') budgets.set(s.campaignId, (budgets.get(s.campaignId) ?? 0) + points);
      take.points += points;
    }
    if (r.position !== 0) {
      take.lines.push({ position: r.position, quantity: milliText(r.now) });
      // The EUR of a line comes back by its cumulative returned quantity, so its returns add up to its amount.
      take.amountUnits += (r.amountUnits * (r.before + r.now)) / r.bought - (r.amountUnits * r.before) / r.bought;
    } else {
      take.amountUnits += r.now;
    }
  }
  take.campaigns = [...budgets].map(([id, points]) => ({ id, points }));
  return take;
}

/**
 * Of `taken` points, those this return does not take again because they expired from the
 * purchase's lot (`expired`) — the customer lost them already, as `reverse` does not take them
 * either. What earlier returns let go of that way is their sources' returned points
 * (`returnedBefore`, Σ over the sources before this return) plus their entries' points
 * (`settledPoints`, ≤ 0: what they took).
 */
export function forgivenPoints(taken: number, expired: number, returnedBefore: number, settledPoints: number): number {
  if (expired <= 0) return 0;
  return Math.min(taken, Math.max(0, expired - (returnedBefore + settledPoints)));
}

/** The first draw of a return: from the purchase's own lot, as much of `owed` as it holds. */
export function ownLotDraw(lot: { id: number; remaining: number } | undefined, owed: number): { draws: Array<{ lotId: number; points: number }>; exhausted: number[] } {
  if (!lot || lot.remaining <= 0 || owed <= 0) return { draws: [], exhausted: [] };
  const points = Math.min(lot.remaining, owed);
  return { draws: [{ lotId: lot.id, points }], exhausted: points === lot.remaining ? [lot.id] : [] };
}

/** How much less the purchase counts toward the tier (DESIGN.md §13), in ten-thousandths: points or EUR by the programme's basis. */
export function qualifyingDelta(basis: TierBasis, owed: number, amountUnits: bigint): bigint {
  return basis === 'points_earned' ? BigInt(-owed) * UNITS : -amountUnits;
}

/**
 * The EUR (ten-thousandths, ≤ 0) a deduction's return of `points` gives back, by the cumulative
 * points returned, so all its returns add up to the deduction's amount; null without one.
 * `value`: the deduction's amount (ten-thousandths); `deducted`: its points (> 0);
 * `settledPoints`: what its earlier returns gave back.
 */
export function deductionReturnAmount(value: bigint | null, deducted: number, settledPoints: number, points: number): bigint | null {
  if (value === null || deducted === 0) return null;
  return -((value * BigInt(settledPoints + points)) / BigInt(deducted) - (value * BigInt(settledPoints)) / BigInt(deducted));
}
