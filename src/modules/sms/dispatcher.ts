// The SMS dispatcher, run by every node. The committed sms_messages rows are the queue; rows
// are claimed with FOR UPDATE SKIP LOCKED, so several nodes share the work and none takes a
// message another node holds.
//
// Exactly once: with the simulator the hand-over is a row written in the same transaction as
// `sent`, so it commits once or not at all. With SMPP the hand-over is a network call: the
// row is first marked `submitting_at` (committed), then submitted, then recorded. If the
// process dies in between, the message is "in doubt" — it may or may not have reached the
// carrier. It is never submitted a second time: after SMS_IN_DOUBT_AFTER_MS it fails with an
// explanation and is refunded. Duplicates are impossible; the in-doubt window is the
// duration of one submit_sm round trip.
//
// Every tick also expires messages past their validity (refunded) and applies delivery
// receipts recorded in sms_carrier_receipts (a receipt can arrive before its part is known).
import { and, asc, eq, inArray, isNotNull, isNull, lt, lte, or, sql } from 'drizzle-orm';
import type { Database, Executor } from '../../infra/db/index.js';
import type { Clock } from '../../shared/time.js';
import type { Carrier, CarrierReceipt, CarrierSubmission } from './carriers/carrier.js';
import { receiptIdCandidates } from './carriers/smpp-carrier.js';
import type { SmsLifecycle, SmsMessageRow } from './sms-lifecycle.js';
import { layout } from './sms-text.js';
import { smsCarrierReceipts, smsMessageParts, smsMessages } from './sms.tables.js';

export interface DispatcherOptions {
  pollMs: number;
  batchSize: number;
  /** A message marked submitting for longer than this is in doubt (see above). */
  inDoubtAfterMs: number;
  /** Backoff for transient carrier errors, by attempt number (ms). */
  retryBackoffMs: number[];
  log: { warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void };
}

export const IN_DOUBT_ERROR =
  'The hand-over to the carrier was interrupted; the message was not submitted again to avoid sending it twice';

export class SmsDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** Not started (the CLI, tests without workers): a send's wake-up must not dispatch. */
  private started = false;
  /** Sweeps (expiry, in-doubt) run on a slower cadence than dispatch; 0 = due now. */
  private lastSweep = 0;

  constructor(
    private readonly database: Database,
    private readonly carrier: Carrier,
    private readonly lifecycle: SmsLifecycle,
    private readonly clock: Clock,
    private readonly options: DispatcherOptions,
  ) {}

  async start(): Promise<void> {
    await this.carrier.start((receipt, tx) => this.recordReceipt(receipt, tx));
    this.started = true;
    this.stopped = false;
    this.timer = setInterval(() => this.wake(), this.options.pollMs);
    this.timer.unref();
    this.wake();
  }

  /** Run a tick now (or right after the running one). */
  wake(): void {
    if (this.stopped || !this.started) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.tick(false)
      .catch((err: unknown) => this.options.log.error({ err }, 'sms dispatcher tick failed'))
      .finally(() => {
        this.running = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          this.wake();
        }
      });
  }

  /**
   * One pass: dispatch what is due; apply pending receipts; sweep for expiry and
   * in-doubt hand-overs at most every few poll intervals (they scan, dispatch only claims).
   * `tick(true)` does everything now (tests).
   */
  async tick(everything = true): Promise<void> {
    const sweepDue = everything || Date.now() - this.lastSweep >= Math.max(1000, this.options.pollMs * 4);
    if (sweepDue) {
      this.lastSweep = Date.now();
      await this.expire();
      await this.recoverInDoubt();
    }
    while (!this.stopped && (await this.dispatchBatch()) === this.options.batchSize) {
      // a full batch: there may be more
    }
    // Every tick: a receipt recorded in a transaction that had not committed when it woke
    // us must not wait for the next sweep. The scan is a partial index of pending receipts.
    await this.applyReceipts();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
    await this.carrier.close();
  }

  private now() {
    return this.clock.now();
  }

  async recordReceipt(receipt: CarrierReceipt, tx?: Executor): Promise<void> {
    await (tx ?? this.database.db)
      .insert(smsCarrierReceipts)
      .values({ carrierMessageId: receipt.carrierMessageId, state: receipt.state, error: receipt.error ?? null })
      .onConflictDoNothing();
    this.wake();
  }

  /** Expire what is past its validity, queued or sent; the charge is refunded. */
  private async expire(): Promise<void> {
    for (;;) {
      const n = await this.database.db.transaction(async (tx) => {
        const rows = await tx
          .select({ id: smsMessages.id })
          .from(smsMessages)
          .where(and(inArray(smsMessages.status, ['queued', 'sent']), lte(smsMessages.validityAt, this.now())))
          .limit(this.options.batchSize)
          .for('update', { skipLocked: true });
        for (const { id } of rows) {
          await this.lifecycle.transition(tx, id, 'expired', { at: this.now(), refund: true, detail: 'validity elapsed' });
        }
        return rows.length;
      });
      if (n < this.options.batchSize) return;
    }
  }

  private async recoverInDoubt(): Promise<void> {
    const cutoff = new Date(this.now().getTime() - this.options.inDoubtAfterMs);
    await this.database.db.transaction(async (tx) => {
      const rows = await tx
        .select({ id: smsMessages.id })
        .from(smsMessages)
        .where(and(eq(smsMessages.status, 'queued'), isNotNull(smsMessages.submittingAt), lt(smsMessages.submittingAt, cutoff)))
        .limit(this.options.batchSize)
        .for('update', { skipLocked: true });
      for (const { id } of rows) {
        this.options.log.warn({ message_id: id }, 'sms hand-over in doubt; failing it rather than risk a duplicate');
        await this.lifecycle.transition(tx, id, 'failed', { at: this.now(), error: IN_DOUBT_ERROR, refund: true });
      }
    });
  }

  private dueQueued(tx: Executor, limit: number) {
    const now = this.now();
    return tx
      .select()
      .from(smsMessages)
      .where(
        and(
          eq(smsMessages.status, 'queued'),
          isNull(smsMessages.submittingAt),
          lte(smsMessages.nextAttemptAt, now),
          or(isNull(smsMessages.validityAt), sql`${smsMessages.validityAt} > ${now}`),
        ),
      )
      .orderBy(asc(smsMessages.nextAttemptAt))
      .limit(limit)
      .for('update', { skipLocked: true });
  }

  private submission(row: SmsMessageRow): CarrierSubmission {
    const shape = layout(row.body);
    return {
      messageId: row.id,
      source: row.source,
      destination: row.destination,
      text: row.body,
      encoding: shape.encoding,
      segments: shape.segments,
      validityAt: row.validityAt,
    };
  }

  /** Returns how many messages were taken, so the caller knows whether to go on. */
  private async dispatchBatch(): Promise<number> {
    return this.carrier.transactional ? this.dispatchTransactional() : this.dispatchRemote();
  }

  private async dispatchTransactional(): Promise<number> {
    return this.database.db.transaction(async (tx) => {
      const rows = await this.dueQueued(tx, this.options.batchSize);
      for (const row of rows) {
        const result = await this.carrier.submit(this.submission(row), tx);
        await this.recordSubmit(tx, row, result);
      }
      return rows.length;
    });
  }

  private async dispatchRemote(): Promise<number> {
    const claimed = await this.database.db.transaction(async (tx) => {
      const rows = await this.dueQueued(tx, this.options.batchSize);
      if (rows.length > 0) {
        await tx
          .update(smsMessages)
          .set({ submittingAt: this.now() })
          .where(inArray(smsMessages.id, rows.map((r) => r.id)));
      }
      return rows;
    });
    await Promise.all(
      claimed.map(async (row) => {
        const result = await this.carrier
          .submit(this.submission(row), undefined as never)
          .catch((err: unknown) => ({ ok: false as const, permanent: false, error: err instanceof Error ? err.message : String(err) }));
        await this.database.db.transaction((tx) => this.recordSubmit(tx, row, result));
      }),
    );
    return claimed.length;
  }

  private async recordSubmit(
    tx: Executor,
    row: SmsMessageRow,
    result: Awaited<ReturnType<Carrier['submit']>>,
  ): Promise<void> {
    const now = this.now();
    if (result.ok) {
      if (result.parts.length > 0) {
        await tx
          .insert(smsMessageParts)
          .values(result.parts.map((p) => ({ messageId: row.id, partNo: p.partNo, carrierMessageId: p.carrierMessageId })));
      }
      if (row.submittingAt !== null || !this.carrier.transactional) {
        await tx.update(smsMessages).set({ submittingAt: null }).where(eq(smsMessages.id, row.id));
      }
      await this.lifecycle.transition(tx, row.id, 'sent', { at: now });
      return;
    }
    if (result.inDoubt) {
      // The carrier may hold the message already: never submit it again.
      await tx.update(smsMessages).set({ submittingAt: null }).where(eq(smsMessages.id, row.id));
      await this.lifecycle.transition(tx, row.id, 'failed', { at: now, error: `${IN_DOUBT_ERROR} (${result.error})`, refund: true });
      return;
    }
    if (result.permanent) {
      // Refused by the carrier: it never carried the message, so the charge is returned.
      await tx.update(smsMessages).set({ submittingAt: null }).where(eq(smsMessages.id, row.id));
      await this.lifecycle.transition(tx, row.id, 'failed', { at: now, error: result.error, refund: true });
      return;
    }
    const attempt = row.dispatchAttempts + 1;
    const backoff = this.options.retryBackoffMs[Math.min(attempt - 1, this.options.retryBackoffMs.length - 1)] ?? 60_000;
    this.options.log.warn({ message_id: row.id, attempt, error: result.error }, 'sms submit failed; will retry');
    await tx
      .update(smsMessages)
      .set({ submittingAt: null, dispatchAttempts: attempt, nextAttemptAt: new Date(now.getTime() + backoff) })
      .where(eq(smsMessages.id, row.id));
  }

  /**
   * Apply recorded receipts to their parts, then settle the message: failed when any part
   * failed, expired when any part expired, delivered when every part is delivered.
   */
  async applyReceipts(): Promise<void> {
    await this.database.db.transaction(async (tx) => {
      const receipts = await tx
        .select()
        .from(smsCarrierReceipts)
        .where(isNull(smsCarrierReceipts.appliedAt))
        .orderBy(asc(smsCarrierReceipts.receivedAt))
        .limit(200)
        .for('update', { skipLocked: true });
      const touched = new Set<string>();
      for (const receipt of receipts) {
        // The id as given first; other spellings only when it matches nothing (a decimal "16"
        // must not hit a part whose hex id is "10" when a part "16" exists).
        let part: { messageId: string } | undefined;
        for (const id of receiptIdCandidates(receipt.carrierMessageId)) {
          [part] = await tx
            .update(smsMessageParts)
            .set({ state: receipt.state, error: receipt.error, updatedAt: this.now() })
            .where(eq(smsMessageParts.carrierMessageId, id))
            .returning({ messageId: smsMessageParts.messageId });
          if (part) break;
        }
        // Not matched yet: the submit response may still be on its way. Kept for a later tick.
        if (!part) continue;
        await tx.update(smsCarrierReceipts).set({ appliedAt: this.now() }).where(eq(smsCarrierReceipts.carrierMessageId, receipt.carrierMessageId));
        touched.add(part.messageId);
      }
      for (const messageId of touched) await this.settle(tx, messageId);
    });
  }

  private async settle(tx: Executor, messageId: string): Promise<void> {
    const parts = await tx.select().from(smsMessageParts).where(eq(smsMessageParts.messageId, messageId));
    const [message] = await tx.select({ parts: smsMessages.parts }).from(smsMessages).where(eq(smsMessages.id, messageId));
    if (!message) return;
    const failed = parts.find((p) => p.state === 'failed');
    if (failed) {
      await this.lifecycle.transition(tx, messageId, 'failed', { at: this.now(), error: failed.error ?? 'Delivery failed' });
      return;
    }
    if (parts.some((p) => p.state === 'expired')) {
      await this.lifecycle.transition(tx, messageId, 'expired', { at: this.now(), refund: true, detail: 'carrier reported expiry' });
      return;
    }
    if (parts.length === message.parts && parts.every((p) => p.state === 'delivered')) {
      await this.lifecycle.transition(tx, messageId, 'delivered', { at: this.now() });
    }
  }
}
