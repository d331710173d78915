// SQL for webhook secrets, the delivery outbox and its attempts. Reads for the partner
// take the owning partner: another partner's delivery is simply not found.
import { and, asc, count, desc, eq, inArray, sql } from 'drizzle-orm';
import { executePrepared, type Db, type Executor } from '../../infra/db/index.js';
import { webhookAttempts, webhookDeliveries, webhookSecrets, webhookSubscriptions } from './webhooks.tables.js';

export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type AttemptRow = typeof webhookAttempts.$inferSelect;
export type SubscriptionRow = typeof webhookSubscriptions.$inferSelect;
export type SubscriptionChanges = Partial<Pick<typeof webhookSubscriptions.$inferInsert, 'url' | 'events' | 'isActive' | 'description'>>;

/** Notified (on commit) whenever a delivery is enqueued, so that every node's worker wakes. */
export const WEBHOOKS_CHANNEL = 'loyalty_webhooks';
/** Notified (on commit) with the partner id whenever its subscriptions change: every node forgets what it cached. */
export const SUBSCRIPTIONS_CHANNEL = 'loyalty_webhook_subscriptions';

const pending = sql`${webhookDeliveries.status} = 'pending'`;
/**
 * A subscription's deliveries go in the order of their events (DESIGN.md §14, docs/webhooks.md
 * "Order"): one is claimable only while no earlier delivery to the same subscription is
 * pending (waiting for a retry, or in flight). A `ping` is neither held back nor holds others
 * back: it answers the partner's test button at once. SMS receipts to a message's receiptURL
 * (no subscription) are not ordered, as before.
 */
const inOrder = sql`(${webhookDeliveries.subscriptionId} is null or ${webhookDeliveries.eventType} = 'ping' or not exists (
  select 1 from webhook_deliveries e
  where e.subscription_id = ${webhookDeliveries.subscriptionId} and e.status = 'pending' and e.id < ${webhookDeliveries.id} and e.event_type <> 'ping'))`;
const msFromNow = (ms: number) => sql`now() + ${Math.max(0, Math.round(ms))} * interval '1 millisecond'`;

export interface AttemptOutcome {
  attemptedAt: Date;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

export type NextState = { status: 'delivered' } | { status: 'failed' } | { status: 'pending'; inMs: number };

export const webhooksRepository = {
  async findSecret(db: Executor, partnerId: number): Promise<string | undefined> {
    const [row] = await db.select({ secret: webhookSecrets.secret }).from(webhookSecrets).where(eq(webhookSecrets.partnerId, partnerId));
    return row?.secret;
  },

  /** Inserts `secret` unless the partner has one; returns the partner's secret either way. */
  async ensureSecret(db: Executor, partnerId: number, secret: string): Promise<string> {
    const [inserted] = await db
      .insert(webhookSecrets)
      .values({ partnerId, secret })
      .onConflictDoNothing({ target: webhookSecrets.partnerId })
      .returning({ secret: webhookSecrets.secret });
    if (inserted) return inserted.secret;
    const existing = await webhooksRepository.findSecret(db, partnerId);
    if (existing === undefined) throw new Error(`webhook secret of partner ${partnerId} vanished`);
    return existing;
  },

  async replaceSecret(db: Executor, partnerId: number, secret: string): Promise<string> {
    const [row] = await db
      .insert(webhookSecrets)
      .values({ partnerId, secret })
      .onConflictDoUpdate({ target: webhookSecrets.partnerId, set: { secret, rotatedAt: sql`now()` } })
      .returning({ secret: webhookSecrets.secret });
    return row!.secret;
  },

  async insertDelivery(
    db: Executor,
    values: { eventId: string; partnerId: number; eventType: string; url: string; body: string },
  ): Promise<void> {
    await db.insert(webhookDeliveries).values(values);
    await db.execute(sql`select pg_notify(${WEBHOOKS_CHANNEL}, '')`);
  },

  /**
   * Claims up to `limit` due deliveries for this worker: locks them (skipping rows another
   * node holds), counts the attempt and moves next_attempt_at past the lease, then commits.
   * Another node sees them again only if this one never reports back (crash).
   */
  async claimDue(db: Db, limit: number, leaseMs: number): Promise<DeliveryRow[]> {
    return db.transaction(async (tx) => {
      const due = await tx
        .select({ id: webhookDeliveries.id })
        .from(webhookDeliveries)
        .where(and(pending, sql`${webhookDeliveries.nextAttemptAt} <= now()`, inOrder))
        .orderBy(asc(webhookDeliveries.nextAttemptAt), asc(webhookDeliveries.id))
        .limit(limit)
        .for('update', { skipLocked: true });
      if (due.length === 0) return [];
      return tx
        .update(webhookDeliveries)
        .set({ attempts: sql`${webhookDeliveries.attempts} + 1`, nextAttemptAt: msFromNow(leaseMs) })
        .where(
          inArray(
            webhookDeliveries.id,
            due.map((d) => d.id),
          ),
        )
        .returning();
    });
  },

  /**
   * Records attempt `attemptNo` and its consequence. The delivery row is changed only if it
   * is still this attempt's (a lease that ran out may have let another node take it over).
   */
  async recordAttempt(db: Db, deliveryId: number, attemptNo: number, outcome: AttemptOutcome, next: NextState): Promise<void> {
    await db.transaction(async (tx) => {
      await tx.insert(webhookAttempts).values({ deliveryId, attemptNo, ...outcome });
      await tx
        .update(webhookDeliveries)
        .set({
          status: next.status,
          lastAttemptAt: outcome.attemptedAt,
          lastStatusCode: outcome.statusCode,
          lastError: outcome.error,
          ...(next.status === 'pending' ? { nextAttemptAt: msFromNow(next.inMs) } : {}),
          ...(next.status === 'delivered' ? { deliveredAt: sql`now()` } : {}),
        })
        .where(and(eq(webhookDeliveries.id, deliveryId), pending, eq(webhookDeliveries.attempts, attemptNo)));
    });
  },

  /** Gives back a claim that was not attempted (shutdown): due now, the attempt not counted. */
  async release(db: Db, deliveryId: number, attemptNo: number): Promise<void> {
    await db
      .update(webhookDeliveries)
      .set({ attempts: sql`${webhookDeliveries.attempts} - 1`, nextAttemptAt: sql`now()` })
      .where(and(eq(webhookDeliveries.id, deliveryId), pending, eq(webhookDeliveries.attempts, attemptNo)));
  },

  /**
   * One event to every active subscription of the partner that lists its type (or "*"): one
   * statement, whatever their number. Returns how many deliveries it wrote.
   */
  async insertEventDeliveries(db: Executor, e: { eventId: string; partnerId: number; eventType: string; body: string }): Promise<number> {
    const rows = await executePrepared<{ id: number }>(
      db,
      sql`insert into webhook_deliveries (event_id, subscription_id, partner_id, event_type, url, body)
        select ${e.eventId}, s.id, s.partner_id, ${e.eventType}, s.url, ${e.body}
        from webhook_subscriptions s
        where s.partner_id = ${e.partnerId} and s.is_active and s.events && array[${e.eventType}, '*']::text[]
        order by s.id
        returning id`,
    );
    if (rows.length > 0) await db.execute(sql`select pg_notify(${WEBHOOKS_CHANNEL}, '')`);
    return rows.length;
  },

  /** A ping to one subscription, whatever its event list or state (the test button). */
  async insertPing(db: Executor, values: { eventId: string; partnerId: number; subscriptionId: number; url: string; body: string }): Promise<DeliveryRow> {
    const [row] = await db
      .insert(webhookDeliveries)
      .values({ ...values, eventType: 'ping' })
      .returning();
    await db.execute(sql`select pg_notify(${WEBHOOKS_CHANNEL}, '')`);
    return row!;
  },

  /** The event types the partner's active subscriptions listen to (one indexed read). */
  async subscribedTypes(db: Executor, partnerId: number): Promise<string[]> {
    const rows = await db
      .select({ events: webhookSubscriptions.events })
      .from(webhookSubscriptions)
      .where(and(eq(webhookSubscriptions.partnerId, partnerId), eq(webhookSubscriptions.isActive, true)));
    return rows.flatMap((r) => r.events);
  },

  listSubscriptions(db: Executor, partnerId: number): Promise<SubscriptionRow[]> {
    return db.select().from(webhookSubscriptions).where(eq(webhookSubscriptions.partnerId, partnerId)).orderBy(asc(webhookSubscriptions.id));
  },

  async findSubscription(db: Executor, partnerId: number, id: number): Promise<SubscriptionRow | undefined> {
    const [row] = await db
      .select()
      .from(webhookSubscriptions)
      .where(and(eq(webhookSubscriptions.partnerId, partnerId), eq(webhookSubscriptions.id, id)));
    return row;
  },

  /** Serialises the partner's subscription changes (the count of 10 is read under it). */
  async lockPartner(db: Executor, partnerId: number): Promise<void> {
    await db.execute(sql`select id from partners where id = ${partnerId} for update`);
  },

  async countSubscriptions(db: Executor, partnerId: number): Promise<number> {
    const [row] = await db.select({ n: count() }).from(webhookSubscriptions).where(eq(webhookSubscriptions.partnerId, partnerId));
    return row?.n ?? 0;
  },

  async insertSubscription(
    db: Executor,
    values: { partnerId: number; url: string; events: string[]; isActive: boolean; description: string | null },
  ): Promise<SubscriptionRow> {
    const [row] = await db.insert(webhookSubscriptions).values(values).returning();
    await db.execute(sql`select pg_notify(${SUBSCRIPTIONS_CHANNEL}, ${String(values.partnerId)})`);
    return row!;
  },

  async updateSubscription(db: Executor, partnerId: number, id: number, changes: SubscriptionChanges): Promise<SubscriptionRow | undefined> {
    const [row] = await db
      .update(webhookSubscriptions)
      .set({ ...changes, updatedAt: sql`now()` })
      .where(and(eq(webhookSubscriptions.partnerId, partnerId), eq(webhookSubscriptions.id, id)))
      .returning();
    if (row) await db.execute(sql`select pg_notify(${SUBSCRIPTIONS_CHANNEL}, ${String(partnerId)})`);
    return row;
  },

  /**
   * Deletes the subscription; its deliveries not yet made end `failed` (nobody asked for them
   * any more) and stay listed with every attempt.
   */
  async deleteSubscription(db: Executor, partnerId: number, id: number): Promise<boolean> {
    const [row] = await db
      .delete(webhookSubscriptions)
      .where(and(eq(webhookSubscriptions.partnerId, partnerId), eq(webhookSubscriptions.id, id)))
      .returning({ id: webhookSubscriptions.id });
    if (!row) return false;
    await db.execute(sql`select pg_notify(${SUBSCRIPTIONS_CHANNEL}, ${String(partnerId)})`);
    return true;
  },

  /** Ends the pending deliveries of a subscription about to be deleted. */
  async cancelPending(db: Executor, partnerId: number, subscriptionId: number): Promise<void> {
    await db
      .update(webhookDeliveries)
      .set({ status: 'failed', lastError: 'subscription deleted' })
      .where(and(eq(webhookDeliveries.partnerId, partnerId), eq(webhookDeliveries.subscriptionId, subscriptionId), pending));
  },

  async list(db: Executor, partnerId: number, limit: number, offset: number) {
    const rows = await db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.partnerId, partnerId))
      .orderBy(desc(webhookDeliveries.id))
      .limit(limit)
      .offset(offset);
    const [total] = await db.select({ n: count() }).from(webhookDeliveries).where(eq(webhookDeliveries.partnerId, partnerId));
    return { rows, total: total?.n ?? 0 };
  },

  async find(db: Executor, partnerId: number, id: number): Promise<DeliveryRow | undefined> {
    const [row] = await db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.partnerId, partnerId), eq(webhookDeliveries.id, id)));
    return row;
  },

  async findByEventId(db: Executor, eventId: string): Promise<DeliveryRow | undefined> {
    const [row] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, eventId));
    return row;
  },

  deliveriesOfEvent(db: Executor, eventId: string): Promise<DeliveryRow[]> {
    return db.select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, eventId)).orderBy(asc(webhookDeliveries.id));
  },

  attemptsOf(db: Executor, deliveryId: number): Promise<AttemptRow[]> {
    return db
      .select()
      .from(webhookAttempts)
      .where(eq(webhookAttempts.deliveryId, deliveryId))
      .orderBy(asc(webhookAttempts.attemptNo), asc(webhookAttempts.id));
  },
};
