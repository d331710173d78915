// Customers (one account per phone number, DESIGN.md §2) and their one-time sign-in codes.
import { sql } from 'drizzle-orm';
import { check, date, integer, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

const tz = (name: string) => timestamp(name, { withTimezone: true });

export const customers = pgTable(
  'customers',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    /** E.164 with "+", normalised by libphonenumber. */
    phone: text().notNull(),
    name: text(),
    email: text(),
    birthDate: date('birth_date', { mode: 'string' }),
    language: text({ enum: ['lt', 'en'] }),
    createdAt: tz('created_at').notNull().defaultNow(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('customers_phone_key').on(t.phone)],
);

/**
 * The current sign-in code of a phone number: only its hash is kept; it dies after
 * `expires_at` or after too many wrong attempts. One row per phone, replaced on resend.
 */
export const otpChallenges = pgTable(
  'otp_challenges',
  {
    phone: text().primaryKey(),
    codeHash: text('code_hash').notNull(),
    expiresAt: tz('expires_at').notNull(),
    attempts: integer().notNull().default(0),
    /** When the current code was sent: the resend throttle counts from here. */
    sentAt: tz('sent_at').notNull(),
    /** Codes sent in the hour starting at `window_started_at` (bounds SMS cost per number). */
    windowStartedAt: tz('window_started_at').notNull(),
    sendsInWindow: integer('sends_in_window').notNull().default(1),
    consumedAt: tz('consumed_at'),
  },
  (t) => [check('otp_attempts_non_negative', sql`${t.attempts} >= 0`)],
);
