// SQL of commission rates and periods; every function takes the partner.
import { and, asc, count, desc, eq, gt, sql } from 'drizzle-orm';
import type { Executor, Tx } from '../../infra/db/index.js';
import type { CommissionFiguresRow } from '../admin/reporting.repository.js';
import { commissionPeriods, commissionRates } from './commission.tables.js';

export type RateRow = typeof commissionRates.$inferSelect;
export type PeriodRow = typeof commissionPeriods.$inferSelect;

/** Class of the per-partner advisory lock every commission change takes (any constant works). */
const COMMISSION_LOCK_CLASS = 7_334_202;

export const commissionRepository = {
  /**
   * Serialises commission changes of one partner (rate versions, lock, unlock, sync) across
   * nodes until the transaction ends: a rate added while a month is being locked would
   * otherwise slip into a month whose figures were just frozen without it.
   */
  async lockPartner(tx: Tx, partnerId: number): Promise<void> {
    await tx.execute(sql`select pg_advisory_xact_lock(${COMMISSION_LOCK_CLASS}::int, ${partnerId}::int)`);
  },

  async insertRate(tx: Executor, values: { partnerId: number; ratePercent: string; validFrom: string; adminId: number }): Promise<RateRow> {
    const [row] = await tx
      .insert(commissionRates)
      .values({ partnerId: values.partnerId, ratePercent: values.ratePercent, validFrom: values.validFrom, createdByAdminId: values.adminId })
      .returning();
    return row!;
  },

  /** Every version, the latest-starting first (ties: the later-added first). */
  rates(db: Executor, partnerId: number): Promise<RateRow[]> {
    return db
      .select()
      .from(commissionRates)
      .where(eq(commissionRates.partnerId, partnerId))
      .orderBy(desc(commissionRates.validFrom), desc(commissionRates.id));
  },

  /** The earliest valid_from strictly after `day`: where a version starting on `day` stops applying. */
  async nextValidFromAfter(db: Executor, partnerId: number, day: string): Promise<string | undefined> {
    const [row] = await db
      .select({ validFrom: commissionRates.validFrom })
      .from(commissionRates)
      .where(and(eq(commissionRates.partnerId, partnerId), gt(commissionRates.validFrom, day)))
      .orderBy(asc(commissionRates.validFrom))
      .limit(1);
    return row?.validFrom;
  },

  lockedPeriods(db: Executor, partnerId: number): Promise<PeriodRow[]> {
    return db
      .select()
      .from(commissionPeriods)
      .where(and(eq(commissionPeriods.partnerId, partnerId), eq(commissionPeriods.status, 'locked')))
      .orderBy(asc(commissionPeriods.period));
  },

  async find(db: Executor, partnerId: number, period: string): Promise<PeriodRow | undefined> {
    const [row] = await db
      .select()
      .from(commissionPeriods)
      .where(and(eq(commissionPeriods.partnerId, partnerId), eq(commissionPeriods.period, period)));
    return row;
  },

  /** The period's row, created if missing, locked FOR UPDATE until the transaction ends. */
  async lockPeriodRow(tx: Tx, partnerId: number, period: string): Promise<PeriodRow> {
    await tx.insert(commissionPeriods).values({ partnerId, period }).onConflictDoNothing();
    const [row] = await tx
      .select()
      .from(commissionPeriods)
      .where(and(eq(commissionPeriods.partnerId, partnerId), eq(commissionPeriods.period, period)))
      .for('update');
    return row!;
  },

  async update(
    tx: Executor,
    partnerId: number,
    period: string,
    values: { figures?: CommissionFiguresRow; status?: 'open' | 'locked'; lockedByAdminId?: number | null; unlocked?: boolean },
  ): Promise<PeriodRow> {
    const f = values.figures;
    const [row] = await tx
      .update(commissionPeriods)
      .set({
        updatedAt: sql`now()`,
        ...(f
          ? {
              purchaseAmount: f.purchaseAmount,
              reversedAmount: f.reversedAmount,
              returnedAmount: f.returnedAmount,
              baseAmount: f.baseAmount,
              commissionAmount: f.commissionAmount,
              purchasesCount: f.purchasesCount,
              reversalsCount: f.reversalsCount,
              returnsCount: f.returnsCount,
              computedAt: sql`now()`,
            }
          : {}),
        ...(values.status === 'locked' ? { status: 'locked' as const, lockedAt: sql`now()`, lockedByAdminId: values.lockedByAdminId ?? null } : {}),
        ...(values.status === 'open' ? { status: 'open' as const, unlockedAt: sql`now()` } : {}),
      })
      .where(and(eq(commissionPeriods.partnerId, partnerId), eq(commissionPeriods.period, period)))
      .returning();
    return row!;
  },

  async list(db: Executor, partnerId: number, limit: number, offset: number): Promise<{ rows: PeriodRow[]; total: number }> {
    const rows = await db
      .select()
      .from(commissionPeriods)
      .where(eq(commissionPeriods.partnerId, partnerId))
      .orderBy(desc(commissionPeriods.period))
      .limit(limit)
      .offset(offset);
    const [total] = await db.select({ n: count() }).from(commissionPeriods).where(eq(commissionPeriods.partnerId, partnerId));
    return { rows, total: total?.n ?? 0 };
  },
};
