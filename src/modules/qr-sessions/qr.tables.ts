// QR sessions (DESIGN.md §5): a till or web shop shows a QR code; the customer's app scans
// it. The QR carries a scan code (its own 128 random bits, stored only as a digest); the
// session id is the secret of the public realtime channel and is never shown.
import { sql } from 'drizzle-orm';
import { index, integer, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { customers } from '../customers/customers.tables.js';
import { loyaltyCards } from '../loyalty-cards/loyalty-cards.tables.js';
import { partners } from '../partners/partners.tables.js';
import { shops } from '../shops/shops.tables.js';

const tz = (name: string) => timestamp(name, { withTimezone: true });

export const QR_LOGIN_STATUSES = ['pending', 'scanned', 'authenticated', 'rejected', 'expired'] as const;
export type QrLoginStatus = (typeof QR_LOGIN_STATUSES)[number];

export const qrLoginSessions = pgTable(
  'qr_login_sessions',
  {
    id: text().primaryKey(),
    scanCodeHash: text('scan_code_hash').notNull(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    shopId: integer('shop_id').references(() => shops.id, { onDelete: 'set null' }),
    deviceName: text('device_name').notNull(),
    status: text({ enum: QR_LOGIN_STATUSES }).notNull().default('pending'),
    /** The customer who scanned (and then confirmed or rejected). */
    customerId: integer('customer_id').references(() => customers.id, { onDelete: 'cascade' }),
    /** Bumped at every change and sent with each event, so a client can order them. */
    seq: integer().notNull().default(0),
    createdAt: tz('created_at').notNull(),
    expiresAt: tz('expires_at').notNull(),
    scannedAt: tz('scanned_at'),
    completedAt: tz('completed_at'),
    /** When the poll handed out the token: it is handed out once. */
    tokenIssuedAt: tz('token_issued_at'),
  },
  (t) => [
    uniqueIndex('qr_login_sessions_scan_code_key').on(t.scanCodeHash),
    index('qr_login_sessions_open_idx').on(t.expiresAt).where(sql`${t.status} in ('pending', 'scanned')`),
  ],
);

export const QR_CARD_STATUSES = ['pending', 'scanned', 'expired'] as const;
export type QrCardStatus = (typeof QR_CARD_STATUSES)[number];

export const qrCardSessions = pgTable(
  'qr_card_sessions',
  {
    id: text().primaryKey(),
    scanCodeHash: text('scan_code_hash').notNull(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    shopId: integer('shop_id').references(() => shops.id, { onDelete: 'set null' }),
    deviceName: text('device_name'),
    status: text({ enum: QR_CARD_STATUSES }).notNull().default('pending'),
    cardId: integer('card_id').references(() => loyaltyCards.id, { onDelete: 'cascade' }),
    seq: integer().notNull().default(0),
    createdAt: tz('created_at').notNull(),
    expiresAt: tz('expires_at').notNull(),
    scannedAt: tz('scanned_at'),
  },
  (t) => [
    uniqueIndex('qr_card_sessions_scan_code_key').on(t.scanCodeHash),
    index('qr_card_sessions_open_idx').on(t.expiresAt).where(sql`${t.status} = 'pending'`),
  ],
);
