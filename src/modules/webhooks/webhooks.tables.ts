// Outgoing webhooks: the partner's signing secret and an outbox of deliveries with every
// attempt recorded. A delivery row is written in the same transaction as the event it
// reports, so an event is announced if and only if it happened.
import { sql } from 'drizzle-orm';
import { boolean, index, integer, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
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

export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    /** X-Loyalty-Event-Id: one per event (shared by its deliveries to several subscriptions), the same on every retry. */
    eventId: text('event_id').notNull(),
    /**
     * The subscription it goes to (DESIGN.md §14); null for an SMS receipt to its message's
     * receiptURL (§4), and once the subscription is deleted. A subscription's deliveries go
     * in order: one waits while an earlier one to the same subscription is pending.
     */
    subscriptionId: integer('subscription_id').references(() => webhookSubscriptions.id, { onDelete: 'set null' }),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    eventType: text('event_type').notNull(),
    url: text().notNull(),
    /** The exact JSON body sent (and signed) on every attempt. */
    body: text().notNull(),
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
    index('webhook_deliveries_due_idx').on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
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
