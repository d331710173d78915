// SQL for webhook secrets, the delivery outbox and its attempts. Reads for the partner
// take the owning partner: another partner's delivery is simply not found.
import { and, asc, count, desc, eq, inArray, sql } from 'drizzle-orm';
import { executePrepared, type Db, type Executor } from '../../infra/db/index.js';
import type { EventBodyText } from './webhooks.event-body.js';
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
/** Up to this many due deliveries the claim reads their partners off the due index; beyond, it skip-scans the partners. */
const DUE_SAMPLE = 256;
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
   *
   * Fair between partners (DESIGN.md §14): partner p gets at most `allowance(p)` of them —
   * `perPartner` less what this node already has in flight for it (`inFlight`) — and the
   * partners take turns: every partner's oldest due delivery comes before anyone's second.
   * Which partners have something due: with fewer than DUE_SAMPLE due deliveries in all (the
   * usual case; none at all on an idle poll) they are read off the due index; with more, by a
   * skip scan of the pending partner index (one probe per partner with anything pending).
   * Then each one's due deliveries, oldest first, up to its allowance: a partner's backlog,
   * however long, costs the claim no more than that.
   */
  async claimDue(db: Db, limit: number, leaseMs: number, fairness: { perPartner: number; inFlight: ReadonlyMap<number, number> }): Promise<DeliveryRow[]> {
    const busy = [...fairness.inFlight].filter(([, n]) => n > 0);
    const busyIds = `{${busy.map(([id]) => id).join(',')}}`;
    const busyCounts = `{${busy.map(([, n]) => n).join(',')}}`;
    // An idle poll (nothing due: the usual case) costs one probe of the due index, no transaction.
    const anything = await executePrepared<{ one: number }>(
      db,
      sql`select 1 as one from webhook_deliveries where status = 'pending' and next_attempt_at <= now() order by next_attempt_at limit 1`,
    );
    if (anything.length === 0) return [];
    // The candidates, in turn order (read without locks; a few more than wanted, so that rows
    // another node is claiming at this moment do not leave this claim short).
    const candidates = await executePrepared<{ id: number }>(
      db,
      sql`with recursive due_sample as materialized (
              select d.partner_id from webhook_deliveries d
              where d.status = 'pending' and d.next_attempt_at <= now()
              order by d.next_attempt_at
              limit ${DUE_SAMPLE}
            ),
            partners_pending as (
              (select d.partner_id from webhook_deliveries d
               where d.status = 'pending' and (select count(*) from due_sample) >= ${DUE_SAMPLE}
               order by d.partner_id limit 1)
              union all
              select (select d.partner_id from webhook_deliveries d
                      where d.status = 'pending' and d.partner_id > p.partner_id order by d.partner_id limit 1)
              from partners_pending p where p.partner_id is not null
            ),
            partners_due as (
              select distinct s.partner_id from due_sample s where (select count(*) from due_sample) < ${DUE_SAMPLE}
              union all
              select p.partner_id from partners_pending p where p.partner_id is not null
            ),
            allowance as (
              select p.partner_id, ${fairness.perPartner}::int - coalesce(b.n, 0) as n
              from partners_due p
              left join unnest(${busyIds}::int[], ${busyCounts}::int[]) as b(partner_id, n) on b.partner_id = p.partner_id
            ),
            picked as (
              select a.partner_id, c.id, c.next_attempt_at
              from allowance a
              cross join lateral (
                select d.id, d.next_attempt_at
                from webhook_deliveries d
                where d.partner_id = a.partner_id and d.status = 'pending' and d.next_attempt_at <= now()
                order by d.next_attempt_at, d.id
                limit greatest(a.n, 0)
              ) c
            ),
            candidates as (
              select id, next_attempt_at, row_number() over (partition by partner_id order by next_attempt_at, id) as turn
              from picked
            )
        select c.id from candidates c order by c.turn, c.next_attempt_at, c.id limit ${limit * 4}`,
    );
    if (candidates.length === 0) return [];
    const ids = `{${candidates.map((c) => c.id).join(',')}}`;
    return db.transaction(async (tx) => {
      // Locked by primary key (a plan that cannot turn into a scan of every due row), in turn order.
      const due = await executePrepared<{ id: number }>(
        tx,
        sql`select id from webhook_deliveries
          where id = any(${ids}::int[]) and status = 'pending' and next_attempt_at <= now()
          order by array_position(${ids}::int[], id)
          limit ${limit}
          for update skip locked`,
      );
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
   * Ends a claimed delivery without an attempt (a ping claimed again after its node died
   * mid-attempt: pings are sent once). Only if the claim is still this one.
   */
  async giveUp(db: Db, deliveryId: number, attemptNo: number, error: string): Promise<void> {
    await db
      .update(webhookDeliveries)
      .set({ status: 'failed', lastError: error })
      .where(and(eq(webhookDeliveries.id, deliveryId), pending, eq(webhookDeliveries.attempts, attemptNo)));
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
   * statement, whatever their number. It draws the event's `sequence` (and notes the
   * transaction id beside it, taken first: see webhooks.tables.ts) once for all of them.
   * Returns how many deliveries it wrote.
   */
  async insertEventDeliveries(db: Executor, e: { eventId: string; partnerId: number; eventType: string; body: EventBodyText }): Promise<number> {
    const rows = await executePrepared<{ id: number }>(
      db,
      sql`with xact as materialized (select pg_current_xact_id() as id),
          ev as materialized (select xact.id as xact_id, nextval('webhook_event_sequence') as seq from xact)
        insert into webhook_deliveries (event_id, subscription_id, partner_id, event_type, url, body, sequence, xact_id)
        select ${e.eventId}, s.id, s.partner_id, ${e.eventType}, s.url, ${e.body.head}::text || ev.seq::text || ${e.body.tail}::text, ev.seq, ev.xact_id
        from webhook_subscriptions s, ev
        where s.partner_id = ${e.partnerId} and s.is_active and s.events && array[${e.eventType}, '*']::text[]
        order by s.id
        returning id`,
    );
    if (rows.length > 0) await db.execute(sql`select pg_notify(${WEBHOOKS_CHANNEL}, '')`);
    return rows.length;
  },

  /** A ping to one subscription, whatever its event list or state (the test button); it has a `sequence` like any event. */
  async insertPing(db: Executor, values: { eventId: string; partnerId: number; subscriptionId: number; url: string; body: EventBodyText }): Promise<DeliveryRow> {
    const [row] = await executePrepared<{ id: number }>(
      db,
      sql`with xact as materialized (select pg_current_xact_id() as id),
          ev as materialized (select xact.id as xact_id, nextval('webhook_event_sequence') as seq from xact)
        insert into webhook_deliveries (event_id, subscription_id, partner_id, event_type, url, body, sequence, xact_id)
        select ${values.eventId}, ${values.subscriptionId}::int, ${values.partnerId}::int, 'ping', ${values.url}, ${values.body.head}::text || ev.seq::text || ${values.body.tail}::text, ev.seq, ev.xact_id
        from ev
        returning id`,
    );
    await db.execute(sql`select pg_notify(${WEBHOOKS_CHANNEL}, '')`);
    const [delivery] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, row!.id));
    return delivery!;
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
