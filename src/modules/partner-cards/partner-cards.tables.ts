// The partner card programme, column for column the spec's "Partner card" resource,
// plus `deleted_at`: a programme is soft-deleted because customers' loyalty cards refer to
// it and hold points in it (docs/decisions.md "Partner cards: delete").
import { boolean, index, integer, jsonb, numeric, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { partners } from '../partners/partners.tables.js';
import { shops } from '../shops/shops.tables.js';

export type LocalizedText = Record<string, string>;

export interface CardDesign {
  logo?: string;
  text_color?: string;
  text_color_labels?: string;
  qr_background_color?: string;
  qr_color?: string;
  background_color?: string;
  background_color_opacity?: number;
  background_image?: string;
}

/**
 * What a new programme gets for each optional field the partner leaves out (docs/decisions.md
 * "Partner card programme defaults"). The columns and the API's create schema both use it.
 */
export const PROGRAMME_DEFAULTS = {
  isActive: true,
  autoAssign: true,
  pointsEnabled: true,
  initialBonusPoints: 0,
  pointsExpirationDays: null,
  pointsPerCurrency: '1',
  currencyAmount: '1',
  roundPointsUp: false,
  minPointsPerPurchase: 0,
  pointsPerVisit: 0,
  pointsRedemptionEnabled: false,
  pointsPerCurrencyRedemption: '100',
  currencyAmountRedemption: '1',
  minPointsForRedemption: 0,
} as const;
const D = PROGRAMME_DEFAULTS;

export const partnerCards = pgTable(
  'partner_cards',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    title: jsonb().$type<{ en: string; lt: string }>().notNull(),
    description: jsonb().$type<LocalizedText>().notNull(),
    termsConditions: jsonb('terms_conditions').$type<LocalizedText>().notNull(),
    cardDesign: jsonb('card_design').$type<CardDesign>().notNull(),
    isActive: boolean('is_active').notNull().default(D.isActive),
    autoAssign: boolean('auto_assign').notNull().default(D.autoAssign),
    pointsEnabled: boolean('points_enabled').notNull().default(D.pointsEnabled),
    initialBonusPoints: integer('initial_bonus_points').notNull().default(D.initialBonusPoints),
    pointsExpirationDays: integer('points_expiration_days'),
    pointsPerCurrency: numeric('points_per_currency', { precision: 14, scale: 4 }).notNull().default(D.pointsPerCurrency),
    currencyAmount: numeric('currency_amount', { precision: 14, scale: 4 }).notNull().default(D.currencyAmount),
    roundPointsUp: boolean('round_points_up').notNull().default(D.roundPointsUp),
    minPointsPerPurchase: integer('min_points_per_purchase').notNull().default(D.minPointsPerPurchase),
    maxPointsPerPurchase: integer('max_points_per_purchase'),
    pointsPerVisit: integer('points_per_visit').notNull().default(D.pointsPerVisit),
    pointsRedemptionEnabled: boolean('points_redemption_enabled').notNull().default(D.pointsRedemptionEnabled),
    pointsPerCurrencyRedemption: numeric('points_per_currency_redemption', { precision: 14, scale: 4 })
      .notNull()
      .default(D.pointsPerCurrencyRedemption),
    currencyAmountRedemption: numeric('currency_amount_redemption', { precision: 14, scale: 4 })
      .notNull()
      .default(D.currencyAmountRedemption),
    minPointsForRedemption: integer('min_points_for_redemption').notNull().default(D.minPointsForRedemption),
    maxPointsPerRedemption: integer('max_points_per_redemption'),
    defaultCouponValidityDays: integer('default_coupon_validity_days'),
    // Tier settings (DESIGN.md §13, src/modules/tiers).
    tierBasis: text('tier_basis', { enum: ['points_earned', 'amount_spent'] }).notNull().default('points_earned'),
    tierWindow: text('tier_window', { enum: ['lifetime', 'calendar_year', 'rolling_12_months'] }).notNull().default('rolling_12_months'),
    tierDowngrade: text('tier_downgrade', { enum: ['end_of_window', 'never'] }).notNull().default('end_of_window'),
    tierTimeZone: text('tier_time_zone').notNull().default('Europe/Vilnius'),
    /** Bumped by every change of the tiers or tier settings; cards behind it are re-evaluated in the background. */
    tiersVersion: integer('tiers_version').notNull().default(0),
    /** The tiers_version every card of the programme has been re-evaluated at. */
    tiersEvaluatedVersion: integer('tiers_evaluated_version').notNull().default(0),
    /**
     * Bumped by the database on every change of the earning rules or of a campaign of the
     * programme (migration 0026): the version of a node's copy of them (awards/earn-rules.ts).
     */
    earnVersion: integer('earn_version').notNull().default(0),
    /** Set by DELETE: the programme is then inactive and no longer visible to the partner API. */
    deletedAt: timestamp('deleted_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('partner_cards_partner_idx').on(t.partnerId, t.id)],
);

export const partnerCardShops = pgTable(
  'partner_card_shops',
  {
    cardId: integer('card_id')
      .notNull()
      .references(() => partnerCards.id, { onDelete: 'cascade' }),
    shopId: integer('shop_id')
      .notNull()
      .references(() => shops.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.cardId, t.shopId] }), index('partner_card_shops_shop_idx').on(t.shopId)],
);
