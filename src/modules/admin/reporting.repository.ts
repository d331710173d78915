// The one read-only reporting repository: SQL that reads across module tables (partners,
// customers, loyalty cards, the points ledger, SMS messages and the SMS account ledger) for
// the admin statistics, a partner's own figures per day and the commission figures. It never writes; each module still owns
// its tables and is the only writer of them. Amounts are computed in PostgreSQL numeric and
// come back as text, so no binary float ever touches money.
import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../infra/db/index.js';
import { coupons } from '../coupons/coupons.tables.js';
import { customers } from '../customers/customers.tables.js';
import { loyaltyCards } from '../loyalty-cards/loyalty-cards.tables.js';
import { partners } from '../partners/partners.tables.js';
import { smsAccountLedger, smsMessages } from '../sms/sms.tables.js';
import { POINTS_TRANSACTION_TYPES, pointsTransactions, type PointsTransactionType } from '../points/points.tables.js';

/** A half-open range of instants [from, to). */
export interface TimeRange {
  from: Date;
  to: Date;
}

export interface PlatformStatsRow {
  partners: { total: number; active: number; new: number };
  customers: { total: number; new: number };
  cards: { total: number; new: number };
  transactions: { count: number; byType: Record<PointsTransactionType, number> };
  points: { issued: number; redeemed: number; expired: number };
  /** Decimal text, EUR. */
  purchaseAmount: string;
  reversedPurchaseAmount: string;
  returnedPurchaseAmount: string;
  sms: { sent: number; parts: number; revenue: string };
}

export interface PartnerDayRow {
  day: string;
  transactions: number;
  pointsAwarded: number;
  pointsDeducted: number;
  couponsRedeemed: number;
  newCards: number;
  /** Decimal text, EUR. */
  smsSpend: string;
}

export interface CommissionFiguresRow {
  purchaseAmount: string;
  reversedAmount: string;
  returnedAmount: string;
  baseAmount: string;
  commissionAmount: string;
  purchasesCount: number;
  reversalsCount: number;
  returnsCount: number;
}

async function one<T>(db: Executor, query: SQL): Promise<T> {
  const res = (await db.execute(query)) as unknown as { rows: T[] };
  return res.rows[0]!;
}

const inRange = (column: SQL | unknown, r: TimeRange) =>
  sql`${column} >= ${r.from.toISOString()}::timestamptz and ${column} < ${r.to.toISOString()}::timestamptz`;

const num = (v: string | number | null | undefined) => Number(v ?? 0);

// Statistics are net of refunds (docs/decisions.md "Statistics net of refunds"): a reversal or
// a return (row t, undoing row o, joined on coalesce(t.reverses_id, t.returns_id)) counts on
// its own day against the figure of what it undoes, with the points it actually moved.
const EARNINGS = sql.raw(`('purchase', 'bonus', 'adjust', 'game')`);
const SPENDS = sql.raw(`('deduct', 'redeem')`);
const undoesPurchase = sql`(t.type in ('reversal', 'return') and o.type = 'purchase')`;
/** Points earned (positive purchase, bonus, adjust and game rows) less what reversals and returns took back from them. */
const netIssued = sql`coalesce(sum(t.points) filter (where t.type in ${EARNINGS} and t.points > 0), 0)
      + coalesce(sum(t.points) filter (where t.type in ('reversal', 'return') and o.type in ${EARNINGS} and o.points > 0), 0)`;
/** Points spent (deduct and redeem rows) less what reversals and returns gave back to them. */
const netSpent = sql`coalesce(-sum(t.points) filter (where t.type in ${SPENDS}), 0)
      - coalesce(sum(t.points) filter (where t.type in ('reversal', 'return') and o.type in ${SPENDS}), 0)`;

export const reportingRepository = {
  /** DESIGN.md-free definitions, documented in docs/decisions.md "Admin statistics". */
  async platformStats(db: Executor, range: TimeRange, partnerId: number | undefined): Promise<PlatformStatsRow> {
    const partnerIs = (column: unknown) => (partnerId === undefined ? sql`true` : sql`${column} = ${partnerId}`);

    const p = await one<{ total: number; active: number; new: number }>(
      db,
      sql`select count(*)::int as total,
                 count(*) filter (where ${partners.status} = 'active')::int as active,
                 count(*) filter (where ${inRange(partners.createdAt, range)})::int as new
          from ${partners} where ${partnerIs(partners.id)}`,
    );

    // A partner's customers are the people holding one of its cards; "new" is when the first
    // of those cards was issued. Platform-wide, customers are accounts.
    const c =
      partnerId === undefined
        ? await one<{ total: number; new: number }>(
            db,
            sql`select count(*)::int as total, count(*) filter (where ${inRange(customers.createdAt, range)})::int as new
                from ${customers}`,
          )
        : await one<{ total: number; new: number }>(
            db,
            sql`select count(*)::int as total, count(*) filter (where ${inRange(sql`first_at`, range)})::int as new
                from (select ${loyaltyCards.customerId}, min(${loyaltyCards.createdAt}) as first_at
                      from ${loyaltyCards} where ${loyaltyCards.partnerId} = ${partnerId}
                      group by ${loyaltyCards.customerId}) as holders`,
          );

    const cards = await one<{ total: number; new: number }>(
      db,
      sql`select count(*)::int as total, count(*) filter (where ${inRange(loyaltyCards.createdAt, range)})::int as new
          from ${loyaltyCards} where ${partnerIs(loyaltyCards.partnerId)}`,
    );

    const t = pointsTransactions;
    const byTypeColumns = sql.join(
      POINTS_TRANSACTION_TYPES.map((type) => sql`count(*) filter (where t.type = ${type})::int as ${sql.identifier(`n_${type}`)}`),
      sql`, `,
    );
    const tx = await one<Record<string, string | number | null>>(
      db,
      sql`select count(*)::int as count,
                 ${byTypeColumns},
                 (${netIssued})::text as issued,
                 (${netSpent})::text as redeemed,
                 coalesce(-sum(t.points) filter (where t.type = 'expire'), 0)::text as expired,
                 coalesce(sum(coalesce(t.amount, -o.amount)) filter (where t.type = 'purchase' or ${undoesPurchase}), 0)::text as purchase_amount,
                 coalesce(-sum(coalesce(t.amount, -o.amount)) filter (where t.type = 'reversal' and o.type = 'purchase'), 0)::text
                   as reversed_purchase_amount,
                 coalesce(-sum(t.amount) filter (where t.type = 'return' and o.type = 'purchase'), 0)::text as returned_purchase_amount
          from ${t} as t
          left join ${t} as o on o.id = coalesce(t.reverses_id, t.returns_id)
          where ${inRange(sql`t.created_at`, range)} and ${partnerIs(sql`t.partner_id`)}`,
    );

    // Sent = handed to the carrier in the range (partners' messages; the platform's own
    // sign-in codes are nobody's revenue). Revenue = charges minus refunds booked in the range.
    const sms = await one<{ sent: number; parts: string; revenue: string }>(
      db,
      sql`select count(*)::int as sent, coalesce(sum(${smsMessages.parts}), 0)::text as parts,
                 (select coalesce(-sum(${smsAccountLedger.amount}), 0)::text from ${smsAccountLedger}
                  where ${smsAccountLedger.kind} in ('charge', 'refund') and ${inRange(smsAccountLedger.createdAt, range)}
                    and ${partnerIs(smsAccountLedger.partnerId)}) as revenue
          from ${smsMessages}
          where ${smsMessages.partnerId} is not null and ${inRange(smsMessages.sentAt, range)} and ${partnerIs(smsMessages.partnerId)}`,
    );

    const byType = Object.fromEntries(POINTS_TRANSACTION_TYPES.map((type) => [type, num(tx[`n_${type}`])])) as Record<
      PointsTransactionType,
      number
    >;
    return {
      partners: { total: num(p.total), active: num(p.active), new: num(p.new) },
      customers: { total: num(c.total), new: num(c.new) },
      cards: { total: num(cards.total), new: num(cards.new) },
      transactions: { count: num(tx.count), byType },
      points: { issued: num(tx.issued), redeemed: num(tx.redeemed), expired: num(tx.expired) },
      purchaseAmount: String(tx.purchase_amount),
      reversedPurchaseAmount: String(tx.reversed_purchase_amount),
      returnedPurchaseAmount: String(tx.returned_purchase_amount),
      sms: { sent: num(sms.sent), parts: num(sms.parts), revenue: String(sms.revenue) },
    };
  },

  /**
   * One partner's figures per UTC day from `from` through `to` (days with nothing are zeros),
   * docs/decisions.md "Dashboard": transactions = purchases and deductions at tills; points
   * awarded = positive points of purchase, bonus, adjust and game rows; deducted = points
   * spent (deduct, redeem); coupons redeemed on that day; cards issued; SMS charges minus refunds.
   */
  async partnerDays(db: Executor, partnerId: number, from: string, to: string): Promise<PartnerDayRow[]> {
    const range: TimeRange = { from: new Date(`${from}T00:00:00.000Z`), to: new Date(new Date(`${to}T00:00:00.000Z`).getTime() + 86_400_000) };
    const dayOf = (column: unknown) => sql`(${column} at time zone 'UTC')::date`;
    const t = pointsTransactions;
    const res = (await db.execute(
      sql`with days as (
            select d::date as day from generate_series(${from}::date, ${to}::date, interval '1 day') as d
          ),
          tx as (
            select ${dayOf(sql`t.created_at`)} as day,
                   count(*) filter (where t.type in ('purchase', 'deduct'))::int as transactions,
                   (${netIssued})::bigint as awarded,
                   (${netSpent})::bigint as deducted
            from ${t} as t
            left join ${t} as o on o.id = coalesce(t.reverses_id, t.returns_id)
            where t.partner_id = ${partnerId} and ${inRange(sql`t.created_at`, range)} group by 1
          ),
          cp as (
            select ${dayOf(coupons.usedAt)} as day, count(*)::int as n
            from ${coupons} where ${coupons.partnerId} = ${partnerId} and ${inRange(coupons.usedAt, range)} group by 1
          ),
          lc as (
            select ${dayOf(loyaltyCards.createdAt)} as day, count(*)::int as n
            from ${loyaltyCards} where ${loyaltyCards.partnerId} = ${partnerId} and ${inRange(loyaltyCards.createdAt, range)} group by 1
          ),
          sm as (
            select ${dayOf(smsAccountLedger.createdAt)} as day, -sum(${smsAccountLedger.amount}) as spend
            from ${smsAccountLedger}
            where ${smsAccountLedger.partnerId} = ${partnerId} and ${smsAccountLedger.kind} in ('charge', 'refund') and ${inRange(smsAccountLedger.createdAt, range)}
            group by 1
          )
          select to_char(days.day, 'YYYY-MM-DD') as day,
                 coalesce(tx.transactions, 0) as transactions, coalesce(tx.awarded, 0)::text as awarded,
                 coalesce(tx.deducted, 0)::text as deducted, coalesce(cp.n, 0) as coupons, coalesce(lc.n, 0) as cards,
                 coalesce(sm.spend, 0)::text as sms
          from days
          left join tx on tx.day = days.day
          left join cp on cp.day = days.day
          left join lc on lc.day = days.day
          left join sm on sm.day = days.day
          order by days.day`,
    )) as unknown as { rows: Array<{ day: string; transactions: number; awarded: string; deducted: string; coupons: number; cards: number; sms: string }> };
    return res.rows.map((r) => ({
      day: r.day,
      transactions: num(r.transactions),
      pointsAwarded: num(r.awarded),
      pointsDeducted: num(r.deducted),
      couponsRedeemed: num(r.coupons),
      newCards: num(r.cards),
      smsSpend: String(r.sms),
    }));
  },

  /**
   * A partner's commission figures over [from, to) (docs/decisions.md "Commission"): purchases
   * created in the range, less the reversals of purchases and the returns of purchases' goods
   * created in the range (whenever the purchase was); each purchase at the rate in force on its
   * own UTC day, each reversal and return at its purchase's rate (the latest version with
   * valid_from ≤ that day, the later-added on a tie; none = 0 %). The sum is exact; one
   * rounding at the end, half away from zero, to 4 decimals.
   */
  async commissionFigures(db: Executor, partnerId: number, range: TimeRange): Promise<CommissionFiguresRow> {
    const row = await one<{
      purchase_amount: string;
      reversed_amount: string;
      returned_amount: string;
      base_amount: string;
      commission_amount: string;
      purchases_count: number;
      reversals_count: number;
      returns_count: number;
    }>(
      db,
      sql`with charged as (
            -- A reversal or a return is charged at the rate of the purchase it undoes (rated_at),
            -- not of the day it is made: otherwise purchases recorded at a low rate and refunded
            -- after a rise would push a month's commission below what was ever earned on them.
            -- It counts in the month it is made, so a locked month never changes.
            select t.type, coalesce(t.amount, -o.amount) as amount, coalesce(o.created_at, t.created_at) as rated_at
            from points_transactions as t
            left join points_transactions as o on o.id = coalesce(t.reverses_id, t.returns_id)
            where t.partner_id = ${partnerId} and ${inRange(sql`t.created_at`, range)}
              and (t.type = 'purchase' or (t.type in ('reversal', 'return') and o.type = 'purchase'))
          )
          select coalesce(sum(c.amount) filter (where c.type = 'purchase'), 0)::text as purchase_amount,
                 coalesce(-sum(c.amount) filter (where c.type = 'reversal'), 0)::text as reversed_amount,
                 coalesce(-sum(c.amount) filter (where c.type = 'return'), 0)::text as returned_amount,
                 coalesce(sum(c.amount), 0)::text as base_amount,
                 round(coalesce(sum(c.amount * coalesce(r.rate_percent, 0) * 0.01), 0), 4)::text as commission_amount,
                 count(*) filter (where c.type = 'purchase')::int as purchases_count,
                 count(*) filter (where c.type = 'reversal')::int as reversals_count,
                 count(*) filter (where c.type = 'return')::int as returns_count
          from charged as c
          left join lateral (
            select cr.rate_percent from commission_rates as cr
            where cr.partner_id = ${partnerId} and cr.valid_from <= (c.rated_at at time zone 'UTC')::date
            order by cr.valid_from desc, cr.id desc
            limit 1
          ) as r on true`,
    );
    return {
      purchaseAmount: row.purchase_amount,
      reversedAmount: row.reversed_amount,
      returnedAmount: row.returned_amount,
      baseAmount: row.base_amount,
      commissionAmount: row.commission_amount,
      purchasesCount: num(row.purchases_count),
      reversalsCount: num(row.reversals_count),
      returnsCount: num(row.returns_count),
    };
  },
};
