// A customer's loyalty card in one partner card programme. The card row carries the points
// balance: it is the row locked by every value-moving operation (src/modules/points), so
// the balance and the ledger change together or not at all.
import { sql } from 'drizzle-orm';
import { check, index, integer, numeric, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { customers } from '../customers/customers.tables.js';
import { partnerCards } from '../partner-cards/partner-cards.tables.js';
import { partners } from '../partners/partners.tables.js';

const tz = (name: string) => timestamp(name, { withTimezone: true });

export const loyaltyCards = pgTable(
  'loyalty_cards',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    /** The programme's partner, kept here so that every tenant check is one index lookup. */
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    partnerCardId: integer('partner_card_id')
      .notNull()
      .references(() => partnerCards.id, { onDelete: 'restrict' }),
    customerId: integer('customer_id')
      .notNull()
      .references(() => customers.id, { onDelete: 'restrict' }),
    /** Issued numbers are 16 digits with a Luhn check digit; third-party numbers are the partner's own. */
    cardNumber: text('card_number').notNull(),
    source: text({ enum: ['issued', 'third_party'] }).notNull().default('issued'),
    /** Sum of the card's ledger; changed only together with a ledger row, under the row lock. */
    pointsBalance: integer('points_balance').notNull().default(0),
    /** Points a return took back that the balance could not cover; later earnings pay it first (DESIGN.md §12). */
    pointsDebt: integer('points_debt').notNull().default(0),
    /** Earliest expiry among lots with points left: lets a balance read skip the lot scan. */
    nextExpiryAt: tz('next_expiry_at'),
    // Tier state (DESIGN.md §13, src/modules/tiers): moved with every earning, return and
    // reversal under this row's lock. The tier's id is a plain integer (no foreign key to
    // tiers, whose table comes later in the schema): a deleted tier is re-evaluated away.
    tierId: integer('tier_id'),
    /** Qualifying value inside the programme's window: points, or EUR spent (4 decimals). */
    tierValue: numeric('tier_value', { precision: 18, scale: 4 }).notNull().default('0'),
    /** When tier_value stops being the window's value (an entry leaves the window); null = never. */
    tierValueUntil: tz('tier_value_until'),
    /** When the held tier was last qualified for (reached, or its threshold met again). */
    tierReachedAt: tz('tier_reached_at'),
    /** The held tier is kept at least until then (null: lifetime, or no tier). */
    tierKeepUntil: tz('tier_keep_until'),
    /** The programme's tiers_version this card was last evaluated at (background re-evaluation). */
    tierVersion: integer('tier_version').notNull().default(0),
    createdAt: tz('created_at').notNull().defaultNow(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
  },
  (t) => [
    check('loyalty_cards_balance_non_negative', sql`${t.pointsBalance} >= 0`),
    check('loyalty_cards_debt_non_negative', sql`${t.pointsDebt} >= 0`),
    uniqueIndex('loyalty_cards_programme_customer_key').on(t.partnerCardId, t.customerId),
    uniqueIndex('loyalty_cards_partner_number_key').on(t.partnerId, t.cardNumber),
    index('loyalty_cards_partner_idx').on(t.partnerId, t.id),
    index('loyalty_cards_customer_idx').on(t.customerId),
    index('loyalty_cards_expiry_idx').on(t.nextExpiryAt).where(sql`${t.nextExpiryAt} is not null`),
    index('loyalty_cards_tier_value_until_idx').on(t.tierValueUntil).where(sql`${t.tierValueUntil} is not null`),
    index('loyalty_cards_tier_keep_until_idx').on(t.tierKeepUntil).where(sql`${t.tierKeepUntil} is not null`),
    index('loyalty_cards_programme_tier_idx').on(t.partnerCardId, t.tierVersion),
  ],
);
