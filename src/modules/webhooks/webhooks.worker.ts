// Delivers the webhook outbox (the claiming loop is src/infra/outbox-worker.ts). Delivery is
// at least once: receivers drop duplicates by X-Loyalty-Event-Id, the same on every attempt.
import { performance } from 'node:perf_hooks';
import type { Database } from '../../infra/db/index.js';
import { OutboxWorker } from '../../infra/outbox-worker.js';
import { safeAgents, safeFetch, SafeFetchError, type SafeAgents } from '../../infra/safe-url.js';
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

export class WebhookWorker extends OutboxWorker<DeliveryRow> {
  private agents: SafeAgents | undefined;

  constructor(
    database: Database,
    private readonly secretOf: (partnerId: number) => Promise<string>,
    private readonly opts: WebhookWorkerOptions,
  ) {
    // Deliveries in flight are interrupted on stop and handed back (due at once).
    super(database, { ...opts, name: 'webhooks', channel: WEBHOOKS_CHANNEL, abortOnStop: true, leaseMs: opts.timeoutMs + 60_000 });
  }

  protected claim(limit: number, leaseMs: number): Promise<DeliveryRow[]> {
    return repo.claimDue(this.database.db, limit, leaseMs);
  }

  protected override onStart(): void {
    this.agents = safeAgents({ allowPrivate: this.opts.allowPrivateUrls, maxSockets: this.opts.concurrency });
  }

  protected override onStop(): void {
    this.agents?.destroy();
    this.agents = undefined;
  }

  protected async deliver(row: DeliveryRow, signal: AbortSignal): Promise<void> {
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
    const next = this.nextState(delivered, attemptNo, row);
    await repo.recordAttempt(this.database.db, row.id, attemptNo, { attemptedAt, statusCode, error, durationMs }, next);
    if (next.status === 'pending') this.retryIn(next.inMs);
  }

  private nextState(delivered: boolean, attemptNo: number, row: DeliveryRow): NextState {
    if (delivered) return { status: 'delivered' };
    const wait = this.opts.backoffMs[attemptNo - 1];
    if (wait === undefined) return { status: 'failed' };
    // A subscription's delivery that waited behind earlier ones (they go in order) gets no
    // fresh 24 h of its own: once it is older than the whole schedule, a failed attempt is its
    // last. So after a long outage the stale backlog is tried once each, in order, and the
    // queue reaches the recent events instead of spending a day on each.
    if (row.subscriptionId !== null && Date.now() - row.createdAt.getTime() >= this.scheduleMs) return { status: 'failed' };
    return { status: 'pending', inMs: wait };
  }

  private get scheduleMs(): number {
    return this.opts.backoffMs.reduce((sum, ms) => sum + ms, 0);
  }
}

function describe(err: unknown): string {
  let text: string;
  if (err instanceof SafeFetchError) text = err.code === 'network' ? err.message : `${err.code}: ${err.message}`;
  else text = err instanceof Error ? err.message : String(err);
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text;
}
