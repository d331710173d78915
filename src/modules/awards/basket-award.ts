// The transactional shell around the campaign evaluator (DESIGN.md §12; STYLE.md "The
// engine"): load what the evaluator needs, evaluate, take the limits, write — or, for a
// preview, evaluate and stop. Both call the same `evaluate`, so a preview equals the award
// that follows it with nothing else happening.
//
// Limits: per-customer ones are exact because the award holds the card's row lock. `uses`
// and `points_budget` are taken from the campaign's limit shards (campaigns.tables.ts): from
// the card's shard in one conditional statement while it has enough, otherwise under the
// campaign rows' and every shard's locks, with the counters read again and the basket
// evaluated again with them — never a check here and an increment later. The counters are
// then written by the purchase's own single statement.
import { sql } from 'drizzle-orm';
import type { Static } from 'typebox';
import { pgErrorCode, type Executor } from '../../infra/db/index.js';
import { fail, failOn, ok, type Result } from '../../shared/errors.js';
import { amountToJson, formatAmount } from '../../shared/money.js';
import { evaluate, type BasketLine, type CampaignFacts, type Evaluation } from './evaluate.js';
import type { Preview } from './awards.schemas.js';
import { basketRepository as basket, type PurchaseWrite } from './basket.repository.js';
import type { LockedCard } from '../points/points.repository.js';
import type { BreakdownRow as BreakdownRowSchema, TransactionItem } from '../points/points.schemas.js';
import { heldTier, settleTier, stepTier } from '../points/tier-ledger.js';
import { UNITS } from '../tiers/tier-rules.js';

const DAY_MS = 86_400_000;
/** Re-evaluations under the campaign locks before giving up (each adds at least one locked campaign). */
const MAX_ROUNDS = 8;

export interface ParsedLine {
  position: number;
  lineId: string;
  productId: number | null;
  sku: string | null;
  ean: string | null;
  name: string | null;
  /** Thousandths of a unit. */
  quantityMilli: bigint;
  /** Ten-thousandths of a euro. */
  amountUnits: bigint;
}

export interface BasketInput {
  shopId: number;
  /** Ten-thousandths of a euro (the lines' sum when lines are given). */
  amount: bigint;
  lines: ParsedLine[];
  receiptNumber: string | null;
}

export type BreakdownRow = Static<typeof BreakdownRowSchema>;
export type ItemView = Static<typeof TransactionItem>;

export interface BasketEvaluation {
  evaluation: Evaluation;
  lines: BasketLine[];
  /** The lines as the transaction keeps them (none for a purchase without lines). */
  items: ItemView[];
  breakdown: BreakdownRow[];
}

export interface Limits {
  maxPoints: number;
  maxBalance: number;
  /**
   * False when the award is not the first of its transaction (a card's batch): it holds the
   * locks of the awards before it, so waiting for every shard of a campaign could close a
   * cycle with another award — it throws MustGoAlone instead, and the batch goes one by one.
   */
  mayWait?: boolean;
}

/** Thrown (before any lock is waited for) by an award that may not wait: for a shard another transaction holds, or for the slow path. */
export class MustGoAlone extends Error {
  constructor() {
    super('the award must run in a transaction of its own');
  }
}


const milliToText = (v: bigint) => `${v / 1000n}.${(v % 1000n).toString().padStart(3, '0')}`;

export function breakdownOf(e: Evaluation): BreakdownRow[] {
  return [
    { source: 'base', campaign_id: null, name: null, points: e.base.points, line_ids: e.base.lineIds },
    ...(e.tier ? [{ source: 'tier' as const, campaign_id: null, name: null, points: e.tier.points, line_ids: e.tier.lineIds }] : []),
    ...e.campaigns.map((c) => ({ source: c.source, campaign_id: c.campaignId, name: c.name, points: c.points, line_ids: c.lineIds })),
  ];
}

function itemsOf(input: BasketInput, lines: BasketLine[], e: Evaluation): ItemView[] {
  return input.lines.map((l, i) => {
    const pos = l.position;
    const points = (e.base.perLine.get(pos) ?? 0) + (e.tier?.perLine.get(pos) ?? 0) + e.campaigns.reduce((s, c) => s + (c.perLine.get(pos) ?? 0), 0);
    return {
      line_id: l.lineId,
      product_id: lines[i]!.product?.id ?? null,
      sku: l.sku,
      ean: l.ean,
      name: l.name,
      quantity: Number(milliToText(l.quantityMilli)),
      amount: amountToJson(formatAmount(l.amountUnits)),
      points,
      returned_quantity: 0,
    };
  });
}

/** The per-line, per-source rows a return reads (every matching line, even at 0 points). */
function sourcesOf(lines: BasketLine[], e: Evaluation): PurchaseWrite['sources'] {
  const rows: PurchaseWrite['sources'] = lines.map((l) => ({ position: l.position, source: 'base', campaignId: 0, ordinal: 0, points: e.base.perLine.get(l.position) ?? 0 }));
  const tier = e.tier;
  if (tier) for (const l of lines) rows.push({ position: l.position, source: 'tier', campaignId: 0, ordinal: 1, points: tier.perLine.get(l.position) ?? 0 });
  e.campaigns.forEach((c, i) => {
    const ids = new Set(c.lineIds);
    const matching = lines.filter((l) => l.position === 0 || ids.has(l.lineId));
    for (const l of matching) rows.push({ position: l.position, source: 'campaign', campaignId: c.campaignId, ordinal: 2 + i, points: c.perLine.get(l.position) ?? 0 });
  });
  return rows;
}

export interface BasketContext {
  card: LockedCard | null;
  programme: LockedCard['programme'];
  partnerCardId: number;
}

/**
 * Evaluate a basket for a card (or, in a preview, for a programme without a card). Loads
 * the products and campaigns; returns the evaluation or a failure on the basket's fields.
 */
export async function evaluateBasket(
  exec: Executor,
  partnerId: number,
  ctx: BasketContext,
  input: BasketInput,
  now: Date,
  forPreview: boolean,
): Promise<Result<BasketEvaluation & { campaigns: CampaignFacts[]; firstPurchase: boolean }>> {
  const loaded = await basket.load(exec, {
    partnerId,
    partnerCardId: ctx.partnerCardId,
    cardId: ctx.card?.id ?? null,
    now,
    forPreview,
    lines: input.lines.map((l) => ({ position: l.position, productId: l.productId, sku: l.sku, ean: l.ean })),
  });
  const { matched, foreign } = loaded;
  if (foreign.length > 0) {
    // Another partner's product is refused like one that does not exist: its existence is not told.
    const fields = Object.fromEntries(foreign.map((pos) => [`items.${pos - 1}.product_id`, [{ key: 'points.product_not_owned' as const }]]));
    return fail('VALIDATION', { fields });
  }
  const byPosition = new Map(matched.map((m) => [m.position, m]));
  const lines: BasketLine[] =
    input.lines.length === 0
      ? [{ position: 0, lineId: '', amountUnits: input.amount, quantityMilli: 1000n, sku: null, product: null }]
      : input.lines.map((l) => {
          const m = byPosition.get(l.position);
          return {
            position: l.position,
            lineId: l.lineId,
            amountUnits: l.amountUnits,
            quantityMilli: l.quantityMilli,
            sku: l.sku,
            product: m ? { id: m.id, sku: m.sku, categoryIds: m.categoryIds } : null,
          };
        });
  const evaluation = run(ctx, input, lines, loaded.campaigns, loaded.firstPurchase, now);
  return ok({
    evaluation,
    lines,
    items: itemsOf(input, lines, evaluation),
    breakdown: breakdownOf(evaluation),
    campaigns: loaded.campaigns,
    firstPurchase: loaded.firstPurchase,
  });
}

function run(ctx: BasketContext, input: BasketInput, lines: BasketLine[], campaigns: CampaignFacts[], firstPurchase: boolean, now: Date): Evaluation {
  return evaluate({
    lines,
    base: ctx.programme,
    campaigns,
    // The award earns at the tier the card held before it (DESIGN.md §13).
    card: {
      tierId: heldTier(ctx.card)?.id ?? null,
      tierMultiplierHundredths: heldTier(ctx.card)?.multiplierHundredths ?? 100n,
      firstPurchase: ctx.card === null ? true : firstPurchase,
      hasCard: ctx.card !== null,
    },
    shopId: input.shopId,
    now,
  });
}

/** What an award wrote, as create answers it. */
export interface BasketAwardResult {
  id: number;
  points: number;
  balanceAfter: number;
  items: ItemView[];
  breakdown: BreakdownRow[];
  /** Limited campaigns this award used up. */
  exhausted: number[];
  /** The card moved to another tier (DESIGN.md §13). */
  tierMoved: boolean;
}

/**
 * The award of a basket (or of an amount while campaigns run or the card owes points), in
 * `tx` under the card's row lock, which the caller took (`card`) and whose due lots it expired.
 */
export async function awardBasket(
  tx: Executor,
  partnerId: number,
  card: LockedCard,
  input: BasketInput,
  now: Date,
  limits: Limits,
): Promise<Result<BasketAwardResult>> {
  const ctx: BasketContext = { card, programme: card.programme, partnerCardId: card.partnerCardId };
  const first = await evaluateBasket(tx, partnerId, ctx, input, now, false);
  if (!first.ok) return first;
  let { evaluation } = first.value;
  const { lines, campaigns } = first.value;

  // Limits (`uses`, `points_budget`; campaigns.tables.ts). The fast path: every limited
  // campaign the evaluation applies takes its use and points from the card's shard in ONE
  // conditional statement, behind a savepoint — no hot row, awards of one campaign run side by
  // side. It is tried only when the evaluation on the loaded counters cut no campaign to its
  // budget; a shard that would run dry refuses, and the savepoint undoes the locks taken.
  const byId = new Map(campaigns.map((c) => [c.id, c]));
  const isLimited = (c: CampaignFacts) => c.limitUses !== null || c.pointsBudget !== null;
  const limitedApplied = (e: Evaluation) => e.campaigns.filter((a) => isLimited(byId.get(a.campaignId)!));
  const tooLargeFor = (e: Evaluation) => {
    const debtPaid = Math.min(e.points, card.pointsDebt);
    return e.points > limits.maxPoints || card.pointsBalance + e.points - debtPaid > limits.maxBalance;
  };
  let savepoint = false;
  const locked = new Set<number>();
  const takes = limitedApplied(evaluation);
  if (takes.length > 0 && !takes.some((a) => a.cutToBudget) && !tooLargeFor(evaluation)) {
    await tx.execute(sql`savepoint award_limits`);
    savepoint = true;
    let took: boolean;
    try {
      took = await basket.takeFromShard(tx, card.id, takes.map((a) => ({ id: a.campaignId, points: a.points })), limits.mayWait !== false);
    } catch (err) {
      if (pgErrorCode(err) === '55P03') throw new MustGoAlone();
      throw err;
    }
    if (!took) {
      await tx.execute(sql`rollback to savepoint award_limits`);
      savepoint = false;
    }
  }
  // The slow path: the campaigns' rows and every shard locked, in ONE global order (campaign
  // id, then shard) across every round (DESIGN.md §12: two awards never deadlock). The first
  // round locks, at once, every limited campaign this award could end up applying: those it
  // applies, and — when a limited exclusive campaign closed the evaluation — those it skipped
  // only because of that one (should the exclusive be used up under its lock, they apply in
  // the next round). Everything else it skipped keeps its reason whatever the locked counters
  // say (dates, shop, tier, conditions; a limit already used up when the campaigns were loaded
  // stays so for this award: skipping it never over-gives), so a later round never needs a
  // lock the first did not take. Afterwards what is left is spread over the shards again.
  const candidates = (e: Evaluation) => {
    const applied = e.campaigns.map((a) => byId.get(a.campaignId)!);
    const closer = applied.findLast((c) => c.exclusive);
    const reopenable = closer && isLimited(closer) ? e.skipped.filter((s) => s.reason === 'exclusive').map((s) => byId.get(s.campaign_id)!) : [];
    return [...applied, ...reopenable].filter((c) => isLimited(c) && !locked.has(c.id)).map((c) => c.id);
  };
  for (let round = 0; !savepoint; round++) {
    const ids = candidates(evaluation);
    if (ids.length === 0) break;
    if (limits.mayWait === false) throw new MustGoAlone();
    if (round >= MAX_ROUNDS) throw new Error('campaign limits did not settle');
    const current = await basket.lockLimits(tx, ids);
    let moved = false;
    for (const id of ids) {
      locked.add(id);
      const fresh = current.get(id);
      const c = byId.get(id)!;
      if (!fresh) {
        // Deleted meanwhile: it no longer applies.
        c.isActive = false;
        moved = true;
      } else if (fresh.usesCount !== c.usesCount || fresh.pointsAwarded !== c.pointsAwarded || fresh.limitUses !== c.limitUses || fresh.pointsBudget !== c.pointsBudget) {
        Object.assign(c, fresh);
        moved = true;
      }
    }
    if (moved) evaluation = run(ctx, input, lines, campaigns, first.value.firstPurchase, now);
  }

  const points = evaluation.points;
  if (points > limits.maxPoints) {
    return failOn('OUT_OF_RANGE', 'amount', 'points.award_too_large', { params: { limit: limits.maxPoints } });
  }
  const debtPaid = Math.min(points, card.pointsDebt);
  const balanceAfter = card.pointsBalance + points - debtPaid;
  if (balanceAfter > limits.maxBalance) {
    return failOn('OUT_OF_RANGE', 'points', 'points.balance_limit', {
      params: { limit: limits.maxBalance },
      meta: { points_balance: card.pointsBalance, requested_points: points, max_balance: limits.maxBalance },
    });
  }
  const items = itemsOf(input, lines, evaluation);
  const days = card.programme.pointsExpirationDays;
  const tier = stepTier(card, card.tierSettings.basis === 'points_earned' ? BigInt(points) * UNITS : input.amount, now, now);
  const written = await basket.writePurchase(tx, {
    partnerId,
    cardId: card.id,
    customerId: card.customerId,
    shopId: input.shopId,
    points,
    amount: formatAmount(input.amount),
    balanceAfter,
    debtAfter: card.pointsDebt - debtPaid,
    debtPaid,
    receiptNumber: input.receiptNumber,
    now,
    lotExpiresAt: days === null ? null : new Date(now.getTime() + days * DAY_MS),
    lines: input.lines.map((l, i) => ({
      position: l.position,
      lineId: l.lineId,
      productId: lines[i]!.product?.id ?? null,
      sku: l.sku,
      ean: l.ean,
      name: l.name,
      quantity: milliToText(l.quantityMilli),
      amount: formatAmount(l.amountUnits),
      points: items[i]!.points,
    })),
    sources: sourcesOf(lines, evaluation),
    campaigns: evaluation.campaigns.map((c) => ({ id: c.campaignId, points: c.points, day: c.day })),
    tier: tier.state,
  });
  if (!written) {
    // The receipt was used before: the limits taken on the fast path go back with the savepoint.
    if (savepoint) await tx.execute(sql`rollback to savepoint award_limits`);
    return receiptUsed(input.receiptNumber);
  }
  if (locked.size > 0) {
    const given = new Map(evaluation.campaigns.map((a) => [a.campaignId, a.points]));
    await basket.spreadLimits(
      tx,
      [...locked]
        .map((id) => byId.get(id)!)
        .filter((c) => c.isActive && isLimited(c))
        .map((c) => {
          const applied = given.has(c.id);
          return {
            id: c.id,
            uses: c.limitUses === null ? null : c.limitUses - c.usesCount - (applied ? 1 : 0),
            points: c.pointsBudget === null ? null : c.pointsBudget - c.pointsAwarded - (given.get(c.id) ?? 0),
          };
        }),
    );
  }
  const tierMoved = await settleTier(tx, card, tier, now);
  card.pointsBalance = balanceAfter;
  card.pointsDebt -= debtPaid;
  // Campaigns this award used up (read under their locks above): campaign.exhausted (DESIGN.md §14).
  const exhausted = evaluation.campaigns
    .filter((a) => locked.has(a.campaignId))
    .map((a) => ({ a, c: campaigns.find((x) => x.id === a.campaignId)! }))
    .filter(({ a, c }) => (c.limitUses !== null && c.usesCount + 1 >= c.limitUses) || (c.pointsBudget !== null && c.pointsAwarded + a.points >= c.pointsBudget))
    .map(({ a }) => a.campaignId);
  return ok({ id: written.id, points, balanceAfter, items, breakdown: breakdownOf(evaluation), exhausted, tierMoved });
}

function receiptUsed(receiptNumber: string | null) {
  return failOn('DUPLICATE_VALUE', 'receipt_number', 'points.receipt_used', { meta: { receipt_number: receiptNumber } });
}

export type PreviewView = Static<typeof Preview>;

export function previewView(card: LockedCard | null, e: BasketEvaluation): PreviewView {
  const points = e.evaluation.points;
  const balanceAfter = card === null ? null : card.pointsBalance + points - Math.min(points, card.pointsDebt);
  const tier = heldTier(card);
  return {
    points,
    breakdown: e.breakdown,
    balance_after: balanceAfter,
    tier: tier ? { id: tier.id, name: tier.name, color: tier.color } : null,
    campaigns_skipped: e.evaluation.skipped,
  };
}
