import { index, integer, numeric, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { partners } from '../partners/partners.tables.js';

export const shops = pgTable(
  'shops',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    address: text(),
    city: text(),
    // numeric, not float: coordinates come back exactly as they were given.
    lat: numeric({ precision: 9, scale: 6 }),
    lng: numeric({ precision: 9, scale: 6 }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('shops_partner_idx').on(t.partnerId, t.id)],
);
