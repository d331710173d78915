// Delivers the webhook outbox. Any number of nodes may run this worker on one database:
// a delivery is claimed (FOR UPDATE SKIP LOCKED, next_attempt_at pushed past a lease) in a
// short transaction and sent outside it, so no two nodes send it at once, and a node that
// dies mid-delivery only delays it until the lease runs out.
//
// It wakes every `pollIntervalMs`, on NOTIFY after an enqueue commits (any node), and when
// one of its own deliveries finishes. Delivery is at least once: receivers drop duplicates
// by X-Loyalty-Event-Id, which is the same on every attempt.
import { performance } from 'node:perf_hooks';
import type { Database } from '../db/index.js';
import { safeAgents, safeFetch, SafeFetchError, type SafeAgents } from '../safe-url.js';
import { webhooksRepository as repo, WEBHOOKS_CHANNEL, type DeliveryRow, type NextState } from './webhooks.repository.js';
import { signatureHeader } from './webhooks.signing.js';

export interface WorkerLogger {
  warn(obj: object, msg?: string): void;
}

export interface WebhookWorkerOptions {
  allowPrivateUrls: boolean;
  timeoutMs: number;
  /** Waits after each failed attempt; attempts = backoffMs.length + 1, then `failed`. */
  backoffMs: readonly number[];
  pollIntervalMs: number;
  /** Deliveries in flight at once on this node. */
  concurrency: number;
  log?: WorkerLogger;
}

const USER_AGENT = 'Loyalty-Webhooks/1';
const MAX_ERROR_LENGTH = 500;

export class WebhookWorker {
  private running = false;
  private listenRegistered = false;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private again = false;
  private agents: SafeAgents | undefined;
  private readonly inFlight = new Map<number, { abort: AbortController; done: Promise<void> }>();

  constructor(
    private readonly database: Database,
    private readonly secretOf: (partnerId: number) => Promise<string>,
    private readonly opts: WebhookWorkerOptions,
  ) {}

  /** Longer than any attempt can take, so a live worker never loses its claim. */
  private get leaseMs(): number {
    return this.opts.timeoutMs + 60_000;
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.agents = safeAgents({ allowPrivate: this.opts.allowPrivateUrls, maxSockets: this.opts.concurrency });
    if (!this.listenRegistered) {
      this.listenRegistered = true;
      // Without notifications (connection lost) the poll still finds everything.
      await this.database
        .listen(
          WEBHOOKS_CHANNEL,
          () => this.wake(),
          () => undefined,
        )
        .catch((err: unknown) => this.opts.log?.warn({ err }, 'webhooks: LISTEN failed; polling only'));
    }
    this.wake();
  }

  /** Stops claiming; deliveries in flight are interrupted and handed back (due at once). */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.ticking;
    for (const { abort } of this.inFlight.values()) abort.abort();
    await Promise.all([...this.inFlight.values()].map((f) => f.done));
    this.agents?.destroy();
    this.agents = undefined;
  }

  /** Look for due deliveries now (coalesced with a look already under way). */
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
      .catch((err: unknown) => this.opts.log?.warn({ err }, 'webhooks: claiming deliveries failed'))
      .finally(() => {
        this.ticking = undefined;
        if (this.running) this.schedule(this.again ? 0 : this.opts.pollIntervalMs);
      });
  }

  private async tick(): Promise<void> {
    const free = this.opts.concurrency - this.inFlight.size;
    if (free <= 0) return;
    const claimed = await repo.claimDue(this.database.db, free, this.leaseMs);
    for (const row of claimed) this.launch(row);
    // A full batch: there may be more due (taken as slots free up).
    if (claimed.length === free) this.again = true;
  }

  private launch(row: DeliveryRow): void {
    const abort = new AbortController();
    const done = this.deliver(row, abort.signal)
      .catch((err: unknown) => this.opts.log?.warn({ err, delivery_id: row.id }, 'webhooks: recording a delivery attempt failed'))
      .finally(() => {
        this.inFlight.delete(row.id);
        this.wake();
      });
    this.inFlight.set(row.id, { abort, done });
  }

  private async deliver(row: DeliveryRow, signal: AbortSignal): Promise<void> {
    const attemptNo = row.attempts;
    // Read at each attempt: after a rotation the old secret signs nothing more.
    const secret = await this.secretOf(row.partnerId);
    const attemptedAt = new Date();
    const started = performance.now();
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      const res = await safeFetch(row.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'x-loyalty-event-id': row.eventId,
          'x-loyalty-event': row.eventType,
          'x-loyalty-signature': signatureHeader(secret, row.body, Math.floor(attemptedAt.getTime() / 1000)),
        },
        body: row.body,
        timeoutMs: this.opts.timeoutMs,
        allowPrivate: this.opts.allowPrivateUrls,
        agents: this.agents,
        signal,
      });
      statusCode = res.status;
    } catch (err) {
      if (signal.aborted) {
        // Shutting down: the attempt did not finish; hand the delivery back uncounted.
        await repo.release(this.database.db, row.id, attemptNo);
        return;
      }
      error = describe(err);
    }
    const durationMs = Math.round(performance.now() - started);
    const delivered = statusCode !== null && statusCode >= 200 && statusCode <= 299;
    const next = this.nextState(delivered, attemptNo);
    await repo.recordAttempt(this.database.db, row.id, attemptNo, { attemptedAt, statusCode, error, durationMs }, next);
    // Due sooner than the next poll: wake for it. Only now, as the database counted the wait
    // from its own now() inside the transaction just committed.
    if (next.status === 'pending' && next.inMs < this.opts.pollIntervalMs) setTimeout(() => this.wake(), next.inMs + 5).unref();
  }

  private nextState(delivered: boolean, attemptNo: number): NextState {
    if (delivered) return { status: 'delivered' };
    const wait = this.opts.backoffMs[attemptNo - 1];
    return wait === undefined ? { status: 'failed' } : { status: 'pending', inMs: wait };
  }
}

function describe(err: unknown): string {
  let text: string;
  if (err instanceof SafeFetchError) text = err.code === 'network' ? err.message : `${err.code}: ${err.message}`;
  else text = err instanceof Error ? err.message : String(err);
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text;
}
