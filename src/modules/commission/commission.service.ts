// Commission rules (DESIGN.md §7; docs/decisions.md "Commission"):
//   - rates are versions, each in force from its valid_from day (UTC), never changed;
//   - a month's commission = Σ over its purchases, purchase reversals and returns of purchases'
//     goods of amount × the rate in force on the purchase's day, rounded once, half away from
//     zero, to 4 decimals; a reversal or return counts in the month it is made;
//   - lock freezes a month that has ended: its figures are computed and stored at lock time;
//     while locked, a rate version that would apply to any of its days, and a force-sync of
//     it, are 409 COMMISSION_LOCKED; unlock allows them again.
// Every change takes the partner's advisory lock and the period row FOR UPDATE in one
// transaction, so concurrent lock / sync / rate changes apply one after the other.
import type { Static } from 'typebox';
import type { Db } from '../../infra/db/index.js';
import { addMonths, dayStart, monthDays, monthOf, utcDay } from '../../shared/calendar.js';
import { fail, ok, type Result } from '../../shared/errors.js';
import type { PageWindow } from '../../shared/pagination.js';
import { iso, type Clock } from '../../shared/time.js';
import { reportingRepository, type CommissionFiguresRow } from '../admin/reporting.repository.js';
import { commissionRepository as repo, type PeriodRow, type RateRow } from './commission.repository.js';
import type { LockStatus, PeriodFigures, RateVersion, Rates } from './commission.schemas.js';

export type RateView = Static<typeof RateVersion>;

export type RatesView = Static<typeof Rates>;

export type PeriodView = Static<typeof PeriodFigures>;

export type LockStatusView = Static<typeof LockStatus>;

const money = (v: string | null) => (v === null ? 0 : Number(v));

const rateView = (row: RateRow): RateView => ({
  id: row.id,
  rate_percent: Number(row.ratePercent),
  valid_from: row.validFrom,
  created_at: iso(row.createdAt),
});

function periodView(row: PeriodRow): PeriodView {
  return {
    period: row.period,
    status: row.status,
    purchase_amount: money(row.purchaseAmount),
    reversed_amount: money(row.reversedAmount),
    // null: stored before returns were counted (migration 0026); that base has none in it.
    returned_amount: money(row.returnedAmount),
    base_amount: money(row.baseAmount),
    commission_amount: money(row.commissionAmount),
    purchases_count: row.purchasesCount ?? 0,
    reversals_count: row.reversalsCount ?? 0,
    returns_count: row.returnsCount ?? 0,
    stored: row.computedAt !== null,
    computed_at: iso(row.computedAt),
    locked_at: row.status === 'locked' ? iso(row.lockedAt) : null,
  };
}

const rangeOf = (period: string) => {
  const { first, next } = monthDays(period);
  return { from: dayStart(first), to: dayStart(next) };
};

function lockedError(field: string, period: string) {
  return fail<never>('COMMISSION_LOCKED', {
    items: [{ field, code: 'COMMISSION_LOCKED', key: 'commission.period_locked', params: { period }, meta: { period } }],
  });
}

export class CommissionService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** "YYYY-MM" of the current UTC month. */
  currentPeriod(): string {
    return monthOf(this.clock.now());
  }

  async rates(partnerId: number): Promise<RatesView> {
    const rows = await repo.rates(this.db, partnerId);
    const today = utcDay(this.clock.now());
    // rows are ordered by valid_from desc, id desc: the first that has started is in force.
    const current = rows.find((r) => r.validFrom <= today);
    return {
      current: current ? { rate_percent: Number(current.ratePercent), valid_from: current.validFrom } : null,
      history: rows.map(rateView),
    };
  }

  /**
   * Adds a rate version. It applies from valid_from up to the next later-starting version;
   * if a locked month overlaps those days, nothing is added: 409 COMMISSION_LOCKED.
   */
  async addRate(partnerId: number, adminId: number, input: { ratePercent: string; validFrom?: string }): Promise<Result<RatesView>> {
    const validFrom = input.validFrom ?? utcDay(this.clock.now());
    const blocked = await this.db.transaction(async (tx) => {
      await repo.lockPartner(tx, partnerId);
      const until = await repo.nextValidFromAfter(tx, partnerId, validFrom);
      const hit = (await repo.lockedPeriods(tx, partnerId)).find((p) => {
        const { first, next } = monthDays(p.period);
        return next > validFrom && (until === undefined || first < until);
      });
      if (hit) return hit.period;
      await repo.insertRate(tx, { partnerId, ratePercent: input.ratePercent, validFrom, adminId });
      return undefined;
    });
    if (blocked) return lockedError('valid_from', blocked);
    return ok(await this.rates(partnerId));
  }

  /** Freezes a month that has ended: computes and stores its figures, then locks it. */
  async lock(partnerId: number, adminId: number, period: string): Promise<Result<PeriodView>> {
    if (period >= this.currentPeriod()) return fail('VALIDATION', { fields: { period: [{ key: 'commission.period_not_ended' }] } });
    return this.db.transaction(async (tx) => {
      await repo.lockPartner(tx, partnerId);
      const row = await repo.lockPeriodRow(tx, partnerId, period);
      if (row.status === 'locked') {
        return fail<PeriodView>('INVALID_STATE', {
          message: 'commission.already_locked',
          params: { period },
          items: [
            {
              field: 'period',
              code: 'INVALID_STATE',
              key: 'commission.already_locked',
              params: { period },
              meta: { status: 'locked', locked_at: iso(row.lockedAt) },
            },
          ],
        });
      }
      const figures = await reportingRepository.commissionFigures(tx, partnerId, rangeOf(period));
      return ok(periodView(await repo.update(tx, partnerId, period, { figures, status: 'locked', lockedByAdminId: adminId })));
    });
  }

  /** Reopens a locked month; its stored figures stay until the next force-sync. */
  async unlock(partnerId: number, period: string): Promise<Result<PeriodView>> {
    return this.db.transaction(async (tx) => {
      await repo.lockPartner(tx, partnerId);
      const row = await repo.find(tx, partnerId, period);
      if (!row || row.status !== 'locked') {
        return fail<PeriodView>('INVALID_STATE', {
          message: 'commission.not_locked',
          params: { period },
          items: [{ field: 'period', code: 'INVALID_STATE', key: 'commission.not_locked', params: { period }, meta: { status: 'open' } }],
        });
      }
      await repo.lockPeriodRow(tx, partnerId, period);
      return ok(periodView(await repo.update(tx, partnerId, period, { status: 'open' })));
    });
  }

  async lockStatus(partnerId: number): Promise<LockStatusView> {
    const rows = await repo.lockedPeriods(this.db, partnerId);
    return {
      locked_periods: rows.map((r) => r.period),
      periods: rows.map((r) => ({
        period: r.period,
        locked_at: iso(r.lockedAt),
        base_amount: money(r.baseAmount),
        commission_amount: money(r.commissionAmount),
      })),
    };
  }

  /**
   * Recomputes a month's figures and stores them. Idempotent: the same ledger gives the same
   * figures. A locked month is 409 COMMISSION_LOCKED; a future month is 422.
   */
  async forceSync(partnerId: number, period: string): Promise<Result<PeriodView>> {
    if (period > this.currentPeriod()) return fail('VALIDATION', { fields: { period: [{ key: 'commission.period_in_future' }] } });
    return this.db.transaction(async (tx) => {
      await repo.lockPartner(tx, partnerId);
      const row = await repo.lockPeriodRow(tx, partnerId, period);
      if (row.status === 'locked') return lockedError('period', period);
      const figures = await reportingRepository.commissionFigures(tx, partnerId, rangeOf(period));
      return ok(periodView(await repo.update(tx, partnerId, period, { figures })));
    });
  }

  /** A month's figures: as stored (sync or lock), or computed now when never stored. */
  async period(partnerId: number, period: string): Promise<PeriodView> {
    const row = await repo.find(this.db, partnerId, period);
    if (row && row.computedAt !== null) return periodView(row);
    const figures: CommissionFiguresRow = await reportingRepository.commissionFigures(this.db, partnerId, rangeOf(period));
    return {
      period,
      status: row?.status ?? 'open',
      purchase_amount: money(figures.purchaseAmount),
      reversed_amount: money(figures.reversedAmount),
      returned_amount: money(figures.returnedAmount),
      base_amount: money(figures.baseAmount),
      commission_amount: money(figures.commissionAmount),
      purchases_count: figures.purchasesCount,
      reversals_count: figures.reversalsCount,
      returns_count: figures.returnsCount,
      stored: false,
      computed_at: null,
      locked_at: null,
    };
  }

  async periods(partnerId: number, page: PageWindow): Promise<{ items: PeriodView[]; total: number }> {
    const { rows, total } = await repo.list(this.db, partnerId, page.perPage, page.offset);
    return { items: rows.map(periodView), total };
  }

  /** The month before the current one: what `lock` closes by default. */
  previousPeriod(): string {
    return addMonths(this.currentPeriod(), -1);
  }
}
