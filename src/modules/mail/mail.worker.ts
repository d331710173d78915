// Delivers the mail outbox (the claiming loop is src/infra/outbox-worker.ts). Delivery is at
// least once; the Message-ID is the same on every attempt.
import type { Database } from '../../infra/db/index.js';
import { OutboxWorker } from '../../infra/outbox-worker.js';
import { mailRepository as repo, MAIL_CHANNEL, type MailNextState, type MailRow } from './mail.repository.js';
import { MailTransportError, type MailTransport } from './mail-transport.js';

export interface MailWorkerLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface MailWorkerOptions {
  /** Waits after each failed attempt; attempts = backoffMs.length + 1, then `failed`. */
  backoffMs: readonly number[];
  pollIntervalMs: number;
  /** Messages in flight at once on this node. */
  concurrency: number;
  /** Longer than any send can take, so a live worker never loses its claim. */
  leaseMs: number;
  log?: MailWorkerLogger;
}

const MAX_ERROR_LENGTH = 500;

export class MailWorker extends OutboxWorker<MailRow> {
  constructor(
    database: Database,
    private readonly transport: MailTransport,
    private readonly opts: MailWorkerOptions,
  ) {
    // Sends in flight are waited for on stop (bounded by the transport's timeouts).
    super(database, { ...opts, name: 'mail', channel: MAIL_CHANNEL, abortOnStop: false });
  }

  protected claim(limit: number, leaseMs: number): Promise<MailRow[]> {
    return repo.claimDue(this.database.db, limit, leaseMs);
  }

  protected override onStop(): void {
    this.transport.close();
  }

  protected async deliver(row: MailRow): Promise<void> {
    const attemptNo = row.attempts;
    let next: MailNextState;
    let error: string | null = null;
    try {
      const { response } = await this.transport.send({
        id: row.id,
        messageId: row.messageId,
        from: row.fromAddress,
        to: row.toAddress,
        subject: row.subject,
        text: row.body,
      });
      next = { status: 'sent', transport: this.transport.name, response: truncate(response) };
      // Ids only: subjects and bodies never reach the logs.
      this.opts.log?.info({ mail_id: row.id, attempt: attemptNo, transport: this.transport.name }, 'mail: sent');
    } catch (err) {
      error = truncate(err instanceof Error ? err.message : String(err));
      const permanent = err instanceof MailTransportError && err.permanent;
      const wait = this.opts.backoffMs[attemptNo - 1];
      next = permanent || wait === undefined ? { status: 'failed' } : { status: 'pending', inMs: wait };
      this.opts.log?.warn({ mail_id: row.id, attempt: attemptNo, error, next: next.status }, 'mail: attempt failed');
    }
    await repo.recordAttempt(this.database.db, row.id, attemptNo, error, next);
    if (next.status === 'pending') this.retryIn(next.inMs);
  }
}

function truncate(text: string): string {
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text;
}
