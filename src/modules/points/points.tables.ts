// The points ledger (DESIGN.md §6). Every change of a balance is an immutable transaction
// row. Earned points are lots that may expire; every spend, expiry or claw-back records the
// lots it drew from (`points_lot_draws`, negative points = restored), so that
//   lot.remaining = lot.points − Σ draws(lot)   and   card.points_balance = Σ transactions.points
// hold at all times; `loyalty ledger verify` recomputes both.
import { sql } from 'drizzle-orm';
import {
  type AnyPgColumn,
  check,
  index,
  integer,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { customers } from '../customers/customers.tables.js';
import { loyaltyCards } from '../loyalty-cards/loyalty-cards.tables.js';
import { partners } from '../partners/partners.tables.js';
import { shops } from '../shops/shops.tables.js';

const tz = (name: string) => timestamp(name, { withTimezone: true });

export const POINTS_TRANSACTION_TYPES = [
  /** Points earned by a purchase (transactions/create). */
  'purchase',
  /** Points spent at a till (transactions/deduct-points), subject to the redemption rules. */
  'deduct',
  /** Manual correction by the partner (POST /shop/points), either sign. */
  'adjust',
  /** Welcome bonus of the programme (initial_bonus_points). */
  'bonus',
  /** Lots that reached their expiry. */
  'expire',
  /** Compensating entry of an earlier transaction (reverses_id). */
  'reversal',
  /** Points spent on a coupon: an offer's points_cost (src/modules/offers). */
  'redeem',
  /** Points won in a game (src/modules/games gameplay). */
  'game',
] as const;
export type PointsTransactionType = (typeof POINTS_TRANSACTION_TYPES)[number];

export const pointsTransactions = pgTable(
  'points_transactions',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    cardId: integer('card_id')
      .notNull()
      .references(() => loyaltyCards.id, { onDelete: 'restrict' }),
    customerId: integer('customer_id')
      .notNull()
      .references(() => customers.id, { onDelete: 'restrict' }),
    shopId: integer('shop_id').references(() => shops.id, { onDelete: 'set null' }),
    type: text({ enum: POINTS_TRANSACTION_TYPES }).notNull(),
    /** Signed: positive earns, negative spends. */
    points: integer().notNull(),
    /** EUR: the purchase amount (purchase) or the value of the points redeemed (deduct). */
    amount: numeric({ precision: 14, scale: 4 }),
    balanceAfter: integer('balance_after').notNull(),
    receiptNumber: text('receipt_number'),
    reason: text(),
    reversesId: integer('reverses_id').references((): AnyPgColumn => pointsTransactions.id, { onDelete: 'restrict' }),
    createdAt: tz('created_at').notNull(),
  },
  (t) => [
    check('points_transactions_balance_non_negative', sql`${t.balanceAfter} >= 0`),
    // The column is text: the database, not only TypeScript, refuses a type nobody handles.
    check('points_transactions_type', sql`${t.type} in (${sql.raw(POINTS_TRANSACTION_TYPES.map((v) => `'${v}'`).join(', '))})`),
    index('points_transactions_card_idx').on(t.cardId, t.id),
    index('points_transactions_partner_idx').on(t.partnerId, t.createdAt),
    index('points_transactions_customer_idx').on(t.customerId, t.createdAt),
    // A till's retry of the same receipt cannot earn twice (DESIGN.md §6).
    uniqueIndex('points_transactions_receipt_key')
      .on(t.shopId, t.receiptNumber)
      .where(sql`${t.receiptNumber} is not null and ${t.type} = 'purchase'`),
    // A transaction is reversed at most once.
    uniqueIndex('points_transactions_reverses_key').on(t.reversesId).where(sql`${t.reversesId} is not null`),
  ],
);

export const pointsLots = pgTable(
  'points_lots',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    cardId: integer('card_id')
      .notNull()
      .references(() => loyaltyCards.id, { onDelete: 'restrict' }),
    /** The transaction that earned the lot. */
    transactionId: integer('transaction_id')
      .notNull()
      .references(() => pointsTransactions.id, { onDelete: 'restrict' }),
    points: integer().notNull(),
    remaining: integer().notNull(),
    /** null = never expires. */
    expiresAt: tz('expires_at'),
    createdAt: tz('created_at').notNull(),
  },
  (t) => [
    check('points_lots_points_positive', sql`${t.points} > 0`),
    check('points_lots_remaining_in_range', sql`${t.remaining} >= 0 and ${t.remaining} <= ${t.points}`),
    // Spending order: first to expire first, never-expiring last, then oldest.
    index('points_lots_open_idx').on(t.cardId, t.expiresAt, t.id).where(sql`${t.remaining} > 0`),
    uniqueIndex('points_lots_transaction_key').on(t.transactionId),
  ],
);

export const pointsLotDraws = pgTable(
  'points_lot_draws',
  {
    transactionId: integer('transaction_id')
      .notNull()
      .references(() => pointsTransactions.id, { onDelete: 'restrict' }),
    lotId: integer('lot_id')
      .notNull()
      .references(() => pointsLots.id, { onDelete: 'restrict' }),
    /** Points taken from the lot; negative when a reversal restored them. */
    points: integer().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.transactionId, t.lotId] }),
    index('points_lot_draws_lot_idx').on(t.lotId),
    check('points_lot_draws_non_zero', sql`${t.points} <> 0`),
  ],
);
