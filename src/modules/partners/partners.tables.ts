import { integer, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

export const partners = pgTable(
  'partners',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    name: text().notNull(),
    /** Stored lower-cased: e-mail addresses are compared case-insensitively. */
    email: text().notNull(),
    passwordHash: text('password_hash').notNull(),
    status: text({ enum: ['active', 'suspended'] }).notNull().default('active'),
    /** Enterprise overrides of the API-credential rate limit; null = platform default. */
    rateLimitPerHour: integer('rate_limit_per_hour'),
    rateLimitPerMinute: integer('rate_limit_per_minute'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('partners_email_key').on(t.email)],
);
