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
  /**
   * Goods returned (DESIGN.md §12, returns_id): on a purchase, points ≤ 0 taken back line by
   * line (what the balance cannot cover becomes points_debt); on a deduction, points > 0 given back.
   */
  'return',
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
    /** The purchase or deduction a `return` entry returns goods of (many returns per transaction). */
    returnsId: integer('returns_id').references((): AnyPgColumn => pointsTransactions.id, { onDelete: 'restrict' }),
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
    index('points_transactions_returns_idx').on(t.returnsId).where(sql`${t.returnsId} is not null`),
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

/**
 * A purchase's basket lines (DESIGN.md §12), in receipt order. `points` is the line's share of
 * every source; `returned_quantity` grows with each return and never passes `quantity`.
 */
export const pointsTransactionLines = pgTable(
  'points_transaction_lines',
  {
    transactionId: integer('transaction_id')
      .notNull()
      .references(() => pointsTransactions.id, { onDelete: 'cascade' }),
    /** 1-based position in the receipt. */
    position: integer().notNull(),
    lineId: text('line_id').notNull(),
    /** The partner's catalogue product the line matched, if any. */
    productId: integer('product_id'),
    sku: text(),
    ean: text(),
    name: text(),
    quantity: numeric({ precision: 14, scale: 3 }).notNull(),
    amount: numeric({ precision: 14, scale: 4 }).notNull(),
    points: integer().notNull(),
    returnedQuantity: numeric('returned_quantity', { precision: 14, scale: 3 }).notNull().default('0'),
  },
  (t) => [
    primaryKey({ columns: [t.transactionId, t.position] }),
    uniqueIndex('points_transaction_lines_line_key').on(t.transactionId, t.lineId),
    check('points_transaction_lines_returned', sql`${t.returnedQuantity} >= 0 and ${t.returnedQuantity} <= ${t.quantity}`),
  ],
);

export const POINTS_SOURCES = ['base', 'tier', 'campaign'] as const;
export type PointsSource = (typeof POINTS_SOURCES)[number];

/**
 * What each source earned on each line of a purchase: the only input of a return, so that a
 * return never re-evaluates campaigns that changed since the sale. Position 0 is the whole
 * amount of a purchase without lines. `returned_points` grows with each return.
 */
export const pointsTransactionSources = pgTable(
  'points_transaction_sources',
  {
    transactionId: integer('transaction_id')
      .notNull()
      .references(() => pointsTransactions.id, { onDelete: 'cascade' }),
    position: integer().notNull(),
    source: text().$type<PointsSource>().notNull(),
    /** The campaign of a `campaign` source (0 for base and tier, so that the key is plain). */
    campaignId: integer('campaign_id').notNull().default(0),
    /** The breakdown's order: 0 base, 1 tier, then the campaigns in evaluation order. */
    ordinal: integer().notNull(),
    points: integer().notNull(),
    returnedPoints: integer('returned_points').notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.transactionId, t.position, t.source, t.campaignId] }),
    index('points_transaction_sources_campaign_idx').on(t.campaignId).where(sql`${t.campaignId} <> 0`),
    check('points_transaction_sources_source', sql`${t.source} in ('base', 'tier', 'campaign')`),
    check('points_transaction_sources_returned', sql`${t.returnedPoints} >= 0 and ${t.returnedPoints} <= ${t.points}`),
  ],
);

/**
 * The card's points debt (DESIGN.md §12): a return the balance could not cover owes the rest
 * (points > 0, the return's entry); later earnings pay it off first (points < 0, the earning's
 * entry). card.points_debt = Σ points, and card.points_balance − card.points_debt = Σ ledger points.
 */
export const pointsDebtEntries = pgTable(
  'points_debt_entries',
  {
    transactionId: integer('transaction_id')
      .primaryKey()
      .references(() => pointsTransactions.id, { onDelete: 'restrict' }),
    cardId: integer('card_id')
      .notNull()
      .references(() => loyaltyCards.id, { onDelete: 'restrict' }),
    points: integer().notNull(),
  },
  (t) => [index('points_debt_entries_card_idx').on(t.cardId), check('points_debt_entries_non_zero', sql`${t.points} <> 0`)],
);
