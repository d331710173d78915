// Gameplay (DESIGN.md §8): one row per play. The outcome is drawn when the play starts and
// kept here (`reward_id`, a link to the reward row — retired rewards are never deleted, so a
// play keeps what it drew even after the partner replaces the wheel), hidden from the
// customer until the play completes.
//
//   started ─progress─► in_progress ─completed─► finished ─claim-reward─► claimed
//   started | in_progress | finished ──30 minutes after the start──► expired
//
// `game_daily_plays` makes plays_per_customer_per_day exact: a start adds one to the
// customer's row for the UTC day with ONE conditional upsert (… DO UPDATE … WHERE plays <
// limit), so of N parallel starts exactly `limit` find room.
import { sql } from 'drizzle-orm';
import { check, date, index, integer, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { coupons } from '../coupons/coupons.tables.js';
import { customers } from '../customers/customers.tables.js';
import { loyaltyCards } from '../loyalty-cards/loyalty-cards.tables.js';
import { partners } from '../partners/partners.tables.js';
import { pointsTransactions } from '../points/points.tables.js';
import { games, gamesRewards } from './games.tables.js';

const tz = (name: string) => timestamp(name, { withTimezone: true });

export const SESSION_STATUSES = ['started', 'in_progress', 'finished', 'claimed', 'expired'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

export const gameSessions = pgTable(
  'game_sessions',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    /** ≥ 128 random bits, base64url: the secret of the public channel game-session.{key}. */
    sessionKey: text('session_key').notNull(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    gameId: integer('game_id')
      .notNull()
      .references(() => games.id, { onDelete: 'cascade' }),
    customerId: integer('customer_id')
      .notNull()
      .references(() => customers.id, { onDelete: 'restrict' }),
    cardId: integer('card_id')
      .notNull()
      .references(() => loyaltyCards.id, { onDelete: 'restrict' }),
    rewardId: integer('reward_id')
      .notNull()
      .references(() => gamesRewards.id, { onDelete: 'restrict' }),
    status: text().$type<SessionStatus>().notNull().default('started'),
    progress: integer().notNull().default(0),
    transactionId: integer('transaction_id').references(() => pointsTransactions.id, { onDelete: 'restrict' }),
    couponId: integer('coupon_id').references(() => coupons.id, { onDelete: 'restrict' }),
    startedAt: tz('started_at').notNull(),
    expiresAt: tz('expires_at').notNull(),
    finishedAt: tz('finished_at'),
    claimedAt: tz('claimed_at'),
  },
  (t) => [
    uniqueIndex('game_sessions_key').on(t.sessionKey),
    index('game_sessions_customer_idx').on(t.customerId, t.id),
    index('game_sessions_game_idx').on(t.gameId, t.id),
    index('game_sessions_open_idx').on(t.expiresAt).where(sql`${t.status} in ('started', 'in_progress', 'finished')`),
    check('game_sessions_status', sql`${t.status} in (${sql.raw(SESSION_STATUSES.map((s) => `'${s}'`).join(', '))})`),
    check('game_sessions_progress', sql`${t.progress} between 0 and 100`),
  ],
);

export const gameDailyPlays = pgTable(
  'game_daily_plays',
  {
    gameId: integer('game_id')
      .notNull()
      .references(() => games.id, { onDelete: 'cascade' }),
    customerId: integer('customer_id')
      .notNull()
      .references(() => customers.id, { onDelete: 'cascade' }),
    /** The UTC day. */
    day: date({ mode: 'string' }).notNull(),
    plays: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.gameId, t.customerId, t.day] }), check('game_daily_plays_positive', sql`${t.plays} >= 1`)],
);
