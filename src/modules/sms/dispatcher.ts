// The SMS dispatcher, run by every node. The committed sms_messages rows are the queue; rows
// are taken with FOR UPDATE SKIP LOCKED, so several nodes share the work and none takes a
// message another node holds.
//
// Exactly once, simulator: the hand-over is a row written in the same transaction as `sent`,
// so it commits once or not at all.
//
// Exactly once, SMPP: the hand-over is a network write, so it is recorded first. A message is
// taken from the queue only when the carrier has room for its parts right now (free window,
// throughput): one transaction takes a batch of due rows (SKIP LOCKED), marks each taken
// message `submitting_at` and inserts one sms_handovers row per part about to be written —
// and commits before a single PDU leaves. Each part's answer (accepted, refused, not sent,
// unknown) is recorded before its window slot is used again, so the store never holds more
// unanswered hand-overs than the window; a message's claim is cleared when every part handed
// over is answered (the rest of a message larger than the window goes with the next claim).
// After a crash:
//   - a part with no hand-over row never left: its message is sent normally;
//   - a part with a hand-over row and no answer may have left: the message is in doubt. It
//     is never handed over again — after SMS_IN_DOUBT_AFTER_MS it fails, refunded, with an
//     explanation. At most SMPP_WINDOW parts can be in that state at once.
//
// Transient failures (an SMSC that throttles, a part that could not be written, a bad row)
// back off and are retried at most `maxAttempts` times, then the message fails, refunded. A
// row that fails is handled alone so it never rolls back or holds up the others. Every error
// is logged; a failing tick (the database gone) is retried with backoff.
//
// Every tick also expires messages past their validity (refunded; a message sent without one
// has SMS_DEFAULT_VALIDITY_MINUTES from its send) and applies delivery receipts recorded in
// sms_carrier_receipts (a receipt can arrive before its part is known: it waits for it, at most
// RECEIPT_WAIT_MS, then is kept `unapplied`). Carrier ids are unique only in time: a receipt
// applies to the most recent part with its id, to its handset, submitted before it (applyToParts).
import { and, asc, desc, eq, inArray, isNull, lt, lte, or, sql } from 'drizzle-orm';
import type { Database, Executor, Tx } from '../../infra/db/index.js';
import { parseAmount } from '../../shared/money.js';
import type { Clock } from '../../shared/time.js';
import type {
  Carrier,
  CarrierReceipt,
  CarrierSubmission,
  PartOutcome,
  PreparedPart,
  RemoteCarrier,
  TransactionalCarrier,
} from './carriers/carrier.js';
import { receiptLookupIds, type ReceiptIdFormat } from './carriers/smpp-carrier.js';
import type { SmsLifecycle, SmsMessageRow, TransitionOptions } from './sms-lifecycle.js';
import { layout } from './sms-text.js';
import { smsCarrierReceipts, smsHandovers, smsMessageParts, smsMessages } from './sms.tables.js';

export interface DispatcherLog {
  info?(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface DispatcherOptions {
  pollMs: number;
  batchSize: number;
  /** A claimed message whose hand-over has had no answer for this long is in doubt (see above). */
  inDoubtAfterMs: number;
  /** Backoff for transient failures, by attempt number (ms). */
  retryBackoffMs: number[];
  /** Transient failures after which a message fails and is refunded (default 8). */
  maxAttempts?: number;
  /**
   * A message sent without a validity is treated as having this one from its send
   * (SMS_DEFAULT_VALIDITY_MINUTES, default 48 h): the SMSC is told, and with no final receipt
   * by then it is `expired`, so nothing stays `sent` for ever (DESIGN.md §4).
   */
  defaultValidityMs?: number;
  /** How the carrier writes part ids in its receipts (SMPP_RECEIPT_ID_FORMAT; default `same`). */
  receiptIdFormat?: ReceiptIdFormat;
  /** How long a receipt waits for its part before it is kept `unapplied` (default 10 minutes). */
  receiptWaitMs?: number;
  log: DispatcherLog;
}

export const IN_DOUBT_ERROR =
  'The hand-over to the carrier was interrupted; the message was not submitted again to avoid sending it twice';
/** What a partner reads when a message could not be handed over for a reason of ours. */
export const DISPATCH_ERROR = 'The message could not be handed to the carrier';

const DEFAULT_MAX_ATTEMPTS = 8;
const DEFAULT_VALIDITY_MS = 2880 * 60_000;
/** Consecutive failures of the store: ticks back off from pollMs doubling to this. */
const MAX_ERROR_BACKOFF_MS = 30_000;
/** Receipts recorded per INSERT. */
const RECEIPT_INSERT_SLICE = 3000;

/** How long a receipt waits for its part (its submit_sm_resp on its way) before it is kept unapplied. */
const RECEIPT_WAIT_MS = 600_000;
/** An answer that cannot be recorded this many times is left to the in-doubt sweep. */
const MAX_RECORD_FAILURES = 5;

/** A message this node has handed parts of to a remote carrier, until every part is answered. */
interface Held {
  row: SmsMessageRow;
  total: number;
  /** Parts the carrier accepted in earlier attempts (in sms_message_parts). */
  acceptedBefore: number;
  /** Handed over in this attempt and not yet answered in the store. */
  outstanding: number;
  /** Answers of this attempt already recorded. */
  answered: Answer[];
}

interface Answer {
  held: Held;
  handoverId: number;
  partNo: number;
  result: PartOutcome;
  failures: number;
}

interface Pick {
  row: SmsMessageRow;
  total: number;
  acceptedBefore: number;
  parts: PreparedPart[];
  handoverIds: number[];
}

export class SmsDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** Not started (the CLI, tests without workers): a send's wake-up must not dispatch. */
  private started = false;
  /** Sweeps (expiry, in-doubt) run on a slower cadence than dispatch; 0 = due now. */
  private lastSweep = 0;
  /** Consecutive failed ticks or fills, and when the next may run. */
  private errors = 0;
  private pausedUntil = 0;
  private retryTimer: NodeJS.Timeout | undefined;

  // Remote carriers only.
  private answers: Answer[] = [];
  private readonly writes = new Set<Promise<void>>();
  private filling: Promise<void> | undefined;
  private fillAgain = false;

  private readonly maxAttempts: number;
  private readonly defaultValidityMs: number;
  private readonly receiptIdFormat: ReceiptIdFormat;
  private readonly receiptWaitMs: number;

  constructor(
    private readonly database: Database,
    private readonly carrier: Carrier,
    private readonly lifecycle: SmsLifecycle,
    private readonly clock: Clock,
    private readonly options: DispatcherOptions,
  ) {
    this.maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    this.defaultValidityMs = options.defaultValidityMs ?? DEFAULT_VALIDITY_MS;
    this.receiptIdFormat = options.receiptIdFormat ?? 'same';
    this.receiptWaitMs = options.receiptWaitMs ?? RECEIPT_WAIT_MS;
  }

  /** A transaction whose status changes are announced once it has committed. */
  private transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.lifecycle.transaction(this.database.db, fn);
  }

  async start(): Promise<void> {
    if (!this.carrier.transactional) this.carrier.onRoom(() => this.fill());
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
    if (Date.now() < this.pausedUntil) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.tick(false)
      .then(
        () => this.succeeded(),
        (err: unknown) => this.failed(err, 'sms dispatcher tick failed'),
      )
      .finally(() => {
        this.running = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          this.wake();
        }
      });
  }

  private succeeded(): void {
    this.errors = 0;
    this.pausedUntil = 0;
  }

  /** Log, and hold further ticks back (doubling), then try again: the store may be gone for a while. */
  private failed(err: unknown, msg: string): void {
    this.errors++;
    const delay = Math.min(MAX_ERROR_BACKOFF_MS, Math.max(100, this.options.pollMs) * 2 ** Math.min(this.errors - 1, 16));
    this.pausedUntil = Date.now() + delay;
    this.options.log.error({ err, attempt: this.errors, retry_in_ms: delay }, msg);
    if (this.stopped) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.wake();
      this.fill();
    }, delay);
    this.retryTimer.unref();
  }

  /**
   * One pass: sweep for expiry and stale hand-overs at most every few poll intervals (they
   * scan; dispatch only claims); dispatch what is due; apply pending receipts. A step that
   * fails does not keep the others from running; the first error is thrown at the end.
   * `tick(true)` does everything now (tests).
   */
  async tick(everything = true): Promise<void> {
    const errors: unknown[] = [];
    const step = async (fn: () => Promise<unknown>) => {
      try {
        await fn();
      } catch (err) {
        errors.push(err);
      }
    };
    const sweepDue = everything || Date.now() - this.lastSweep >= Math.max(1000, this.options.pollMs * 4);
    if (sweepDue) {
      this.lastSweep = Date.now();
      await step(() => this.expire());
      await step(() => this.recoverStale());
    }
    if (this.carrier.transactional) {
      const carrier = this.carrier;
      await step(async () => {
        while (!this.stopped && (await this.dispatchTransactional(carrier)) === this.options.batchSize) {
          // a full batch: there may be more
        }
      });
    } else {
      this.fill();
      await step(() => this.filling ?? Promise.resolve());
    }
    // Every tick: a receipt recorded in a transaction that had not committed when it woke
    // us must not wait for the next sweep. The scan is a partial index of pending receipts.
    await step(() => this.applyReceipts());
    if (errors.length > 0) throw errors[0];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    clearTimeout(this.retryTimer);
    await this.running;
    await this.filling;
    // The carrier answers what is on the wire (or gives up on it) and drops what is not.
    await this.carrier.close();
    await Promise.all([...this.writes]);
    // Record those last answers; what cannot be recorded now is left to the in-doubt sweep.
    for (let i = 0; i < 3 && this.answers.length > 0; i++) {
      try {
        await this.recordAnswersIsolated(this.answers.splice(0));
      } catch (err) {
        this.options.log.error({ err }, 'sms dispatcher could not record hand-over answers while stopping');
      }
    }
    this.started = false;
  }

  private now() {
    return this.clock.now();
  }

  /** Records receipts as the carrier reports them (one statement however many); applied by the next tick. */
  async recordReceipt(receipts: CarrierReceipt | readonly CarrierReceipt[], tx?: Executor): Promise<void> {
    const given = Array.isArray(receipts) ? (receipts as readonly CarrierReceipt[]) : [receipts as CarrierReceipt];
    // Carrier ids are unique only in time (an SMSC that restarts reuses them): a receipt for an
    // id seen before replaces the old one and is applied again, to the most recent part with
    // that id. The last of several for one id in this call wins.
    const list = [...new Map(given.map((r) => [r.carrierMessageId, r])).values()];
    if (list.length === 0) return;
    // received_at is the store's clock, as the hand-overs' handed_at it is compared with (a
    // part matches only a receipt received after it was submitted), also across nodes.
    // In slices: five parameters a receipt, and a statement takes at most 65,535.
    for (let i = 0; i < list.length; i += RECEIPT_INSERT_SLICE) {
      await (tx ?? this.database.db)
        .insert(smsCarrierReceipts)
        .values(
          list.slice(i, i + RECEIPT_INSERT_SLICE).map((r) => ({
            carrierMessageId: r.carrierMessageId,
            state: r.state,
            error: r.error ?? null,
            destination: r.destination ?? null,
          })),
        )
        .onConflictDoUpdate({
          target: smsCarrierReceipts.carrierMessageId,
          set: {
            state: sql`excluded.state`,
            error: sql`excluded.error`,
            destination: sql`excluded.destination`,
            receivedAt: sql`now()`,
            appliedAt: null,
            outcome: null,
            note: null,
          },
        });
    }
    this.wake();
  }

  private backoffMs(attempt: number): number {
    return this.options.retryBackoffMs[Math.min(attempt - 1, this.options.retryBackoffMs.length - 1)] ?? 60_000;
  }

  /**
   * A transient failure: back off, or after `maxAttempts` fail and refund (the carrier does
   * not have the message — or not all of it). Also clears the claim.
   */
  private async retryLater(tx: Executor, row: SmsMessageRow, error: string, publicError = error): Promise<void> {
    const attempt = row.dispatchAttempts + 1;
    if (attempt >= this.maxAttempts) {
      this.options.log.warn({ message_id: row.id, attempt, error }, 'sms dispatch failed too often; failing the message');
      await tx.update(smsMessages).set({ submittingAt: null, dispatchAttempts: attempt }).where(eq(smsMessages.id, row.id));
      await this.lifecycle.transition(tx, row.id, 'failed', {
        at: this.now(),
        error: `${publicError} (gave up after ${attempt} attempts)`,
        refund: true,
      });
      return;
    }
    const backoff = this.backoffMs(attempt);
    this.options.log.warn({ message_id: row.id, attempt, retry_in_ms: backoff, error }, 'sms dispatch failed; will retry');
    await tx
      .update(smsMessages)
      .set({ submittingAt: null, dispatchAttempts: attempt, nextAttemptAt: new Date(this.now().getTime() + backoff) })
      .where(and(eq(smsMessages.id, row.id), eq(smsMessages.status, 'queued')));
  }

  /**
   * Runs `fn` for one row of a batch. `isolated`: in its own savepoint, so a row that fails is
   * logged and skipped and the others go on. Batches run without savepoints first (they cost
   * two round trips a row) and again isolated only when that fails.
   */
  private async alone<T>(tx: Tx, isolated: boolean, what: string, id: string, fn: (sp: Tx) => Promise<T>): Promise<T | undefined> {
    if (!isolated) return fn(tx);
    try {
      return await this.lifecycle.savepoint(tx, fn);
    } catch (err) {
      this.options.log.error({ err, message_id: id }, `sms ${what} failed for one message; the others go on`);
      return undefined;
    }
  }

  /** Runs a batch; should it fail while the store is up, again with every row isolated. */
  private async batch<T>(what: string, run: (isolated: boolean) => Promise<T>): Promise<T> {
    try {
      return await run(false);
    } catch (err) {
      if (!(await this.storeReachable())) throw err;
      this.options.log.warn({ err }, `sms ${what} batch failed; going through it one message at a time`);
      return run(true);
    }
  }

  /** Tells a bad row from a store that is gone. */
  private async storeReachable(): Promise<boolean> {
    try {
      await this.database.ping();
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Expire what is past its validity — unsent, or sent and not delivered; the charge is
   * refunded. A message sent without a validity has the default one from its send.
   */
  private async expire(): Promise<void> {
    for (;;) {
      const expired = await this.batch('expiry', (isolated) => this.expireBatch(isolated));
      // Fewer than a batch: done (or rows that fail are in the way: next sweep).
      if (expired < this.options.batchSize) return;
    }
  }

  private expireBatch(isolated: boolean): Promise<number> {
    return this.transaction(async (tx) => {
      // A claimed message has parts on their way, which carry the validity themselves.
      const rows = await tx
        .select({ id: smsMessages.id })
        .from(smsMessages)
        .where(
          or(
            and(
              or(and(eq(smsMessages.status, 'queued'), isNull(smsMessages.submittingAt)), eq(smsMessages.status, 'sent')),
              lte(smsMessages.validityAt, this.now()),
            ),
            and(
              eq(smsMessages.status, 'sent'),
              isNull(smsMessages.validityAt),
              lte(smsMessages.sentAt, new Date(this.now().getTime() - this.defaultValidityMs)),
            ),
          ),
        )
        .limit(this.options.batchSize)
        .for('update', { skipLocked: true });
      let expired = 0;
      for (const { id } of rows) {
        const done = await this.alone(tx, isolated, 'expiry', id, async (sp) => {
          await this.lifecycle.transition(sp, id, 'expired', { at: this.now(), refund: true, detail: 'validity elapsed' });
          return true;
        });
        if (done) expired++;
      }
      return expired;
    });
  }

  /**
   * Claims older than SMS_IN_DOUBT_AFTER_MS: a node died (or could not reach the store) while
   * it held them. A part handed over without an answer may be at the carrier: the message
   * fails, refunded, and is never handed over again. Otherwise nothing is in doubt and the
   * claim is released: the parts not yet accepted are sent normally.
   */
  private async recoverStale(): Promise<void> {
    const cutoff = new Date(this.now().getTime() - this.options.inDoubtAfterMs);
    await this.transaction(async (tx) => {
      const rows = await tx
        .select({ id: smsMessages.id })
        .from(smsMessages)
        .where(and(eq(smsMessages.status, 'queued'), lt(smsMessages.submittingAt, cutoff)))
        .limit(this.options.batchSize)
        .for('update', { skipLocked: true });
      for (const { id } of rows) {
        await this.alone(tx, true, 'in-doubt sweep', id, async (sp) => {
          const unanswered = await sp
            .select({ partNo: smsHandovers.partNo })
            .from(smsHandovers)
            .where(and(eq(smsHandovers.messageId, id), isNull(smsHandovers.answeredAt)));
          await sp.update(smsMessages).set({ submittingAt: null }).where(eq(smsMessages.id, id));
          if (unanswered.length === 0) {
            this.options.log.warn({ message_id: id }, 'sms claim released: no part of it can be at the carrier unanswered; sending it normally');
            return;
          }
          const parts = unanswered.map((u) => u.partNo).sort((a, b) => a - b);
          this.options.log.warn({ message_id: id, parts }, 'sms hand-over in doubt; failing it rather than risk a duplicate');
          await this.lifecycle.transition(sp, id, 'failed', { at: this.now(), error: IN_DOUBT_ERROR, refund: true });
        });
      }
    });
  }

  /** Queued, not claimed, due, still valid. */
  private due() {
    const now = this.now();
    return and(
      eq(smsMessages.status, 'queued'),
      isNull(smsMessages.submittingAt),
      lte(smsMessages.nextAttemptAt, now),
      or(isNull(smsMessages.validityAt), sql`${smsMessages.validityAt} > ${now}`),
    );
  }

  private dueQueued(tx: Executor, limit: number) {
    return tx
      .select()
      .from(smsMessages)
      .where(this.due())
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
      // Without one, the default from now (the send): the SMSC gives up when we do.
      validityAt: row.validityAt ?? new Date(this.now().getTime() + this.defaultValidityMs),
    };
  }

  // -- the simulator: hand-over and `sent` in one transaction ---------------------------------

  /**
   * One batch in one transaction. Should it fail, its rows are done again one transaction
   * each, so a bad row fails alone. Returns how many rows were taken — or 0 when one failed,
   * so the caller does not take the same bad row again and again within one tick.
   */
  private async dispatchTransactional(carrier: TransactionalCarrier): Promise<number> {
    let ids: string[] = [];
    try {
      return await this.transaction(async (tx) => {
        const rows = await this.dueQueued(tx, this.options.batchSize);
        ids = rows.map((r) => r.id);
        await this.handOverInTransaction(carrier, tx, rows);
        return rows.length;
      });
    } catch (err) {
      if (ids.length === 0 || !(await this.storeReachable())) throw err;
      this.options.log.warn({ err, messages: ids.length }, 'sms dispatch batch failed; handing its messages over one by one');
    }
    let failures = 0;
    for (const id of ids) {
      try {
        await this.transaction(async (tx) => {
          const [row] = await tx
            .select()
            .from(smsMessages)
            .where(and(eq(smsMessages.id, id), eq(smsMessages.status, 'queued'), isNull(smsMessages.submittingAt)))
            .for('update', { skipLocked: true });
          if (row) await this.handOverInTransaction(carrier, tx, [row]);
        });
      } catch (err) {
        if (!(await this.storeReachable())) throw err;
        this.options.log.error({ err, message_id: id }, 'sms hand-over failed for one message; the others go on');
        failures++;
        await this.postpone(id, err);
      }
    }
    return failures > 0 ? 0 : ids.length;
  }

  /** Hands `rows` over in `tx`: one statement each for the hand-over, the parts and `sent`, however many rows. */
  private async handOverInTransaction(carrier: TransactionalCarrier, tx: Tx, rows: SmsMessageRow[]): Promise<void> {
    if (rows.length === 0) return;
    const results = await carrier.submit(rows.map((row) => this.submission(row)), tx);
    const sent: string[] = [];
    const parts: Array<typeof smsMessageParts.$inferInsert> = [];
    for (const [i, row] of rows.entries()) {
      const result = results[i]!;
      if (result.ok) {
        sent.push(row.id);
        for (const p of result.parts) parts.push({ messageId: row.id, partNo: p.partNo, carrierMessageId: p.carrierMessageId });
      } else if (result.permanent) {
        await this.lifecycle.transition(tx, row.id, 'failed', { at: this.now(), error: result.error, refund: true });
      } else {
        await this.retryLater(tx, row, result.error);
      }
    }
    if (parts.length > 0) await tx.insert(smsMessageParts).values(parts);
    await this.lifecycle.transitionMany(tx, sent, 'sent', this.now());
  }

  // -- a remote carrier: parts handed over as the carrier has room ------------------------------

  /** Record answers and hand over what fits now; runs one at a time, again when asked meanwhile. */
  private fill(): void {
    if (this.carrier.transactional || !this.started || this.stopped) return;
    if (Date.now() < this.pausedUntil) return;
    if (this.filling) {
      this.fillAgain = true;
      return;
    }
    const carrier = this.carrier;
    // Success here does not end a backoff: a fill with no room never touches the store.
    this.filling = this.fillLoop(carrier)
      .catch((err: unknown) => this.failed(err, 'sms dispatcher could not hand over messages'))
      .finally(() => {
        this.filling = undefined;
        if (this.fillAgain && !this.stopped) {
          this.fillAgain = false;
          this.fill();
        }
      });
  }

  private async fillLoop(carrier: RemoteCarrier): Promise<void> {
    for (;;) {
      this.fillAgain = false;
      if (this.stopped) return;
      if (this.answers.length > 0) await this.recordAnswersIsolated(this.answers.splice(0));
      // A slot is free again only once its answer is in the store: what is unanswered there
      // never exceeds the window.
      const room = Math.max(0, carrier.room() - this.answers.length);
      if (room === 0) return;
      const picks = await this.claimIsolated(carrier, room);
      for (const pick of picks) this.write(carrier, pick);
      const handed = picks.reduce((n, p) => n + p.parts.length, 0);
      // Fewer than there was room for: the queue has nothing more due now.
      if (handed < room && !this.fillAgain) return;
    }
  }

  /**
   * Claims in one transaction; should that fail while the store is up, one message per
   * transaction, and a message that cannot be claimed is postponed (then failed, refunded)
   * so it does not stand at the head of the queue.
   */
  private async claimIsolated(carrier: RemoteCarrier, room: number): Promise<Pick[]> {
    try {
      return await this.transaction(async (tx) => this.claim(carrier, tx, await this.dueQueued(tx, room), room, false));
    } catch (err) {
      if (!(await this.storeReachable())) throw err;
      this.options.log.warn({ err }, 'sms claim failed; claiming one message at a time');
    }
    const candidates = await this.database.db
      .select({ id: smsMessages.id })
      .from(smsMessages)
      .where(this.due())
      .orderBy(asc(smsMessages.nextAttemptAt))
      .limit(room);
    const picks: Pick[] = [];
    let budget = room;
    for (const { id } of candidates) {
      if (budget === 0) break;
      try {
        const got = await this.transaction(async (tx) => {
          const rows = await tx
            .select()
            .from(smsMessages)
            .where(and(eq(smsMessages.id, id), this.due()))
            .for('update', { skipLocked: true });
          return this.claim(carrier, tx, rows, budget, true);
        });
        picks.push(...got);
        budget -= got.reduce((n, p) => n + p.parts.length, 0);
      } catch (err) {
        if (!(await this.storeReachable())) throw err;
        this.options.log.error({ err, message_id: id }, 'sms claim failed for one message; the others go on');
        await this.postpone(id, err);
      }
    }
    return picks;
  }

  /** A message whose hand-over failed for a reason of ours: retried later, then failed (refunded). */
  private async postpone(id: string, cause: unknown): Promise<void> {
    await this
      .transaction(async (tx) => {
        const [row] = await tx
          .select()
          .from(smsMessages)
          .where(and(eq(smsMessages.id, id), eq(smsMessages.status, 'queued'), isNull(smsMessages.submittingAt)))
          .for('update', { skipLocked: true });
        if (row) await this.retryLater(tx, row, cause instanceof Error ? cause.message : String(cause), DISPATCH_ERROR);
      })
      .catch((err: unknown) => this.options.log.error({ err, message_id: id }, 'sms dispatch could not postpone a failing message'));
  }

  /**
   * Claims `rows` (taken FOR UPDATE SKIP LOCKED: another node's are skipped) for at most
   * `room` parts: marks them claimed and inserts a hand-over row per part — all committed
   * before the caller writes a single PDU.
   */
  private async claim(carrier: RemoteCarrier, tx: Tx, rows: SmsMessageRow[], room: number, isolated: boolean): Promise<Pick[]> {
    if (rows.length === 0) return [];
    const accepted = await tx
      .select({ messageId: smsMessageParts.messageId, partNo: smsMessageParts.partNo })
      .from(smsMessageParts)
      .where(inArray(smsMessageParts.messageId, rows.map((r) => r.id)));
    const acceptedParts = new Set(accepted.map((a) => `${a.messageId}/${a.partNo}`));

    const picks: Omit<Pick, 'handoverIds'>[] = [];
    let budget = room;
    for (const row of rows) {
      if (budget === 0) break; // left unclaimed: its lock ends with this transaction
      let prepared: ReturnType<RemoteCarrier['prepare']>;
      try {
        prepared = carrier.prepare(this.submission(row));
      } catch (err) {
        prepared = { ok: false, error: DISPATCH_ERROR };
        this.options.log.error({ err, message_id: row.id }, 'sms message could not be prepared for the carrier');
      }
      if (!prepared.ok) {
        // It cannot be sent at all: it never reaches the carrier, so the charge is returned.
        const error = prepared.error;
        await this.alone(tx, isolated, 'hand-over', row.id, (sp) =>
          this.lifecycle.transition(sp, row.id, 'failed', { at: this.now(), error, refund: true }),
        );
        continue;
      }
      const remaining = prepared.parts.filter((p) => !acceptedParts.has(`${row.id}/${p.partNo}`));
      if (remaining.length === 0) {
        await this.alone(tx, isolated, 'hand-over', row.id, (sp) => this.lifecycle.transition(sp, row.id, 'sent', { at: this.now() }));
        continue;
      }
      const parts = remaining.slice(0, budget);
      budget -= parts.length;
      picks.push({ row, total: prepared.parts.length, acceptedBefore: prepared.parts.length - remaining.length, parts });
    }
    if (picks.length === 0) return [];
    const at = this.now();
    await tx
      .update(smsMessages)
      .set({ submittingAt: at })
      .where(inArray(smsMessages.id, picks.map((p) => p.row.id)));
    const handovers = await tx
      .insert(smsHandovers)
      // handed_at is the store's clock (its default), as receipts' received_at: the two are
      // compared (a receipt waits for the parts handed over before it), also across nodes.
      .values(picks.flatMap((p) => p.parts.map((part) => ({ messageId: p.row.id, partNo: part.partNo }))))
      .returning({ id: smsHandovers.id });
    let i = 0;
    return picks.map((p) => ({ ...p, handoverIds: p.parts.map(() => handovers[i++]!.id) }));
  }

  /** Writes the parts of a pick (its hand-over is committed); each answer is queued for recording. */
  private write(carrier: RemoteCarrier, pick: Pick): void {
    const held: Held = {
      row: pick.row,
      total: pick.total,
      acceptedBefore: pick.acceptedBefore,
      outstanding: pick.parts.length,
      answered: [],
    };
    pick.parts.forEach((part, i) => {
      const handoverId = pick.handoverIds[i]!;
      const done: Promise<void> = carrier
        .writePart(part)
        .catch((err: unknown): PartOutcome => ({ outcome: 'not_sent', error: err instanceof Error ? err.message : String(err) }))
        .then((result) => {
          this.answers.push({ held, handoverId, partNo: part.partNo, result, failures: 0 });
          this.writes.delete(done);
          this.fill();
        });
      this.writes.add(done);
    });
  }

  /**
   * Records answers, all in one transaction; should that fail, message by message, so one
   * bad row does not hold up the others. Answers that could not be recorded go back to the
   * queue (a few times; then the in-doubt sweep settles the message).
   */
  private async recordAnswersIsolated(answers: Answer[]): Promise<void> {
    if (answers.length === 0) return;
    const groups = new Map<Held, Answer[]>();
    for (const a of answers) groups.set(a.held, [...(groups.get(a.held) ?? []), a]);
    try {
      await this.transaction(async (tx) => {
        for (const [held, group] of groups) await this.recordAnswers(tx, held, group);
      });
      for (const [held, group] of groups) this.answersRecorded(held, group);
      return;
    } catch (err) {
      // The store is gone: keep every answer for when it is back (the caller backs off).
      if (!(await this.storeReachable())) {
        this.answers.unshift(...answers);
        throw err;
      }
      if (groups.size === 1) {
        this.answersNotRecorded(answers, err);
        return;
      }
      this.options.log.warn({ err, messages: groups.size }, 'sms hand-over answers could not be recorded together; recording them one message at a time');
    }
    const pending = [...groups];
    while (pending.length > 0) {
      const [held, group] = pending.shift()!;
      try {
        await this.transaction((tx) => this.recordAnswers(tx, held, group));
        this.answersRecorded(held, group);
      } catch (err) {
        if (!(await this.storeReachable())) {
          this.answers.unshift(...group, ...pending.flatMap(([, g]) => g));
          throw err;
        }
        this.answersNotRecorded(group, err);
      }
    }
  }

  private answersRecorded(held: Held, group: Answer[]): void {
    held.outstanding -= group.length;
    held.answered.push(...group);
  }

  private answersNotRecorded(group: Answer[], err: unknown): void {
    const retry = group.map((a) => ({ ...a, failures: a.failures + 1 })).filter((a) => a.failures < MAX_RECORD_FAILURES);
    const dropped = group.length - retry.length;
    this.options.log.error(
      { err, message_id: group[0]!.held.row.id, parts: group.map((a) => a.partNo), retrying: retry.length > 0 },
      dropped > 0
        ? 'sms hand-over answers could not be recorded; leaving the message to the in-doubt sweep'
        : 'sms hand-over answers could not be recorded; will retry',
    );
    group[0]!.held.outstanding -= dropped;
    this.answers.push(...retry);
  }

  /** One message's answers; when they are its last, the attempt ends (sent, failed, retry or rest). */
  private async recordAnswers(tx: Tx, held: Held, group: Answer[]): Promise<void> {
    const now = this.now();
    for (const a of group) {
      const error = a.result.outcome === 'accepted' ? null : a.result.error;
      await tx.update(smsHandovers).set({ answeredAt: now, outcome: a.result.outcome, error }).where(eq(smsHandovers.id, a.handoverId));
    }
    const accepted = group.flatMap((a) =>
      a.result.outcome === 'accepted' ? [{ partNo: a.partNo, id: a.result.carrierMessageId, handoverId: a.handoverId }] : [],
    );
    if (accepted.length > 0) {
      await tx
        .insert(smsMessageParts)
        .values(
          accepted.map((p) => ({
            messageId: held.row.id,
            partNo: p.partNo,
            carrierMessageId: p.id,
            submittedAt: sql`(select ${smsHandovers.handedAt} from ${smsHandovers} where ${smsHandovers.id} = ${p.handoverId})`,
          })),
        );
      // A receipt may have come before this answer (the SMSC sent deliver_sm first): it is
      // applied now, in this transaction — so a part it fails stops the rest of its message
      // before another part is claimed.
      await this.applyWaitingReceipts(tx);
    }
    if (held.outstanding - group.length > 0) return;
    await this.endAttempt(tx, held, [...held.answered, ...group]);
  }

  private async endAttempt(tx: Tx, held: Held, answers: Answer[]): Promise<void> {
    const { row } = held;
    const now = this.now();
    // Only the claim we hold: the in-doubt sweep may have settled a message we took too long over.
    const release = () =>
      tx.update(smsMessages).set({ submittingAt: null }).where(and(eq(smsMessages.id, row.id), eq(smsMessages.status, 'queued')));
    const byPart = [...answers].sort((a, b) => a.partNo - b.partNo);
    const acceptedNow = byPart.filter((a) => a.result.outcome === 'accepted');
    const where = (a: Answer) => (held.total > 1 ? ` (part ${a.partNo} of ${held.total})` : '');
    const alreadyAccepted =
      held.acceptedBefore + acceptedNow.length > 0
        ? `; already accepted by the SMSC: ${held.acceptedBefore + acceptedNow.length} of ${held.total} parts`
        : '';

    const unknown = byPart.find((a) => a.result.outcome === 'unknown');
    if (unknown && unknown.result.outcome === 'unknown') {
      // The carrier may hold it already: never submit it again.
      await release();
      await this.lifecycle.transition(tx, row.id, 'failed', {
        at: now,
        error: `${IN_DOUBT_ERROR} (${unknown.result.error}${where(unknown)})`,
        refund: true,
      });
      return;
    }
    const refused = byPart.find((a) => a.result.outcome === 'refused' && a.result.permanent);
    if (refused && refused.result.outcome === 'refused') {
      // Refused by the carrier: it never carried the message (or not all of it), so the charge is returned.
      await release();
      await this.lifecycle.transition(tx, row.id, 'failed', {
        at: now,
        error: `${refused.result.error}${where(refused)}${alreadyAccepted}`,
        refund: true,
      });
      return;
    }
    const transient = byPart.find((a) => a.result.outcome === 'refused' || a.result.outcome === 'not_sent');
    if (transient && (transient.result.outcome === 'refused' || transient.result.outcome === 'not_sent')) {
      // The parts accepted stay accepted; the next attempt sends the rest.
      await this.retryLater(tx, row, `${transient.result.error}${where(transient)}`);
      return;
    }
    await release();
    if (held.acceptedBefore + acceptedNow.length >= held.total) {
      await this.lifecycle.transition(tx, row.id, 'sent', { at: now });
    }
    // Otherwise the window held only some parts: the rest goes with the next claim.
  }

  // -- receipts ---------------------------------------------------------------------------------

  /**
   * Apply recorded receipts to their parts, then settle the message: failed when any part
   * failed, expired when any part expired, delivered when every part is delivered. A receipt
   * or message that fails is logged and skipped; it is tried again next tick.
   */
  async applyReceipts(): Promise<void> {
    await this.batch('receipt', (isolated) => this.transaction((tx) => this.applyReceiptsIn(tx, isolated)));
  }

  /**
   * One batch of pending receipts in `tx`. A receipt that finds no part yet waits for it —
   * its submit_sm_resp may still be on its way (an SMSC may send deliver_sm first): it is
   * tried again when a part is recorded and every tick, for RECEIPT_WAIT_MS; then it is kept
   * `unapplied` and logged (never its text, which the carrier's receipt text quoted and the
   * SMPP carrier has already cut off). It is looked up under the carrier's id spelling only.
   */
  private async applyReceiptsIn(tx: Tx, isolated: boolean): Promise<void> {
    // Waited long enough: kept for operators (sms_carrier_receipts, outcome unapplied). The
    // store's clock, as received_at.
    const gaveUp = await tx
      .update(smsCarrierReceipts)
      .set({ outcome: 'unapplied', note: `no part sent to its number with this id within its validity after ${this.receiptWaitMs / 60_000} minutes` })
      .where(
        and(isNull(smsCarrierReceipts.outcome), lte(smsCarrierReceipts.receivedAt, sql`now() - make_interval(secs => ${this.receiptWaitMs / 1000})`)),
      )
      .returning({ id: smsCarrierReceipts.carrierMessageId, state: smsCarrierReceipts.state, receivedAt: smsCarrierReceipts.receivedAt });
    for (const r of gaveUp) {
      this.options.log.warn(
        { carrier_message_id: r.id, state: r.state, received_at: r.receivedAt.toISOString() },
        'sms receipt matches no part; kept unapplied',
      );
    }
    const receipts = await tx
      .select()
      .from(smsCarrierReceipts)
      .where(isNull(smsCarrierReceipts.outcome))
      .orderBy(desc(smsCarrierReceipts.receivedAt))
      .limit(200)
      .for('update', { skipLocked: true });
    if (receipts.length === 0) return;
    const touched = new Set<string>();
    const lookups = receipts.map((r) => ({ ...r, lookupIds: receiptLookupIds(r.carrierMessageId, this.receiptIdFormat) }));
    const record = (matched: Awaited<ReturnType<SmsDispatcher['applyToParts']>>) => {
      for (const m of matched) {
        if (m.changed) touched.add(m.messageId);
        else {
          this.options.log.warn(
            { carrier_message_id: m.carrierMessageId, message_id: m.messageId, part_state: m.current },
            'sms receipt for a part already final; kept unapplied',
          );
        }
      }
    };
    if (!isolated) {
      // Every receipt in one statement; one that matches nothing waits.
      record(await this.applyToParts(tx, lookups));
    } else {
      for (const receipt of lookups) {
        const matched = await this.alone(tx, isolated, 'receipt', receipt.carrierMessageId, (sp) => this.applyToParts(sp, [receipt]));
        if (matched) record(matched);
      }
    }
    if (isolated) {
      for (const messageId of touched) await this.alone(tx, isolated, 'settling', messageId, (sp) => this.settle(sp, messageId));
    } else {
      await this.settleMany(tx, [...touched]);
    }
  }

  /**
   * The receipts waiting for a part, applied in `tx` right after parts were recorded — in a
   * savepoint, so a receipt that cannot be applied never costs the answers (the tick tries it
   * again, isolated). Nothing when none waits (one indexed read).
   */
  private async applyWaitingReceipts(tx: Tx): Promise<void> {
    const [waiting] = await tx.select({ id: smsCarrierReceipts.carrierMessageId }).from(smsCarrierReceipts).where(isNull(smsCarrierReceipts.outcome)).limit(1);
    if (!waiting) return;
    try {
      await this.lifecycle.savepoint(tx, (sp) => this.applyReceiptsIn(sp, false));
    } catch (err) {
      this.options.log.warn({ err }, 'sms receipts could not be applied with the answers; the next tick tries again');
    }
  }

  /**
   * Applies each receipt to the most recent part — carrier ids are unique only in time: an
   * SMSC that restarts numbers from 0 again — whose carrier id is one of its `lookupIds`,
   * submitted before the receipt came, still within its message's validity (the default one
   * from the part's submission when it has none) and, when the receipt names its handset, to
   * that number. A receipt waits (nothing is done) while any part handed over before it has no
   * answer recorded yet (and is not yet in doubt): that part may be the receipt's. A matched
   * receipt is `applied` when it moved its part, else (its part already final: it keeps its
   * first final state) `unapplied`. One statement. `changed`: the part moved, its message may settle.
   */
  private async applyToParts(
    tx: Executor,
    receipts: ReadonlyArray<{ carrierMessageId: string; lookupIds: string[]; state: string; error: string | null; destination: string | null; receivedAt: Date }>,
  ): Promise<Array<{ messageId: string; carrierMessageId: string; changed: boolean; current: string }>> {
    const list = JSON.stringify(
      receipts.map((r) => ({
        rid: r.carrierMessageId,
        ids: r.lookupIds,
        state: r.state,
        error: r.error,
        dest: r.destination,
        received_at: r.receivedAt.toISOString(),
      })),
    );
    const now = this.now().toISOString();
    const defaultValiditySecs = this.defaultValidityMs / 1000;
    const res = await tx.execute(sql`
      with v as (
        select * from jsonb_to_recordset(${list}::jsonb) as v(rid text, ids text[], state text, error text, dest text, received_at timestamptz)
      ),
      ready as (
        select v.* from v
        where not exists (
          select 1 from ${smsHandovers} h
          where h.answered_at is null and h.handed_at <= v.received_at and h.handed_at > now() - make_interval(secs => ${this.options.inDoubtAfterMs / 1000})
        )
      ),
      target as (
        select v.rid, v.state, v.error, t.message_id, t.part_no, t.state as current
        from ready v cross join lateral (
          select p.message_id, p.part_no, p.state
          from ${smsMessageParts} p join ${smsMessages} m on m.id = p.message_id
          where p.carrier_message_id = any(v.ids)
            and coalesce(p.submitted_at, p.accepted_at) <= v.received_at
            and coalesce(m.validity_at, coalesce(p.submitted_at, p.accepted_at) + make_interval(secs => ${defaultValiditySecs})) >= v.received_at
            and (
              v.dest is null
              or m.destination = v.dest
              or (left(v.dest, 1) <> '+' and length(ltrim(v.dest, '0')) >= 7 and right(m.destination, length(ltrim(v.dest, '0'))) = ltrim(v.dest, '0'))
            )
          order by coalesce(p.submitted_at, p.accepted_at) desc, p.message_id desc, p.part_no desc
          limit 1
        ) t
      ),
      parts as (
        update ${smsMessageParts} p set state = target.state, error = target.error, updated_at = ${now}::timestamptz
        from target where p.message_id = target.message_id and p.part_no = target.part_no and p.state = 'sent'
        returning p.message_id
      ),
      applied as (
        update ${smsCarrierReceipts} r
        set outcome = case when target.current = 'sent' then 'applied' else 'unapplied' end,
            applied_at = case when target.current = 'sent' then ${now}::timestamptz end,
            note = case when target.current = 'sent' then null else 'its part (message ' || target.message_id || ') was already ' || target.current end
        from target where r.carrier_message_id = target.rid
      )
      select rid, message_id, current, current = 'sent' as changed from target`);
    return (res as unknown as { rows: Array<{ rid: string; message_id: string; current: string; changed: boolean }> }).rows.map((r) => ({
      messageId: r.message_id,
      carrierMessageId: r.rid,
      current: r.current,
      changed: r.changed,
    }));
  }

  /** `settle` for many messages: two reads, and one statement for all that are now delivered. */
  private async settleMany(tx: Executor, messageIds: string[]): Promise<void> {
    if (messageIds.length === 0) return;
    const parts = await tx
      .select({ messageId: smsMessageParts.messageId, state: smsMessageParts.state, error: smsMessageParts.error })
      .from(smsMessageParts)
      .where(inArray(smsMessageParts.messageId, messageIds));
    const messages = await tx.select({ id: smsMessages.id, parts: smsMessages.parts }).from(smsMessages).where(inArray(smsMessages.id, messageIds));
    const byMessage = new Map<string, typeof parts>();
    for (const p of parts) byMessage.set(p.messageId, [...(byMessage.get(p.messageId) ?? []), p]);
    const delivered: string[] = [];
    for (const message of messages) {
      const own = byMessage.get(message.id) ?? [];
      const outcome = settlement(own, message.parts);
      if (outcome.to === 'delivered') delivered.push(message.id);
      else if (outcome.to === 'failed') await this.failByReceipt(tx, message.id, outcome.opts(this.now()));
      else if (outcome.to) await this.lifecycle.transition(tx, message.id, outcome.to, outcome.opts(this.now()));
    }
    await this.lifecycle.transitionMany(tx, delivered, 'delivered', this.now());
  }

  private async settle(tx: Executor, messageId: string): Promise<void> {
    const parts = await tx.select().from(smsMessageParts).where(eq(smsMessageParts.messageId, messageId));
    const [message] = await tx.select({ parts: smsMessages.parts }).from(smsMessages).where(eq(smsMessages.id, messageId));
    if (!message) return;
    const outcome = settlement(parts, message.parts);
    if (outcome.to === 'failed') await this.failByReceipt(tx, messageId, outcome.opts(this.now()));
    else if (outcome.to) await this.lifecycle.transition(tx, messageId, outcome.to, outcome.opts(this.now()));
  }

  /**
   * A message a receipt failed. The carrier charged for the parts it had; when the receipt
   * came before the last parts were handed over (the message still `queued`), those are never
   * sent (a failed message is not claimed again) and are refunded. A part counts as had once
   * accepted, or handed over with no answer yet or an unknown one (it may be at the carrier).
   */
  private async failByReceipt(tx: Executor, messageId: string, opts: TransitionOptions): Promise<void> {
    const res = await tx.execute(sql`
      select m.status, m.parts, m.price_per_part::text as price, (
        select count(*) from (
          select p.part_no from ${smsMessageParts} p where p.message_id = m.id
          union
          select h.part_no from ${smsHandovers} h where h.message_id = m.id and (h.outcome is null or h.outcome in ('accepted', 'unknown'))
        ) had
      )::int as had
      from ${smsMessages} m where m.id = ${messageId}`);
    const [row] = (res as unknown as { rows: Array<{ status: string; parts: number; price: string; had: number }> }).rows;
    const unsent = row && row.status === 'queued' ? row.parts - row.had : 0;
    if (unsent <= 0) {
      await this.lifecycle.transition(tx, messageId, 'failed', opts);
      return;
    }
    const price = parseAmount(row!.price) ?? 0n;
    await this.lifecycle.transition(tx, messageId, 'failed', {
      ...opts,
      refundAmount: price * BigInt(unsent),
      detail: `${opts.error ?? 'failed'}; ${unsent} of ${row!.parts} parts never sent, refunded`,
    });
  }
}

/**
 * What a message's parts make of it: failed when any part failed (with the carrier's reason;
 * the charge stays for the parts the carrier had, see failByReceipt), expired when any part expired (refunded), delivered
 * when every part is delivered; otherwise nothing yet.
 */
function settlement(
  parts: ReadonlyArray<{ state: string; error: string | null }>,
  total: number,
): { to?: 'failed' | 'expired' | 'delivered'; opts: (at: Date) => TransitionOptions } {
  const failed = parts.find((p) => p.state === 'failed');
  if (failed) return { to: 'failed', opts: (at) => ({ at, error: failed.error ?? 'Delivery failed' }) };
  if (parts.some((p) => p.state === 'expired')) return { to: 'expired', opts: (at) => ({ at, refund: true, detail: 'carrier reported expiry' }) };
  if (parts.length === total && parts.every((p) => p.state === 'delivered')) return { to: 'delivered', opts: (at) => ({ at }) };
  return { opts: (at) => ({ at }) };
}
