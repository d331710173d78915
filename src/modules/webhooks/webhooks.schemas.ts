// TypeBox schemas of the webhook subscriptions and deliveries as the API shows them: their
// OpenAPI document and the service's view types.
import { Type, type TSchema } from 'typebox';
import { DateTime } from '../../shared/schemas.js';
import { EVENT_TYPES } from './webhooks.events.js';

export const nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

const deliveryFields = {
  id: Type.Integer(),
  event_id: Type.String({ description: 'X-Loyalty-Event-Id: the same on every attempt, and on the deliveries of one event to several subscriptions' }),
  subscription_id: nullable(Type.Integer({ description: 'The subscription it goes to; null for an SMS receipt to its receiptURL' })),
  event_type: Type.String({ description: 'X-Loyalty-Event' }),
  url: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  next_attempt_at: nullable(DateTime),
  last_status_code: nullable(Type.Integer()),
  last_error: nullable(Type.String()),
  created_at: DateTime,
  delivered_at: nullable(DateTime),
};

export const Delivery = Type.Object({ ...deliveryFields, attempts: Type.Integer({ description: 'Attempts made so far' }) });

export const Attempt = Type.Object({
  attempt_no: Type.Integer(),
  attempted_at: DateTime,
  status_code: nullable(Type.Integer()),
  error: nullable(Type.String({ description: 'Why there was no response (timeout, refused address, network error)' })),
  duration_ms: nullable(Type.Integer()),
});

export const DeliveryDetail = Type.Object({ ...deliveryFields, attempts: Type.Array(Attempt) });

export const EVENTS_DESCRIPTION = `Event types, or "*" for all: ${EVENT_TYPES.join(', ')}. An unknown name is 422 on events.`;

export const Subscription = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  events: Type.Array(Type.String(), { description: EVENTS_DESCRIPTION }),
  is_active: Type.Boolean(),
  description: nullable(Type.String()),
  created_at: DateTime,
});
