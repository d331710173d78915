// The partner's side of outgoing webhooks: its signing secret (DESIGN.md §7) and the
// deliveries made to it with every attempt (DESIGN.md §4).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type TSchema } from 'typebox';
import { principalOf } from '../../infra/auth.js';
import { envelopeOf, listWithMeta } from '../../shared/envelope.js';
import { notFound } from '../../shared/errors.js';
import { pageWindow } from '../../shared/pagination.js';
import { DateTime, Envelope, errorResponses, ListEnvelope, LocaleIdParams, LocaleParams, PageQuery } from '../../shared/schemas.js';
import type { WebhooksService } from './webhooks.service.js';

const nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

const Secret = Type.Object({
  secret: Type.String({ description: 'HMAC-SHA256 key of X-Loyalty-Signature (the string itself)' }),
});

const deliveryFields = {
  id: Type.Integer(),
  event_id: Type.String({ description: 'X-Loyalty-Event-Id: the same on every attempt' }),
  event_type: Type.String({ description: 'X-Loyalty-Event' }),
  url: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  next_attempt_at: nullable(DateTime),
  last_status_code: nullable(Type.Integer()),
  last_error: nullable(Type.String()),
  created_at: DateTime,
  delivered_at: nullable(DateTime),
};

const Delivery = Type.Object({ ...deliveryFields, attempts: Type.Integer({ description: 'Attempts made so far' }) });

const Attempt = Type.Object({
  attempt_no: Type.Integer(),
  attempted_at: DateTime,
  status_code: nullable(Type.Integer()),
  error: nullable(Type.String({ description: 'Why there was no response (timeout, refused address, network error)' })),
  duration_ms: nullable(Type.Integer()),
});

const DeliveryDetail = Type.Object({ ...deliveryFields, attempts: Type.Array(Attempt) });

export const webhooksRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhooksService }> = async (app, { webhooks }) => {
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
