// Tables owned by the infrastructure layer rather than by a domain module.
import { index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/** Process-wide settings generated once and shared by every node (e.g. the JWT key). */
export const systemSettings = pgTable('system_settings', {
  key: text().primaryKey(),
  value: text().notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * Stored responses of requests sent with an Idempotency-Key. A row is written in the same
 * transaction as the effect it guards, so a key is recorded if and only if the effect is.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    scope: text().notNull(),
    key: text().notNull(),
    requestHash: text('request_hash').notNull(),
    responseStatus: integer('response_status').notNull(),
    responseBody: jsonb('response_body').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.scope, t.key] })],
);

/**
 * Bearer tokens signed out before they expire (src/infra/tokens.ts): one row per token id
 * (`jti`), kept until the token's own expiry, after which the row is useless and swept.
 */
export const revokedTokens = pgTable(
  'revoked_tokens',
  {
    tokenId: text('token_id').primaryKey(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('revoked_tokens_expires_at_idx').on(t.expiresAt)],
);

/**
 * Every token of one account issued before `not_before` is refused (a password change).
 * `expires_at` is when the last such token expires: the row can be swept after it.
 */
export const tokenCutoffs = pgTable(
  'token_cutoffs',
  {
    kind: text().notNull(),
    subject: integer().notNull(),
    notBefore: timestamp('not_before', { withTimezone: true, precision: 3 }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.kind, t.subject] }), index('token_cutoffs_expires_at_idx').on(t.expiresAt)],
);
