// The points ledger (DESIGN.md §6): every value-moving operation locks the card row,
// applies due expiries, checks, and writes one entry — inside the caller's transaction,
// which also holds the Idempotency-Key of the request. Expected failures come back as
// values; a caller that got one must roll its transaction back (routes `unwrap` inside
// the transaction), so a refused operation leaves nothing behind.
//
// Register and revert come in pairs: award / reverse(award) takes back the lot it earned
// (or what is left of it, then from other lots); deduct / reverse(deduct) restores exactly
// the lots the deduction drew from.
import { isDatabaseUnavailable, type Db, type Executor } from '../../infra/db/index.js';
import { failOn, missing, ok, type Result } from '../../shared/errors.js';
import { amountToJson, formatAmount, parseAmount } from '../../shared/money.js';
import { iso, type Clock } from '../../shared/time.js';
import { pointsRepository as repo, type Draw, type Entry, type LockedCard, type TransactionRow } from './points.repository.js';
import {
  awardBasket,
  evaluateBasket,
  MustGoAlone,
  previewView,
  type BasketContext,
  type BasketInput,
  type BreakdownRow,
  type ItemView,
  type ParsedLine,
  type PreviewView,
} from './basket-award.js';
import type { PointsTransactionType } from './points.tables.js';
import { redemptionValue } from './points-rules.js';
import { returnsRepository } from './returns.repository.js';
import { returnGoods, type ReturnInput } from './returns.js';
import { KeyedBatches } from '../../shared/keyed-batches.js';
import { noEvents, type PartnerEventSink } from '../webhooks/webhooks.events.js';
import { campaignsRepository } from '../campaigns/campaigns.repository.js';
import { campaignView } from '../campaigns/campaigns.service.js';
import { RecentKeys } from '../../shared/recent-keys.js';
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

/**
 * How long an award remembers that its partner runs campaigns. Only ever a shortcut to the
 * engine, which gives the same answer as the one-statement path when no campaign is live:
 * a partner whose campaigns all ended pays one engine award per card for at most this long.
 */
const CAMPAIGN_HINT_MS = 10_000;

/** One card's awards in one transaction at most (its row stays locked until the commit). */
const MAX_CARD_BATCH = 32;

/** An award, on `exec`: in a transaction already (`inTransaction`) or not. */
/** `later`: not the first award of its transaction (awardTogether), so it holds the locks of those before it. */
type AwardStep = (exec: Executor, inTransaction: boolean, later?: boolean) => Promise<Result<AwardView>>;

/** A purchase as create answers it: the entry, its lines and where its points came from. */
export interface AwardView extends TransactionView {
  items: ItemView[];
  breakdown: BreakdownRow[];
}

function purchaseView(
  id: number,
  cardId: number,
  customerId: number,
  s: { shopId: number; amount: string; receiptNumber: string | null },
  points: number,
  balanceAfter: number,
  now: Date,
): TransactionView {
  return {
    id,
    card_id: cardId,
    user_id: customerId,
    shop_id: s.shopId,
    type: 'purchase',
    points,
    amount: amountToJson(s.amount),
    balance_after: balanceAfter,
    receipt_number: s.receiptNumber,
    reason: null,
    reverses_id: null,
    returns_id: null,
    created_at: iso(now),
  };
}

export interface TransactionView {
  id: number;
  card_id: number;
  user_id: number;
  shop_id: number | null;
  type: PointsTransactionType;
  points: number;
  amount: number | null;
  balance_after: number;
  receipt_number: string | null;
  reason: string | null;
  reverses_id: number | null;
  returns_id: number | null;
  created_at: string;
}

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


const cardNotFound = () => missing('resource.loyalty_card', 'card_id');
const programmeInactive = () => failOn('INVALID_STATE', 'card_id', 'points.programme_inactive', { meta: { status: 'inactive' } });
const shopNotFound = () => missing('resource.shop', 'shop_id');

function insufficient(available: number, requested: number) {
  return failOn('INSUFFICIENT_BALANCE', 'points', 'points.insufficient_balance', {
    params: { available, requested },
    meta: { available_points: available, requested_points: requested },
  });
}

function tooLarge(balance: number, adding: number) {
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

export interface AwardInput {
  cardId: number;
  shopId: number;
  /** EUR ten-thousandths, positive (the lines' sum when there are lines). */
  amount: bigint;
  receiptNumber?: string | null;
  /** Basket lines (DESIGN.md §12), validated by the route. */
  lines?: ParsedLine[];
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

export interface ReversalView extends TransactionView {
  /** Earned points that had already been spent and could not be taken back (the balance never goes negative). */
  points_not_recovered: number;
}

export class PointsLedger {
  /** Per card: awards waiting while one of the card's awards is in flight (awardTogether). */
  private readonly cardAwards = new KeyedBatches<number, AwardStep, Result<AwardView>>(MAX_CARD_BATCH, {
    together: (_card, steps) => this.awardTogether(steps),
    alone: (_card, step) => step(this.db, false),
    failsAll: isDatabaseUnavailable,
  });

  /** Partners whose programmes ran a campaign a moment ago (a hint only: the engine reads the campaigns afresh). */
  private readonly campaignPartners = new RecentKeys<number>(CAMPAIGN_HINT_MS, 10_000);

  /**
   * The card as the API shows it, read in the caller's transaction (card.tier_changed's data):
   * the loyalty-cards module builds card views and itself depends on the ledger, so
   * the composition root (src/context.ts) hands it over after both exist.
   */
  cardView: ((tx: Executor, partnerId: number, cardId: number) => Promise<unknown>) | undefined;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    /** Partner events (DESIGN.md §14): transaction.created / .returned / .reversed, campaign.exhausted, card.tier_changed. */
    private readonly events: PartnerEventSink = noEvents,
  ) {}

  /**
   * Earn points for a purchase by the programme's rules and campaigns (DESIGN.md §6, §12).
   * An amount-only award on a programme with no live campaign, for a card that owes no
   * points, is ONE statement (repo.award) when the card has no lot past its expiry — `exec`
   * may then be the database itself, with no transaction around it. Anything else — lines,
   * a live campaign, a debt, a due lot — runs the basket engine (basket-award.ts) under the
   * card's lock, in `exec`'s transaction or (`inTransaction` false) a new one.
   */
  async awardPurchase(exec: Executor, partnerId: number, input: AwardInput, inTransaction = true): Promise<Result<AwardView>> {
    const now = this.clock.now();
    const basketInput: BasketInput = { shopId: input.shopId, amount: input.amount, lines: input.lines ?? [], receiptNumber: input.receiptNumber ?? null };
    const statement = {
      partnerId,
      cardId: input.cardId,
      shopId: input.shopId,
      amount: formatAmount(input.amount),
      amountUnits: input.amount,
      receiptNumber: input.receiptNumber ?? null,
      now,
      maxPoints: MAX_POINTS_PER_OPERATION,
      maxBalance: MAX_BALANCE,
    };
    const engine = async (tx: Executor, later = false): Promise<Result<AwardView>> => {
      const card = await repo.lockCard(tx, { partnerId, cardId: input.cardId }, input.shopId);
      if (!card) return cardNotFound();
      if (!card.shopOk) return shopNotFound();
      if (!card.programme.isActive) return programmeInactive();
      await this.expireDue(tx, card, now);
      const result = await awardBasket(tx, partnerId, card, basketInput, now, { maxPoints: MAX_POINTS_PER_OPERATION, maxBalance: MAX_BALANCE, mayWait: !later });
      if (!result.ok) return result;
      const r = result.value;
      const view: AwardView = {
        ...purchaseView(r.id, input.cardId, card.customerId, statement, r.points, r.balanceAfter, now),
        items: r.items,
        breakdown: r.breakdown,
      };
      await this.events.emit(tx, partnerId, 'transaction.created', view);
      for (const id of r.exhausted) await this.campaignExhausted(tx, partnerId, id, now);
      if (r.tierMoved) await this.tierChanged(tx, card);
      return ok(view);
    };
    const award: AwardStep = async (exec, inTransaction, later = false) => {
      // Someone listens for the award (DESIGN.md §14): its event is written with it, so the
      // one statement gets a transaction around it. (Nobody listening: no query, from the cache.)
      if (!inTransaction && (await this.events.wants(exec, partnerId, 'transaction.created'))) return this.db.transaction((tx) => award(tx, true));
      // A basket, or a partner seen running campaigns a moment ago: straight to the engine
      // (which reads the campaigns afresh) instead of a one-statement attempt that would refuse.
      if (basketInput.lines.length > 0 || this.campaignPartners.has(partnerId)) return inTransaction ? engine(exec, later) : this.db.transaction((tx) => engine(tx));
      const result = await repo.award(exec, statement);
      if (!result) return cardNotFound();
      if (result.transactionId !== null) {
        const points = Number(result.points);
        const view: AwardView = {
          ...purchaseView(result.transactionId, input.cardId, result.customerId, statement, points, result.balanceAfter!, now),
          items: [],
          breakdown: [{ source: 'base', campaign_id: null, name: null, points, line_ids: [] }],
        };
        if (inTransaction) await this.events.emit(exec, partnerId, 'transaction.created', view);
        return ok(view);
      }
      if (result.campaigns) this.campaignPartners.remember(partnerId);
      if (result.due || ((result.campaigns || result.debt || result.tiers) && result.shopOk && result.active)) {
        return inTransaction ? engine(exec, later) : this.db.transaction((tx) => engine(tx));
      }
      // Nothing was written: say why, in the order a client fixes things.
      if (!result.shopOk) return shopNotFound();
      if (!result.active) return programmeInactive();
      if (result.points > BigInt(MAX_POINTS_PER_OPERATION)) {
        return failOn('OUT_OF_RANGE', 'amount', 'points.award_too_large', { params: { limit: MAX_POINTS_PER_OPERATION } });
      }
      if (BigInt(result.pointsBalance) + result.points > BigInt(MAX_BALANCE)) return tooLarge(result.pointsBalance, Number(result.points));
      return failOn('DUPLICATE_VALUE', 'receipt_number', 'points.receipt_used', { meta: { receipt_number: statement.receiptNumber } });
    };
    // In a caller's transaction the award goes at once. Otherwise it goes through the card's
    // batches (awardTogether): awards on one card take its row lock in turn anyway.
    return inTransaction ? award(exec, true) : this.cardAwards.submit(input.cardId, award);
  }

  /**
   * What create would award for a basket now, writing nothing and using no budget
   * (DESIGN.md §12 preview): with a card (`cardId`) or for a programme (`partnerCardId`).
   */
  async preview(partnerId: number, input: Omit<AwardInput, 'cardId'> & { cardId: number | null; partnerCardId: number | null }): Promise<Result<PreviewView>> {
    const now = this.clock.now();
    const basketInput: BasketInput = { shopId: input.shopId, amount: input.amount, lines: input.lines ?? [], receiptNumber: null };
    let ctx: BasketContext;
    if (input.cardId !== null) {
      let card = await repo.lockCard(this.db, { partnerId, cardId: input.cardId }, input.shopId, false);
      if (!card) return cardNotFound();
      if (!card.shopOk) return shopNotFound();
      if (!card.programme.isActive) return programmeInactive();
      // Lots past their expiry are expired first (as any read of the balance does), so the
      // balance after is the one the award would leave.
      if (await this.refreshCard(card.id, card.nextExpiryAt)) card = (await repo.lockCard(this.db, { partnerId, cardId: input.cardId }, input.shopId, false))!;
      ctx = { card, programme: card.programme, partnerCardId: card.partnerCardId };
    } else {
      const programme = await repo.programme(this.db, partnerId, input.partnerCardId!, input.shopId);
      if (!programme) return missing('resource.partner_card', 'partner_card_id');
      if (!programme.shopOk) return shopNotFound();
      if (!programme.programme.isActive) return failOn('INVALID_STATE', 'partner_card_id', 'points.programme_inactive', { meta: { status: 'inactive' } });
      ctx = { card: null, programme: programme.programme, partnerCardId: input.partnerCardId! };
    }
    const evaluated = await evaluateBasket(this.db, partnerId, ctx, basketInput, now, true);
    if (!evaluated.ok) return evaluated;
    if (evaluated.value.evaluation.points > MAX_POINTS_PER_OPERATION) {
      return failOn('OUT_OF_RANGE', 'amount', 'points.award_too_large', { params: { limit: MAX_POINTS_PER_OPERATION } });
    }
    return ok(previewView(ctx.card, evaluated.value));
  }

  /**
   * One card's awards that arrived while another of its awards was in flight. Sent to the
   * database side by side they would pile up on the card's row lock (each waking, re-reading
   * the row and waiting again: 16 at once on one card ran slower than one at a time) and each
   * pay its own commit. Instead they run one after another in ONE transaction — one commit
   * for all, each seeing the balance the one before left. Nobody is answered before that
   * commit; if it fails, nothing of it stays and KeyedBatches sends each again alone.
   */
  private async awardTogether(steps: AwardStep[]): Promise<Array<Result<AwardView>> | undefined> {
    try {
      return await this.db.transaction(async (tx) => {
        const out: Array<Result<AwardView>> = [];
        for (const [i, step] of steps.entries()) out.push(await step(tx, true, i > 0));
        return out;
      });
    } catch (err) {
      // An award after the first needed to wait for campaign limits (basket-award.ts): with
      // the locks of the awards before it held, that wait could close a cycle. Nothing of the
      // batch stayed; each goes alone.
      if (err instanceof MustGoAlone) return undefined;
      throw err;
    }
  }

  /** Spend points at a till, subject to the programme's redemption rules. */
  async deduct(tx: Executor, partnerId: number, input: DeductInput): Promise<Result<TransactionView>> {
    const card = await repo.lockCard(tx, { partnerId, cardId: input.cardId }, input.shopId);
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
    const now = this.clock.now();
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
    const card = await repo.lockCard(tx, { partnerId, cardId: input.cardId }, input.shopId ?? null);
    if (!card) return cardNotFound();
    if (!card.shopOk) return shopNotFound();
    const result = await this.applyAdjustment(tx, card, input);
    if (result.ok) await this.events.emit(tx, partnerId, 'transaction.created', result.value);
    return result;
  }

  private async applyAdjustment(tx: Executor, card: LockedCard, input: AdjustInput): Promise<Result<TransactionView>> {
    const now = this.clock.now();
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
    const card = await repo.lockCard(tx, { partnerId, cardId: input.cardId }, null);
    if (!card) return cardNotFound();
    const now = this.clock.now();
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

  /** card.tier_changed (DESIGN.md §14): the card view with its new tier, in the transaction that moved it. */
  private async tierChanged(tx: Executor, card: LockedCard): Promise<void> {
    if (!this.cardView || !(await this.events.wants(tx, card.partnerId, 'card.tier_changed'))) return;
    const view = await this.cardView(tx, card.partnerId, card.id);
    if (view) await this.events.emit(tx, card.partnerId, 'card.tier_changed', view);
  }

  /** A card created in the caller's transaction enters its programme's tier for a value of 0 (a threshold-0 tier; DESIGN.md §13). */
  async enterTier(tx: Executor, cardId: number): Promise<void> {
    const card = await repo.lockCard(tx, { cardId }, null);
    if (card && card.tiers.length > 0) await enterTier(tx, card, this.clock.now());
  }

  /** The welcome bonus of a programme, on a card created in the caller's transaction. */
  async grantBonus(tx: Executor, cardId: number, points: number): Promise<TransactionView | undefined> {
    const card = await repo.lockCard(tx, { cardId }, null);
    if (!card || points <= 0) return undefined;
    const now = this.clock.now();
    return this.credit(tx, card, now, {
      type: 'bonus',
      points: Math.min(points, MAX_POINTS_PER_OPERATION),
      shopId: null,
      amount: null,
      receiptNumber: null,
      reason: null,
      reversesId: null,
      expiresAt: this.expiryOf(card, now),
    });
  }

  /** Goods of a purchase or deduction of the partner returned (DESIGN.md §12; returns.ts). */
  async returnGoods(tx: Executor, partnerId: number, transactionId: number, input: ReturnInput): Promise<Result<TransactionView>> {
    const result = await returnGoods(this, tx, partnerId, transactionId, input, this.clock.now());
    if (result.ok) await this.events.emit(tx, partnerId, 'transaction.returned', result.value);
    return result;
  }

  /** campaign.exhausted (DESIGN.md §14): the campaign as GET shows it, read in the award's transaction. */
  private async campaignExhausted(tx: Executor, partnerId: number, campaignId: number, now: Date): Promise<void> {
    if (!(await this.events.wants(tx, partnerId, 'campaign.exhausted'))) return;
    const row = await campaignsRepository.find(tx, partnerId, campaignId);
    if (row) await this.events.emit(tx, partnerId, 'campaign.exhausted', campaignView(row, now));
  }

  /** The compensating entry of an earlier transaction of the partner. */
  async reverse(tx: Executor, partnerId: number, transactionId: number, reason: string | null): Promise<Result<ReversalView>> {
    const original = await repo.findTransaction(tx, { partnerId }, transactionId);
    if (!original) {
      return missing('resource.transaction');
    }
    // A coupon's price (redeem) and a game's prize (game) belong to a coupon or a play that
    // stays: reversing only their points would leave the coupon bought for nothing.
    // A return (DESIGN.md §12) moved its lines' returned quantities, its sources' returned
    // points and campaign budgets with its points: undoing only the points would leave those.
    if (original.type === 'expire' || original.type === 'reversal' || original.type === 'redeem' || original.type === 'game' || original.type === 'return') {
      return failOn('INVALID_STATE', 'id', 'points.not_reversible', { params: { type: original.type }, meta: { type: original.type } });
    }
    const card = (await repo.lockCard(tx, { partnerId, cardId: original.cardId }, null))!;
    // Checked under the card lock: two reversals of one transaction are serialised here
    // (and the unique index on reverses_id is the backstop).
    if (await repo.isReversed(tx, original.id)) {
      return failOn('INVALID_STATE', 'id', 'points.already_reversed', { meta: { status: 'reversed' } });
    }
    const now = this.clock.now();
    await this.expireDue(tx, card, now);
    // Returns of this purchase or deduction (DESIGN.md §12) already settled part of it: the
    // reversal settles only what is left — of its points, its amount and its draws. (A
    // return's amount is negative: what came back.)
    const returns = original.type === 'purchase' || original.type === 'deduct' ? await returnsRepository.settled(tx, original.id) : { points: 0, amountUnits: 0n, count: 0 };
    const amountLeft = original.amount === null ? null : (parseAmount(original.amount) ?? 0n) + returns.amountUnits;
    const amount = amountLeft === null ? null : formatAmount(-amountLeft);
    const base = { type: 'reversal' as const, shopId: original.shopId, amount, reason, reversesId: original.id };

    if (original.points < 0) {
      // Give back exactly the lots the spend drew from (less what its returns gave back).
      const lots = await returnsRepository.drawsLeft(tx, original.id, returns.points);
      // A lot whose earning was reversed is void: the earning's reversal already settled the
      // points this spend took from it (from other lots, or as points_not_recovered), so
      // giving them back now would create points — or give back the wrong ones. Voiding the
      // spend has to come before refunding the purchase that funded it.
      if (await repo.anyEarningReversed(tx, lots.map((d) => d.lotId))) {
        return failOn('INVALID_STATE', 'id', 'points.spend_of_reversed_earning', { meta: { status: 'earning_reversed' } });
      }
      const restored = lots.reduce((sum, d) => sum + d.points, 0);
      // They pay the card's debt first (DESIGN.md §12); only the rest goes back into the lots.
      const back = giveBack(card, lots, restored, `transaction ${original.id}`);
      if (card.pointsBalance + restored - back.paid > MAX_BALANCE) return tooLarge(card.pointsBalance, restored - back.paid);
      const entry = this.entry(card, now, {
        ...base,
        points: restored,
        draws: back.draws,
        nextExpiry: { recompute: { exhausted: [], extra: back.extra } },
        ...(back.paid > 0 ? { debt: -back.paid } : {}),
      });
      entry.balanceAfter -= back.paid;
      const view = await this.writeEntry(tx, card, entry);
      if (!view) return failOn('INVALID_STATE', 'id', 'points.already_reversed', { meta: { status: 'reversed' } });
      // Restored points whose lot has meanwhile expired expire again, now.
      await this.expireDue(tx, card, now);
      const reversal = { ...view, points_not_recovered: 0 };
      await this.events.emit(tx, partnerId, 'transaction.reversed', reversal);
      return ok(reversal);
    }

    // An earning: take back its own lot's remaining points first, then (for what was already
    // spent) other lots in spending order — never below zero. Points of the lot that expired
    // are not taken again from other lots.
    const lot = original.points > 0 ? await repo.lotOf(tx, original.id) : undefined;
    const expired = lot ? await repo.expiredFromLot(tx, lot.id) : 0;
    // returns.points ≤ 0: what the purchase's returns took back already.
    const left = Math.max(0, original.points + returns.points - expired);
    const draws: Draw[] = [];
    const exhausted: number[] = [];
    if (lot && lot.remaining > 0 && left > 0) {
      const take = Math.min(lot.remaining, left);
      draws.push({ lotId: lot.id, points: take });
      if (take === lot.remaining) exhausted.push(lot.id);
    }
    let recovered = draws.reduce((s, d) => s + d.points, 0);
    if (recovered < left) {
      const more = await this.fifoDraws(tx, card.id, left - recovered, lot?.id ?? null);
      draws.push(...more.draws);
      exhausted.push(...more.exhausted);
      recovered += more.total;
    }
    // Points of the earning that paid the card's debt off were never in the balance: what
    // the balance cannot cover of them is owed again (back into points_debt) rather than left
    // paid — only once the balance is 0, so a card never holds points while it owes some.
    const rebilled = Math.min(await repo.debtPaidBy(tx, original.id), left - recovered);
    const toRecover = left - rebilled;
    const entry = this.entry(card, now, {
      ...base,
      points: -(recovered + rebilled),
      draws,
      nextExpiry: { recompute: { exhausted, extra: null } },
      ...(rebilled > 0 ? { debt: rebilled } : {}),
    });
    entry.balanceAfter = card.pointsBalance - recovered;
    // The earning no longer counts toward the tier, net of what its returns already took off.
    const view = await this.writeEntry(tx, card, entry, { deltaUnits: -qualifyingOf(card.tierSettings.basis, original, returns), at: original.createdAt });
    if (!view) return failOn('INVALID_STATE', 'id', 'points.already_reversed', { meta: { status: 'reversed' } });
    const reversal = { ...view, points_not_recovered: toRecover - recovered };
    await this.events.emit(tx, partnerId, 'transaction.reversed', reversal);
    return ok(reversal);
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
          const card = await repo.lockCard(tx, { cardId: id }, null);
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
        const card = await repo.lockCard(tx, { cardId: id }, null);
        if (card) await this.expireDue(tx, card, now);
      });
    }
  }

  /** Apply due expiries on a card before it is shown (a no-op unless a lot is past due). */
  async refreshCard(cardId: number, nextExpiryAt: Date | null): Promise<boolean> {
    const now = this.clock.now();
    if (nextExpiryAt === null || nextExpiryAt.getTime() > now.getTime()) return false;
    await this.db.transaction(async (tx) => {
      const card = await repo.lockCard(tx, { cardId }, null);
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
