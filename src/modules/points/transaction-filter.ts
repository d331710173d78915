// The list filters of ledger reads (shop, partner and customer lists, CSV exports), from
// query strings or bodies to a repository filter.
import { fieldError } from '../../shared/errors.js';
import type { TransactionFilter } from './points.repository.js';
import type { PointsTransactionType } from './points.tables.js';

export interface TransactionFilterInput {
  card_id?: number;
  shop_id?: number;
  user_id?: number;
  type?: PointsTransactionType;
  from?: string;
  to?: string;
}

const FIRST = Date.parse('0001-01-01T00:00:00Z');
const LAST = Date.parse('9999-12-31T00:00:00Z');

/**
 * A date (a whole UTC day) or a date-time; a `to` date includes its day. Undefined means
 * "no bound" (the last day there is). Years outside 1–9999 are refused: PostgreSQL has no
 * year 0, and ISO text past 9999 is not a timestamp it reads.
 */
function dateBound(value: string, field: string, end: boolean): Date | undefined {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const d = new Date(day ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(d.getTime())) throw fieldError(field, 'validation.format', { format: 'date-time' });
  if (d.getTime() < FIRST || d.getTime() >= LAST + 86_400_000) throw fieldError(field, 'points.date_out_of_range');
  if (day && end) return d.getTime() >= LAST ? undefined : new Date(d.getTime() + 86_400_000);
  return d;
}

export function filterOf(q: TransactionFilterInput): TransactionFilter {
  const f: TransactionFilter = {};
  if (q.card_id !== undefined) f.cardId = q.card_id;
  if (q.type !== undefined) f.type = q.type;
  if (q.user_id !== undefined) f.customerId = q.user_id;
  if (q.shop_id !== undefined) f.shopId = q.shop_id;
  const from = q.from === undefined ? undefined : dateBound(q.from, 'from', false);
  const to = q.to === undefined ? undefined : dateBound(q.to, 'to', true);
  if (from) f.from = from;
  if (to) f.to = to;
  if (f.from && f.to && f.from >= f.to) throw fieldError('to', 'points.range_order');
  return f;
}

