// The campaign engine's pure evaluator (DESIGN.md §12, STYLE.md "The engine"): a function
// of the basket, the programme's base rule, the campaigns, the card's facts and the time —
// no I/O and no clock of its own — so that `transactions/preview` and `transactions/create`
// compute with the same code, and every rule is unit-tested without a database.
//
// Amounts are bigint ten-thousandths of a euro, quantities bigint thousandths of a unit,
// decimal rates bigint hundredths: nothing here is a binary float.
//
// Limits are NOT taken here: the shell (src/modules/awards/basket-award.ts) takes them with a
// conditional UPDATE and, when one could not be taken in full, evaluates again with what the
// locked rows say is left (`CampaignFacts` carries those counters).

import { zoneParts } from '../../shared/zoned-time.js';
import { tierPoints } from '../tiers/tier-rules.js';

export type SkipReason = 'outside_dates' | 'outside_schedule' | 'shop' | 'tier' | 'conditions' | 'limit' | 'budget' | 'exclusive';

export interface BasketLine {
  /** 1-based receipt position; 0 is the whole amount of a purchase without lines. */
  position: number;
  lineId: string;
  /** Ten-thousandths of a euro, ≥ 0. */
  amountUnits: bigint;
  /** Thousandths of a unit, > 0. */
  quantityMilli: bigint;
  /** The line's own sku (as the till sent it). */
  sku: string | null;
  /** The catalogue product it matched, if any: its id, sku and categories with every ancestor. */
  product: { id: number; sku: string | null; categoryIds: readonly number[] } | null;
}

export interface BaseRule {
  pointsEnabled: boolean;
  /** Decimal strings with at most 4 places, as the programme stores them. */
  pointsPerCurrency: string;
  currencyAmount: string;
  roundPointsUp: boolean;
  minPointsPerPurchase: number;
  maxPointsPerPurchase: number | null;
  pointsPerVisit: number;
}

export interface CampaignFacts {
  id: number;
  name: string;
  isActive: boolean;
  startsAt: Date | null;
  endsAt: Date | null;
  daysOfWeek: readonly number[];
  fromTime: string | null;
  toTime: string | null;
  timeZone: string;
  shopIds: readonly number[];
  tierIds: readonly number[];
  /** Ten-thousandths, or null. */
  minAmountUnits: bigint | null;
  productIds: readonly number[];
  /** The campaign's categories AND all their descendants (the loader expands them). */
  categoryIds: readonly number[];
  skus: readonly string[];
  firstPurchaseOnly: boolean;
  effectType: 'multiplier' | 'bonus' | 'per_currency' | 'per_item';
  /** The effect's value in hundredths (2.5 → 250). */
  effectHundredths: bigint;
  priority: number;
  exclusive: boolean;
  limitPerCustomer: number | null;
  limitPerCustomerPerDay: number | null;
  limitUses: number | null;
  pointsBudget: number | null;
  usesCount: number;
  pointsAwarded: number;
  /** The card's uses of the campaign: in all, and per day (YYYY-MM-DD in the campaign's zone). */
  cardUses: { total: number; byDay: ReadonlyMap<string, number> } | null;
}

export interface CardFacts {
  /** The card's tier id, or null (no tier, or no card). */
  tierId: number | null;
  /** The tier's earn_multiplier × 100 (100 = none): a `tier` source of base × (m − 1) (DESIGN.md §13). */
  tierMultiplierHundredths: bigint;
  /** Whether the card has no earlier purchase (true without a card: preview). */
  firstPurchase: boolean;
  /** False in a preview without a card: no per-customer limits then. */
  hasCard: boolean;
}

export interface EvaluationInput {
  lines: readonly BasketLine[];
  base: BaseRule;
  campaigns: readonly CampaignFacts[];
  card: CardFacts;
  shopId: number;
  now: Date;
}

export interface SourcePoints {
  source: 'base' | 'tier' | 'campaign';
  campaignId: number | null;
  name: string | null;
  points: number;
  /** Points per line position (only lines with points > 0 are listed). */
  perLine: Map<number, number>;
  /** The lines the source applied to (its matching lines), in receipt order. */
  lineIds: string[];
}

export interface AppliedCampaign extends SourcePoints {
  source: 'campaign';
  campaignId: number;
  /** The day (in the campaign's zone) a per-customer-per-day use is counted on. */
  day: string;
  /** Its points were cut to the budget that was left: it is exhausted after this award. */
  cutToBudget: boolean;
}

export interface Evaluation {
  points: number;
  base: SourcePoints;
  /** The card's tier multiplier's points, on every line like the base (null: none). */
  tier: SourcePoints | null;
  campaigns: AppliedCampaign[];
  skipped: Array<{ campaign_id: number; name: string; reason: SkipReason }>;
}

const SCALE = 10_000n;

function decimalUnits(value: string): bigint {
  const m = /^(\d+)(?:\.(\d{1,4}))?$/.exec(value.trim());
  if (!m) throw new Error(`not a non-negative decimal with at most 4 places: ${value}`);
  return BigInt(m[1]!) * SCALE + BigInt((m[2] ?? '').padEnd(4, '0'));
}

const divRound = (num: bigint, den: bigint, up: boolean): bigint => (up ? (num + den - 1n) / den : num / den);

/**
 * The programme's base points for a total amount (DESIGN.md §6), exactly as the award
 * statement computes them in SQL (awards/award-statement.ts): ⌊X / Y⌋ or ⌈X / Y⌉ with
 * X = amount·10⁴ × points_per_currency·10⁴ and Y = currency_amount·10⁴ × 10⁴, plus
 * points_per_visit, clamped to min..max_points_per_purchase.
 */
export function basePoints(amountUnits: bigint, rule: BaseRule): bigint {
  if (!rule.pointsEnabled) return 0n;
  const x = amountUnits * decimalUnits(rule.pointsPerCurrency);
  const y = decimalUnits(rule.currencyAmount) * SCALE;
  let points = divRound(x, y, rule.roundPointsUp) + BigInt(rule.pointsPerVisit);
  if (points < BigInt(rule.minPointsPerPurchase)) points = BigInt(rule.minPointsPerPurchase);
  if (rule.maxPointsPerPurchase !== null && points > BigInt(rule.maxPointsPerPurchase)) points = BigInt(rule.maxPointsPerPurchase);
  return points;
}

/**
 * Share `total` over `weights` in proportion, by largest remainder: the shares add up to
 * `total` exactly; a tie in remainders goes to the earlier entry. All-zero weights share
 * equally (a basket of free lines still carries its points somewhere).
 */
export function shareOut(total: bigint, weights: readonly bigint[]): bigint[] {
  if (weights.length === 0) return [];
  let sum = weights.reduce((a, b) => a + b, 0n);
  const w = sum === 0n ? weights.map(() => 1n) : weights;
  if (sum === 0n) sum = BigInt(weights.length);
  const shares = w.map((x) => (total * x) / sum);
  let left = total - shares.reduce((a, b) => a + b, 0n);
  const order = w
    .map((x, i) => ({ i, rem: (total * x) % sum }))
    .sort((a, b) => (a.rem === b.rem ? a.i - b.i : a.rem > b.rem ? -1 : 1));
  for (const { i } of order) {
    if (left <= 0n) break;
    shares[i]! += 1n;
    left -= 1n;
  }
  return shares;
}

/** The local date, ISO weekday and minute of the day of `at` in an IANA zone (the platform's tz database). */
export function localTime(at: Date, timeZone: string): { date: string; weekday: number; minute: number } {
  const p = zoneParts(at, timeZone);
  const two = (n: number) => String(n).padStart(2, '0');
  return { date: `${p.year}-${two(p.month)}-${two(p.day)}`, weekday: p.weekday, minute: p.hour * 60 + p.minute };
}

const minuteOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
const previousWeekday = (weekday: number) => (weekday === 1 ? 7 : weekday - 1);

/**
 * Whether `at` falls in the campaign's weekly schedule. A window that wraps midnight
 * (22:00–02:00) belongs to the day it opened: Friday's 22:00–02:00 includes Saturday 01:00.
 */
export function inSchedule(c: Pick<CampaignFacts, 'daysOfWeek' | 'fromTime' | 'toTime' | 'timeZone'>, at: Date): boolean {
  const local = localTime(at, c.timeZone);
  const dayAllowed = (weekday: number) => c.daysOfWeek.length === 0 || c.daysOfWeek.includes(weekday);
  if (c.fromTime === null || c.toTime === null) return dayAllowed(local.weekday);
  const from = minuteOf(c.fromTime);
  const to = minuteOf(c.toTime);
  if (from < to) return dayAllowed(local.weekday) && local.minute >= from && local.minute < to;
  // Wrapping window: the evening part opens today, the early-morning part opened yesterday.
  if (local.minute >= from) return dayAllowed(local.weekday);
  if (local.minute < to) return dayAllowed(previousWeekday(local.weekday));
  return false;
}

// A campaign's lists hold up to 1,000 entries each (DESIGN.md §12) and every line of every
// award is tested against them: membership goes through a Set built once per list (kept as
// long as the list object lives, i.e. for the loaded campaigns of one award or preview), so
// 100 campaigns × 1,000 skus × 500 lines stays linear instead of 5·10^7 comparisons.
const sets = new WeakMap<readonly unknown[], ReadonlySet<unknown>>();
function setOf<T>(list: readonly T[]): ReadonlySet<T> {
  let set = sets.get(list);
  if (!set) sets.set(list, (set = new Set(list)));
  return set as ReadonlySet<T>;
}

function lineMatches(c: CampaignFacts, line: BasketLine): boolean {
  if (c.productIds.length === 0 && c.categoryIds.length === 0 && c.skus.length === 0) return true;
  if (c.skus.length > 0) {
    const skus = setOf(c.skus);
    if (line.sku !== null && skus.has(line.sku)) return true;
    if (line.product?.sku != null && skus.has(line.product.sku)) return true;
  }
  if (line.product === null) return false;
  if (c.productIds.length > 0 && setOf(c.productIds).has(line.product.id)) return true;
  if (c.categoryIds.length === 0) return false;
  const categories = setOf(c.categoryIds);
  return line.product.categoryIds.some((id) => categories.has(id));
}

/** Why a campaign does not apply before its points are known, or null. */
function gate(c: CampaignFacts, input: EvaluationInput, day: string): SkipReason | null {
  if (c.startsAt !== null && input.now < c.startsAt) return 'outside_dates';
  if (c.endsAt !== null && input.now >= c.endsAt) return 'outside_dates';
  if (!inSchedule(c, input.now)) return 'outside_schedule';
  if (c.shopIds.length > 0 && !setOf(c.shopIds).has(input.shopId)) return 'shop';
  if (c.tierIds.length > 0 && (input.card.tierId === null || !setOf(c.tierIds).has(input.card.tierId))) return 'tier';
  if (c.firstPurchaseOnly && !input.card.firstPurchase) return 'conditions';
  if (c.limitUses !== null && c.usesCount >= c.limitUses) return 'limit';
  if (input.card.hasCard && c.cardUses !== null) {
    if (c.limitPerCustomer !== null && c.cardUses.total >= c.limitPerCustomer) return 'limit';
    if (c.limitPerCustomerPerDay !== null && (c.cardUses.byDay.get(day) ?? 0) >= c.limitPerCustomerPerDay) return 'limit';
  }
  if (c.pointsBudget !== null && c.pointsAwarded >= c.pointsBudget) return 'budget';
  return null;
}

/** The campaign's points on its matching lines, rounded once (down, or up with round_points_up). */
function effectPoints(c: CampaignFacts, matching: readonly BasketLine[], basePerLine: ReadonlyMap<number, bigint>, roundUp: boolean): bigint {
  const v = c.effectHundredths;
  switch (c.effectType) {
    case 'bonus':
      return v / 100n;
    case 'multiplier': {
      const base = matching.reduce((sum, l) => sum + (basePerLine.get(l.position) ?? 0n), 0n);
      return divRound(base * (v - 100n), 100n, roundUp);
    }
    case 'per_currency': {
      const amount = matching.reduce((sum, l) => sum + l.amountUnits, 0n);
      return divRound(amount * v, SCALE * 100n, roundUp);
    }
    case 'per_item': {
      const units = matching.reduce((sum, l) => sum + l.quantityMilli, 0n) / 1000n;
      return divRound(units * v, 100n, roundUp);
    }
  }
}

function spread(points: bigint, lines: readonly BasketLine[]): Map<number, number> {
  const shares = shareOut(
    points,
    lines.map((l) => l.amountUnits),
  );
  const out = new Map<number, number>();
  lines.forEach((l, i) => {
    if (shares[i]! > 0n) out.set(l.position, Number(shares[i]));
  });
  return out;
}

/** Campaigns in the order they are evaluated: priority (higher first), then lower id. */
export function evaluationOrder<T extends Pick<CampaignFacts, 'priority' | 'id'>>(campaigns: readonly T[]): T[] {
  return [...campaigns].sort((a, b) => b.priority - a.priority || a.id - b.id);
}

export function evaluate(input: EvaluationInput): Evaluation {
  const { lines } = input;
  const total = lines.reduce((sum, l) => sum + l.amountUnits, 0n);
  const base = basePoints(total, input.base);
  const baseShares = shareOut(
    base,
    lines.map((l) => l.amountUnits),
  );
  const basePerLine = new Map(lines.map((l, i) => [l.position, baseShares[i]!]));
  const baseSource: SourcePoints = {
    source: 'base',
    campaignId: null,
    name: null,
    points: Number(base),
    perLine: new Map([...basePerLine].filter(([, p]) => p > 0n).map(([pos, p]) => [pos, Number(p)])),
    lineIds: lines.filter((l) => l.position > 0).map((l) => l.lineId),
  };

  // The tier's multiplier (DESIGN.md §13) on the base: rounded once, shared out as the base is.
  const tierTotal = tierPoints(base, input.card.tierMultiplierHundredths, input.base.roundPointsUp);
  const tierShares = shareOut(
    tierTotal,
    lines.map((l) => l.amountUnits),
  );
  const tierSource: SourcePoints | null =
    tierTotal > 0n
      ? {
          source: 'tier',
          campaignId: null,
          name: null,
          points: Number(tierTotal),
          perLine: new Map(lines.map((l, i) => [l.position, Number(tierShares[i]!)] as const).filter(([, p]) => p > 0)),
          lineIds: baseSource.lineIds,
        }
      : null;

  const applied: AppliedCampaign[] = [];
  const skipped: Evaluation['skipped'] = [];
  let closed = false;
  for (const c of evaluationOrder(input.campaigns)) {
    if (!c.isActive) continue;
    const skip = (reason: SkipReason) => skipped.push({ campaign_id: c.id, name: c.name, reason });
    if (closed) {
      skip('exclusive');
      continue;
    }
    // A programme that earns no points earns none from its campaigns either.
    if (!input.base.pointsEnabled) {
      skip('conditions');
      continue;
    }
    const day = localTime(input.now, c.timeZone).date;
    const reason = gate(c, input, day);
    if (reason) {
      skip(reason);
      continue;
    }
    const matching = lines.filter((l) => lineMatches(c, l));
    const matchingAmount = matching.reduce((sum, l) => sum + l.amountUnits, 0n);
    if (matching.length === 0 || (c.minAmountUnits !== null && matchingAmount < c.minAmountUnits)) {
      skip('conditions');
      continue;
    }
    let points = effectPoints(c, matching, basePerLine, input.base.roundPointsUp);
    if (points <= 0n) {
      skip('conditions');
      continue;
    }
    let cutToBudget = false;
    if (c.pointsBudget !== null) {
      const left = BigInt(c.pointsBudget - c.pointsAwarded);
      if (points >= left) {
        cutToBudget = true;
        points = left;
      }
    }
    applied.push({
      source: 'campaign',
      campaignId: c.id,
      name: c.name,
      points: Number(points),
      perLine: spread(points, matching),
      lineIds: matching.filter((l) => l.position > 0).map((l) => l.lineId),
      day,
      cutToBudget,
    });
    if (c.exclusive) closed = true;
  }
  const points = Number(base) + (tierSource?.points ?? 0) + applied.reduce((sum, a) => sum + a.points, 0);
  return { points, base: baseSource, tier: tierSource, campaigns: applied, skipped };
}
