// Returns of goods (DESIGN.md §12 "Returns"; STYLE.md "The engine": returns are effects too).
// The purchase's stored per-line, per-source points are the only input, so a return never
// re-evaluates campaigns that may have changed since the sale. The arithmetic — what a return
// takes back of each source, line, budget and amount, cumulatively — is return-arithmetic.ts
// (pure); this file is its shell: it loads, checks, draws from the lots and writes. The
// order and size of the steps never change what comes back: returning 19 of 20 units one at a time
// takes what returning 19 at once would, returning everything takes back exactly what was
// earned, and each campaign gets back exactly its share of its budget. Points coming back
// to the card (a deduction's return) pay its debt first. The points come from the
// purchase's own lot first, then other lots in spending order (as `reverse` does); what the
// balance cannot cover becomes the card's points debt. Everything runs in the caller's
// transaction under the card's row lock: a refused return leaves nothing.
import type { Executor } from '../../infra/db/index.js';
import { fail, failOn, missing, ok, type FieldErrors, type Result } from '../../shared/errors.js';
import { formatAmount, parseAmount } from '../../shared/money.js';
import { addFieldError } from '../../shared/validation.js';
import { parseQuantity } from './basket-body.js';
import { deductionReturnAmount, exceeding, forgivenPoints, measureJson, ownLotDraw, qualifyingDelta, returnTake, type Returning } from './return-arithmetic.js';
import { giveBack, MAX_BALANCE, type PointsLedger, type TransactionView } from '../points/ledger.service.js';
import { pointsRepository as repo, type Draw, type LockedCard, type TransactionRow } from '../points/points.repository.js';
import { returnsRepository as returns, signedUnits } from './returns.repository.js';

export interface ReturnInput {
  items?: Array<{ line_id: string; quantity: number | string }>;
  amount?: number | string;
  points?: number;
  receiptNumber: string | null;
  reason: string | null;
}

const invalid = (errors: FieldErrors) => fail<never>('VALIDATION', { fields: errors });
/** numeric(14,3) text → thousandths. */
const milli = (text: string) => parseQuantity(text)!;

/**
 * A return of goods of transaction `id` of the partner (POST …/transactions/{id}/return):
 * on a purchase by items or amount, on a deduction by points.
 */
export async function returnGoods(ledger: PointsLedger, tx: Executor, partnerId: number, id: number, input: ReturnInput, now: Date): Promise<Result<TransactionView>> {
  const original = await repo.findTransaction(tx, { partnerId }, id);
  if (!original) return missing('resource.transaction');
  if (original.type !== 'purchase' && original.type !== 'deduct') {
    return failOn('INVALID_STATE', 'id', 'points.not_returnable', { params: { type: original.type }, meta: { type: original.type } });
  }
  const shape: FieldErrors = {};
  if (original.type === 'purchase') {
    if ((input.items === undefined) === (input.amount === undefined)) addFieldError(shape, 'items', 'points.return_purchase_body');
    if (input.points !== undefined) addFieldError(shape, 'points', 'points.return_purchase_body');
  } else {
    if (input.points === undefined) addFieldError(shape, 'points', 'points.return_deduction_body');
    if (input.items !== undefined) addFieldError(shape, 'items', 'points.return_deduction_body');
    if (input.amount !== undefined) addFieldError(shape, 'amount', 'points.return_deduction_body');
  }
  if (Object.keys(shape).length > 0) return invalid(shape);

  // Every return of the transaction takes its card's lock first: returns of one purchase are
  // serialised here, so the returned quantities read below are the ones written back.
  const card = (await repo.lockCard(tx, { partnerId, cardId: original.cardId }, null))!;
  if (await repo.isReversed(tx, original.id)) {
    return failOn('INVALID_STATE', 'id', 'points.return_of_reversed', { meta: { status: 'reversed' } });
  }
  await ledger.expireDue(tx, card, now);
  return original.type === 'purchase' ? returnPurchase(ledger, tx, card, original, input, now) : returnDeduction(ledger, tx, card, original, input.points!, input, now);
}

async function returnPurchase(
  ledger: PointsLedger,
  tx: Executor,
  card: LockedCard,
  purchase: TransactionRow,
  input: ReturnInput,
  now: Date,
): Promise<Result<TransactionView>> {
  const basis = await returns.basis(tx, purchase.id);
  const errors: FieldErrors = {};
  const returning: Returning[] = [];
  const settled = await returns.settled(tx, purchase.id);

  if (input.items !== undefined) {
    if (basis.lines.length === 0) return invalid({ items: [{ key: 'points.return_without_lines' }] });
    const byId = new Map(basis.lines.map((l) => [l.lineId, l]));
    const seen = new Set<string>();
    input.items.forEach((item, i) => {
      const line = byId.get(item.line_id);
      if (!line) addFieldError(errors, `items.${i}.line_id`, 'points.unknown_line', { line_id: item.line_id });
      else if (seen.has(item.line_id)) addFieldError(errors, `items.${i}.line_id`, 'points.line_id_duplicate', { line_id: item.line_id });
      seen.add(item.line_id);
      const quantity = parseQuantity(item.quantity);
      if (quantity === undefined || quantity <= 0n) addFieldError(errors, `items.${i}.quantity`, 'points.invalid_quantity');
      if (line && quantity !== undefined && quantity > 0n && !errors[`items.${i}.line_id`]) {
        returning.push({
          position: line.position,
          field: `items.${i}.quantity`,
          bought: milli(line.quantity),
          before: milli(line.returnedQuantity),
          now: quantity,
          amountUnits: signedUnits(line.amount),
        });
      }
    });
  } else {
    if (basis.lines.length > 0) return invalid({ amount: [{ key: 'points.return_by_items' }] });
    const units = parseAmount(input.amount!);
    if (units === undefined || units <= 0n) return invalid({ amount: [{ key: 'points.invalid_amount' }] });
    const bought = signedUnits(purchase.amount ?? '0');
    // The returned amount of a purchase without lines is Σ |amount| of its returns.
    returning.push({ position: 0, field: 'amount', bought, before: -settled.amountUnits, now: units, amountUnits: bought });
  }
  if (Object.keys(errors).length > 0) return invalid(errors);

  const over = exceeding(returning);
  if (over.length > 0) {
    const left = (r: Returning) => measureJson(r, r.bought - r.before);
    return fail('OUT_OF_RANGE', {
      message: 'points.return_exceeds',
      params: { left: left(over[0]!) },
      items: over.map((r) => ({
        field: r.field,
        code: 'OUT_OF_RANGE',
        key: 'points.return_exceeds' as const,
        params: { left: left(r) },
        meta: { bought: measureJson(r, r.bought), returned: measureJson(r, r.before), left: left(r) },
      })),
    });
  }

  // The sources of each returned line. A fast-path purchase has none: its base row is written now.
  let sources = basis.sources;
  if (basis.lines.length === 0 && !sources.some((s) => s.position === 0)) sources = [await returns.ensureBaseSource(tx, purchase.id, purchase.points)];
  const take = returnTake(returning, sources, purchase.id);

  // Points of the purchase's lot that expired were taken from the customer already: returns
  // do not take them again (as `reverse` does not).
  const lot = await repo.lotOf(tx, purchase.id);
  const expired = lot ? await repo.expiredFromLot(tx, lot.id) : 0;
  const forgiven = forgivenPoints(take.points, expired, sources.reduce((sum, x) => sum + x.returnedPoints, 0), settled.points);
  const owed = take.points - forgiven;

  // From the purchase's own lot first, then other lots in spending order; the rest is debt.
  const { draws, exhausted }: { draws: Draw[]; exhausted: number[] } = ownLotDraw(lot, owed);
  let drawn = draws.reduce((s, d) => s + d.points, 0);
  if (drawn < owed) {
    const more = await ledger.fifoDraws(tx, card.id, owed - drawn, lot?.id ?? null);
    draws.push(...more.draws);
    exhausted.push(...more.exhausted);
    drawn += more.total;
  }
  const debt = owed - drawn;
  const entry = ledger.entry(card, now, {
    type: 'return',
    points: -owed,
    shopId: purchase.shopId,
    amount: formatAmount(-take.amountUnits),
    receiptNumber: input.receiptNumber,
    reason: input.reason,
    reversesId: null,
    returnsId: purchase.id,
    draws,
    nextExpiry: { recompute: { exhausted, extra: null } },
    ...(debt > 0 ? { debt } : {}),
  });
  entry.balanceAfter = card.pointsBalance - drawn;
  // The purchase counts that much less toward the tier (DESIGN.md §13), if it still counts in the window.
  const view = await ledger.writeEntry(tx, card, entry, { deltaUnits: qualifyingDelta(card.tierSettings.basis, owed, take.amountUnits), at: purchase.createdAt });
  await returns.apply(tx, { transactionId: purchase.id, cardId: purchase.cardId, lines: take.lines, sources: take.sources, campaigns: take.campaigns });
  return ok(view!);
}

async function returnDeduction(
  ledger: PointsLedger,
  tx: Executor,
  card: LockedCard,
  deduction: TransactionRow,
  points: number,
  input: ReturnInput,
  now: Date,
): Promise<Result<TransactionView>> {
  const settled = await returns.settled(tx, deduction.id);
  const deducted = -deduction.points;
  const left = deducted - settled.points;
  if (points > left) {
    return failOn('OUT_OF_RANGE', 'points', 'points.return_exceeds', { params: { left }, meta: { bought: deducted, returned: settled.points, left } });
  }
  const lots = await returns.drawsLeft(tx, deduction.id, settled.points);
  // As with `reverse`: a lot whose earning was reversed is void (that reversal settled it).
  if (await repo.anyEarningReversed(tx, lots.map((l) => l.lotId))) {
    return failOn('INVALID_STATE', 'id', 'points.spend_of_reversed_earning', { meta: { status: 'earning_reversed' } });
  }
  // Points coming back pay the card's debt first (DESIGN.md §12); only the rest goes back into lots.
  const back = giveBack(card, lots, points, `deduction ${deduction.id}`);
  if (card.pointsBalance + points - back.paid > MAX_BALANCE) {
    return failOn('OUT_OF_RANGE', 'points', 'points.balance_limit', {
      params: { limit: MAX_BALANCE },
      meta: { points_balance: card.pointsBalance, requested_points: points, max_balance: MAX_BALANCE },
    });
  }
  // The EUR value comes back by the cumulative points returned, so all returns add up to the deduction's amount.
  const euros = deductionReturnAmount(deduction.amount === null ? null : signedUnits(deduction.amount), deducted, settled.points, points);
  const amount = euros === null ? null : formatAmount(euros);
  const entry = ledger.entry(card, now, {
    type: 'return',
    points,
    shopId: deduction.shopId,
    amount,
    receiptNumber: input.receiptNumber,
    reason: input.reason,
    reversesId: null,
    returnsId: deduction.id,
    draws: back.draws,
    nextExpiry: { recompute: { exhausted: [], extra: back.extra } },
    ...(back.paid > 0 ? { debt: -back.paid } : {}),
  });
  entry.balanceAfter -= back.paid;
  const view = await ledger.writeEntry(tx, card, entry);
  // Points given back to a lot that has meanwhile expired expire again, now.
  await ledger.expireDue(tx, card, now);
  return ok(view!);
}
