// Partner events (DESIGN.md §14): what a module calls where a change happens —
//
//   await events.emit(tx, partnerId, 'coupon.redeemed', couponView);
//
// in the transaction that makes the change, so the event is sent if and only if the change
// commits: one delivery to each active subscription of the partner that lists the type (or
// "*"), all with one event id and one `sequence` (drawn by that insert), signed, retried and
// recorded like the SMS receipts (§4), each delivery on its own schedule.
//
// emit runs on hot paths (the till's award): when the partner has no subscription for the
// type it writes nothing and, most of the time, reads nothing either — which types a
// partner's active subscriptions list is cached here for CACHE_MS, forgotten at once on this
// node when they change and on every other node when the change's NOTIFY arrives.
import { randomUUID } from 'node:crypto';
import { Type, type Static } from 'typebox';
import type { Db, Executor } from '../../infra/db/index.js';
import type { EventBodyText } from './webhooks.event-body.js';
import { webhooksRepository as repo } from './webhooks.repository.js';

/** Every event type a subscription may list (besides "*"); `ping` is only ever sent by the test button. */
export const EVENT_TYPES = [
  'transaction.created',
  'transaction.returned',
  'transaction.reversed',
  'card.created',
  'card.tier_changed',
  'coupon.claimed',
  'coupon.redeemed',
  'coupon.rolled_back',
  'campaign.exhausted',
  'game.reward_claimed',
  'import.finished',
  'sms.status',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** The body of every event delivery (DESIGN.md §14), keys in the order they are sent. */
export const EventBodySchema = Type.Object({
  id: Type.String({ format: 'uuid', description: 'The event id, also X-Loyalty-Event-Id: the same on every retry and at every subscription' }),
  type: Type.String({ description: `One of ${EVENT_TYPES.join(', ')}, or ping (the test button); also X-Loyalty-Event` }),
  sequence: Type.Integer({
    minimum: 1,
    description: "Increases in the order the partner's events are created (with gaps): deliveries are independent and may arrive in any order, so order by this",
  }),
  created_at: Type.String({ format: 'date-time' }),
  partner_id: Type.Integer(),
  data: Type.Unknown({ description: 'The resource as the API shows it' }),
});

export type EventBody = Static<typeof EventBodySchema>;

export type { EventBodyText } from './webhooks.event-body.js';

/** What other modules are given: emit an event in their transaction, and ask whether anyone listens. */
export interface PartnerEventSink {
  /**
   * Queues `data` as event `type` of the partner in `exec`'s transaction; returns its event
   * id, or undefined when no active subscription lists the type (nothing written then).
   */
  emit(exec: Executor, partnerId: number, type: EventType, data: unknown): Promise<string | undefined>;
  /** Whether an active subscription of the partner lists `type` (cached; read on `exec` when not). */
  wants(exec: Executor, partnerId: number, type: EventType): Promise<boolean>;
}

/** For code built without webhooks (unit tests of other modules). */
export const noEvents: PartnerEventSink = {
  emit: async () => undefined,
  wants: async () => false,
};

/** How long a node trusts what it read of a partner's subscriptions (a NOTIFY lost, another node's change). */
export const SUBSCRIPTIONS_CACHE_MS = 10_000;
const CACHE_MAX_PARTNERS = 10_000;

export function eventBodyText(eventId: string, type: EventType | 'ping', partnerId: number, data: unknown): EventBodyText {
  const json = JSON.stringify(data);
  if (json === undefined) throw new TypeError(`event ${type}: data is not JSON-serialisable`);
  return {
    head: `{"id":${JSON.stringify(eventId)},"type":${JSON.stringify(type)},"sequence":`,
    tail: `,"created_at":${JSON.stringify(new Date().toISOString())},"partner_id":${JSON.stringify(partnerId)},"data":${json}}`,
  };
}

export class PartnerEvents implements PartnerEventSink {
  private readonly cache = new Map<number, { types: ReadonlySet<string>; until: number }>();

  constructor(private readonly cacheMs = SUBSCRIPTIONS_CACHE_MS) {}

  async wants(exec: Executor | Db, partnerId: number, type: EventType): Promise<boolean> {
    const now = Date.now();
    let entry = this.cache.get(partnerId);
    if (!entry || entry.until <= now) {
      // On `exec`: inside a transaction of the embedded store (one connection), another
      // query on the plain database would wait for that transaction's end.
      entry = { types: new Set(await repo.subscribedTypes(exec, partnerId)), until: now + this.cacheMs };
      this.cache.delete(partnerId);
      if (this.cache.size >= CACHE_MAX_PARTNERS) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(partnerId, entry);
    }
    return entry.types.has(type) || entry.types.has('*');
  }

  async emit(exec: Executor, partnerId: number, type: EventType, data: unknown): Promise<string | undefined> {
    if (!(await this.wants(exec, partnerId, type))) return undefined;
    const eventId = randomUUID();
    const body = eventBodyText(eventId, type, partnerId, data);
    const written = await repo.insertEventDeliveries(exec, { eventId, partnerId, eventType: type, body });
    return written > 0 ? eventId : undefined;
  }

  /** The partner's subscriptions changed: read them again next time. */
  forget(partnerId: number): void {
    this.cache.delete(partnerId);
  }
}
