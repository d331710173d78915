// A basket's lines as the till sends them (DESIGN.md §12) → exact units for the engine.
// Everything a client can get wrong is a 422 on the exact field, all of them at once.
import type { Static } from 'typebox';
import { AppError, type FieldErrors } from '../../shared/errors.js';
import { parseAmount } from '../../shared/money.js';
import { addFieldError } from '../../shared/validation.js';
import type { ParsedLine } from './basket-award.js';
import type { BasketItems } from '../points/points.schemas.js';

/** The largest EUR amount of one award (as the amount-only body has it), in ten-thousandths. */
const MAX_AMOUNT_UNITS = 1_000_000_000n * 10_000n;

/** Units with at most 3 decimals → thousandths; undefined when it is not such a number. */
export function parseQuantity(value: number | string): bigint | undefined {
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : value;
  const m = /^(\d{1,10})(?:\.(\d{1,3}))?$/.exec(text);
  if (!m) return undefined;
  return BigInt(m[1]!) * 1000n + BigInt((m[2] ?? '').padEnd(3, '0'));
}

/**
 * The award's amount and lines. With `items`, `amount` may be left out (it is their sum);
 * sent with them it must equal their sum. Without them `amount` is required.
 */
export function parseBasket(body: { amount?: number | string; items?: Static<typeof BasketItems> }): { amount: bigint; lines: ParsedLine[] } {
  const errors: FieldErrors = {};
  const lines: ParsedLine[] = [];
  const seen = new Set<string>();
  let sum = 0n;
  (body.items ?? []).forEach((item, i) => {
    const lineId = item.line_id ?? String(i + 1);
    if (seen.has(lineId)) addFieldError(errors, `items.${i}.line_id`, 'points.line_id_duplicate', { line_id: lineId });
    seen.add(lineId);
    const quantity = parseQuantity(item.quantity);
    if (quantity === undefined || quantity <= 0n) addFieldError(errors, `items.${i}.quantity`, 'points.invalid_quantity');
    const amount = parseAmount(item.amount);
    if (amount === undefined || amount < 0n || amount > MAX_AMOUNT_UNITS) addFieldError(errors, `items.${i}.amount`, 'points.invalid_line_amount');
    sum += amount ?? 0n;
    lines.push({
      position: i + 1,
      lineId,
      productId: item.product_id ?? null,
      sku: item.sku ?? null,
      ean: item.ean ?? null,
      name: item.name ?? null,
      quantityMilli: quantity ?? 1n,
      amountUnits: amount ?? 0n,
    });
  });
  let amount: bigint | undefined;
  if (body.amount !== undefined) {
    amount = parseAmount(body.amount);
    if (amount === undefined || amount <= 0n || amount > MAX_AMOUNT_UNITS) addFieldError(errors, 'amount', 'points.invalid_amount');
    else if (lines.length > 0 && amount !== sum) addFieldError(errors, 'amount', 'points.amount_mismatch', { sum: formatSum(sum) });
  } else if (lines.length === 0) {
    addFieldError(errors, 'amount', 'points.amount_required');
  } else {
    amount = sum;
    if (sum <= 0n || sum > MAX_AMOUNT_UNITS) addFieldError(errors, 'amount', 'points.invalid_amount');
  }
  if (Object.keys(errors).length > 0) throw new AppError('VALIDATION', { fields: errors });
  return { amount: amount!, lines };
}

const formatSum = (units: bigint) => (Number(units) / 10_000).toString();
