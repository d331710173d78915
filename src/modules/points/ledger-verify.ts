// `loyalty ledger verify`: recompute every balance from the ledger and report each
// difference. The invariants (see points.tables.ts; debt and returns: DESIGN.md §12):
//   card.points_balance − card.points_debt = Σ its transactions' points
//   card.points_balance = Σ its lots' remaining;   card.points_debt = Σ its debt entries
//   lot.remaining       = lot.points − Σ draws(lot), within 0..points
//   tx.points + debt(tx) = (points of the lot it earned) − Σ draws(tx)
//   tx.balance_after    = running Σ (points + debt) of the card's transactions up to it
//   a purchase's returns take back at most its points: Σ returns' points ≥ −purchase points
//   a deduction's returns give back at most what it took: Σ returns' points ≤ −deduction points
//   a line's returned quantity ≤ its quantity; a source's returned points ≤ its points
//   what the returns of a line took back of each source = ⌊source points × returned quantity
//   ÷ quantity⌋, all of it once the line is returned in full (cumulative rounding, DESIGN.md
//   §12); of a purchase without lines the same by its cumulative returned amount
//   a card never holds points while it owes some: points coming in pay the debt first, so
//   neither the card now nor any entry of its history has balance > 0 and debt > 0
//   campaign.points_awarded = Σ (points − returned_points) of its sources rows, and uses_count
//   = the purchases with a row of it (both: the row's counter plus its shards')
//   a limited campaign's limit shards hold together never more than what its limit leaves
//   (limit − counters, at least 0), and nothing of a limit it does not have
//   card.tier_value = the qualifying value counted from the ledger in the programme's window
//   (DESIGN.md §13; cards whose value is due to be counted again are left to the sweep)
import { campaignTotalsSql } from '../campaigns/campaigns.tables.js';
import { sql } from 'drizzle-orm';
import type { Executor } from '../../infra/db/index.js';

export interface LedgerDifference {
  check:
    | 'card_vs_transactions'
    | 'card_vs_lots'
    | 'card_debt'
    | 'lot_remaining'
    | 'transaction_vs_lots'
    | 'balance_after'
    | 'returns_vs_purchase'
    | 'returns_vs_deduction'
    | 'line_returned'
    | 'source_returned'
    | 'line_return_rounding'
    | 'amount_return_rounding'
    | 'debt_with_balance'
    | 'campaign_points'
    | 'campaign_uses'
    | 'campaign_uses_left'
    | 'campaign_points_left'
    | 'tier_value';
  card_id?: number;
  lot_id?: number;
  transaction_id?: number;
  campaign_id?: number;
  /** The line of a purchase (line_return_rounding). */
  line_id?: string;
  expected: number;
  actual: number;
}

/**
 * The qualifying value of every card whose stored one is current at `now`, counted as
 * tiers.repository.ts `count` does: earnings in the window, not reversed, net of returns.
 */
const tierValueCheck = (now: string) => sql`
  select c.id as card_id, v.total as expected, c.tier_value as actual
  from loyalty_cards c join partner_cards pc on pc.id = c.partner_card_id
  cross join lateral (
    select coalesce(sum(case when pc.tier_basis = 'points_earned' then e.points + coalesce(r.points, 0)
                             when e.type = 'purchase' then coalesce(e.amount, 0) + coalesce(r.amount, 0) else 0 end), 0) as total
    from points_transactions e
    left join lateral (select sum(x.points) as points, sum(x.amount) as amount from points_transactions x where x.returns_id = e.id) r on true
    where e.card_id = c.id and e.type in ('purchase', 'bonus', 'game')
      and not exists (select 1 from points_transactions x where x.reverses_id = e.id)
      and case pc.tier_window
            when 'lifetime' then true
            when 'calendar_year' then e.created_at >= (date_trunc('year', ${now}::timestamptz at time zone pc.tier_time_zone) at time zone pc.tier_time_zone)
            else e.created_at > ${now}::timestamptz - interval '1 year' end
  ) v
  where (c.tier_value_until is null or c.tier_value_until > ${now}::timestamptz) and c.tier_value <> v.total`;

const campaignTotals = campaignTotalsSql('c');

const CHECKS: Array<{ check: LedgerDifference['check']; query: ReturnType<typeof sql> }> = [
  {
    check: 'card_vs_transactions',
    // Reported as the balance the ledger implies: Σ points + debt.
    query: sql`select c.id as card_id, (coalesce(t.total, 0) + c.points_debt)::int as expected, c.points_balance as actual
      from loyalty_cards c left join (select card_id, sum(points) as total from points_transactions group by card_id) t on t.card_id = c.id
      where c.points_balance - c.points_debt <> coalesce(t.total, 0)`,
  },
  {
    check: 'card_vs_lots',
    query: sql`select c.id as card_id, coalesce(l.total, 0)::int as expected, c.points_balance as actual
      from loyalty_cards c left join (select card_id, sum(remaining) as total from points_lots group by card_id) l on l.card_id = c.id
      where c.points_balance <> coalesce(l.total, 0)`,
  },
  {
    check: 'card_debt',
    query: sql`select c.id as card_id, coalesce(e.total, 0)::int as expected, c.points_debt as actual
      from loyalty_cards c left join (select card_id, sum(points) as total from points_debt_entries group by card_id) e on e.card_id = c.id
      where c.points_debt <> coalesce(e.total, 0) or c.points_debt < 0`,
  },
  {
    check: 'lot_remaining',
    query: sql`select l.card_id, l.id as lot_id, (l.points - coalesce(d.total, 0))::int as expected, l.remaining as actual
      from points_lots l left join (select lot_id, sum(points) as total from points_lot_draws group by lot_id) d on d.lot_id = l.id
      where l.remaining <> l.points - coalesce(d.total, 0) or l.remaining < 0 or l.remaining > l.points`,
  },
  {
    check: 'transaction_vs_lots',
    // What the balance moved by (lot earned − draws) = points + the debt the entry incurred (or minus what it paid off).
    query: sql`select t.card_id, t.id as transaction_id, (coalesce(l.points, 0) - coalesce(d.total, 0) - coalesce(e.points, 0))::int as expected, t.points as actual
      from points_transactions t
      left join points_lots l on l.transaction_id = t.id
      left join (select transaction_id, sum(points) as total from points_lot_draws group by transaction_id) d on d.transaction_id = t.id
      left join points_debt_entries e on e.transaction_id = t.id
      where t.points + coalesce(e.points, 0) <> coalesce(l.points, 0) - coalesce(d.total, 0)`,
  },
  {
    check: 'balance_after',
    query: sql`select card_id, id as transaction_id, running::int as expected, balance_after as actual from (
        select t.card_id, t.id, t.balance_after, sum(t.points + coalesce(e.points, 0)) over (partition by t.card_id order by t.id) as running
        from points_transactions t left join points_debt_entries e on e.transaction_id = t.id
      ) x where running <> balance_after`,
  },
  {
    check: 'returns_vs_purchase',
    query: sql`select p.card_id, p.id as transaction_id, (-p.points)::int as expected, r.total::int as actual
      from points_transactions p join (select returns_id, sum(points) as total from points_transactions where returns_id is not null group by returns_id) r on r.returns_id = p.id
      where p.type = 'purchase' and (r.total < -p.points or r.total > 0)`,
  },
  {
    check: 'returns_vs_deduction',
    query: sql`select p.card_id, p.id as transaction_id, (-p.points)::int as expected, r.total::int as actual
      from points_transactions p join (select returns_id, sum(points) as total from points_transactions where returns_id is not null group by returns_id) r on r.returns_id = p.id
      where p.type = 'deduct' and (r.total > -p.points or r.total < 0)`,
  },
  {
    check: 'line_returned',
    // Reported in thousandths of a unit.
    query: sql`select t.card_id, l.transaction_id, (l.quantity * 1000)::int as expected, (l.returned_quantity * 1000)::int as actual
      from points_transaction_lines l join points_transactions t on t.id = l.transaction_id
      where l.returned_quantity > l.quantity or l.returned_quantity < 0`,
  },
  {
    check: 'source_returned',
    query: sql`select t.card_id, s.transaction_id, s.points as expected, s.returned_points as actual
      from points_transaction_sources s join points_transactions t on t.id = s.transaction_id
      where s.returned_points > s.points or s.returned_points < 0`,
  },
  {
    // Per line and source: returns take back cumulatively, ⌊points × returned ÷ quantity⌋ in
    // all (returns.ts) — never each return rounded down on its own, which leaks the fractions.
    check: 'line_return_rounding',
    query: sql`select t.card_id, s.transaction_id, l.line_id, nullif(s.campaign_id, 0) as campaign_id, x.expected::int as expected, s.returned_points as actual
      from points_transaction_sources s
      join points_transaction_lines l on l.transaction_id = s.transaction_id and l.position = s.position
      join points_transactions t on t.id = s.transaction_id
      cross join lateral (select case when l.returned_quantity >= l.quantity then s.points
                                      else div(s.points * l.returned_quantity, l.quantity) end as expected) x
      where s.returned_points <> x.expected`,
  },
  {
    // The same on a purchase without lines (its sources at position 0), by Σ |amount| of its returns.
    check: 'amount_return_rounding',
    query: sql`select t.card_id, s.transaction_id, nullif(s.campaign_id, 0) as campaign_id, x.expected::int as expected, s.returned_points as actual
      from points_transaction_sources s
      join points_transactions t on t.id = s.transaction_id
      left join (select returns_id, -sum(amount) as returned from points_transactions where returns_id is not null group by returns_id) r on r.returns_id = t.id
      cross join lateral (select case when coalesce(r.returned, 0) <= 0 then 0 when r.returned >= t.amount then s.points
                                      else div(s.points * r.returned, t.amount) end as expected) x
      where s.position = 0 and t.type = 'purchase' and s.returned_points <> x.expected`,
  },
  {
    // Points coming back pay the debt first (DESIGN.md §12): a card owing points holds none,
    // now or after any entry of its history. Reported as the points that should have paid it.
    check: 'debt_with_balance',
    query: sql`select id as card_id, null::int as transaction_id, 0 as expected, least(points_balance, points_debt) as actual
      from loyalty_cards where points_balance > 0 and points_debt > 0
      union all
      select card_id, id as transaction_id, 0 as expected, least(balance_after, debt_after)::int as actual from (
        select t.card_id, t.id, t.balance_after, sum(coalesce(e.points, 0)) over (partition by t.card_id order by t.id) as debt_after
        from points_transactions t left join points_debt_entries e on e.transaction_id = t.id
      ) x where balance_after > 0 and debt_after > 0`,
  },
  {
    // A campaign's counters are its row's plus its shards' (campaigns.tables.ts).
    check: 'campaign_points',
    query: sql`select c.id as campaign_id, coalesce(s.total, 0)::bigint as expected, ${campaignTotals.points} as actual
      from campaigns c left join (
        select campaign_id, sum(points - returned_points) as total from points_transaction_sources where source = 'campaign' group by campaign_id
      ) s on s.campaign_id = c.id
      where ${campaignTotals.points} <> coalesce(s.total, 0)`,
  },
  {
    check: 'campaign_uses',
    query: sql`select c.id as campaign_id, coalesce(s.uses, 0)::bigint as expected, ${campaignTotals.uses} as actual
      from campaigns c left join (
        select campaign_id, count(distinct transaction_id) as uses from points_transaction_sources where source = 'campaign' group by campaign_id
      ) s on s.campaign_id = c.id
      where ${campaignTotals.uses} <> coalesce(s.uses, 0)`,
  },
  {
    // Limit shards (campaigns.tables.ts): expected is the most they may hold.
    check: 'campaign_uses_left',
    query: sql`select c.id as campaign_id, greatest(coalesce(c.limit_uses, 0) - ${campaignTotals.uses}, 0)::bigint as expected, k.total::bigint as actual
      from campaigns c join (select campaign_id, sum(uses_left) as total, count(uses_left) as set from campaign_limit_shards group by campaign_id) k on k.campaign_id = c.id
      where k.total > greatest(coalesce(c.limit_uses, 0) - ${campaignTotals.uses}, 0) or (c.limit_uses is null and k.set > 0)`,
  },
  {
    check: 'campaign_points_left',
    query: sql`select c.id as campaign_id, greatest(coalesce(c.points_budget, 0) - ${campaignTotals.points}, 0)::bigint as expected, k.total::bigint as actual
      from campaigns c join (select campaign_id, sum(points_left) as total, count(points_left) as set from campaign_limit_shards group by campaign_id) k on k.campaign_id = c.id
      where k.total > greatest(coalesce(c.points_budget, 0) - ${campaignTotals.points}, 0) or (c.points_budget is null and k.set > 0)`,
  },
];

export async function verifyLedger(db: Executor, limitPerCheck = 100, now = new Date()): Promise<{ cards: number; transactions: number; differences: LedgerDifference[] }> {
  const differences: LedgerDifference[] = [];
  for (const { check, query } of [...CHECKS, { check: 'tier_value' as const, query: tierValueCheck(now.toISOString()) }]) {
    const result = (await db.execute(sql`${query} limit ${limitPerCheck}`)) as unknown as { rows: Array<Record<string, unknown>> };
    for (const r of result.rows) {
      const d: LedgerDifference = { check, expected: Number(r.expected), actual: Number(r.actual) };
      if (r.card_id != null) d.card_id = Number(r.card_id);
      if (r.lot_id != null) d.lot_id = Number(r.lot_id);
      if (r.transaction_id != null) d.transaction_id = Number(r.transaction_id);
      if (r.campaign_id != null) d.campaign_id = Number(r.campaign_id);
      if (r.line_id != null) d.line_id = String(r.line_id);
      differences.push(d);
    }
  }
  const counts = (await db.execute(
    sql`select (select count(*) from loyalty_cards)::int as cards, (select count(*) from points_transactions)::int as transactions`,
  )) as unknown as { rows: Array<{ cards: number; transactions: number }> };
  return { cards: Number(counts.rows[0]!.cards), transactions: Number(counts.rows[0]!.transactions), differences };
}
