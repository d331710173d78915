// Platform statistics for administrators (docs/decisions.md "Admin statistics"): counts and
// sums over whole UTC days, from `from` through `to` inclusive.
import type { Static } from 'typebox';
import type { Db } from '../../infra/db/index.js';
import { addDays, dayStart, daysBetween, utcDay } from '../../shared/calendar.js';
import { fail, ok, type Result } from '../../shared/errors.js';
import { amountToJson, formatAmount, parseAmount } from '../../shared/money.js';
import type { Clock } from '../../shared/time.js';
import type { PartnerStats, Stats } from './admin-stats.schemas.js';
import { reportingRepository } from './reporting.repository.js';

/** The default range: the last 30 days, today included. */
export const DEFAULT_STATS_DAYS = 30;
/** The longest range: a leap year. */
export const MAX_STATS_DAYS = 366;

export type StatsView = Static<typeof Stats>;

/** A partner's own figures per UTC day (the console's Overview charts). */
export type PartnerDaysView = Static<typeof PartnerStats>;
export type PartnerDayView = PartnerDaysView['by_day'][number];

export class AdminStatsService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** The range asked for, defaults filled in, or the 422 it deserves. */
  private range(query: { from?: string; to?: string }): Result<{ from: string; to: string }> {
    const to = query.to ?? (query.from !== undefined ? maxDay(query.from, utcDay(this.clock.now())) : utcDay(this.clock.now()));
    const from = query.from ?? addDays(to, -(DEFAULT_STATS_DAYS - 1));
    if (from > to) return fail('VALIDATION', { fields: { from: [{ key: 'admin.stats_from_after_to' }] } });
    if (daysBetween(from, to) + 1 > MAX_STATS_DAYS) {
      return fail('VALIDATION', { fields: { to: [{ key: 'admin.stats_range_too_long', params: { limit: MAX_STATS_DAYS } }] } });
    }
    return ok({ from, to });
  }

  async partnerDays(partnerId: number, query: { from?: string; to?: string }): Promise<Result<PartnerDaysView>> {
    const range = this.range(query);
    if (!range.ok) return range;
    const { from, to } = range.value;
    const rows = await reportingRepository.partnerDays(this.db, partnerId, from, to);
    // Money is summed as decimal text: the total is exact, then shown as a number (≤ 4 decimals).
    let sms = 0n;
    const byDay = rows.map((r) => {
      sms += parseAmount(r.smsSpend) ?? 0n;
      return {
        day: r.day,
        transactions: r.transactions,
        points_awarded: r.pointsAwarded,
        points_deducted: r.pointsDeducted,
        coupons_redeemed: r.couponsRedeemed,
        new_cards: r.newCards,
        sms_spend: amountToJson(r.smsSpend),
      };
    });
    const sum = (pick: (d: PartnerDayView) => number) => byDay.reduce((a, d) => a + pick(d), 0);
    return ok({
      from,
      to,
      totals: {
        transactions: sum((d) => d.transactions),
        points_awarded: sum((d) => d.points_awarded),
        points_deducted: sum((d) => d.points_deducted),
        coupons_redeemed: sum((d) => d.coupons_redeemed),
        new_cards: sum((d) => d.new_cards),
        sms_spend: amountToJson(formatAmount(sms)),
      },
      by_day: byDay,
    });
  }

  async stats(query: { from?: string; to?: string; partnerId?: number }): Promise<Result<StatsView>> {
    const range = this.range(query);
    if (!range.ok) return range;
    const { from, to } = range.value;
    const row = await reportingRepository.platformStats(this.db, { from: dayStart(from), to: dayStart(addDays(to, 1)) }, query.partnerId);
    return ok({
      from,
      to,
      partner_id: query.partnerId ?? null,
      partners: row.partners,
      customers: row.customers,
      cards: row.cards,
      transactions: { count: row.transactions.count, by_type: row.transactions.byType },
      points: row.points,
      purchase_amount: Number(row.purchaseAmount),
      reversed_purchase_amount: Number(row.reversedPurchaseAmount),
      returned_purchase_amount: Number(row.returnedPurchaseAmount),
      sms: { sent: row.sms.sent, parts: row.sms.parts, revenue: Number(row.sms.revenue) },
    });
  }
}

/** Only `from` given: through today, or through `from` itself if it lies ahead. */
function maxDay(a: string, b: string): string {
  return a > b ? a : b;
}
