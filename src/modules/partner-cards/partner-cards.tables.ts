// The partner card programme, column for column the spec's "Partner card" resource.
// The API over it arrives with the partner-interface issue; the demo seed uses it now.
import { boolean, index, integer, jsonb, numeric, pgTable, primaryKey, timestamp } from 'drizzle-orm/pg-core';
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
    isActive: boolean('is_active').notNull().default(true),
    autoAssign: boolean('auto_assign').notNull().default(true),
    pointsEnabled: boolean('points_enabled').notNull().default(true),
    initialBonusPoints: integer('initial_bonus_points').notNull().default(0),
    pointsExpirationDays: integer('points_expiration_days'),
    pointsPerCurrency: numeric('points_per_currency', { precision: 14, scale: 4 }).notNull().default('1'),
    currencyAmount: numeric('currency_amount', { precision: 14, scale: 4 }).notNull().default('1'),
    roundPointsUp: boolean('round_points_up').notNull().default(false),
    minPointsPerPurchase: integer('min_points_per_purchase').notNull().default(0),
    maxPointsPerPurchase: integer('max_points_per_purchase'),
    pointsPerVisit: integer('points_per_visit').notNull().default(0),
    pointsRedemptionEnabled: boolean('points_redemption_enabled').notNull().default(false),
    pointsPerCurrencyRedemption: numeric('points_per_currency_redemption', { precision: 14, scale: 4 })
      .notNull()
      .default('100'),
    currencyAmountRedemption: numeric('currency_amount_redemption', { precision: 14, scale: 4 })
      .notNull()
      .default('1'),
    minPointsForRedemption: integer('min_points_for_redemption').notNull().default(0),
    maxPointsPerRedemption: integer('max_points_per_redemption'),
    defaultCouponValidityDays: integer('default_coupon_validity_days'),
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
