// Delivers the mail outbox, modelled on the webhook worker: any number of nodes may run it
// on one database. A message is claimed (FOR UPDATE SKIP LOCKED, next_attempt_at pushed past
// a lease) in a short transaction and handed to the transport outside it, so no two nodes
// send it at once and a node that dies mid-send only delays it until the lease runs out.
// Delivery is at least once; the Message-ID is the same on every attempt.
import type { Database } from '../db/index.js';
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

export class MailWorker {
  private running = false;
  private listenRegistered = false;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private again = false;
  private readonly inFlight = new Map<number, Promise<void>>();

  constructor(
    private readonly database: Database,
    private readonly transport: MailTransport,
    private readonly opts: MailWorkerOptions,
  ) {}

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    if (!this.listenRegistered) {
      this.listenRegistered = true;
      // Without notifications (connection lost) the poll still finds everything.
      await this.database
        .listen(
          MAIL_CHANNEL,
          () => this.wake(),
          () => undefined,
        )
        .catch((err: unknown) => this.opts.log?.warn({ err }, 'mail: LISTEN failed; polling only'));
    }
    this.wake();
  }

  /** Stops claiming and waits for the sends in flight (bounded by the transport's timeouts). */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.ticking;
    await Promise.all(this.inFlight.values());
    this.transport.close();
  }

  /** Look for due messages now (coalesced with a look already under way). */
  wake(): void {
    if (!this.running) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.runTick(), ms);
  }

  private runTick(): void {
    if (!this.running || this.ticking) return;
    this.again = false;
    this.ticking = this.tick()
      .catch((err: unknown) => this.opts.log?.warn({ err }, 'mail: claiming messages failed'))
      .finally(() => {
        this.ticking = undefined;
        if (this.running) this.schedule(this.again ? 0 : this.opts.pollIntervalMs);
      });
  }

  private async tick(): Promise<void> {
    const free = this.opts.concurrency - this.inFlight.size;
    if (free <= 0) return;
    const claimed = await repo.claimDue(this.database.db, free, this.opts.leaseMs);
    for (const row of claimed) this.launch(row);
    if (claimed.length === free) this.again = true;
  }

  private launch(row: MailRow): void {
    const done = this.deliver(row)
      .catch((err: unknown) => this.opts.log?.warn({ err, mail_id: row.id }, 'mail: recording an attempt failed'))
      .finally(() => {
        this.inFlight.delete(row.id);
        this.wake();
      });
    this.inFlight.set(row.id, done);
  }

  private async deliver(row: MailRow): Promise<void> {
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
    if (next.status === 'pending' && next.inMs < this.opts.pollIntervalMs) setTimeout(() => this.wake(), next.inMs + 5).unref();
  }
}

function truncate(text: string): string {
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text;
}
