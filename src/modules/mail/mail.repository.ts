// SQL of the mail outbox. Claims use FOR UPDATE SKIP LOCKED and a lease, as the webhook
// outbox does, so several nodes never hand the same message over at the same time.
import { and, asc, count, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Db, Executor } from '../../infra/db/index.js';
import { mailOutbox } from './mail.tables.js';

export type MailRow = typeof mailOutbox.$inferSelect;

/** Notified (on commit) when a message is queued, so that every node's worker wakes. */
export const MAIL_CHANNEL = 'loyalty_mail';

const pending = sql`${mailOutbox.status} = 'pending'`;
const msFromNow = (ms: number) => sql`now() + ${Math.max(0, Math.round(ms))} * interval '1 millisecond'`;

export type MailNextState = { status: 'sent'; transport: string; response: string } | { status: 'failed' } | { status: 'pending'; inMs: number };

export const mailRepository = {
  async insert(
    db: Executor,
    values: {
      messageId: string;
      partnerId: number | null;
      sentByAdminId: number | null;
      fromAddress: string;
      toAddress: string;
      subject: string;
      body: string;
    },
  ): Promise<MailRow> {
    const [row] = await db.insert(mailOutbox).values(values).returning();
    await db.execute(sql`select pg_notify(${MAIL_CHANNEL}, '')`);
    return row!;
  },

  /** Claims up to `limit` due messages: counts the attempt and moves next_attempt_at past the lease. */
  async claimDue(db: Db, limit: number, leaseMs: number): Promise<MailRow[]> {
    return db.transaction(async (tx) => {
      const due = await tx
        .select({ id: mailOutbox.id })
        .from(mailOutbox)
        .where(and(pending, sql`${mailOutbox.nextAttemptAt} <= now()`))
        .orderBy(asc(mailOutbox.nextAttemptAt), asc(mailOutbox.id))
        .limit(limit)
        .for('update', { skipLocked: true });
      if (due.length === 0) return [];
      return tx
        .update(mailOutbox)
        .set({ attempts: sql`${mailOutbox.attempts} + 1`, nextAttemptAt: msFromNow(leaseMs), lastAttemptAt: sql`now()` })
        .where(
          inArray(
            mailOutbox.id,
            due.map((d) => d.id),
          ),
        )
        .returning();
    });
  },

  /** Records the outcome of attempt `attemptNo`, only if the claim is still this worker's. */
  async recordAttempt(db: Db, id: number, attemptNo: number, error: string | null, next: MailNextState): Promise<void> {
    await db
      .update(mailOutbox)
      .set({
        status: next.status,
        lastError: error,
        ...(next.status === 'pending' ? { nextAttemptAt: msFromNow(next.inMs) } : {}),
        ...(next.status === 'sent' ? { sentAt: sql`now()`, transport: next.transport, transportResponse: next.response } : {}),
      })
      .where(and(eq(mailOutbox.id, id), pending, eq(mailOutbox.attempts, attemptNo)));
  },

  /** Gives back a claim that was not attempted (shutdown): due now, the attempt not counted. */
  async release(db: Db, id: number, attemptNo: number): Promise<void> {
    await db
      .update(mailOutbox)
      .set({ attempts: sql`${mailOutbox.attempts} - 1`, nextAttemptAt: sql`now()` })
      .where(and(eq(mailOutbox.id, id), pending, eq(mailOutbox.attempts, attemptNo)));
  },

  async listForPartner(db: Executor, partnerId: number, limit: number, offset: number): Promise<{ rows: MailRow[]; total: number }> {
    const rows = await db
      .select()
      .from(mailOutbox)
      .where(eq(mailOutbox.partnerId, partnerId))
      .orderBy(desc(mailOutbox.id))
      .limit(limit)
      .offset(offset);
    const [total] = await db.select({ n: count() }).from(mailOutbox).where(eq(mailOutbox.partnerId, partnerId));
    return { rows, total: total?.n ?? 0 };
  },
};
