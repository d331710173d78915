// The tier rules of DESIGN.md §13 as pure functions of a card's tier state, the programme's
// tiers and settings, a change of the qualifying value, and the time. The ledger calls them
// under the card's row lock (src/modules/points/tier-ledger.ts) and writes what they return in the same
// transaction; the sweep and the background re-evaluation call them the same way.
//
// Values are bigint "units" (× 10⁴): points, or EUR with 4 decimals; thresholds are whole.
import { zonedMidnight, zoneParts } from '../../shared/zoned-time.js';

export type TierBasis = 'points_earned' | 'amount_spent';
export type TierWindow = 'lifetime' | 'calendar_year' | 'rolling_12_months';
export type TierDowngrade = 'end_of_window' | 'never';
export type TierReason = 'earned' | 'returned' | 'window_ended' | 'tiers_changed';

export const UNITS = 10_000n;

export interface TierSettings {
  basis: TierBasis;
  window: TierWindow;
  downgrade: TierDowngrade;
  timeZone: string;
}

export interface TierDef {
  id: number;
  threshold: number;
  name: { en: string; lt: string };
  color: string | null;
  /** earn_multiplier × 100 (1.5 → 150). */
  multiplierHundredths: bigint;
}

export interface CardTierState {
  tierId: number | null;
  valueUnits: bigint;
  /** When the value stops being the window's (an entry leaves it); null = never. */
  valueUntil: Date | null;
  reachedAt: Date | null;
  keepUntil: Date | null;
}

export interface TierMove {
  from: number | null;
  to: number | null;
  reason: TierReason;
}

export interface TierStep {
  state: CardTierState;
  move: TierMove | null;
}

// ---- time in the programme's zone ----

export { zonedMidnight };

/** The year `at` falls in, in the zone. */
export function zonedYear(at: Date, timeZone: string): number {
  return zoneParts(at, timeZone).year;
}

const plusYears = (at: Date, n: number) => {
  const d = new Date(at.getTime());
  d.setUTCFullYear(d.getUTCFullYear() + n);
  return d;
};

/** Where the window that holds `now` begins; null for `lifetime`. */
export function windowStart(s: Pick<TierSettings, 'window' | 'timeZone'>, now: Date): Date | null {
  if (s.window === 'lifetime') return null;
  if (s.window === 'calendar_year') return zonedMidnight(zonedYear(now, s.timeZone), 1, 1, s.timeZone);
  return plusYears(now, -1);
}

/** calendar_year: where the year before the one holding `now` begins. */
export function previousYearStart(s: Pick<TierSettings, 'timeZone'>, now: Date): Date {
  return zonedMidnight(zonedYear(now, s.timeZone) - 1, 1, 1, s.timeZone);
}

/** Whether an entry made at `at` still counts in the window at `now`. */
export function inWindow(s: Pick<TierSettings, 'window' | 'timeZone'>, at: Date, now: Date): boolean {
  const start = windowStart(s, now);
  return start === null || (s.window === 'rolling_12_months' ? at.getTime() > start.getTime() : at.getTime() >= start.getTime());
}

/** When an entry made at `at` leaves the window (null: never). */
export function leavesWindowAt(s: Pick<TierSettings, 'window' | 'timeZone'>, at: Date): Date | null {
  if (s.window === 'lifetime') return null;
  if (s.window === 'calendar_year') return zonedMidnight(zonedYear(at, s.timeZone) + 1, 1, 1, s.timeZone);
  return plusYears(at, 1);
}

/**
 * How long a tier qualified for at `at` is kept: to the end of the next calendar year
 * (calendar_year), 12 months (rolling_12_months), or — lifetime — no keep (null).
 */
export function keepUntilFor(s: Pick<TierSettings, 'window' | 'timeZone'>, at: Date): Date | null {
  if (s.window === 'lifetime') return null;
  if (s.window === 'calendar_year') return zonedMidnight(zonedYear(at, s.timeZone) + 2, 1, 1, s.timeZone);
  return plusYears(at, 1);
}

// ---- tiers ----

/** The programme's tiers, lowest threshold first. */
export function byThreshold(tiers: readonly TierDef[]): TierDef[] {
  return [...tiers].sort((a, b) => a.threshold - b.threshold);
}

/** The highest tier whose threshold the value reaches (undefined: below every threshold). */
export function tierForValue(tiers: readonly TierDef[], valueUnits: bigint): TierDef | undefined {
  let best: TierDef | undefined;
  for (const t of tiers) if (BigInt(t.threshold) * UNITS <= valueUnits && (!best || t.threshold > best.threshold)) best = t;
  return best;
}

/** The next tier above the value, with what is left to reach it. */
export function nextTier(tiers: readonly TierDef[], valueUnits: bigint): { tier: TierDef; remainingUnits: bigint } | null {
  let next: TierDef | undefined;
  for (const t of tiers) if (BigInt(t.threshold) * UNITS > valueUnits && (!next || t.threshold < next.threshold)) next = t;
  return next ? { tier: next, remainingUnits: BigInt(next.threshold) * UNITS - valueUnits } : null;
}

/** A tier's rank: its threshold (−1 for none, or for a tier no longer in the programme). */
function rank(tiers: readonly TierDef[], id: number | null): number {
  if (id === null) return -1;
  return tiers.find((t) => t.id === id)?.threshold ?? -1;
}

function moveTo(state: CardTierState, to: TierDef | undefined, s: TierSettings, now: Date, reason: TierReason, keepUntil = keepUntilFor(s, now)): TierStep {
  const toId = to?.id ?? null;
  const next: CardTierState = {
    ...state,
    tierId: toId,
    reachedAt: to ? now : null,
    keepUntil: to ? keepUntil : null,
  };
  return { state: next, move: toId === state.tierId ? null : { from: state.tierId, to: toId, reason } };
}

/**
 * The value moves by `deltaUnits` (an earning > 0; a return or reversal < 0) for an entry
 * counted at `at` (a return counts at its purchase's time) — only if that entry is in the
 * window. Upgrades happen at once; a tier qualified again is kept longer; a drop recomputes
 * the tier from the value, except that a tier kept from an earlier window stays until its
 * keep_until.
 */
export function applyChange(tiers: readonly TierDef[], s: TierSettings, state: CardTierState, deltaUnits: bigint, at: Date, now: Date): TierStep {
  if (deltaUnits === 0n || !inWindow(s, at, now)) return { state, move: null };
  const valueUnits = state.valueUnits + deltaUnits;
  const until = deltaUnits > 0n ? earliest(state.valueUntil, leavesWindowAt(s, at)) : state.valueUntil;
  const moved: CardTierState = { ...state, valueUnits, valueUntil: until };
  if (tiers.length === 0) return { state: moved, move: null };
  const qualified = tierForValue(tiers, valueUnits);
  const held = rank(tiers, state.tierId);
  const q = qualified?.threshold ?? -1;
  if (deltaUnits > 0n) {
    if (q > held) return moveTo(moved, qualified, s, now, 'earned');
    // Its threshold met again: the held tier is kept from now on.
    if (q === held && qualified) return { state: { ...moved, reachedAt: now, keepUntil: later(moved.keepUntil, keepUntilFor(s, now)) }, move: null };
    return { state: moved, move: null };
  }
  if (q >= held) return { state: moved, move: null };
  const start = windowStart(s, now);
  const keptFromEarlier = state.keepUntil !== null && state.keepUntil > now && state.reachedAt !== null && start !== null && state.reachedAt < start;
  if (keptFromEarlier) return { state: moved, move: null };
  return moveTo(moved, qualified, s, now, 'returned');
}

/** Whether keep_until has passed on a card whose programme lets tiers fall by time. */
export function keepEnded(s: TierSettings, state: CardTierState, now: Date): boolean {
  return s.downgrade === 'end_of_window' && state.keepUntil !== null && state.keepUntil <= now;
}

/**
 * The sweep, once keep_until has passed (`end_of_window` only): the card falls to the tier
 * its current value gives — or stays, kept again from now, when the value still qualifies.
 * Under `calendar_year`, a tier the value of the year before reached (`previousYearUnits`)
 * is kept to the end of this year, so the fall is to the higher of the two.
 */
export function windowEnded(tiers: readonly TierDef[], s: TierSettings, state: CardTierState, now: Date, previousYearUnits?: bigint): TierStep {
  if (!keepEnded(s, state, now)) return { state, move: null };
  let target = tierForValue(tiers, state.valueUnits);
  let keepUntil = keepUntilFor(s, now);
  if (s.window === 'calendar_year' && previousYearUnits !== undefined) {
    const previous = tierForValue(tiers, previousYearUnits);
    if (previous && previous.threshold > (target?.threshold ?? -1)) {
      target = previous;
      keepUntil = zonedMidnight(zonedYear(now, s.timeZone) + 1, 1, 1, s.timeZone);
    }
  }
  if (target && target.id === state.tierId) return { state: { ...state, reachedAt: now, keepUntil }, move: null };
  return moveTo(state, target, s, now, 'window_ended', keepUntil);
}

/** A new card takes the tier a value of 0 gives (a tier with threshold 0), as if earned. */
export function joinTier(tiers: readonly TierDef[], s: TierSettings, state: CardTierState, now: Date): TierStep {
  const qualified = tierForValue(tiers, state.valueUnits);
  if (!qualified || state.tierId !== null) return { state, move: null };
  return moveTo(state, qualified, s, now, 'earned');
}

/** Tiers or settings changed: the card takes what the thresholds give from its value, up or down. */
export function reevaluate(tiers: readonly TierDef[], s: TierSettings, state: CardTierState, now: Date): TierStep {
  const qualified = tierForValue(tiers, state.valueUnits);
  if ((qualified?.id ?? null) === state.tierId) {
    return { state: qualified ? { ...state, keepUntil: state.keepUntil ?? keepUntilFor(s, now), reachedAt: state.reachedAt ?? now } : { ...state, keepUntil: null, reachedAt: null }, move: null };
  }
  return moveTo(state, qualified, s, now, 'tiers_changed');
}

/** Base points × (multiplier − 1): the tier row of an award, rounded like campaign points. */
export function tierPoints(basePoints: bigint, multiplierHundredths: bigint, roundUp: boolean): bigint {
  if (multiplierHundredths <= 100n || basePoints <= 0n) return 0n;
  const num = basePoints * (multiplierHundredths - 100n);
  return roundUp ? (num + 99n) / 100n : num / 100n;
}

function earliest(a: Date | null, b: Date | null): Date | null {
  if (a === null) return b;
  if (b === null) return a;
  return a < b ? a : b;
}

function later(a: Date | null, b: Date | null): Date | null {
  if (a === null) return b;
  if (b === null) return a;
  return a > b ? a : b;
}

/** Units (× 10⁴) as the API shows the value: a number with at most 4 decimals. */
export function unitsToNumber(units: bigint): number {
  const neg = units < 0n;
  const abs = neg ? -units : units;
  const text = `${abs / UNITS}.${(abs % UNITS).toString().padStart(4, '0')}`;
  return (neg ? -1 : 1) * Number(text);
}

/** A numeric column's text (at most 4 decimals) as units. */
export function textToUnits(value: string): bigint {
  const m = /^(-?)(\d+)(?:\.(\d{1,4}))?/.exec(value.trim());
  if (!m) throw new Error(`not a decimal: ${value}`);
  const units = BigInt(m[2]!) * UNITS + BigInt((m[3] ?? '').padEnd(4, '0'));
  return m[1] === '-' ? -units : units;
}
