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

/** A date (a whole UTC day) or a date-time; a `to` date includes its day. */
function dateBound(value: string, field: string, end: boolean): Date {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const d = new Date(day ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(d.getTime())) throw fieldError(field, 'validation.format', { format: 'date-time' });
  return day && end ? new Date(d.getTime() + 86_400_000) : d;
}

export function filterOf(q: TransactionFilterInput): TransactionFilter {
  const f: TransactionFilter = {};
  if (q.card_id !== undefined) f.cardId = q.card_id;
  if (q.type !== undefined) f.type = q.type;
  if (q.user_id !== undefined) f.customerId = q.user_id;
  if (q.shop_id !== undefined) f.shopId = q.shop_id;
  if (q.from !== undefined) f.from = dateBound(q.from, 'from', false);
  if (q.to !== undefined) f.to = dateBound(q.to, 'to', true);
  if (f.from && f.to && f.from >= f.to) throw fieldError('to', 'points.range_order');
  return f;
}

