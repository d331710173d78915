// Returns of goods (DESIGN.md §12 "Returns"; STYLE.md "The engine": returns are effects too).
// The purchase's stored per-line, per-source points are the only input, so a return never
// re-evaluates campaigns that may have changed since the sale:
//
//   taken(source, line) after a return = ⌊source points on the line × total returned
//   quantity ÷ line quantity⌋ — what ALL its returns have taken back — and this return takes
//   that less what the earlier ones took; the return that brings the line's returned quantity
//   to its quantity takes exactly what is left of that source on that line
//
// (a purchase without lines: the same by its cumulative returned amount), so the order and
// size of the steps never change what comes back: returning 19 of 20 units one at a time
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
import { UNITS } from '../tiers/tier-rules.js';
import { parseQuantity } from './basket-body.js';
import { giveBack, MAX_BALANCE, type PointsLedger, type TransactionView } from '../points/ledger.service.js';
import { pointsRepository as repo, type Draw, type LockedCard, type TransactionRow } from '../points/points.repository.js';
import { returnsRepository as returns, signedUnits, type ReturnApply, type ReturnSource } from './returns.repository.js';

export interface ReturnInput {
  items?: Array<{ line_id: string; quantity: number | string }>;
  amount?: number | string;
  points?: number;
  receiptNumber: string | null;
  reason: string | null;
}


const invalid = (errors: FieldErrors) => fail<never>('VALIDATION', { fields: errors });
const milliText = (v: bigint) => `${v / 1000n}.${(v % 1000n).toString().padStart(3, '0')}`;
/** numeric(14,3) text → thousandths. */
const milli = (text: string) => parseQuantity(text)!;
const quantityJson = (v: bigint) => Number(milliText(v));

/** A line (or the whole amount of a purchase without lines) being returned, in exact units. */
interface Returning {
  position: number;
  field: string;
  /** What was bought, what was returned before, what comes back now — in one unit (thousandths of a unit, or ten-thousandths of a euro). */
  bought: bigint;
  before: bigint;
  now: bigint;
  /** The line's EUR amount in ten-thousandths (for a line; the amount itself without lines). */
  amountUnits: bigint;
}

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

  const over = returning.filter((r) => r.before + r.now > r.bought);
  if (over.length > 0) {
    const left = (r: Returning) => (r.position === 0 ? Number(formatAmount(r.bought - r.before)) : quantityJson(r.bought - r.before));
    return fail('OUT_OF_RANGE', {
      message: 'points.return_exceeds',
      params: { left: left(over[0]!) },
      items: over.map((r) => ({
        field: r.field,
        code: 'OUT_OF_RANGE',
        key: 'points.return_exceeds' as const,
        params: { left: left(r) },
        meta: { bought: r.position === 0 ? Number(formatAmount(r.bought)) : quantityJson(r.bought), returned: r.position === 0 ? Number(formatAmount(r.before)) : quantityJson(r.before), left: left(r) },
      })),
    });
  }

  // The sources of each returned line. A fast-path purchase has none: its base row is written now.
  let sources = basis.sources;
  if (basis.lines.length === 0 && !sources.some((s) => s.position === 0)) sources = [await returns.ensureBaseSource(tx, purchase.id, purchase.points)];
  const apply: ReturnApply = { transactionId: purchase.id, cardId: purchase.cardId, lines: [], sources: [], campaigns: [] };
  const budgets = new Map<number, number>();
  let taken = 0;
  let amountUnits = 0n;
  for (const r of returning) {
    const full = r.before + r.now === r.bought;
    for (const s of sources.filter((x: ReturnSource) => x.position === r.position)) {
      // Cumulative: what all returns of this source have taken back after this one, less what
      // the earlier ones took (never each return rounded on its own: 20 returns of 1/20 each
      // rounding down would take back nothing).
      const total = full ? s.points : Number((BigInt(s.points) * (r.before + r.now)) / r.bought);
      const take = total - s.returnedPoints;
      // Σ of floors ≤ floor of Σ: even returns rounded one by one (before the cumulative rule) took no more.
      if (take < 0) throw new Error(`ledger invariant broken on purchase ${purchase.id}: a source took back ${s.returnedPoints} of at most ${total} points`);
      if (take === 0) continue;
      apply.sources.push({ position: s.position, source: s.source, campaignId: s.campaignId, points: take });
      if (s.source === 'campaign') budgets.set(s.campaignId, (budgets.get(s.campaignId) ?? 0) + take);
      taken += take;
    }
    if (r.position !== 0) {
      apply.lines.push({ position: r.position, quantity: milliText(r.now) });
      // The EUR of a line comes back by its cumulative returned quantity, so its returns add up to its amount.
      amountUnits += (r.amountUnits * (r.before + r.now)) / r.bought - (r.amountUnits * r.before) / r.bought;
    } else {
      amountUnits += r.now;
    }
  }
  apply.campaigns = [...budgets].map(([campaignId, points]) => ({ id: campaignId, points }));

  // Points of the purchase's lot that expired were taken from the customer already: returns
  // do not take them again (as `reverse` does not). What earlier returns let go of that way is
  // their sources' returned points less what their entries took.
  const lot = await repo.lotOf(tx, purchase.id);
  let forgiven = 0;
  if (lot) {
    const expired = await repo.expiredFromLot(tx, lot.id);
    if (expired > 0) {
      const forgivenBefore = sources.reduce((sum, x) => sum + x.returnedPoints, 0) + settled.points;
      forgiven = Math.min(taken, Math.max(0, expired - forgivenBefore));
    }
  }
  const owed = taken - forgiven;

  // From the purchase's own lot first, then other lots in spending order; the rest is debt.
  const draws: Draw[] = [];
  const exhausted: number[] = [];
  if (lot && lot.remaining > 0 && owed > 0) {
    const take = Math.min(lot.remaining, owed);
    draws.push({ lotId: lot.id, points: take });
    if (take === lot.remaining) exhausted.push(lot.id);
  }
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
    amount: formatAmount(-amountUnits),
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
  const qualifying = card.tierSettings.basis === 'points_earned' ? BigInt(-owed) * UNITS : -amountUnits;
  const view = await ledger.writeEntry(tx, card, entry, { deltaUnits: qualifying, at: purchase.createdAt });
  await returns.apply(tx, apply);
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
  const value = deduction.amount === null ? null : signedUnits(deduction.amount);
  const amount =
    value === null || deducted === 0
      ? null
      : formatAmount(-((value * BigInt(settled.points + points)) / BigInt(deducted) - (value * BigInt(settled.points)) / BigInt(deducted)));
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
