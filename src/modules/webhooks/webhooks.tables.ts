// Outgoing webhooks: the partner's signing secret and an outbox of deliveries with every
// attempt recorded. A delivery row is written in the same transaction as the event it
// reports, so an event is announced if and only if it happened.
import { sql } from 'drizzle-orm';
import { bigint, boolean, customType, index, integer, pgSequence, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { partners } from '../partners/partners.tables.js';

const tz = (name: string) => timestamp(name, { withTimezone: true });

export const webhookSecrets = pgTable('webhook_secrets', {
  partnerId: integer('partner_id')
    .primaryKey()
    .references(() => partners.id, { onDelete: 'cascade' }),
  /** The HMAC key itself (DESIGN.md §7): it must be shown to the partner, so it is kept as is. */
  secret: text().notNull(),
  createdAt: tz('created_at').notNull().defaultNow(),
  rotatedAt: tz('rotated_at'),
});

/**
 * A partner's event subscriptions (DESIGN.md §14): where to POST which event types ("*" = all).
 * At most 10 per partner (checked under the partner's lock when one is added).
 */
export const webhookSubscriptions = pgTable(
  'webhook_subscriptions',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    url: text().notNull(),
    /** Event type names, or ["*"] for every type. */
    events: text().array().notNull(),
    isActive: boolean('is_active').notNull().default(true),
    description: text(),
    createdAt: tz('created_at').notNull().defaultNow(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
  },
  (t) => [index('webhook_subscriptions_partner_idx').on(t.partnerId, t.id)],
);

/**
 * `sequence` of the partner events (DESIGN.md §14): drawn by the insert that emits an event,
 * so it increases in the order events are created — for every partner at once, with no
 * per-partner counter row for the award path to queue on. Gaps are normal (a rolled-back
 * event keeps its number).
 */
export const webhookEventSequence = pgSequence('webhook_event_sequence', { startWith: 1, increment: 1, minValue: 1, cache: 1 });

/** PostgreSQL's 64-bit transaction id (`pg_current_xact_id()`), read as its decimal text. */
const xid8 = customType<{ data: string; driverData: string }>({ dataType: () => 'xid8' });

export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    /** X-Loyalty-Event-Id: one per event (shared by its deliveries to several subscriptions), the same on every retry. */
    eventId: text('event_id').notNull(),
    /**
     * The subscription it goes to (DESIGN.md §14); null for an SMS receipt to its message's
     * receiptURL (§4), and once the subscription is deleted. Each delivery has its own retry
     * schedule: none waits for another (receivers order events by `sequence`).
     */
    subscriptionId: integer('subscription_id').references(() => webhookSubscriptions.id, { onDelete: 'set null' }),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    eventType: text('event_type').notNull(),
    url: text().notNull(),
    /** The exact JSON body sent (and signed) on every attempt. */
    body: text().notNull(),
    /**
     * The event's `sequence` (as in its body; the same on its deliveries to several
     * subscriptions); null for an SMS receipt, whose body is §4's and carries none.
     */
    sequence: bigint({ mode: 'number' }),
    /**
     * The emitting transaction (`pg_current_xact_id()`), beside `sequence`: numbers are drawn
     * before commit, so a later number can commit first; a reader listing by `sequence` can
     * hold back what a transaction still running might precede (docs/decisions.md).
     */
    xactId: xid8('xact_id'),
    status: text({ enum: ['pending', 'delivered', 'failed'] }).notNull().default('pending'),
    attempts: integer().notNull().default(0),
    nextAttemptAt: tz('next_attempt_at').notNull().defaultNow(),
    lastAttemptAt: tz('last_attempt_at'),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    createdAt: tz('created_at').notNull().defaultNow(),
    deliveredAt: tz('delivered_at'),
  },
  (t) => [
    uniqueIndex('webhook_deliveries_event_subscription_key').on(t.eventId, t.subscriptionId),
    index('webhook_deliveries_subscription_pending_idx').on(t.subscriptionId, t.id).where(sql`${t.status} = 'pending'`),
    // The claim: is anything due; partners with pending deliveries (a skip scan), each one's due ones.
    index('webhook_deliveries_due_idx').on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
    index('webhook_deliveries_partner_due_idx').on(t.partnerId, t.nextAttemptAt, t.id).where(sql`${t.status} = 'pending'`),
    index('webhook_deliveries_partner_idx').on(t.partnerId, t.id),
  ],
);

export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    deliveryId: integer('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    attemptNo: integer('attempt_no').notNull(),
    attemptedAt: tz('attempted_at').notNull().defaultNow(),
    statusCode: integer('status_code'),
    error: text(),
    durationMs: integer('duration_ms'),
  },
  (t) => [index('webhook_attempts_delivery_idx').on(t.deliveryId, t.attemptNo)],
);
