// The message thread between the platform's admins and one partner (DESIGN.md §7), with
// attachments. A file's bytes live in the file store under a random key; the row keeps the
// client's file name only to offer it back on download.
import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { admins } from '../admin/admin.tables.js';
import { partners } from '../partners/partners.tables.js';

const tz = (name: string) => timestamp(name, { withTimezone: true });

export const partnerMessages = pgTable(
  'partner_messages',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    /** The thread: one per partner. */
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    sender: text({ enum: ['admin', 'partner'] }).notNull(),
    /** Which admin wrote it (admin messages only). */
    adminId: integer('admin_id').references(() => admins.id, { onDelete: 'set null' }),
    body: text().notNull(),
    createdAt: tz('created_at').notNull().defaultNow(),
    /** When the other side first listed it; null = unread. */
    readAt: tz('read_at'),
  },
  (t) => [index('partner_messages_thread_idx').on(t.partnerId, t.id)],
);

export const partnerMessageAttachments = pgTable(
  'partner_message_attachments',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    messageId: integer('message_id')
      .notNull()
      .references(() => partnerMessages.id, { onDelete: 'cascade' }),
    /** Kept beside message_id so that every lookup checks the tenant in one index. */
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    /** The client's file name, cleaned; never used on disk. */
    filename: text().notNull(),
    contentType: text('content_type').notNull(),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    sha256: text().notNull(),
    /** The file store's random key. */
    storageKey: text('storage_key').notNull(),
    createdAt: tz('created_at').notNull().defaultNow(),
  },
  (t) => [
    check('partner_message_attachments_size_non_negative', sql`${t.sizeBytes} >= 0`),
    index('partner_message_attachments_message_idx').on(t.messageId, t.id),
  ],
);
