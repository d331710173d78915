// Tiers of a card programme (DESIGN.md §13) and each card's tier history. The card's own
// tier state (tier, qualifying value, keep-until) lives on loyalty_cards, beside the balance,
// so that it moves under the same row lock as every earning, return and reversal.
import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, numeric, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { loyaltyCards } from '../loyalty-cards/loyalty-cards.tables.js';
import { partnerCards } from '../partner-cards/partner-cards.tables.js';
import { partners } from '../partners/partners.tables.js';

const tz = (name: string) => timestamp(name, { withTimezone: true });

export const TIER_HISTORY_REASONS = ['earned', 'returned', 'window_ended', 'tiers_changed'] as const;
export type TierHistoryReason = (typeof TIER_HISTORY_REASONS)[number];

export const tiers = pgTable(
  'tiers',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    partnerCardId: integer('partner_card_id')
      .notNull()
      .references(() => partnerCards.id, { onDelete: 'cascade' }),
    name: jsonb().$type<{ en: string; lt: string }>().notNull(),
    /** Qualifying value (points, or whole EUR for amount_spent) from which a card holds the tier. */
    threshold: integer().notNull(),
    /** Multiplies the award's base points (a `tier` row of the breakdown); 1–10, 2 decimals. */
    earnMultiplier: numeric('earn_multiplier', { precision: 4, scale: 2 }).notNull().default('1'),
    benefits: jsonb().$type<{ en: string; lt: string }>(),
    color: text(),
    createdAt: tz('created_at').notNull().defaultNow(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('tiers_programme_threshold_key').on(t.partnerCardId, t.threshold),
    check('tiers_threshold_non_negative', sql`${t.threshold} >= 0`),
    check('tiers_multiplier_range', sql`${t.earnMultiplier} >= 1 and ${t.earnMultiplier} <= 10`),
  ],
);

export const cardTierHistory = pgTable(
  'card_tier_history',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    cardId: integer('card_id')
      .notNull()
      .references(() => loyaltyCards.id, { onDelete: 'cascade' }),
    /** The tiers as they were named then: a deleted tier's history keeps its name (ids become null). */
    fromTierId: integer('from_tier_id').references(() => tiers.id, { onDelete: 'set null' }),
    fromName: jsonb('from_name').$type<{ en: string; lt: string }>(),
    toTierId: integer('to_tier_id').references(() => tiers.id, { onDelete: 'set null' }),
    toName: jsonb('to_name').$type<{ en: string; lt: string }>(),
    reason: text({ enum: TIER_HISTORY_REASONS }).notNull(),
    at: tz('at').notNull(),
  },
  (t) => [index('card_tier_history_card_idx').on(t.cardId, t.at, t.id)],
);
