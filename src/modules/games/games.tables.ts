// Games a partner configures (spin wheel, scratch card, slot machine) and their rewards.
// Gameplay comes later and draws from `games_rewards`.
//
// Rewards are rows, not a jsonb array on the game, because the gameplay module will
// need to point at them: a play records which reward it drew (a foreign key, not a copy
// that can drift), per-reward counts and stock limits can be added as columns, and the
// draw reads the weights with ordinary SQL. Replacing a game's rewards does not delete
// the old rows — they are retired (`retired_at`), so plays that drew them stay linked.
// A probability is numeric(5,4): a draw uses integer weights of 1/10000, summing to
// exactly 10000 (the service checks the exact decimal sum).
import { sql } from 'drizzle-orm';
import { boolean, check, index, integer, jsonb, numeric, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { partnerCards } from '../partner-cards/partner-cards.tables.js';
import { partners } from '../partners/partners.tables.js';

export const GAME_TYPES = ['spin_wheel', 'scratch_card', 'slot_machine'] as const;
export type GameType = (typeof GAME_TYPES)[number];
export const REWARD_TYPES = ['points', 'coupon', 'none'] as const;
export type RewardType = (typeof REWARD_TYPES)[number];
export const DISCOUNT_TYPES = ['percent', 'fixed'] as const;
export type DiscountType = (typeof DISCOUNT_TYPES)[number];

/** A coupon reward's template; `discount_value` is exact decimal text (numeric semantics). */
export interface CouponTemplate {
  title: string;
  discount_type: DiscountType;
  discount_value: string;
}

export const games = pgTable(
  'games',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    // Programmes are soft-deleted, so this normally keeps pointing at its card.
    partnerCardId: integer('partner_card_id').references(() => partnerCards.id, { onDelete: 'set null' }),
    type: text().$type<GameType>().notNull(),
    name: text().notNull(),
    description: text(),
    isActive: boolean('is_active').notNull().default(true),
    startsAt: timestamp('starts_at', { withTimezone: true }),
    endsAt: timestamp('ends_at', { withTimezone: true }),
    couponValidityDays: integer('coupon_validity_days'),
    playsPerCustomerPerDay: integer('plays_per_customer_per_day').notNull().default(1),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('games_partner_idx').on(t.partnerId, t.id),
    check('games_window', sql`${t.endsAt} is null or ${t.startsAt} is null or ${t.endsAt} > ${t.startsAt}`),
  ],
);

export const gamesRewards = pgTable(
  'games_rewards',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    gameId: integer('game_id')
      .notNull()
      .references(() => games.id, { onDelete: 'cascade' }),
    /** Order within the game, as the partner listed them (wheel segments). */
    position: integer().notNull(),
    label: text().notNull(),
    probability: numeric({ precision: 5, scale: 4 }).notNull(),
    rewardType: text('reward_type').$type<RewardType>().notNull(),
    points: integer(),
    coupon: jsonb().$type<CouponTemplate>(),
    /** Set when a later update replaced the game's rewards; retired rows are never drawn. */
    retiredAt: timestamp('retired_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('games_rewards_game_idx').on(t.gameId, t.position),
    check('games_rewards_probability', sql`${t.probability} > 0 and ${t.probability} <= 1`),
  ],
);
