// The e-mail outbox (DESIGN.md §1 "e-mail", §7 "Admin e-mail"): a message is written in the
// transaction of the request that sends it and delivered by the mail worker, with retries.
// Nothing accepted is lost: the row is the queue.
import { sql } from 'drizzle-orm';
import { index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { admins } from '../admin/admin.tables.js';
import { partners } from '../partners/partners.tables.js';

const tz = (name: string) => timestamp(name, { withTimezone: true });

export const MAIL_STATUSES = ['pending', 'sent', 'failed'] as const;
export type MailStatus = (typeof MAIL_STATUSES)[number];

export const mailOutbox = pgTable(
  'mail_outbox',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    /** The Message-ID header: fixed at enqueue, the same on every attempt (receivers can drop duplicates). */
    messageId: text('message_id').notNull(),
    /** The partner it was sent to (admin e-mail); null for other kinds of mail. */
    partnerId: integer('partner_id').references(() => partners.id, { onDelete: 'set null' }),
    sentByAdminId: integer('sent_by_admin_id').references(() => admins.id, { onDelete: 'set null' }),
    fromAddress: text('from_address').notNull(),
    toAddress: text('to_address').notNull(),
    subject: text().notNull(),
    /** Plain-text body; never logged. */
    body: text().notNull(),
    status: text({ enum: MAIL_STATUSES }).notNull().default('pending'),
    attempts: integer().notNull().default(0),
    nextAttemptAt: tz('next_attempt_at').notNull().defaultNow(),
    lastAttemptAt: tz('last_attempt_at'),
    lastError: text('last_error'),
    /** Where it went: "smtp" or "file", and the SMTP server's answer or the .eml path. */
    transport: text(),
    transportResponse: text('transport_response'),
    createdAt: tz('created_at').notNull().defaultNow(),
    sentAt: tz('sent_at'),
  },
  (t) => [
    index('mail_outbox_due_idx').on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
    index('mail_outbox_partner_idx').on(t.partnerId, t.id),
  ],
);
