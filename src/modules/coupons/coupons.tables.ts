// Coupons (DESIGN.md §6, §8): issued by an offer claim or a game prize, verified (reserved
// for one shop for 10 minutes), redeemed once, released or rolled back. Every change of state
// is ONE conditional UPDATE whose WHERE clause is the rule (coupons.repository.ts), so that of
// N parallel redeems exactly one finds the row still redeemable. `coupon_events` keeps the
// history of each coupon (issued, verified, released, redeemed, rolled back).
//
// A coupon carries a copy of what it promises (`terms` for an offer's coupon, `game` for a
// game prize, and the offer's shop/product/category ids): the partner may edit or delete the
// offer later, but a coupon the customer holds — perhaps paid for with points — keeps its terms.
//
// The stored status is active | pending | used (expired is stored by nobody yet: it is
// derived, like a lapsed reservation, from expires_at and pending_until at read time, so no
// sweep is needed for a coupon to stop working on time).
import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, numeric, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { customers } from '../customers/customers.tables.js';
import { games } from '../games/games.tables.js';
import { loyaltyCards } from '../loyalty-cards/loyalty-cards.tables.js';
import { offers } from '../offers/offers.tables.js';
import { partners } from '../partners/partners.tables.js';
import { shops } from '../shops/shops.tables.js';

const tz = (name: string) => timestamp(name, { withTimezone: true });
const list = (values: readonly string[]) => sql.raw(values.map((v) => `'${v}'`).join(', '));

export const COUPON_STATUSES = ['active', 'pending', 'used', 'expired'] as const;
export type CouponStatus = (typeof COUPON_STATUSES)[number];

export const COUPON_EVENTS = ['issued', 'verified', 'released', 'redeemed', 'rolled_back'] as const;
export type CouponEventType = (typeof COUPON_EVENTS)[number];

/** What an offer's coupon promises, copied from the offer when it was claimed. */
export interface CouponTerms {
  title: string;
  description: string | null;
  discount_type: string;
  /** Exact decimal text, or null (gift). */
  discount_value: string | null;
  reward_type: string;
  reward_details: string | null;
}

/** What a game prize's coupon promises, copied from the game and its reward. */
export interface CouponGame {
  name: string;
  type: string;
  reward_description: string;
  discount_type: string;
  discount_value: string;
}

export const coupons = pgTable(
  'coupons',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    customerId: integer('customer_id')
      .notNull()
      .references(() => customers.id, { onDelete: 'restrict' }),
    cardId: integer('card_id')
      .notNull()
      .references(() => loyaltyCards.id, { onDelete: 'restrict' }),
    /** 12 Crockford base32 characters, upper case, no dashes (shown as XXXX-XXXX-XXXX). */
    code: text().notNull(),
    status: text().$type<CouponStatus>().notNull().default('active'),
    // No action (checked at the end of the statement): a partner's deletion removes its coupons with its offers and games.
    offerId: integer('offer_id').references(() => offers.id),
    gameId: integer('game_id').references(() => games.id),
    terms: jsonb().$type<CouponTerms>(),
    game: jsonb().$type<CouponGame>(),
    /** [] = every shop of the partner. */
    shopIds: integer('shop_ids').array().notNull().default(sql`'{}'::integer[]`),
    productIds: integer('product_ids').array().notNull().default(sql`'{}'::integer[]`),
    categoryIds: integer('category_ids').array().notNull().default(sql`'{}'::integer[]`),
    /** null = never expires. */
    expiresAt: tz('expires_at'),
    pendingShopId: integer('pending_shop_id').references(() => shops.id, { onDelete: 'set null' }),
    pendingUntil: tz('pending_until'),
    usedAt: tz('used_at'),
    usedShopId: integer('used_shop_id').references(() => shops.id, { onDelete: 'set null' }),
    createdAt: tz('created_at').notNull(),
    updatedAt: tz('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('coupons_code_key').on(t.code),
    index('coupons_partner_idx').on(t.partnerId, t.id),
    index('coupons_customer_idx').on(t.customerId, t.id),
    index('coupons_card_idx').on(t.cardId),
    // The per-customer claim limit counts these.
    index('coupons_offer_customer_idx').on(t.offerId, t.customerId).where(sql`${t.offerId} is not null`),
    index('coupons_game_idx').on(t.gameId).where(sql`${t.gameId} is not null`),
    // Redemptions per shop and day (shop analytics' coupons_redeemed).
    index('coupons_used_shop_idx').on(t.usedShopId, t.usedAt).where(sql`${t.usedAt} is not null`),
    index('coupons_partner_used_idx').on(t.partnerId, t.usedAt).where(sql`${t.usedAt} is not null`),
    check('coupons_status', sql`${t.status} in (${list(COUPON_STATUSES)})`),
    check('coupons_used', sql`(${t.status} = 'used') = (${t.usedAt} is not null)`),
    check('coupons_source', sql`(${t.offerId} is not null and ${t.terms} is not null) or (${t.gameId} is not null and ${t.game} is not null)`),
  ],
);

export const couponEvents = pgTable(
  'coupon_events',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    couponId: integer('coupon_id')
      .notNull()
      .references(() => coupons.id, { onDelete: 'cascade' }),
    event: text().$type<CouponEventType>().notNull(),
    shopId: integer('shop_id').references(() => shops.id, { onDelete: 'set null' }),
    receiptNumber: text('receipt_number'),
    /** EUR of the sale the coupon was redeemed in, as the till sent it. */
    amount: numeric({ precision: 14, scale: 4 }),
    reason: text(),
    createdAt: tz('created_at').notNull(),
  },
  (t) => [index('coupon_events_coupon_idx').on(t.couponId, t.id), check('coupon_events_event', sql`${t.event} in (${list(COUPON_EVENTS)})`)],
);
