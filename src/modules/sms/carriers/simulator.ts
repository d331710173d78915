// The built-in carrier (embedded default). It is "handed" a message by a row written in the
// dispatcher's own transaction, so the hand-over commits exactly once together with the
// message becoming `sent`. A few seconds later (SMS_SIMULATOR_DELAY_MS) it reports receipts
// like a network would. Test numbers (DESIGN.md §4): a national number ending 0001 fails
// ("Unreachable destination"); ending 0002 never gets a receipt, so it stays `sent` until
// its validity passes and it expires.
import { and, asc, eq, isNull, lte, sql } from 'drizzle-orm';
import type { Database, Tx } from '../../../infra/db/index.js';
import type { Clock } from '../../../shared/time.js';
import { smsSimulatorSubmissions } from '../sms.tables.js';
import type { CarrierSubmission, ReceiptSink, SubmitResult, TransactionalCarrier } from './carrier.js';

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

  async submit(message: CarrierSubmission, tx: Tx): Promise<SubmitResult> {
    const outcome = simulatedOutcome(message.destination);
    // The primary key makes a second hand-over of the same message impossible.
    await tx.insert(smsSimulatorSubmissions).values({
      messageId: message.messageId,
      destination: message.destination,
      parts: message.segments.length,
      outcome,
      reportAt: new Date(this.options.clock.now().getTime() + this.options.delayMs),
    });
    return {
      ok: true,
      parts: message.segments.map((_, i) => ({ partNo: i + 1, carrierMessageId: simulatorPartId(message.messageId, i + 1) })),
    };
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
      // Receipts are recorded in the same transaction that marks the submissions reported:
      // a crash loses neither, and none is reported twice.
      await this.database.db.transaction(async (tx) => {
        const rows = await tx
          .select()
          .from(smsSimulatorSubmissions)
          .where(and(isNull(smsSimulatorSubmissions.reportedAt), lte(smsSimulatorSubmissions.reportAt, this.options.clock.now())))
          .orderBy(asc(smsSimulatorSubmissions.reportAt))
          .limit(100)
          .for('update', { skipLocked: true });
        for (const row of rows) {
          await tx
            .update(smsSimulatorSubmissions)
            .set({ reportedAt: sql`now()` })
            .where(eq(smsSimulatorSubmissions.messageId, row.messageId));
          if (row.outcome === 'none') continue;
          for (let part = 1; part <= row.parts; part++) {
            await onReceipt(
              {
                carrierMessageId: simulatorPartId(row.messageId, part),
                state: row.outcome,
                ...(row.outcome === 'failed' ? { error: SIMULATOR_UNREACHABLE } : {}),
              },
              tx,
            );
          }
        }
      });
    } catch (err) {
      // The store is closing or briefly unavailable: the rows stay due and are retried.
      this.options.log?.warn({ err }, 'sms simulator could not report receipts; retrying');
    }
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
