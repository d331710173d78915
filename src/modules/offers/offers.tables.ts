// Offers (DESIGN.md §8): partner-defined rewards a customer claims as a coupon, for free or
// for points. On a limited offer `claims_count` is the counter that makes `max_claims` exact:
// a claim increments it with one conditional UPDATE (… WHERE claims_count < max_claims), so N
// parallel claims of the last unit have one winner. An unlimited offer's claims do not touch
// its row (no hot row to queue on): its claims are counted from its coupons, and setting a
// limit recounts them (offers.repository.ts). The per-customer limit counts the customer's
// coupons of the offer under the card's row lock (offers.service.ts).
//
// shop_ids / product_ids / category_ids are id arrays, not link tables: `[]` on shop_ids
// means "every shop", so a link row removed by a shop's deletion must not widen an offer to
// every shop; a dead id in the array simply matches no shop any more. The catalog module
// gives product and category ids their meaning; offers only store them.
//
// Offers are soft-deleted (`deleted_at`): coupons keep pointing at the offer they came from.
import { sql } from 'drizzle-orm';
import { boolean, check, index, integer, numeric, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { partnerCards } from '../partner-cards/partner-cards.tables.js';
import { partners } from '../partners/partners.tables.js';

const tz = (name: string) => timestamp(name, { withTimezone: true });
const list = (values: readonly string[]) => sql.raw(values.map((v) => `'${v}'`).join(', '));

export const OFFER_DISCOUNT_TYPES = ['percent', 'fixed', 'price', 'gift'] as const;
export type OfferDiscountType = (typeof OFFER_DISCOUNT_TYPES)[number];
export const OFFER_REWARD_TYPES = ['coupon'] as const;
export type OfferRewardType = (typeof OFFER_REWARD_TYPES)[number];
export const OFFER_SOURCES = ['api', 'import'] as const;
export type OfferSource = (typeof OFFER_SOURCES)[number];

export const offers = pgTable(
  'offers',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    // Programmes are soft-deleted, so this keeps pointing at its card.
    partnerCardId: integer('partner_card_id').references(() => partnerCards.id, { onDelete: 'set null' }),
    title: text().notNull(),
    description: text(),
    discountType: text('discount_type').$type<OfferDiscountType>().notNull(),
    /** Exact decimal: percent (0 < v ≤ 100) or EUR; null for a gift. */
    discountValue: numeric('discount_value', { precision: 14, scale: 4 }),
    rewardType: text('reward_type').$type<OfferRewardType>().notNull().default('coupon'),
    rewardDetails: text('reward_details'),
    pointsCost: integer('points_cost').notNull().default(0),
    startsAt: tz('starts_at'),
    endsAt: tz('ends_at'),
    isActive: boolean('is_active').notNull().default(true),
    featured: boolean().notNull().default(false),
    shopIds: integer('shop_ids').array().notNull().default(sql`'{}'::integer[]`),
    productIds: integer('product_ids').array().notNull().default(sql`'{}'::integer[]`),
    categoryIds: integer('category_ids').array().notNull().default(sql`'{}'::integer[]`),
    maxClaims: integer('max_claims'),
    maxClaimsPerCustomer: integer('max_claims_per_customer').notNull().default(1),
    claimsCount: integer('claims_count').notNull().default(0),
    couponValidityDays: integer('coupon_validity_days'),
    source: text().$type<OfferSource>().notNull().default('api'),
    /** An import-sourced offer's product (catalog id): one such offer per product. */
    sourceProductId: integer('source_product_id'),
    deletedAt: tz('deleted_at'),
    createdAt: tz('created_at').notNull().defaultNow(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
  },
  (t) => [
    index('offers_partner_idx').on(t.partnerId, t.id),
    uniqueIndex('offers_import_product_uq').on(t.partnerId, t.sourceProductId).where(sql`${t.source} = 'import'`),
    check('offers_discount_type', sql`${t.discountType} in (${list(OFFER_DISCOUNT_TYPES)})`),
    check('offers_reward_type', sql`${t.rewardType} in (${list(OFFER_REWARD_TYPES)})`),
    check('offers_source', sql`${t.source} in (${list(OFFER_SOURCES)})`),
    check('offers_points_cost', sql`${t.pointsCost} >= 0`),
    check('offers_claims', sql`${t.claimsCount} >= 0 and (${t.maxClaims} is null or ${t.maxClaims} >= 1) and ${t.maxClaimsPerCustomer} >= 1`),
    check('offers_window', sql`${t.endsAt} is null or ${t.startsAt} is null or ${t.endsAt} > ${t.startsAt}`),
  ],
);
