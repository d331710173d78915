// The points ledger (DESIGN.md §6): lots, expiry, balance and debt. Every value-moving
// operation locks the card row,
// applies due expiries, checks, and writes one entry — inside the caller's transaction,
// which also holds the Idempotency-Key of the request. Expected failures come back as
// values; a caller that got one must roll its transaction back (routes `unwrap` inside
// the transaction), so a refused operation leaves nothing behind.
//
// What a purchase earns is decided by the engine (src/modules/awards/, which also reverses
// and returns): it writes through this ledger's primitives (entry, writeEntry, fifoDraws,
// expireDue). The ledger knows nothing of campaigns.
import type { Static } from 'typebox';
import type { Db, Executor } from '../../infra/db/index.js';
import { failOn, missing, ok, type Result } from '../../shared/errors.js';
import { amountToJson, formatAmount, parseAmount } from '../../shared/money.js';
import { iso, type Clock } from '../../shared/time.js';
import { pointsRepository as repo, type Draw, type Entry, type LockedCard, type TransactionRow } from './points.repository.js';
import type { PointsTransactionType } from './points.tables.js';
import { redemptionValue } from './points-rules.js';
import type { Transaction } from './points.schemas.js';
import { noEvents, type PartnerEventSink } from '../webhooks/webhooks.events.js';
import { UNITS, type TierBasis } from '../tiers/tier-rules.js';
import { tiersRepository } from '../tiers/tiers.repository.js';
import { enterTier, refreshTier, settleTier, stepTier } from './tier-ledger.js';

/** Largest number of points one operation may move. */
export const MAX_POINTS_PER_OPERATION = 10_000_000;
/** Largest balance a card may hold (the column is a 32-bit integer). */
export const MAX_BALANCE = 2_000_000_000;
const DAY_MS = 86_400_000;
/** The largest EUR amount a transaction row holds (numeric(14,4)), in ten-thousandths. */
const MAX_AMOUNT_UNITS = 99_999_999_999_999n;

export type TransactionView = Static<typeof Transaction>;

export function transactionView(row: TransactionRow): TransactionView {
  return {
    id: row.id,
    card_id: row.cardId,
    user_id: row.customerId,
    shop_id: row.shopId,
    type: row.type,
    points: row.points,
    amount: row.amount === null ? null : amountToJson(row.amount),
    balance_after: row.balanceAfter,
    receipt_number: row.receiptNumber,
    reason: row.reason,
    reverses_id: row.reversesId,
    returns_id: row.returnsId,
    created_at: iso(row.createdAt),
  };
}

function entryView(e: Entry, id: number): TransactionView {
  return {
    id,
    card_id: e.cardId,
    user_id: e.customerId,
    shop_id: e.shopId,
    type: e.type,
    points: e.points,
    amount: e.amount === null ? null : amountToJson(e.amount),
    balance_after: e.balanceAfter,
    receipt_number: e.receiptNumber,
    reason: e.reason,
    reverses_id: e.reversesId,
    returns_id: e.returnsId ?? null,
    created_at: iso(e.createdAt),
  };
}


export const cardNotFound = () => missing('resource.loyalty_card', 'card_id');
export const programmeInactive = () => failOn('INVALID_STATE', 'card_id', 'points.programme_inactive', { meta: { status: 'inactive' } });
export const shopNotFound = () => missing('resource.shop', 'shop_id');

function insufficient(available: number, requested: number) {
  return failOn('INSUFFICIENT_BALANCE', 'points', 'points.insufficient_balance', {
    params: { available, requested },
    meta: { available_points: available, requested_points: requested },
  });
}

export function tooLarge(balance: number, adding: number) {
  return failOn('OUT_OF_RANGE', 'points', 'points.balance_limit', {
    params: { limit: MAX_BALANCE },
    meta: { points_balance: balance, requested_points: adding, max_balance: MAX_BALANCE },
  });
}

/**
 * Points coming back to a card from the lots a spend drew from (a deduction's return or
 * reversal, a negative adjustment's reversal; `lots` in the order they refill, at most what
 * each can take back): they pay the card's points debt first, as an earning does (DESIGN.md
 * §12), and only the rest goes back into the lots — the first of them in that order, those
 * the customer keeps longest. So the order of returns never changes what the card ends with.
 * `draws` restore (negative points); `extra` is the soonest expiry among the lots refilled.
 */
export function giveBack(
  card: Pick<LockedCard, 'pointsDebt'>,
  lots: ReadonlyArray<{ lotId: number; points: number; expiresAt: Date | null }>,
  points: number,
  what: string,
): { draws: Draw[]; paid: number; extra: Date | null } {
  const held = lots.reduce((sum, l) => sum + l.points, 0);
  // The lots' draws left = what was taken less what came back ≥ points: a shortfall is a broken ledger.
  if (held < points) throw new Error(`ledger invariant broken on ${what}: its lots hold ${held} of ${points} points to give back`);
  const paid = Math.min(points, card.pointsDebt);
  const draws: Draw[] = [];
  let extra: Date | null = null;
  let rest = points - paid;
  for (const l of lots) {
    if (rest === 0) break;
    const give = Math.min(l.points, rest);
    draws.push({ lotId: l.lotId, points: -give });
    if (l.expiresAt && (!extra || l.expiresAt < extra)) extra = l.expiresAt;
    rest -= give;
  }
  return { draws, paid, extra };
}

/** How an entry moves the card's qualifying value (DESIGN.md §13): by how much, counted at the time of which earning. */
export interface Qualifying {
  deltaUnits: bigint;
  at: Date;
}

/**
 * What an earning still counts toward the tier: its points (bonus, game, purchase) or its
 * amount (a purchase, for amount_spent), net of its returns (`settled`: their points and
 * amount, both ≤ 0). Anything else counts nothing.
 */
export function qualifyingOf(basis: TierBasis, e: Pick<TransactionRow, 'type' | 'points' | 'amount'>, settled: { points: number; amountUnits: bigint }): bigint {
  if (e.type !== 'purchase' && e.type !== 'bonus' && e.type !== 'game') return 0n;
  if (basis === 'points_earned') return BigInt(e.points + settled.points) * UNITS;
  return e.type === 'purchase' ? (parseAmount(e.amount ?? '0') ?? 0n) + settled.amountUnits : 0n;
}

export interface DeductInput {
  cardId: number;
  shopId: number;
  points: number;
  reason?: string | null;
}

export interface AdjustInput {
  cardId: number;
  points: number;
  reason: string;
  shopId?: number | null;
  /** Expiry of added points; default the programme's points_expiration_days. */
  expiresInDays?: number | null;
}

export class PointsLedger {
  /**
   * The card as the API shows it, read in the caller's transaction (card.tier_changed's data):
   * the loyalty-cards module builds card views and itself depends on the ledger, so
   * the composition root (src/context.ts) hands it over after both exist.
   */
  cardView: ((tx: Executor, partnerId: number, cardId: number) => Promise<unknown>) | undefined;

  constructor(
    private readonly db: Db,
    readonly clock: Clock,
    /** Partner events (DESIGN.md §14): transaction.created of deductions, adjustments, redeems and game wins; card.tier_changed. */
    private readonly events: PartnerEventSink = noEvents,
  ) {}

  /** Spend points at a till, subject to the programme's redemption rules. */
  async deduct(tx: Executor, partnerId: number, input: DeductInput): Promise<Result<TransactionView>> {
    // A deduction moves no qualifying value: the tiers are read only when tier work is due.
    const now = this.clock.now();
    const card = await repo.lockCard(tx, { partnerId, cardId: input.cardId }, input.shopId, true, now);
    if (!card) return cardNotFound();
    if (!card.shopOk) return shopNotFound();
    const rules = card.programme;
    if (!rules.pointsRedemptionEnabled) {
      return failOn('INVALID_STATE', 'card_id', 'points.redemption_disabled', { meta: { points_redemption_enabled: false } });
    }
    const range = { min_points: rules.minPointsForRedemption, max_points: rules.maxPointsPerRedemption };
    const value = redemptionValue(input.points, rules);
    if (value > MAX_AMOUNT_UNITS) return failOn('OUT_OF_RANGE', 'points', 'points.redemption_value_too_large', { meta: range });
    if (input.points < rules.minPointsForRedemption) {
      return failOn('OUT_OF_RANGE', 'points', 'points.below_redemption_minimum', { params: { limit: rules.minPointsForRedemption }, meta: range });
    }
    if (rules.maxPointsPerRedemption !== null && input.points > rules.maxPointsPerRedemption) {
      return failOn('OUT_OF_RANGE', 'points', 'points.above_redemption_maximum', { params: { limit: rules.maxPointsPerRedemption }, meta: range });
    }
    await this.expireDue(tx, card, now);
    if (card.pointsBalance < input.points) return insufficient(card.pointsBalance, input.points);
    const view = await this.debit(tx, card, now, {
      type: 'deduct',
      points: input.points,
      shopId: input.shopId,
      amount: formatAmount(value),
      reason: input.reason ?? null,
    });
    await this.events.emit(tx, partnerId, 'transaction.created', view);
    return ok(view);
  }

  /** A partner's manual correction: positive adds a lot, negative spends like a deduction (no redemption rules). */
  async adjust(tx: Executor, partnerId: number, input: AdjustInput): Promise<Result<TransactionView>> {
    // An adjustment is not an earning (it moves no qualifying value): tiers only when tier work is due.
    const now = this.clock.now();
    const card = await repo.lockCard(tx, { partnerId, cardId: input.cardId }, input.shopId ?? null, true, now);
    if (!card) return cardNotFound();
    if (!card.shopOk) return shopNotFound();
    const result = await this.applyAdjustment(tx, card, input, now);
    if (result.ok) await this.events.emit(tx, partnerId, 'transaction.created', result.value);
    return result;
  }

  private async applyAdjustment(tx: Executor, card: LockedCard, input: AdjustInput, now: Date): Promise<Result<TransactionView>> {
    await this.expireDue(tx, card, now);
    if (input.points < 0) {
      const wanted = -input.points;
      if (card.pointsBalance < wanted) return insufficient(card.pointsBalance, wanted);
      return ok(await this.debit(tx, card, now, { type: 'adjust', points: wanted, shopId: input.shopId ?? null, amount: null, reason: input.reason }));
    }
    if (card.pointsBalance + input.points > MAX_BALANCE) return tooLarge(card.pointsBalance, input.points);
    const expiresAt =
      input.expiresInDays === undefined ? this.expiryOf(card, now) : input.expiresInDays === null ? null : new Date(now.getTime() + input.expiresInDays * DAY_MS);
    const view = await this.credit(tx, card, now, {
      type: 'adjust',
      points: input.points,
      shopId: input.shopId ?? null,
      amount: null,
      receiptNumber: null,
      reason: input.reason,
      reversesId: null,
      expiresAt,
    });
    return ok(view!);
  }

  /**
   * Several adjustments, all or nothing: the cards are locked in id order first (so two
   * bulk requests cannot deadlock), every row is tried, and if any row fails the caller
   * rolls everything back and reports every failing row.
   */
  async adjustMany(
    tx: Executor,
    partnerId: number,
    rows: AdjustInput[],
  ): Promise<{ ok: true; value: TransactionView[] } | { ok: false; failures: Array<{ index: number; failure: Result<never> }> }> {
    const locked = new Set(await repo.lockCardIds(tx, partnerId, [...new Set(rows.map((r) => r.cardId))]));
    const failures: Array<{ index: number; failure: Result<never> }> = [];
    const views: TransactionView[] = [];
    for (const [index, row] of rows.entries()) {
      if (!locked.has(row.cardId)) {
        failures.push({ index, failure: cardNotFound() });
        continue;
      }
      const result = await this.adjust(tx, partnerId, row);
      if (result.ok) views.push(result.value);
      else failures.push({ index, failure: result as Result<never> });
    }
    return failures.length > 0 ? { ok: false, failures } : { ok: true, value: views };
  }

  /**
   * Points spent on a coupon (an offer's points_cost), type `redeem`, in the caller's
   * transaction with the coupon it buys. The programme's till redemption rules do not apply:
   * the partner priced the offer itself.
   */
  async redeem(tx: Executor, partnerId: number, input: { cardId: number; points: number; reason: string; field?: string }): Promise<Result<TransactionView>> {
    // A redeem moves no qualifying value: tiers only when tier work is due.
    const now = this.clock.now();
    const card = await repo.lockCard(tx, { partnerId, cardId: input.cardId }, null, true, now);
    if (!card) return cardNotFound();
    await this.expireDue(tx, card, now);
    if (card.pointsBalance < input.points) {
      return failOn('INSUFFICIENT_BALANCE', input.field ?? 'points', 'points.insufficient_balance', {
        params: { available: card.pointsBalance, requested: input.points },
        meta: { available_points: card.pointsBalance, requested_points: input.points },
      });
    }
    const view = await this.debit(tx, card, now, { type: 'redeem', points: input.points, shopId: null, amount: null, reason: input.reason });
    await this.events.emit(tx, partnerId, 'transaction.created', view);
    return ok(view);
  }

  /** Points won in a game (type `game`): a lot expiring by the programme's rule, in the caller's transaction. */
  async awardGame(tx: Executor, partnerId: number, input: { cardId: number; points: number; reason: string }): Promise<Result<TransactionView>> {
    const card = await repo.lockCard(tx, { partnerId, cardId: input.cardId }, null);
    if (!card) return cardNotFound();
    const now = this.clock.now();
    await this.expireDue(tx, card, now);
    const points = Math.min(input.points, MAX_POINTS_PER_OPERATION);
    if (card.pointsBalance + points > MAX_BALANCE) return tooLarge(card.pointsBalance, points);
    const view = await this.credit(tx, card, now, {
      type: 'game',
      points,
      shopId: null,
      amount: null,
      receiptNumber: null,
      reason: input.reason,
      reversesId: null,
      expiresAt: this.expiryOf(card, now),
    });
    await this.events.emit(tx, partnerId, 'transaction.created', view);
    return ok(view!);
  }

  /** card.tier_changed (DESIGN.md §14): the card view with its new tier, in the transaction that moved it (also the engine's). */
  async tierChanged(tx: Executor, card: LockedCard): Promise<void> {
    if (!this.cardView || !(await this.events.wants(tx, card.partnerId, 'card.tier_changed'))) return;
    const view = await this.cardView(tx, card.partnerId, card.id);
    if (view) await this.events.emit(tx, card.partnerId, 'card.tier_changed', view);
  }

  /**
   * A card just issued in the caller's transaction, under ONE lock of its row: the tier a value
   * of 0 gives (a tier with threshold 0, DESIGN.md §13: part of card.created, no tier event),
   * then the programme's welcome bonus (`bonusPoints`, an earning that moves the tier state).
   * Whether the card changed, and the bonus's transaction.
   */
  async welcome(tx: Executor, cardId: number, bonusPoints: number): Promise<{ changed: boolean; bonus?: TransactionView }> {
    const card = await repo.lockCard(tx, { cardId }, null);
    if (!card) return { changed: false };
    const now = this.clock.now();
    const before = card.tier;
    if (card.tiers.length > 0) await enterTier(tx, card, now);
    if (bonusPoints <= 0) return { changed: card.tier !== before };
    const bonus = await this.credit(tx, card, now, {
      type: 'bonus',
      points: Math.min(bonusPoints, MAX_POINTS_PER_OPERATION),
      shopId: null,
      amount: null,
      receiptNumber: null,
      reason: null,
      reversesId: null,
      expiresAt: this.expiryOf(card, now),
    });
    return { changed: true, bonus };
  }

  /**
   * Expire the card's lots that are past due (lazy expiry on every locked access; the sweep
   * job does the same for cards nobody touches), after the tier work time made due
   * (tier-ledger.ts `refreshTier`). Updates `card` in place.
   */
  async expireDue(tx: Executor, card: LockedCard, now: Date): Promise<void> {
    if ((await refreshTier(tx, card, now)).moved) await this.tierChanged(tx, card);
    if (card.nextExpiryAt === null || card.nextExpiryAt.getTime() > now.getTime()) return;
    const due = await repo.dueLots(tx, card.id, now);
    const total = due.reduce((s, l) => s + l.remaining, 0);
    if (total === 0) {
      card.nextExpiryAt = await repo.refreshNextExpiry(tx, card.id);
      return;
    }
    const entry = this.entry(card, now, {
      type: 'expire',
      points: -total,
      shopId: null,
      amount: null,
      reason: null,
      reversesId: null,
      draws: due.map((l) => ({ lotId: l.id, points: l.remaining })),
      nextExpiry: { recompute: { exhausted: due.map((l) => l.id), extra: null } },
    });
    await this.writeEntry(tx, card, entry);
  }

  /**
   * Expire due lots on cards nobody touched; returns how many cards it expired. Each
   * card is its own transaction (short locks); a card another transaction holds is skipped
   * until the next sweep, and one card failing does not stop the others.
   */
  async sweepExpired(limit = 200, log?: { error(obj: object, msg?: string): void }): Promise<number> {
    const now = this.clock.now();
    let expired = 0;
    for (const id of await repo.dueCards(this.db, now, limit)) {
      try {
        const done = await this.db.transaction(async (tx) => {
          if (!(await repo.tryLockCard(tx, id))) return false;
          const card = await repo.lockCard(tx, { cardId: id }, null, true, now);
          if (card) await this.expireDue(tx, card, now);
          return true;
        });
        if (done) expired++;
      } catch (err) {
        log?.error({ err, card_id: id }, 'points expiry of a card failed; retried at the next sweep');
      }
    }
    return expired;
  }

  /**
   * Tier work that time made due on cards nobody touched (DESIGN.md §13): values with an entry
   * out of their window counted again, kept tiers past keep_until dropped (`end_of_window`).
   * Like sweepExpired: a card per transaction, a card another transaction holds is left to
   * the next sweep — so nodes sweeping side by side never do one card twice.
   */
  async sweepTiers(limit = 200, log?: { error(obj: object, msg?: string): void }): Promise<number> {
    const now = this.clock.now();
    let done = 0;
    for (const id of await tiersRepository.dueCards(this.db, now, limit)) {
      try {
        const did = await this.db.transaction(async (tx) => {
          if (!(await repo.tryLockCard(tx, id))) return false;
          const card = await repo.lockCard(tx, { cardId: id }, null);
          if (card && (await refreshTier(tx, card, now)).moved) await this.tierChanged(tx, card);
          return true;
        });
        if (did) done++;
      } catch (err) {
        log?.error({ err, card_id: id }, 'tier sweep of a card failed; retried at the next sweep');
      }
    }
    return done;
  }

  /**
   * One batch of the background re-evaluation after a programme's tiers or tier settings
   * changed (tiers_version moved): cards behind that version, claimed with SKIP LOCKED, get
   * their value counted afresh and the tier the thresholds give, each with a history row.
   * Returns how many cards it did (`limit` while more may be waiting).
   */
  async reevaluateTiers(limit = 100): Promise<number> {
    const programme = await tiersRepository.changedProgramme(this.db);
    if (!programme) return 0;
    const now = this.clock.now();
    const done = await this.db.transaction(async (tx) => {
      const ids = await tiersRepository.claimBehind(tx, programme.id, programme.version, limit);
      for (const id of ids) {
        const card = await repo.lockCard(tx, { cardId: id }, null);
        if (card && (await refreshTier(tx, card, now, programme.version)).moved) await this.tierChanged(tx, card);
      }
      return ids.length;
    });
    if (done === limit) return limit;
    // Last batch of this programme (or its other cards are busy: the next run takes them).
    return (await tiersRepository.markEvaluated(this.db, programme.id, programme.version)) ? limit : done;
  }

  /** Apply due expiries on every card of an owner (before totals are shown). */
  async refreshDue(owner: { partnerId?: number; customerId?: number }): Promise<void> {
    const now = this.clock.now();
    for (const id of await repo.dueCards(this.db, now, 1000, owner)) {
      await this.db.transaction(async (tx) => {
        const card = await repo.lockCard(tx, { cardId: id }, null, true, now);
        if (card) await this.expireDue(tx, card, now);
      });
    }
  }

  /** Apply due expiries on a card before it is shown (a no-op unless a lot is past due). */
  async refreshCard(cardId: number, nextExpiryAt: Date | null): Promise<boolean> {
    const now = this.clock.now();
    if (nextExpiryAt === null || nextExpiryAt.getTime() > now.getTime()) return false;
    await this.db.transaction(async (tx) => {
      const card = await repo.lockCard(tx, { cardId }, null, true, now);
      if (card) await this.expireDue(tx, card, now);
    });
    return true;
  }

  async expiring(cardId: number, limit = 50): Promise<Array<{ points: number; expires_at: string }>> {
    return (await repo.expiring(this.db, cardId, limit)).map((e) => ({ points: e.points, expires_at: iso(e.expiresAt) }));
  }

  // --- entry building -------------------------------------------------------------------

  expiryOf(card: LockedCard, now: Date): Date | null {
    const days = card.programme.pointsExpirationDays;
    return days === null ? null : new Date(now.getTime() + days * DAY_MS);
  }

  /** An entry of the locked card (balance_after = balance + points); also used by returns.ts. */
  entry(
    card: LockedCard,
    now: Date,
    e: Pick<Entry, 'type' | 'points' | 'shopId' | 'amount' | 'reason' | 'reversesId' | 'draws' | 'nextExpiry' | 'lot' | 'returnsId' | 'debt'> & { receiptNumber?: string | null },
  ): Entry {
    return {
      partnerId: card.partnerId,
      cardId: card.id,
      customerId: card.customerId,
      receiptNumber: null,
      createdAt: now,
      balanceAfter: card.pointsBalance + e.points,
      ...e,
    };
  }

  /** Write and keep the locked card's state in step; undefined on a unique conflict (receipt, reversal). Also used by returns.ts. */
  async writeEntry(tx: Executor, card: LockedCard, entry: Entry, qualifying?: Qualifying): Promise<TransactionView | undefined> {
    // An earning, return or reversal moves the qualifying value and maybe the tier (DESIGN.md §13), in the entry's statement.
    const tier = qualifying && qualifying.deltaUnits !== 0n ? stepTier(card, qualifying.deltaUnits, qualifying.at, entry.createdAt) : undefined;
    const written = await repo.write(tx, tier ? { ...entry, tier: tier.state } : entry);
    if (!written) return undefined;
    card.pointsBalance = entry.balanceAfter;
    card.pointsDebt += entry.debt ?? 0;
    card.nextExpiryAt = written.nextExpiryAt;
    if (tier && (await settleTier(tx, card, tier, entry.createdAt))) await this.tierChanged(tx, card);
    return entryView(entry, written.id);
  }

  private credit(
    tx: Executor,
    card: LockedCard,
    now: Date,
    c: {
      type: PointsTransactionType;
      points: number;
      shopId: number | null;
      amount: string | null;
      receiptNumber: string | null;
      reason: string | null;
      reversesId: number | null;
      expiresAt: Date | null;
    },
  ): Promise<TransactionView | undefined> {
    // An earning pays the card's points debt off first (DESIGN.md §12): its lot keeps only what
    // is left after the payment (the payment is a draw from it), and the debt entry records it.
    const paid = c.points > 0 ? Math.min(c.points, card.pointsDebt) : 0;
    const kept = c.points - paid;
    const next = kept > 0 && c.expiresAt !== null && (card.nextExpiryAt === null || c.expiresAt < card.nextExpiryAt) ? c.expiresAt : card.nextExpiryAt;
    const entry = this.entry(card, now, {
      type: c.type,
      points: c.points,
      shopId: c.shopId,
      amount: c.amount,
      receiptNumber: c.receiptNumber,
      reason: c.reason,
      reversesId: c.reversesId,
      ...(c.points > 0 ? { lot: { points: c.points, expiresAt: c.expiresAt } } : {}),
      nextExpiry: { set: next },
    });
    if (paid > 0) {
      entry.balanceAfter -= paid;
      entry.debt = -paid;
    }
    // Bonuses and game wins are points earned (DESIGN.md §13); they spend nothing.
    // (A manual adjustment is not an earning: it counts nothing.)
    const earned = (c.type === 'bonus' || c.type === 'game') && card.tierSettings.basis === 'points_earned' && c.points > 0 ? BigInt(c.points) * UNITS : 0n;
    return this.writeEntry(tx, card, entry, { deltaUnits: earned, at: now });
  }

  /** Draws of `points` from the card's open lots in spending order (also used by returns.ts). */
  async fifoDraws(tx: Executor, cardId: number, points: number, excludeLotId: number | null) {
    const lots = await repo.lotsToSpend(tx, cardId, points, excludeLotId);
    const draws: Draw[] = [];
    const exhausted: number[] = [];
    let left = points;
    for (const lot of lots) {
      if (left === 0) break;
      const take = Math.min(lot.remaining, left);
      draws.push({ lotId: lot.id, points: take });
      if (take === lot.remaining) exhausted.push(lot.id);
      left -= take;
    }
    return { draws, exhausted, total: points - left };
  }

  private async debit(
    tx: Executor,
    card: LockedCard,
    now: Date,
    d: { type: PointsTransactionType; points: number; shopId: number | null; amount: string | null; reason: string | null },
  ): Promise<TransactionView> {
    const { draws, exhausted, total } = await this.fifoDraws(tx, card.id, d.points, null);
    // The balance is the sum of the lots (verified by `loyalty ledger verify`); a shortfall here is a broken invariant.
    if (total !== d.points) throw new Error(`ledger invariant broken on card ${card.id}: lots hold ${total} of ${d.points} points`);
    const view = await this.writeEntry(
      tx,
      card,
      this.entry(card, now, {
        type: d.type,
        points: -d.points,
        shopId: d.shopId,
        amount: d.amount,
        reason: d.reason,
        reversesId: null,
        draws,
        nextExpiry: { recompute: { exhausted, extra: null } },
      }),
    );
    return view!;
  }
}
