// SMS accounts: prepaid EUR balance, per-country prices and approved sender names.
// Sending, dispatch and billing arrive with the SMS issue; the demo seed uses these now.
import { boolean, check, integer, jsonb, numeric, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { partners } from '../partners/partners.tables.js';

export const smsAccounts = pgTable(
  'sms_accounts',
  {
    partnerId: integer('partner_id')
      .primaryKey()
      .references(() => partners.id, { onDelete: 'cascade' }),
    // Exact decimal EUR; never a float.
    balance: numeric({ precision: 14, scale: 4 }).notNull().default('0'),
    currency: text().notNull().default('EUR'),
    transliterate: boolean().notNull().default(false),
    /** Per-country price per part overrides, e.g. {"LT": "0.0450"}. */
    prices: jsonb().$type<Record<string, string>>().notNull().default({}),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [check('sms_accounts_balance_non_negative', sql`${t.balance} >= 0`)],
);

export const smsSenders = pgTable(
  'sms_senders',
  {
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    approvedAt: timestamp('approved_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.partnerId, t.name] })],
);
