// SQL of returns (DESIGN.md §12): what a purchase earned per line and per source, what its
// returns took back already, and the return's own bookkeeping — lines' returned quantities,
// sources' returned points and the campaigns' budgets — in ONE statement. Called under the
// card's row lock (every return of a transaction takes the same card's lock first), so what
// is read here is what is written back.
import { sql } from 'drizzle-orm';
import { intArray, type Executor } from '../../infra/db/index.js';
import { CAMPAIGN_COUNTER_SHARDS } from '../campaigns/campaigns.tables.js';
import type { PointsSource } from '../points/points.tables.js';

interface Rows<T> {
  rows: T[];
}
const rowsOf = <T>(result: unknown): T[] => (result as Rows<T>).rows;
const textArray = (values: readonly string[]) => `{${values.map((v) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;

/** Signed numeric text (at most 4 decimals) → ten-thousandths. */
export function signedUnits(text: string): bigint {
  const negative = text.startsWith('-');
  const [whole, frac = ''] = (negative ? text.slice(1) : text).split('.');
  const units = BigInt(whole || '0') * 10_000n + BigInt(frac.padEnd(4, '0').slice(0, 4));
  return negative ? -units : units;
}

export interface ReturnLine {
  position: number;
  lineId: string;
  /** numeric(14,3) as text. */
  quantity: string;
  /** numeric(14,4) as text. */
  amount: string;
  returnedQuantity: string;
}

export interface ReturnSource {
  position: number;
  source: PointsSource;
  campaignId: number;
  points: number;
  returnedPoints: number;
}

export interface ReturnApply {
  transactionId: number;
  /** The purchase's card: its counter shard takes the campaigns' points back. */
  cardId: number;
  /** Quantity (numeric text) to add to each line's returned_quantity. */
  lines: Array<{ position: number; quantity: string }>;
  /** Points to add to each source's returned_points. */
  sources: Array<{ position: number; source: PointsSource; campaignId: number; points: number }>;
  /** Points given back to each campaign's budget. */
  campaigns: Array<{ id: number; points: number }>;
}

export const returnsRepository = {
  /** What the returns of a purchase or deduction settled so far: Σ points (signed), Σ amount (signed, ten-thousandths), how many. */
  async settled(db: Executor, transactionId: number): Promise<{ points: number; amountUnits: bigint; count: number }> {
    const result = await db.execute(sql`
      select coalesce(sum(points), 0)::int as points, coalesce(sum(amount), 0)::text as amount, count(*)::int as n
      from points_transactions where returns_id = ${transactionId}`);
    const row = rowsOf<{ points: number; amount: string; n: number }>(result)[0]!;
    return { points: Number(row.points), amountUnits: signedUnits(row.amount), count: Number(row.n) };
  },

  /**
   * The lots a spend (a deduction, a negative adjustment) drew from with what is not given
   * back yet, in the order points come back to them: never-expiring first, then latest
   * expiry, newest lot first — so the customer keeps what comes back as long as possible.
   * What its returns gave back (`settled`, Σ their points) is taken off the front of that
   * order, whether it went back into those lots or paid the card's debt (returns.ts
   * `giveBack`): the order is fixed, so the cumulative points say exactly which lots are
   * settled.
   */
  async drawsLeft(db: Executor, transactionId: number, settled: number): Promise<Array<{ lotId: number; points: number; expiresAt: Date | null }>> {
    const result = await db.execute(sql`
      select d.lot_id, d.points, (extract(epoch from l.expires_at) * 1000)::float8 as expires_ms
      from points_lot_draws d join points_lots l on l.id = d.lot_id
      where d.transaction_id = ${transactionId} and d.points > 0
      order by l.expires_at desc nulls first, l.id desc`);
    let skip = settled;
    const out: Array<{ lotId: number; points: number; expiresAt: Date | null }> = [];
    for (const r of rowsOf<{ lot_id: number; points: number; expires_ms: number | null }>(result)) {
      const left = Number(r.points) - Math.min(skip, Number(r.points));
      skip -= Number(r.points) - left;
      if (left > 0) out.push({ lotId: Number(r.lot_id), points: left, expiresAt: r.expires_ms === null ? null : new Date(Number(r.expires_ms)) });
    }
    return out;
  },

  /** A purchase's lines and per-line, per-source points with what was returned of each. */
  async basis(db: Executor, transactionId: number): Promise<{ lines: ReturnLine[]; sources: ReturnSource[] }> {
    const result = await db.execute(sql`
      select
        (select coalesce(json_agg(json_build_object('position', l.position, 'lineId', l.line_id, 'quantity', l.quantity::text, 'amount', l.amount::text,
                  'returnedQuantity', l.returned_quantity::text) order by l.position), '[]'::json)
           from points_transaction_lines l where l.transaction_id = ${transactionId}) as lines,
        (select coalesce(json_agg(json_build_object('position', s.position, 'source', s.source, 'campaignId', s.campaign_id, 'points', s.points,
                  'returnedPoints', s.returned_points) order by s.position, s.ordinal), '[]'::json)
           from points_transaction_sources s where s.transaction_id = ${transactionId}) as sources`);
    const row = rowsOf<{ lines: ReturnLine[]; sources: ReturnSource[] }>(result)[0];
    return { lines: row?.lines ?? [], sources: row?.sources ?? [] };
  },

  /**
   * A purchase awarded by the one-statement fast path has no sources rows: its only source is
   * the base rule on the whole amount. Its row (position 0) is written on its first return, so
   * that every return reads and writes returned points the same way.
   */
  async ensureBaseSource(db: Executor, transactionId: number, points: number): Promise<ReturnSource> {
    await db.execute(sql`
      insert into points_transaction_sources (transaction_id, position, source, campaign_id, ordinal, points)
      values (${transactionId}, 0, 'base', 0, 0, ${points}) on conflict do nothing`);
    return { position: 0, source: 'base', campaignId: 0, points, returnedPoints: 0 };
  },

  /**
   * The return's bookkeeping in one statement: lines, sources, and the campaigns' points back
   * through the card's counter shard (no campaign row is locked by a return).
   */
  async apply(db: Executor, a: ReturnApply): Promise<void> {
    const L = a.lines;
    const S = a.sources;
    const C = [...a.campaigns].sort((x, y) => x.id - y.id);
    await db.execute(sql`
      with lines as (
        update points_transaction_lines set returned_quantity = points_transaction_lines.returned_quantity + u.q
        from unnest(${intArray(L.map((l) => l.position))}::int[], ${textArray(L.map((l) => l.quantity))}::numeric[]) as u(pos, q)
        where points_transaction_lines.transaction_id = ${a.transactionId} and points_transaction_lines.position = u.pos
      ), sources as (
        update points_transaction_sources set returned_points = points_transaction_sources.returned_points + u.n
        from unnest(${intArray(S.map((s) => s.position))}::int[], ${textArray(S.map((s) => s.source))}::text[],
                    ${intArray(S.map((s) => s.campaignId))}::int[], ${intArray(S.map((s) => s.points))}::int[]) as u(pos, source, cid, n)
        where points_transaction_sources.transaction_id = ${a.transactionId} and points_transaction_sources.position = u.pos
          and points_transaction_sources.source = u.source and points_transaction_sources.campaign_id = u.cid
      ), shards as (
        -- Budget given back through the card's counter shard (campaigns.tables.ts): the
        -- campaign's total is its row plus its shards, and no return waits on a hot row.
        insert into campaign_counters (campaign_id, shard, uses, points)
        select u.id, ${a.cardId % CAMPAIGN_COUNTER_SHARDS}, 0, -u.n
        from unnest(${intArray(C.map((c) => c.id))}::int[], ${intArray(C.map((c) => c.points))}::int[]) as u(id, n)
        order by u.id
        on conflict (campaign_id, shard) do update set points = campaign_counters.points + excluded.points
      )
      select 1`);
  },
};
