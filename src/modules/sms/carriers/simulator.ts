// The built-in carrier (embedded default). It is "handed" a message by a row written in the
// dispatcher's own transaction, so the hand-over commits exactly once together with the
// message becoming `sent`. A few seconds later (SMS_SIMULATOR_DELAY_MS) it reports receipts
// like a network would. Test numbers (DESIGN.md §4): a national number ending 0001 fails
// ("Unreachable destination"); ending 0002 never gets a receipt, so it stays `sent` until
// its validity passes and it expires.
import { and, asc, inArray, isNull, lte, sql } from 'drizzle-orm';
import type { Database, Tx } from '../../../infra/db/index.js';
import type { Clock } from '../../../shared/time.js';
import { smsSimulatorSubmissions } from '../sms.tables.js';
import type { CarrierSubmission, ReceiptSink, SubmitResult, TransactionalCarrier } from './carrier.js';

/** Submissions reported per statement. */
const REPORT_BATCH = 500;

export const SIMULATOR_UNREACHABLE = 'Unreachable destination';

export function simulatedOutcome(destination: string): 'delivered' | 'failed' | 'none' {
  if (destination.endsWith('0001')) return 'failed';
  if (destination.endsWith('0002')) return 'none';
  return 'delivered';
}

export const simulatorPartId = (messageId: string, partNo: number) => `sim-${messageId}-${partNo}`;

export class SimulatorCarrier implements TransactionalCarrier {
  readonly name = 'simulator' as const;
  readonly transactional = true;
  private timer: NodeJS.Timeout | undefined;
  private onReceipt: ReceiptSink | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly database: Database,
    private readonly options: {
      delayMs: number;
      pollMs?: number;
      clock: Clock;
      log?: { warn(obj: object, msg?: string): void };
    },
  ) {}

  async start(onReceipt: ReceiptSink): Promise<void> {
    this.onReceipt = onReceipt;
    this.timer = setInterval(() => void this.tick(), this.options.pollMs ?? 250);
    this.timer.unref();
  }

  /** Hands over a batch with one INSERT; the primary key makes a second hand-over of a message impossible. */
  async submit(messages: readonly CarrierSubmission[], tx: Tx): Promise<SubmitResult[]> {
    if (messages.length === 0) return [];
    const reportAt = new Date(this.options.clock.now().getTime() + this.options.delayMs);
    await tx.insert(smsSimulatorSubmissions).values(
      messages.map((message) => ({
        messageId: message.messageId,
        destination: message.destination,
        parts: message.segments.length,
        outcome: simulatedOutcome(message.destination),
        reportAt,
      })),
    );
    return messages.map((message) => ({
      ok: true,
      parts: message.segments.map((_, i) => ({ partNo: i + 1, carrierMessageId: simulatorPartId(message.messageId, i + 1) })),
    }));
  }

  /** Report receipts that are due. Several nodes may run this; SKIP LOCKED shares the work. */
  private tick(): Promise<void> {
    this.running ??= this.report().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  async report(): Promise<void> {
    const onReceipt = this.onReceipt;
    if (!onReceipt) return;
    try {
      // A full batch: there may be more due.
      while ((await this.reportBatch(onReceipt)) === REPORT_BATCH) {
        // next batch
      }
    } catch (err) {
      // The store is closing or briefly unavailable: the rows stay due and are retried.
      this.options.log?.warn({ err }, 'sms simulator could not report receipts; retrying');
    }
  }

  /**
   * Receipts are recorded in the same transaction that marks the submissions reported: a
   * crash loses neither, and none is reported twice. Returns how many submissions it took.
   */
  private reportBatch(onReceipt: ReceiptSink): Promise<number> {
    return this.database.db.transaction(async (tx) => {
      const rows = await tx
        .select()
        .from(smsSimulatorSubmissions)
        .where(and(isNull(smsSimulatorSubmissions.reportedAt), lte(smsSimulatorSubmissions.reportAt, this.options.clock.now())))
        .orderBy(asc(smsSimulatorSubmissions.reportAt))
        .limit(REPORT_BATCH)
        .for('update', { skipLocked: true });
      if (rows.length === 0) return 0;
      await tx
        .update(smsSimulatorSubmissions)
        .set({ reportedAt: sql`now()` })
        .where(inArray(smsSimulatorSubmissions.messageId, rows.map((row) => row.messageId)));
      const receipts = rows.flatMap((row) =>
        row.outcome === 'none'
          ? []
          : Array.from({ length: row.parts }, (_, i) => ({
              carrierMessageId: simulatorPartId(row.messageId, i + 1),
              state: row.outcome as 'delivered' | 'failed',
              ...(row.outcome === 'failed' ? { error: SIMULATOR_UNREACHABLE } : {}),
            })),
      );
      if (receipts.length > 0) await onReceipt(receipts, tx);
      return rows.length;
    });
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
