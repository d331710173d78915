// `loyalty ledger verify`: recompute every balance from the ledger and report each
// difference. The invariants (see points.tables.ts):
//   card.points_balance = Σ its transactions' points = Σ its lots' remaining
//   lot.remaining       = lot.points − Σ draws(lot), within 0..points
//   tx.points           = (points of the lot it earned) − Σ draws(tx)
//   tx.balance_after    = running Σ points of the card's transactions up to it
import { sql } from 'drizzle-orm';
import type { Executor } from '../../infra/db/index.js';

export interface LedgerDifference {
  check: 'card_vs_transactions' | 'card_vs_lots' | 'lot_remaining' | 'transaction_vs_lots' | 'balance_after';
  card_id?: number;
  lot_id?: number;
  transaction_id?: number;
  expected: number;
  actual: number;
}

const CHECKS: Array<{ check: LedgerDifference['check']; query: ReturnType<typeof sql> }> = [
  {
    check: 'card_vs_transactions',
    query: sql`select c.id as card_id, coalesce(t.total, 0)::int as expected, c.points_balance as actual
      from loyalty_cards c left join (select card_id, sum(points) as total from points_transactions group by card_id) t on t.card_id = c.id
      where c.points_balance <> coalesce(t.total, 0)`,
  },
  {
    check: 'card_vs_lots',
    query: sql`select c.id as card_id, coalesce(l.total, 0)::int as expected, c.points_balance as actual
      from loyalty_cards c left join (select card_id, sum(remaining) as total from points_lots group by card_id) l on l.card_id = c.id
      where c.points_balance <> coalesce(l.total, 0)`,
  },
  {
    check: 'lot_remaining',
    query: sql`select l.card_id, l.id as lot_id, (l.points - coalesce(d.total, 0))::int as expected, l.remaining as actual
      from points_lots l left join (select lot_id, sum(points) as total from points_lot_draws group by lot_id) d on d.lot_id = l.id
      where l.remaining <> l.points - coalesce(d.total, 0) or l.remaining < 0 or l.remaining > l.points`,
  },
  {
    check: 'transaction_vs_lots',
    query: sql`select t.card_id, t.id as transaction_id, (coalesce(l.points, 0) - coalesce(d.total, 0))::int as expected, t.points as actual
      from points_transactions t
      left join points_lots l on l.transaction_id = t.id
      left join (select transaction_id, sum(points) as total from points_lot_draws group by transaction_id) d on d.transaction_id = t.id
      where t.points <> coalesce(l.points, 0) - coalesce(d.total, 0)`,
  },
  {
    check: 'balance_after',
    query: sql`select card_id, id as transaction_id, running::int as expected, balance_after as actual from (
        select card_id, id, balance_after, sum(points) over (partition by card_id order by id) as running from points_transactions
      ) x where running <> balance_after`,
  },
];

export async function verifyLedger(db: Executor, limitPerCheck = 100): Promise<{ cards: number; transactions: number; differences: LedgerDifference[] }> {
  const differences: LedgerDifference[] = [];
  for (const { check, query } of CHECKS) {
    const result = (await db.execute(sql`${query} limit ${limitPerCheck}`)) as unknown as { rows: Array<Record<string, unknown>> };
    for (const r of result.rows) {
      const d: LedgerDifference = { check, expected: Number(r.expected), actual: Number(r.actual) };
      if (r.card_id != null) d.card_id = Number(r.card_id);
      if (r.lot_id != null) d.lot_id = Number(r.lot_id);
      if (r.transaction_id != null) d.transaction_id = Number(r.transaction_id);
      differences.push(d);
    }
  }
  const counts = (await db.execute(
    sql`select (select count(*) from loyalty_cards)::int as cards, (select count(*) from points_transactions)::int as transactions`,
  )) as unknown as { rows: Array<{ cards: number; transactions: number }> };
  return { cards: Number(counts.rows[0]!.cards), transactions: Number(counts.rows[0]!.transactions), differences };
}
