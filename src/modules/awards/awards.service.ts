// The engine's transactional shell (STYLE.md "The engine"): what a purchase earns, its
// preview, its returns and the reversal of a ledger entry. An award reads top-down:
//   route (awards.routes.ts) → this shell (load the card, expire what is due)
//   → the evaluator (evaluate.ts, pure: base rule, tier multiplier, campaigns; basket-award.ts
//     runs it and takes the limits in the statement that checks them)
//   → the ledger write (basket.repository.ts writePurchase, or points/ through PointsLedger's
//     entry/writeEntry for returns and reversals).
// It emits the partner events of what it decides: transaction.created of a purchase,
// transaction.returned, transaction.reversed and campaign.exhausted.
import type { Static } from 'typebox';
import { isDatabaseUnavailable, type Db, type Executor } from '../../infra/db/index.js';
import { failOn, missing, ok, type Result } from '../../shared/errors.js';
import { KeyedBatches } from '../../shared/keyed-batches.js';
import { amountToJson, formatAmount, parseAmount } from '../../shared/money.js';
import { RecentKeys } from '../../shared/recent-keys.js';
import { iso, type Clock } from '../../shared/time.js';
import { campaignsRepository } from '../campaigns/campaigns.repository.js';
import { CAMPAIGN_COUNTER_SHARDS } from '../campaigns/campaigns.tables.js';
import { campaignView } from '../campaigns/campaigns.service.js';
import {
  cardNotFound,
  giveBack,
  MAX_BALANCE,
  MAX_POINTS_PER_OPERATION,
  programmeInactive,
  qualifyingOf,
  shopNotFound,
  tooLarge,
  type PointsLedger,
  type TransactionView,
} from '../points/ledger.service.js';
import { pointsRepository as repo, type Draw } from '../points/points.repository.js';
import { noEvents, type PartnerEventSink } from '../webhooks/webhooks.events.js';
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
import type { AwardedTransaction, Reversal } from './awards.schemas.js';
import { awardStatement } from './award-statement.js';
import { basketReads } from './basket.repository.js';
import { returnsRepository } from './returns.repository.js';
import { returnGoods, type ReturnInput } from './returns.js';
import { EarnRules, earnVariants, noneServed, statementVariants } from './earn-rules.js';

/**
 * How long an award remembers that its partner runs campaigns this node's copy cannot serve
 * (limited ones: earn-rules.ts). Only ever a shortcut to the engine, which gives the same answer
 * as the one-statement path: such a partner pays no refused statement for this long.
 */
const CAMPAIGN_HINT_MS = 10_000;

/** One card's awards in one transaction at most (its row stays locked until the commit). */
const MAX_CARD_BATCH = 32;

/** An award, on `exec`: in a transaction already (`inTransaction`) or not. */
/** `later`: not the first award of its transaction (awardTogether), so it holds the locks of those before it. */
type AwardStep = (exec: Executor, inTransaction: boolean, later?: boolean) => Promise<Result<AwardView>>;

/** A purchase as create answers it: the entry, its lines and where its points came from. */
export type AwardView = Static<typeof AwardedTransaction>;

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

export interface AwardInput {
  cardId: number;
  shopId: number;
  /** EUR ten-thousandths, positive (the lines' sum when there are lines). */
  amount: bigint;
  receiptNumber?: string | null;
  /** Basket lines (DESIGN.md §12), validated by the route. */
  lines?: ParsedLine[];
}

/** `points_not_recovered`: earned points that had already been spent and could not be taken back (the balance never goes negative). */
export type ReversalView = Static<typeof Reversal>;

/**
 * A purchase's basket lines and where its points came from, as GET …/transactions/{id}
 * shows them (points.service.ts is handed this reader by src/context.ts). A purchase of the
 * one-statement path has no rows: all its points are the base.
 */
export async function purchaseDetails(db: Executor, row: { id: number; points: number }): Promise<{ items: ItemView[]; breakdown: BreakdownRow[] }> {
    const details = await basketReads.details(db, row.id);
    const breakdown: BreakdownRow[] =
      details.sources.length === 0
        ? [{ source: 'base', campaign_id: null, name: null, points: row.points, line_ids: [] }]
        : details.sources.map((s) => ({ source: s.source, campaign_id: s.source === 'campaign' ? s.campaign_id : null, name: s.name, points: s.points, line_ids: s.line_ids }));
    const items: ItemView[] = details.lines.map((l) => ({
      ...l,
      quantity: Number(l.quantity),
      amount: amountToJson(l.amount),
      returned_quantity: Number(l.returned_quantity),
    }));
  return { items, breakdown };
}

export class AwardsEngine {
  /** Per card: awards waiting while one of the card's awards is in flight (awardTogether). */
  private readonly cardAwards = new KeyedBatches<number, AwardStep, Result<AwardView>>(MAX_CARD_BATCH, {
    together: (_card, steps) => this.awardTogether(steps),
    alone: (_card, step) => step(this.db, false),
    failsAll: isDatabaseUnavailable,
  });

  /** Partners whose programmes ran a campaign a moment ago (a hint only: the engine reads the campaigns afresh). */
  private readonly campaignPartners = new RecentKeys<number>(CAMPAIGN_HINT_MS, 10_000);

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    /** The ledger the engine writes through (lots, expiry, balance, debt, tiers). */
    private readonly ledger: PointsLedger,
    /** Partner events (DESIGN.md §14): transaction.created (purchases) / .returned / .reversed, campaign.exhausted. */
    private readonly events: PartnerEventSink = noEvents,
  ) {
    this.earnRules = new EarnRules(db, () => clock.now());
  }

  /** Each partner's earning rules and unlimited campaigns, for amount-only awards in one statement (earn-rules.ts). */
  private readonly earnRules: EarnRules;

  /**
   * Earn points for a purchase by the programme's rules, tiers and campaigns (DESIGN.md §6,
   * §12, §13). An amount-only award on a programme with no live campaign, for a card that owes
   * no points and reaches no higher tier, is ONE statement (award-statement.ts) — the held tier's
   * multiplier included — when the card has no lot past its expiry: `exec` may then be the
   * database itself, with no transaction around it. Anything else — lines, a live campaign, a
   * debt, a due lot, a tier reached or due to be counted again — runs the basket engine (basket-award.ts) under the
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
      await this.ledger.expireDue(tx, card, now);
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
      if (r.tierMoved) await this.ledger.tierChanged(tx, card);
      return ok(view);
    };
    const award: AwardStep = async (exec, inTransaction, later = false) => {
      // Someone listens for the award (DESIGN.md §14): its event is written with it, so the
      // one statement gets a transaction around it. (Nobody listening: no query, from the cache.)
      if (!inTransaction && (await this.events.wants(exec, partnerId, 'transaction.created'))) return this.db.transaction((tx) => award(tx, true));
      // A basket, or a partner seen running campaigns a moment ago: straight to the engine
      // (which reads the campaigns afresh) instead of a one-statement attempt that would refuse.
      if (basketInput.lines.length > 0 || this.campaignPartners.has(partnerId)) return inTransaction ? engine(exec, later) : this.db.transaction((tx) => engine(tx));
      // The partner's campaigns, if this node has a copy: evaluated now for each card fact they
      // depend on; the statement takes the variant the locked card matches (earn-rules.ts).
      const copy = this.earnRules.get(partnerId);
      const variants = copy ? earnVariants(copy, input.shopId, input.amount, now) : [];
      const result = await awardStatement.award(exec, variants.length > 0 ? { ...statement, campaignVariants: statementVariants(variants, input.cardId % CAMPAIGN_COUNTER_SHARDS) } : statement);
      if (!result) return cardNotFound();
      if (result.transactionId !== null) {
        const points = Number(result.points);
        const applied = result.variant === null ? [] : variants[result.variant]!.campaigns;
        const fromCampaigns = applied.reduce((sum, c) => sum + c.points, 0);
        const view: AwardView = {
          ...purchaseView(result.transactionId, input.cardId, result.customerId, statement, points, result.balanceAfter!, now),
          items: [],
          breakdown: [
            { source: 'base', campaign_id: null, name: null, points: points - result.tierPoints - fromCampaigns, line_ids: [] },
            ...(result.tierPoints > 0 ? [{ source: 'tier' as const, campaign_id: null, name: null, points: result.tierPoints, line_ids: [] }] : []),
            ...applied.map((c) => ({ source: 'campaign' as const, campaign_id: c.campaignId, name: c.name, points: c.points, line_ids: c.lineIds })),
          ],
        };
        if (inTransaction) await this.events.emit(exec, partnerId, 'transaction.created', view);
        return ok(view);
      }
      if (result.campaigns) {
        // No copy, or one older than the programme: read it again (this award goes to the
        // engine). A current copy that can serve none of the partner's programmes (each has a
        // limited campaign): the partner's awards go straight to the engine for a while.
        const known = copy?.find((p) => p.id === result.programme.id);
        if (!known || known.version !== result.programme.earnVersion) void this.earnRules.refresh(partnerId);
        else if (noneServed(copy!)) this.campaignPartners.remember(partnerId);
      }
      if (result.due || ((result.campaigns || result.debt || result.tierWork) && result.shopOk && result.active)) {
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
      if (await this.ledger.refreshCard(card.id, card.nextExpiryAt)) card = (await repo.lockCard(this.db, { partnerId, cardId: input.cardId }, input.shopId, false))!;
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


  /** Goods of a purchase or deduction of the partner returned (DESIGN.md §12; returns.ts). */
  async returnGoods(tx: Executor, partnerId: number, transactionId: number, input: ReturnInput): Promise<Result<TransactionView>> {
    const result = await returnGoods(this.ledger, tx, partnerId, transactionId, input, this.clock.now());
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
    await this.ledger.expireDue(tx, card, now);
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
      const entry = this.ledger.entry(card, now, {
        ...base,
        points: restored,
        draws: back.draws,
        nextExpiry: { recompute: { exhausted: [], extra: back.extra } },
        ...(back.paid > 0 ? { debt: -back.paid } : {}),
      });
      entry.balanceAfter -= back.paid;
      const view = await this.ledger.writeEntry(tx, card, entry);
      if (!view) return failOn('INVALID_STATE', 'id', 'points.already_reversed', { meta: { status: 'reversed' } });
      // Restored points whose lot has meanwhile expired expire again, now.
      await this.ledger.expireDue(tx, card, now);
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
      const more = await this.ledger.fifoDraws(tx, card.id, left - recovered, lot?.id ?? null);
      draws.push(...more.draws);
      exhausted.push(...more.exhausted);
      recovered += more.total;
    }
    // Points of the earning that paid the card's debt off were never in the balance: what
    // the balance cannot cover of them is owed again (back into points_debt) rather than left
    // paid — only once the balance is 0, so a card never holds points while it owes some.
    const rebilled = Math.min(await repo.debtPaidBy(tx, original.id), left - recovered);
    const toRecover = left - rebilled;
    const entry = this.ledger.entry(card, now, {
      ...base,
      points: -(recovered + rebilled),
      draws,
      nextExpiry: { recompute: { exhausted, extra: null } },
      ...(rebilled > 0 ? { debt: rebilled } : {}),
    });
    entry.balanceAfter = card.pointsBalance - recovered;
    // The earning no longer counts toward the tier, net of what its returns already took off.
    const view = await this.ledger.writeEntry(tx, card, entry, { deltaUnits: -qualifyingOf(card.tierSettings.basis, original, returns), at: original.createdAt });
    if (!view) return failOn('INVALID_STATE', 'id', 'points.already_reversed', { meta: { status: 'reversed' } });
    const reversal = { ...view, points_not_recovered: toRecover - recovered };
    await this.events.emit(tx, partnerId, 'transaction.reversed', reversal);
    return ok(reversal);
  }

}
