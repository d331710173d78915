// SQL for webhook secrets, the delivery outbox and its attempts. Reads for the partner
// take the owning partner: another partner's delivery is simply not found.
import { and, asc, count, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Db, Executor } from '../../infra/db/index.js';
import { webhookAttempts, webhookDeliveries, webhookSecrets } from './webhooks.tables.js';

export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type AttemptRow = typeof webhookAttempts.$inferSelect;

/** Notified (on commit) whenever a delivery is enqueued, so that every node's worker wakes. */
export const WEBHOOKS_CHANNEL = 'loyalty_webhooks';

const pending = sql`${webhookDeliveries.status} = 'pending'`;
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
        .where(and(pending, sql`${webhookDeliveries.nextAttemptAt} <= now()`))
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

  attemptsOf(db: Executor, deliveryId: number): Promise<AttemptRow[]> {
    return db
      .select()
      .from(webhookAttempts)
      .where(eq(webhookAttempts.deliveryId, deliveryId))
      .orderBy(asc(webhookAttempts.attemptNo), asc(webhookAttempts.id));
  },
};
