// Outgoing webhooks, for any module (first: SMS delivery receipts, DESIGN.md §4):
//
//   const eventId = await webhooks.enqueue(tx, { partnerId, eventType: 'sms.status', url, payload });
//
// enqueue writes the delivery in the caller's transaction — the event is announced if and
// only if it commits — and the worker (start/stop) POSTs it, signed with the partner's
// secret (DESIGN.md §7), retrying with backoff. Every attempt is kept and shown to the partner.
import type { Static } from 'typebox';
import { randomUUID } from 'node:crypto';
import type { Database, Executor } from '../../infra/db/index.js';
import { checkPublicUrl, type UrlCheckResult } from '../../infra/safe-url.js';
import { fail, missing, ok, type FieldErrors, type Result } from '../../shared/errors.js';
import type { PageWindow } from '../../shared/pagination.js';
import { iso } from '../../shared/time.js';
import { addFieldError } from '../../shared/validation.js';
import { EVENT_TYPES, eventBodyText, PartnerEvents } from './webhooks.events.js';
import {
  webhooksRepository as repo,
  SUBSCRIPTIONS_CHANNEL,
  type AttemptRow,
  type DeliveryRow,
  type SubscriptionChanges,
  type SubscriptionRow,
} from './webhooks.repository.js';
import { newWebhookSecret } from './webhooks.signing.js';
import { WebhookWorker, type WorkerLogger } from './webhooks.worker.js';
import type { Attempt, Delivery, DeliveryDetail, Subscription } from './webhooks.schemas.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * Waits after each failed attempt: attempts at about 0, 30 s, 2.5 min, 12.5 min, 1 h 12 min,
 * 5 h 12 min, 13 h 12 min and 25 h 12 min — 8 attempts spanning more than 24 h — then `failed`.
 */
export const DEFAULT_BACKOFF_MS: readonly number[] = [30 * SECOND, 2 * MINUTE, 10 * MINUTE, HOUR, 4 * HOUR, 8 * HOUR, 12 * HOUR];

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookEvent {
  partnerId: number;
  /** Sent as X-Loyalty-Event, e.g. "sms.status". */
  eventType: string;
  url: string;
  /** Serialised once with JSON.stringify; that exact text is sent and signed on every attempt. */
  payload: unknown;
}

export type WebhookDeliveryView = Static<typeof Delivery>;

export type WebhookAttemptView = Static<typeof Attempt>;

export type WebhookDeliveryDetail = Static<typeof DeliveryDetail>;

export interface WebhooksOptions {
  /** ALLOW_PRIVATE_URLS. */
  allowPrivateUrls: boolean;
  /** WEBHOOK_TIMEOUT_MS: deadline of one attempt. */
  timeoutMs: number;
  /** Waits after each failed attempt (default DEFAULT_BACKOFF_MS); attempts = length + 1. */
  backoffMs?: readonly number[];
  /** How often the worker looks for due deliveries without being woken (default 500 ms). */
  pollIntervalMs?: number;
  /** Deliveries in flight at once on this node (default 16). */
  concurrency?: number;
  log?: WorkerLogger;
}

/** What tests and callers may tune beyond the configuration. */
export type WebhooksTuning = Pick<WebhooksOptions, 'backoffMs' | 'pollIntervalMs' | 'concurrency'>;

export function deliveryView(row: DeliveryRow): WebhookDeliveryView {
  return {
    id: row.id,
    event_id: row.eventId,
    subscription_id: row.subscriptionId,
    event_type: row.eventType,
    url: row.url,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: row.status === 'pending' ? iso(row.nextAttemptAt) : null,
    last_status_code: row.lastStatusCode,
    last_error: row.lastError,
    created_at: iso(row.createdAt),
    delivered_at: iso(row.deliveredAt),
  };
}

/**
 * Test pings a partner may send a minute (DESIGN.md §14); beyond, 429 code 1003. Every
 * request to the test button counts. A ping is attempted once, never retried.
 */
export const PINGS_PER_MINUTE = 10;

/** At most this many subscriptions per partner (DESIGN.md §14): the 11th is 422 QUOTA_EXCEEDED (one status for the code, DESIGN.md §3). */
export const MAX_SUBSCRIPTIONS = 10;
const MAX_URL_LENGTH = 2048;

export type SubscriptionView = Static<typeof Subscription>;

export function subscriptionView(row: SubscriptionRow): SubscriptionView {
  return { id: row.id, url: row.url, events: row.events, is_active: row.isActive, description: row.description, created_at: iso(row.createdAt) };
}

/** A subscription's fields as sent (POST: url and events required; PUT: any subset). */
export interface SubscriptionInput {
  url?: string;
  events?: string[];
  is_active?: boolean;
  description?: string | null;
}

const KNOWN_EVENTS = new Set<string>([...EVENT_TYPES, '*']);

export function attemptView(row: AttemptRow): WebhookAttemptView {
  return {
    attempt_no: row.attemptNo,
    attempted_at: iso(row.attemptedAt),
    status_code: row.statusCode,
    error: row.error,
    duration_ms: row.durationMs,
  };
}

export class WebhooksService {
  private readonly worker: WebhookWorker;
  /** Partner events (DESIGN.md §14): `events.emit(tx, partnerId, type, data)` from any module. */
  readonly events = new PartnerEvents();
  private listening = false;

  constructor(
    private readonly database: Database,
    private readonly opts: WebhooksOptions,
  ) {
    this.worker = new WebhookWorker(database, (partnerId) => this.getSecret(partnerId), {
      allowPrivateUrls: opts.allowPrivateUrls,
      timeoutMs: opts.timeoutMs,
      backoffMs: opts.backoffMs ?? DEFAULT_BACKOFF_MS,
      pollIntervalMs: opts.pollIntervalMs ?? 500,
      concurrency: opts.concurrency ?? 16,
      log: opts.log,
    });
  }

  /** The partner's signing secret, created on first use. */
  async getSecret(partnerId: number): Promise<string> {
    return (await repo.findSecret(this.database.db, partnerId)) ?? repo.ensureSecret(this.database.db, partnerId, newWebhookSecret());
  }

  /** Issues a new secret; from now on only it signs (retries of older events included). */
  rotate(partnerId: number): Promise<string> {
    return repo.replaceSecret(this.database.db, partnerId, newWebhookSecret());
  }

  /**
   * Checks a URL the way deliveries will: http(s), no credentials, and a public address
   * unless ALLOW_PRIVATE_URLS. For validating a URL when it is given (422 on the field);
   * the address is checked again at every delivery. A bound function: pass it around freely.
   */
  readonly checkUrl = (url: string): Promise<UrlCheckResult> => checkPublicUrl(url, { allowPrivate: this.opts.allowPrivateUrls });

  /**
   * Queues an event in the caller's transaction `tx` (or autocommit with the plain db);
   * nothing is sent unless it commits. Returns the event id (X-Loyalty-Event-Id).
   */
  async enqueue(tx: Executor, event: WebhookEvent): Promise<string> {
    const body = JSON.stringify(event.payload);
    if (body === undefined) throw new TypeError('webhook payload is not JSON-serialisable');
    const eventId = randomUUID();
    await repo.insertDelivery(tx, { eventId, partnerId: event.partnerId, eventType: event.eventType, url: event.url, body });
    return eventId;
  }

  // --- subscriptions (DESIGN.md §14) ---------------------------------------------------

  async listSubscriptions(partnerId: number): Promise<SubscriptionView[]> {
    return (await repo.listSubscriptions(this.database.db, partnerId)).map(subscriptionView);
  }

  async getSubscription(partnerId: number, id: number): Promise<SubscriptionView | undefined> {
    const row = await repo.findSubscription(this.database.db, partnerId, id);
    return row && subscriptionView(row);
  }

  /** Every problem of the fields sent, as one 422 (url: format and the private-address refusal; events: known names). */
  private async problems(input: SubscriptionInput): Promise<FieldErrors> {
    const errors: FieldErrors = {};
    if (input.url !== undefined) {
      let parsed: URL | undefined;
      try {
        parsed = new URL(input.url);
      } catch {
        parsed = undefined;
      }
      if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || input.url.length > MAX_URL_LENGTH) {
        addFieldError(errors, 'url', 'validation.format', { format: 'URL' });
      } else {
        const check = await this.checkUrl(input.url);
        if (!check.ok) addFieldError(errors, 'url', 'webhooks.url_private', { reason: check.reason });
      }
    }
    if (input.events !== undefined) {
      const unknown = input.events.filter((e) => !KNOWN_EVENTS.has(e));
      if (unknown.length > 0) addFieldError(errors, 'events', 'webhooks.unknown_events', { names: unknown.join(', ') });
    }
    return errors;
  }

  async createSubscription(partnerId: number, input: SubscriptionInput & { url: string; events: string[] }): Promise<Result<SubscriptionView>> {
    const errors = await this.problems(input);
    if (Object.keys(errors).length > 0) return fail('VALIDATION', { fields: errors });
    const row = await this.database.db.transaction(async (tx) => {
      // Under the partner's row lock: two concurrent adds cannot both be the 10th.
      await repo.lockPartner(tx, partnerId);
      if ((await repo.countSubscriptions(tx, partnerId)) >= MAX_SUBSCRIPTIONS) return undefined;
      return repo.insertSubscription(tx, {
        partnerId,
        url: input.url,
        events: [...new Set(input.events)],
        isActive: input.is_active ?? true,
        description: input.description ?? null,
      });
    });
    if (!row) {
      return fail('QUOTA_EXCEEDED', {
        message: 'webhooks.subscription_limit',
        params: { limit: MAX_SUBSCRIPTIONS },
        items: [{ field: 'id', code: 'QUOTA_EXCEEDED', key: 'webhooks.subscription_limit', params: { limit: MAX_SUBSCRIPTIONS }, meta: { limit: MAX_SUBSCRIPTIONS } }],
      });
    }
    this.events.forget(partnerId);
    return ok(subscriptionView(row));
  }

  async updateSubscription(partnerId: number, id: number, input: SubscriptionInput): Promise<Result<SubscriptionView>> {
    if (!(await repo.findSubscription(this.database.db, partnerId, id))) return missing('resource.webhook_subscription');
    const errors = await this.problems(input);
    if (Object.keys(errors).length > 0) return fail('VALIDATION', { fields: errors });
    const changes: SubscriptionChanges = {};
    if (input.url !== undefined) changes.url = input.url;
    if (input.events !== undefined) changes.events = [...new Set(input.events)];
    if (input.is_active !== undefined) changes.isActive = input.is_active;
    if (input.description !== undefined) changes.description = input.description;
    const row = await repo.updateSubscription(this.database.db, partnerId, id, changes);
    this.events.forget(partnerId);
    return row ? ok(subscriptionView(row)) : missing('resource.webhook_subscription');
  }

  async deleteSubscription(partnerId: number, id: number): Promise<boolean> {
    const deleted = await this.database.db.transaction(async (tx) => {
      await repo.cancelPending(tx, partnerId, id);
      return repo.deleteSubscription(tx, partnerId, id);
    });
    this.events.forget(partnerId);
    return deleted;
  }

  /** The test button: a `ping` to the subscription now, whatever its event list or state; attempted once. */
  async ping(partnerId: number, id: number): Promise<Result<WebhookDeliveryView>> {
    const sub = await repo.findSubscription(this.database.db, partnerId, id);
    if (!sub) return missing('resource.webhook_subscription');
    const eventId = randomUUID();
    const body = eventBodyText(eventId, 'ping', partnerId, { subscription_id: sub.id });
    const row = await repo.insertPing(this.database.db, { eventId, partnerId, subscriptionId: sub.id, url: sub.url, body });
    this.worker.wake();
    return ok(deliveryView(row));
  }

  /** Every delivery of one event (one per subscription), whoever owns it (tests). */
  async deliveriesOfEvent(eventId: string): Promise<WebhookDeliveryView[]> {
    return (await repo.deliveriesOfEvent(this.database.db, eventId)).map(deliveryView);
  }

  async listDeliveries(partnerId: number, page: PageWindow): Promise<{ items: WebhookDeliveryView[]; total: number }> {
    const { rows, total } = await repo.list(this.database.db, partnerId, page.perPage, page.offset);
    return { items: rows.map(deliveryView), total };
  }

  async getDelivery(partnerId: number, id: number): Promise<WebhookDeliveryDetail | undefined> {
    const row = await repo.find(this.database.db, partnerId, id);
    if (!row) return undefined;
    const attempts = await repo.attemptsOf(this.database.db, row.id);
    return { ...deliveryView(row), attempts: attempts.map(attemptView) };
  }

  /** A delivery by its event id, whoever owns it (for other modules and tests). */
  async findByEventId(eventId: string): Promise<WebhookDeliveryDetail | undefined> {
    const row = await repo.findByEventId(this.database.db, eventId);
    if (!row) return undefined;
    const attempts = await repo.attemptsOf(this.database.db, row.id);
    return { ...deliveryView(row), attempts: attempts.map(attemptView) };
  }

  /**
   * Starts delivering on this node (several nodes may run it on one database), and hearing of
   * other nodes' subscription changes.
   */
  async start(): Promise<void> {
    if (!this.listening) {
      this.listening = true;
      await this.database
        .listen(
          SUBSCRIPTIONS_CHANNEL,
          (payload) => this.events.forget(Number(payload)),
          () => undefined,
        )
        .catch((err: unknown) => this.opts.log?.warn({ err }, 'webhooks: LISTEN for subscription changes failed; cached for seconds'));
    }
    return this.worker.start();
  }

  /** Stops delivering; interrupted attempts are handed back to be retried at once. */
  stop(): Promise<void> {
    return this.worker.stop();
  }

  /** Look for due deliveries now rather than at the next poll. */
  wake(): void {
    this.worker.wake();
  }
}
