// SMS: accounts (prepaid EUR balance, per-country prices, approved senders), messages with
// their parts and status history, the account ledger, carrier receipts and marketing consent.
// The committed `sms_messages` row is the dispatch queue (DESIGN.md §1, §4).
import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { partners } from '../partners/partners.tables.js';

const tz = (name: string) => timestamp(name, { withTimezone: true });

export const smsAccounts = pgTable(
  'sms_accounts',
  {
    partnerId: integer('partner_id')
      .primaryKey()
      .references(() => partners.id, { onDelete: 'cascade' }),
    // Exact decimal EUR; never a float.
    balance: numeric({ precision: 14, scale: 4 }).notNull().default('0'),
    currency: text().notNull().default('EUR'),
    transliterate: boolean().notNull().default(false),
    /** Per-country price per part overrides, e.g. {"LT": "0.0450"}. */
    prices: jsonb().$type<Record<string, string>>().notNull().default({}),
    createdAt: tz('created_at').notNull().defaultNow(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
  },
  (t) => [check('sms_accounts_balance_non_negative', sql`${t.balance} >= 0`)],
);

export const smsSenders = pgTable(
  'sms_senders',
  {
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    approvedAt: tz('approved_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.partnerId, t.name] })],
);

export const SMS_STATUSES = ['queued', 'sent', 'delivered', 'failed', 'expired'] as const;
export type SmsStatus = (typeof SMS_STATUSES)[number];

export const smsMessages = pgTable(
  'sms_messages',
  {
    id: text().primaryKey(),
    /** null for the platform's own messages (sign-in codes), which no partner pays for or sees. */
    partnerId: integer('partner_id').references(() => partners.id, { onDelete: 'cascade' }),
    source: text().notNull(),
    destination: text().notNull(),
    /** ISO 3166-1 alpha-2 of the destination, for pricing. */
    country: text().notNull(),
    /** The text handed to the carrier (after transliteration, if asked for). */
    body: text().notNull(),
    encoding: text({ enum: ['GSM-7', 'UCS-2'] }).notNull(),
    transliterated: boolean().notNull().default(false),
    parts: integer().notNull(),
    pricePerPart: numeric('price_per_part', { precision: 10, scale: 4 }).notNull(),
    cost: numeric({ precision: 14, scale: 4 }).notNull(),
    status: text({ enum: SMS_STATUSES }).notNull().default('queued'),
    scheduledAt: tz('scheduled_at'),
    validityAt: tz('validity_at'),
    receipt: boolean().notNull().default(false),
    receiptUrl: text('receipt_url'),
    marketingConsent: boolean('marketing_consent').notNull().default(false),
    carrier: text().notNull(),
    /**
     * Set while a dispatcher holds the message for a non-transactional carrier (SMPP): in the
     * same committed transaction that records the hand-over (sms_handovers) of the parts about
     * to be written, and cleared when every part handed over has its answer recorded. A
     * queued row still holding it after SMS_IN_DOUBT_AFTER_MS has a part that may or may not
     * have reached the carrier; it is never handed over a second time (dispatcher.ts).
     */
    submittingAt: tz('submitting_at'),
    /** Earliest next dispatch attempt (transient carrier errors back off). */
    nextAttemptAt: tz('next_attempt_at').notNull().defaultNow(),
    dispatchAttempts: integer('dispatch_attempts').notNull().default(0),
    createdAt: tz('created_at').notNull().defaultNow(),
    sentAt: tz('sent_at'),
    deliveredAt: tz('delivered_at'),
    failedAt: tz('failed_at'),
    expiredAt: tz('expired_at'),
    errorMessage: text('error_message'),
    refundedAt: tz('refunded_at'),
  },
  (t) => [
    index('sms_messages_partner_idx').on(t.partnerId, t.createdAt),
    // The dispatcher's queue scan: only queued rows are indexed.
    index('sms_messages_queue_idx').on(t.nextAttemptAt).where(sql`${t.status} = 'queued'`),
    // The expiry sweep: undelivered rows with a validity.
    index('sms_messages_validity_idx').on(t.validityAt).where(sql`${t.status} in ('queued', 'sent')`),
  ],
);

/** One row per part as the carrier knows it; receipts arrive per part. */
export const smsMessageParts = pgTable(
  'sms_message_parts',
  {
    messageId: text('message_id')
      .notNull()
      .references(() => smsMessages.id, { onDelete: 'cascade' }),
    partNo: integer('part_no').notNull(),
    carrierMessageId: text('carrier_message_id').notNull(),
    state: text({ enum: ['sent', 'delivered', 'failed', 'expired'] }).notNull().default('sent'),
    error: text(),
    /** When the SMSC accepted the part: carrier ids are unique only in time (an SMSC that restarts may reuse them). */
    acceptedAt: tz('accepted_at').notNull().defaultNow(),
    /** When the part was written to the SMSC (its hand-over); a receipt matches only a part submitted before it. */
    submittedAt: tz('submitted_at'),
    updatedAt: tz('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.messageId, t.partNo] }), index('sms_message_parts_carrier_idx').on(t.carrierMessageId, t.acceptedAt)],
);

/**
 * SMPP hand-overs, one row per part per attempt, committed before that part's submit_sm is
 * written. `answered_at` is set with the outcome once it is known: `accepted`
 * (submit_sm_resp OK; the carrier's id is in sms_message_parts), `refused` (an error
 * status), `not_sent` (the PDU never left: session lost, closing), `unknown` (written, no
 * answer in time). A row without an answer after a crash is a part that may have left: the
 * message is in doubt. A part with no row never left and is sent normally.
 */
export const smsHandovers = pgTable(
  'sms_handovers',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    messageId: text('message_id')
      .notNull()
      .references(() => smsMessages.id, { onDelete: 'cascade' }),
    partNo: integer('part_no').notNull(),
    handedAt: tz('handed_at').notNull().defaultNow(),
    answeredAt: tz('answered_at'),
    outcome: text({ enum: ['accepted', 'refused', 'not_sent', 'unknown'] }),
    error: text(),
  },
  (t) => [
    index('sms_handovers_message_idx').on(t.messageId, t.partNo),
    // A receipt waits while a part handed over before it has no answer yet.
    index('sms_handovers_unanswered_idx').on(t.handedAt).where(sql`${t.answeredAt} is null`),
  ],
);

/** Every status transition of a message, with its time (append-only). */
export const smsStatusEvents = pgTable(
  'sms_status_events',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    messageId: text('message_id')
      .notNull()
      .references(() => smsMessages.id, { onDelete: 'cascade' }),
    status: text({ enum: SMS_STATUSES }).notNull(),
    detail: text(),
    at: tz('at').notNull().defaultNow(),
  },
  (t) => [index('sms_status_events_message_idx').on(t.messageId, t.id)],
);

/** Every change of an SMS account balance (append-only): top-ups, charges, refunds. */
export const smsAccountLedger = pgTable(
  'sms_account_ledger',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    kind: text({ enum: ['top_up', 'charge', 'refund'] }).notNull(),
    amount: numeric({ precision: 14, scale: 4 }).notNull(),
    balanceAfter: numeric('balance_after', { precision: 14, scale: 4 }).notNull(),
    messageId: text('message_id'),
    createdAt: tz('created_at').notNull().defaultNow(),
  },
  (t) => [
    index('sms_account_ledger_partner_idx').on(t.partnerId, t.id),
    // At most one charge and one refund per message, whatever retries happen.
    uniqueIndex('sms_account_ledger_message_kind_key').on(t.messageId, t.kind).where(sql`${t.messageId} is not null`),
  ],
);

/**
 * Delivery receipts as received from the carrier: a receipt can arrive before the submit
 * response that tells us its id has been recorded, or in a later session. `outcome` null: it
 * waits for its part (at most RECEIPT_WAIT_MS); `applied`: it moved its part; `unapplied`: it
 * moved nothing (no part, or its part already final) and is kept for operators, `note` says why.
 */
export const smsCarrierReceipts = pgTable(
  'sms_carrier_receipts',
  {
    carrierMessageId: text('carrier_message_id').primaryKey(),
    state: text({ enum: ['delivered', 'failed', 'expired'] }).notNull(),
    error: text(),
    /** The handset the receipt names (deliver_sm source_addr): `+` and digits, or digits as the SMSC wrote them. */
    destination: text(),
    receivedAt: tz('received_at').notNull().defaultNow(),
    appliedAt: tz('applied_at'),
    outcome: text({ enum: ['applied', 'unapplied'] }),
    note: text(),
  },
  (t) => [index('sms_carrier_receipts_pending_idx').on(t.receivedAt).where(sql`${t.outcome} is null`)],
);

/** The built-in carrier simulator's own record: what it was handed, and when to report. */
export const smsSimulatorSubmissions = pgTable(
  'sms_simulator_submissions',
  {
    messageId: text('message_id').primaryKey(),
    destination: text().notNull(),
    parts: integer().notNull(),
    submittedAt: tz('submitted_at').notNull().defaultNow(),
    /** delivered | failed | none (stays sent until validity) */
    outcome: text({ enum: ['delivered', 'failed', 'none'] }).notNull(),
    reportAt: tz('report_at').notNull(),
    reportedAt: tz('reported_at'),
  },
  (t) => [index('sms_simulator_due_idx').on(t.reportAt).where(sql`${t.reportedAt} is null`)],
);

/** The current marketing consent of a phone number, per partner. */
export const smsConsents = pgTable(
  'sms_consents',
  {
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    phone: text().notNull(),
    consentGiven: boolean('consent_given').notNull(),
    consentSource: text('consent_source').notNull(),
    consentDate: tz('consent_date'),
    revokedAt: tz('revoked_at'),
    updatedAt: tz('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.partnerId, t.phone] })],
);

/** Every consent change, never updated or deleted: who, how, where from, when. */
export const smsConsentHistory = pgTable(
  'sms_consent_history',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    phone: text().notNull(),
    consentGiven: boolean('consent_given').notNull(),
    consentSource: text('consent_source').notNull(),
    clientIp: text('client_ip'),
    clientUserAgent: text('client_user_agent'),
    consentPageUrl: text('consent_page_url'),
    messageId: text('message_id'),
    createdAt: tz('created_at').notNull().defaultNow(),
  },
  (t) => [index('sms_consent_history_phone_idx').on(t.partnerId, t.phone, t.id)],
);
