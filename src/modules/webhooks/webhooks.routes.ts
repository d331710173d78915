// The partner's side of outgoing webhooks: its signing secret (DESIGN.md §7), its event
// subscriptions with their test ping (§14) and the deliveries made to it with every attempt (§4).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../infra/auth.js';
import type { RateLimiter } from '../../infra/rate-limit.js';
import { envelopeNoData, envelopeOf, listWithMeta } from '../../shared/envelope.js';
import { AppError, notFound, unwrap } from '../../shared/errors.js';
import { pageWindow } from '../../shared/pagination.js';
import { EmptyEnvelope, Envelope, errorResponses, ListEnvelope, LocaleIdParams, LocaleParams, PageQuery } from '../../shared/schemas.js';
import { Delivery, DeliveryDetail, EVENTS_DESCRIPTION, nullable, Subscription } from './webhooks.schemas.js';
import { PINGS_PER_MINUTE, type WebhooksService } from './webhooks.service.js';

const Secret = Type.Object({
  secret: Type.String({ description: 'HMAC-SHA256 key of X-Loyalty-Signature (the string itself)' }),
});

const subscriptionFields = {
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'http(s); a private, loopback or link-local address is refused (422 on url)' }),
  events: Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 20, description: EVENTS_DESCRIPTION }),
  is_active: Type.Boolean({ description: 'Default true; an inactive subscription gets no events' }),
  description: nullable(Type.String({ maxLength: 500 })),
};

const CreateSubscription = Type.Object({
  url: subscriptionFields.url,
  events: subscriptionFields.events,
  is_active: Type.Optional(subscriptionFields.is_active),
  description: Type.Optional(subscriptionFields.description),
});

const UpdateSubscription = Type.Partial(Type.Object(subscriptionFields));

const Deleted = Type.Object(EmptyEnvelope.properties);

export interface WebhooksRoutesOptions {
  webhooks: WebhooksService;
  /** Counts the test pings (in Redis when REDIS_URL is set, so the limit holds across nodes). */
  rateLimiter: RateLimiter;
  /** RATE_LIMIT_DISABLED: no limit on pings either. */
  rateLimitDisabled: boolean;
}

export const webhooksRoutes: FastifyPluginAsyncTypebox<WebhooksRoutesOptions> = async (app, { webhooks, rateLimiter, rateLimitDisabled }) => {
  /**
   * At most PINGS_PER_MINUTE test pings a minute per partner (DESIGN.md §14), answered like
   * every limit (§3): 429 code 1003 with Retry-After; X-RateLimit-* report this limit when it
   * is the tighter one (it nearly always is: the token's own allows 200 a minute).
   */
  async function limitPings(reply: FastifyReply, partnerId: number): Promise<void> {
    if (rateLimitDisabled) return;
    const d = await rateLimiter.consume('webhook_ping', `p${partnerId}`, { perMinute: PINGS_PER_MINUTE, perHour: 0 });
    const headers = {
      'x-ratelimit-limit': String(d.limit),
      'x-ratelimit-remaining': String(d.remaining),
      'x-ratelimit-reset': String(d.resetSeconds),
    };
    if (!d.allowed) {
      throw new AppError('RATE_LIMIT_EXCEEDED', { params: { seconds: d.retryAfterSeconds }, headers: { ...headers, 'retry-after': String(d.retryAfterSeconds) } });
    }
    const tokenRemaining = Number(reply.getHeader('x-ratelimit-remaining') ?? Infinity);
    if (d.remaining <= tokenRemaining) reply.headers(headers);
  }


  app.get(
    '/:locale/partners/webhook-secret',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'The webhook signing secret',
        description: 'Created on first use. Receivers verify X-Loyalty-Signature with it.',
        params: LocaleParams,
        response: { 200: Envelope(Secret), ...errorResponses(401, 403, 429) },
      },
    },
    async (req) => envelopeOf(req, { secret: await webhooks.getSecret(principalOf(req, 'partner').partnerId) }),
  );

  app.post(
    '/:locale/partners/webhook-secret/rotate',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Issue a new webhook signing secret',
        description: 'The old secret stops signing at once, for retries of earlier events too.',
        params: LocaleParams,
        response: { 200: Envelope(Secret), ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (req) => envelopeOf(req, { secret: await webhooks.rotate(principalOf(req, 'partner').partnerId) }, 'webhooks.secret_rotated'),
  );

  app.get(
    '/:locale/partners/webhooks',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: "The partner's event subscriptions",
        description: 'Oldest first; at most 10.',
        params: LocaleParams,
        response: { 200: Envelope(Type.Array(Subscription)), ...errorResponses(401, 403, 429) },
      },
    },
    async (req) => envelopeOf(req, await webhooks.listSubscriptions(principalOf(req, 'partner').partnerId)),
  );

  app.post(
    '/:locale/partners/webhooks',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Subscribe a URL to events',
        description:
          'Each event of a listed type is POSTed to url, signed like the SMS receipts (X-Loyalty-Signature with the webhook secret, X-Loyalty-Event-Id, X-Loyalty-Event), retried and listed among the webhook deliveries. At most 10 subscriptions: the 11th is 422 QUOTA_EXCEEDED, meta {limit}.',
        params: LocaleParams,
        body: CreateSubscription,
        response: { 201: Envelope(Subscription), ...errorResponses(400, 401, 403, 422, 429) },
      },
    },
    async (req, reply) => {
      const created = unwrap(await webhooks.createSubscription(principalOf(req, 'partner').partnerId, req.body));
      reply.code(201);
      return envelopeOf(req, created, 'webhooks.subscription_created', 201);
    },
  );

  app.get(
    '/:locale/partners/webhooks/:id',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'One event subscription',
        description: "Another partner's subscription is 404.",
        params: LocaleIdParams,
        response: { 200: Envelope(Subscription), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      const sub = await webhooks.getSubscription(principalOf(req, 'partner').partnerId, req.params.id);
      if (!sub) throw notFound('resource.webhook_subscription');
      return envelopeOf(req, sub);
    },
  );

  app.put(
    '/:locale/partners/webhooks/:id',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Change an event subscription (any subset of the fields)',
        description: "Only the fields sent change. Deliveries already queued keep the URL they were queued with. Another partner's subscription is 404.",
        params: LocaleIdParams,
        body: UpdateSubscription,
        response: { 200: Envelope(Subscription), ...errorResponses(400, 401, 403, 404, 422, 429) },
      },
    },
    async (req) =>
      envelopeOf(req, unwrap(await webhooks.updateSubscription(principalOf(req, 'partner').partnerId, req.params.id, req.body)), 'webhooks.subscription_updated'),
  );

  app.delete(
    '/:locale/partners/webhooks/:id',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Delete an event subscription',
        description: 'Its deliveries not yet made end failed ("subscription deleted"); every delivery stays listed.',
        params: LocaleIdParams,
        response: { 200: Deleted, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      if (!(await webhooks.deleteSubscription(principalOf(req, 'partner').partnerId, req.params.id))) throw notFound('resource.webhook_subscription');
      return envelopeNoData(req, 'webhooks.subscription_deleted');
    },
  );

  app.post(
    '/:locale/partners/webhooks/:id/test',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Send a test event to a subscription',
        description: `A \`ping\` event (data: {subscription_id}) is sent at once, whatever the subscription's event list or state, and listed among the deliveries; \`data\` is that delivery. It is attempted once, never retried: its status says how the receiver answered. At most ${PINGS_PER_MINUTE} a minute per partner (every request here counts): beyond, 429 code 1003 with Retry-After.`,
        params: LocaleIdParams,
        response: { 202: Envelope(Delivery), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req, reply) => {
      const partnerId = principalOf(req, 'partner').partnerId;
      await limitPings(reply, partnerId);
      const delivery = unwrap(await webhooks.ping(partnerId, req.params.id));
      reply.code(202);
      return envelopeOf(req, delivery, 'webhooks.ping_queued', 202);
    },
  );

  app.get(
    '/:locale/partners/webhook-deliveries',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Webhook deliveries to the partner, newest first',
        params: LocaleParams,
        querystring: PageQuery,
        response: { 200: ListEnvelope(Delivery), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const page = pageWindow(req.query);
      const { items, total } = await webhooks.listDeliveries(principalOf(req, 'partner').partnerId, page);
      return listWithMeta(req, items, page, total);
    },
  );

  app.get(
    '/:locale/partners/webhook-deliveries/:id',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'One webhook delivery with every attempt',
        params: LocaleIdParams,
        response: { 200: Envelope(DeliveryDetail), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      const delivery = await webhooks.getDelivery(principalOf(req, 'partner').partnerId, req.params.id);
      if (!delivery) throw notFound('resource.webhook_delivery');
      return envelopeOf(req, delivery);
    },
  );
};
