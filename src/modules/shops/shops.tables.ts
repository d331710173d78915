import { sql } from 'drizzle-orm';
import { boolean, index, integer, numeric, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { partners } from '../partners/partners.tables.js';

export const shops = pgTable(
  'shops',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    /** The partner's own reference for the shop (a till or ERP id); unique per partner. */
    code: text(),
    address: text(),
    city: text(),
    /** ISO 3166-1 alpha-2, upper case. */
    country: text(),
    postalCode: text('postal_code'),
    phone: text(),
    email: text(),
    // numeric, not float: coordinates come back exactly as they were given.
    lat: numeric({ precision: 9, scale: 6 }),
    lng: numeric({ precision: 9, scale: 6 }),
    /** Free text, e.g. OpenStreetMap's "Mo-Fr 09:00-18:00; Sa 10:00-14:00". */
    openingHours: text('opening_hours'),
    isActive: boolean('is_active').notNull().default(true),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('shops_partner_idx').on(t.partnerId, t.id),
    uniqueIndex('shops_partner_code_key').on(t.partnerId, t.code).where(sql`${t.code} is not null`),
    // The bounding-box prefilter of shops/nearby: a range on lat, then lng, within a partner.
    index('shops_partner_location_idx').on(t.partnerId, t.lat, t.lng).where(sql`${t.lat} is not null`),
  ],
);
