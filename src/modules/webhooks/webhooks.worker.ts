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

/**
 * One partner's deliveries take at most this share of a node's slots (DESIGN.md §14: a
 * quarter), whether others wait or not — a slot given to a receiver that hangs is not
 * handed back before its timeout, so waiting for others to arrive would be too late.
 */
export const PARTNER_SHARE = 1 / 4;

/** The slots one partner may hold on a node of `concurrency` slots (at least one). */
export function slotsPerPartner(concurrency: number): number {
  return Math.max(1, Math.floor(concurrency * PARTNER_SHARE));
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
    const inFlight = new Map<number, number>();
    for (const row of this.inFlightRows()) inFlight.set(row.partnerId, (inFlight.get(row.partnerId) ?? 0) + 1);
    return repo.claimDue(this.database.db, limit, leaseMs, { perPartner: slotsPerPartner(this.opts.concurrency), inFlight });
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
    if (row.eventType === 'ping' && attemptNo > 1) {
      // Claimed again after a node died during its attempt: a ping is sent once (DESIGN.md §14).
      await repo.giveUp(this.database.db, row.id, attemptNo, 'interrupted (a node stopped during the attempt); pings are not retried');
      return;
    }
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
    // The test button's ping is sent once: its answer is what the partner wanted to see.
    if (row.eventType === 'ping') return { status: 'failed' };
    // Every delivery has its own schedule: none waits for another, so none is held back or
    // cut short by another's failures (DESIGN.md §14).
    const wait = this.opts.backoffMs[attemptNo - 1];
    if (wait === undefined) return { status: 'failed' };
    return { status: 'pending', inMs: wait };
  }
}

function describe(err: unknown): string {
  let text: string;
  if (err instanceof SafeFetchError) text = err.code === 'network' ? err.message : `${err.code}: ${err.message}`;
  else text = err instanceof Error ? err.message : String(err);
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text;
}
