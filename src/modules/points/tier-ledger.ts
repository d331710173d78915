// The ledger's side of tiers (DESIGN.md §13). Every earning, return and reversal moves the
// card's qualifying value and, when a threshold is crossed, its tier — computed here from the
// locked card (tier-rules.ts) and written by the entry's own statement, so value, tier and
// balance change together or not at all, in the order the card's row lock gives them.
// Time moves the value too (an entry leaves the window) and ends kept tiers: `refreshTier`
// does that work under the same lock, lazily on every locked access and from the sweep.
import type { Executor } from '../../infra/db/index.js';
import {
  applyChange,
  joinTier,
  keepEnded,
  leavesWindowAt,
  previousYearStart,
  reevaluate,
  windowEnded,
  windowStart,
  type CardTierState,
  type TierDef,
  type TierMove,
  type TierStep,
} from '../tiers/tier-rules.js';
import { tiersRepository } from '../tiers/tiers.repository.js';
import type { LockedCard } from './points.repository.js';

/** The tier the card holds (undefined: none, no card, or a tier no longer in the programme). */
export function heldTier(card: LockedCard | null): TierDef | undefined {
  if (!card || card.tier.tierId === null) return undefined;
  return card.tiers.find((t) => t.id === card.tier.tierId);
}

/** The card's tier state after an entry that moves the value by `deltaUnits`, counted at `at`. */
export function stepTier(card: LockedCard, deltaUnits: bigint, at: Date, now: Date): TierStep {
  return applyChange(card.tiers, card.tierSettings, card.tier, deltaUnits, at, now);
}

/** After the entry that carried `step.state` was written: the card in step, the move recorded. Whether the tier moved. */
export async function settleTier(tx: Executor, card: LockedCard, step: TierStep, now: Date): Promise<boolean> {
  card.tier = step.state;
  if (step.move) await recordMove(tx, card, step.move, now);
  return step.move !== null;
}

async function recordMove(tx: Executor, card: LockedCard, move: TierMove, now: Date): Promise<void> {
  await tiersRepository.recordMove(tx, card.id, move, new Map(card.tiers.map((t) => [t.id, t.name])), now);
}

const sameState = (a: CardTierState, b: CardTierState) =>
  a.tierId === b.tierId &&
  a.valueUnits === b.valueUnits &&
  a.valueUntil?.getTime() === b.valueUntil?.getTime() &&
  a.reachedAt?.getTime() === b.reachedAt?.getTime() &&
  a.keepUntil?.getTime() === b.keepUntil?.getTime();

/**
 * The card's tier work that time made due, under its row lock: the value counted again from
 * the ledger once an entry left the window, then — `end_of_window` — the fall of a tier whose
 * keep_until passed. With `reevaluateAt` (tiers or settings changed): the value counted
 * afresh and the tier set from it, whatever the policy, and the card marked at that version.
 */
export async function refreshTier(tx: Executor, card: LockedCard, now: Date, reevaluateAt?: number): Promise<{ moved: boolean }> {
  const before = card.tier;
  let state = before;
  if (reevaluateAt !== undefined || (state.valueUntil !== null && state.valueUntil <= now)) {
    const counted = await tiersRepository.count(tx, card.id, card.tierSettings, windowStart(card.tierSettings, now));
    state = { ...state, valueUnits: counted.valueUnits, valueUntil: counted.first === null ? null : leavesWindowAt(card.tierSettings, counted.first) };
  }
  const moves: TierMove[] = [];
  if (reevaluateAt !== undefined) {
    const step = reevaluate(card.tiers, card.tierSettings, state, now);
    state = step.state;
    if (step.move) moves.push(step.move);
  }
  // calendar_year: what the year before reached is kept through this year.
  const previousYear =
    keepEnded(card.tierSettings, state, now) && card.tierSettings.window === 'calendar_year'
      ? (await tiersRepository.count(tx, card.id, card.tierSettings, previousYearStart(card.tierSettings, now), windowStart(card.tierSettings, now))).valueUnits
      : undefined;
  const ended = windowEnded(card.tiers, card.tierSettings, state, now, previousYear);
  state = ended.state;
  if (ended.move) moves.push(ended.move);
  if (sameState(before, state) && reevaluateAt === undefined) return { moved: false };
  await tiersRepository.writeState(tx, card.id, state, reevaluateAt);
  card.tier = state;
  for (const move of moves) await recordMove(tx, card, move, now);
  return { moved: moves.length > 0 };
}

/** A card just issued takes the tier its value of 0 gives (a tier with threshold 0), if any. */
export async function enterTier(tx: Executor, card: LockedCard, now: Date): Promise<void> {
  const step = joinTier(card.tiers, card.tierSettings, card.tier, now);
  if (!step.move) return;
  await tiersRepository.writeState(tx, card.id, step.state);
  await settleTier(tx, card, step, now);
}
