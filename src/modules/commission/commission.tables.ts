// Commission (DESIGN.md §7): the platform's share of the purchase amounts a partner records.
// Rates are an append-only list of versions, each in force from its `valid_from` day; a
// month's figures are stored per (partner, period) and frozen while the period is locked.
import { sql } from 'drizzle-orm';
import { check, date, index, integer, numeric, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { admins } from '../admin/admin.tables.js';
import { partners } from '../partners/partners.tables.js';

const tz = (name: string) => timestamp(name, { withTimezone: true });

/**
 * Rate versions, never updated or deleted. The rate in force on day D is the version with
 * the latest valid_from ≤ D; of two versions with the same valid_from the later-added wins.
 */
export const commissionRates = pgTable(
  'commission_rates',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    /** Percent of the purchase amount, 0..100 with at most 2 decimals. */
    ratePercent: numeric('rate_percent', { precision: 5, scale: 2 }).notNull(),
    validFrom: date('valid_from', { mode: 'string' }).notNull(),
    createdByAdminId: integer('created_by_admin_id').references(() => admins.id, { onDelete: 'set null' }),
    createdAt: tz('created_at').notNull().defaultNow(),
  },
  (t) => [
    check('commission_rates_percent_range', sql`${t.ratePercent} >= 0 and ${t.ratePercent} <= 100`),
    index('commission_rates_partner_idx').on(t.partnerId, t.validFrom, t.id),
  ],
);

/**
 * One row per partner and month ("YYYY-MM") once its figures were computed (force-sync) or
 * it was locked. Lock, unlock and sync take this row FOR UPDATE, so they never interleave.
 */
export const commissionPeriods = pgTable(
  'commission_periods',
  {
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    period: text().notNull(),
    status: text({ enum: ['open', 'locked'] }).notNull().default('open'),
    /** Σ purchase amounts created in the month (EUR). */
    purchaseAmount: numeric('purchase_amount', { precision: 16, scale: 4 }),
    /** Σ amounts of purchases reversed in the month (EUR, positive). */
    reversedAmount: numeric('reversed_amount', { precision: 16, scale: 4 }),
    /** Σ amounts of purchases' goods returned in the month (EUR, positive); null: stored before returns counted (0026). */
    returnedAmount: numeric('returned_amount', { precision: 16, scale: 4 }),
    /** purchase_amount − reversed_amount − returned_amount. */
    baseAmount: numeric('base_amount', { precision: 16, scale: 4 }),
    /** Σ amount × rate, rounded half away from zero to 4 decimals (EUR). */
    commissionAmount: numeric('commission_amount', { precision: 16, scale: 4 }),
    purchasesCount: integer('purchases_count'),
    reversalsCount: integer('reversals_count'),
    returnsCount: integer('returns_count'),
    /** When the stored figures were computed (sync or lock); null = never. */
    computedAt: tz('computed_at'),
    lockedAt: tz('locked_at'),
    lockedByAdminId: integer('locked_by_admin_id').references(() => admins.id, { onDelete: 'set null' }),
    unlockedAt: tz('unlocked_at'),
    createdAt: tz('created_at').notNull().defaultNow(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.partnerId, t.period] }),
    check('commission_periods_period_format', sql`${t.period} ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'`),
    index('commission_periods_locked_idx').on(t.partnerId, t.period).where(sql`${t.status} = 'locked'`),
  ],
);
