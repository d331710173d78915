// Response shapes of the SMS interface shared by its routes and by other modules' routes
// (send-app-link answers with a send result).
import { Type } from 'typebox';
import { DateTime } from '../../shared/schemas.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const SendData = Type.Object({
  message_id: Type.String(),
  source: Type.String(),
  destination: Type.String(),
  status: Type.Literal('queued'),
  parts: Type.Integer(),
  cost: Type.Object({ amount: Type.Number(), currency: Type.Literal('EUR'), parts_charged: Type.Integer() }),
  scheduled: Nullable(DateTime),
  validity: Nullable(DateTime),
  marketing_consent_registered: Type.Boolean(),
});

const Status = Type.Union([
  Type.Literal('queued'),
  Type.Literal('sent'),
  Type.Literal('delivered'),
  Type.Literal('failed'),
  Type.Literal('expired'),
]);

export const statusProperties = {
  message_id: Type.String(),
  status: Status,
  source: Type.String(),
  destination: Type.String(),
  sent_at: Nullable(DateTime),
  delivered_at: Nullable(DateTime),
  failed_at: Nullable(DateTime),
  scheduled: Nullable(DateTime),
  validity: Nullable(DateTime),
  cost: Type.Object({ amount: Type.Number(), currency: Type.Literal('EUR') }),
  error_message: Nullable(Type.String()),
};

export const SmsAccount = Type.Object({
  partner_id: Type.Integer(),
  balance: Type.Number({ description: 'EUR, at most 4 decimals' }),
  currency: Type.Literal('EUR'),
  senders: Type.Array(Type.String()),
  prices: Type.Record(Type.String(), Type.Number(), { description: 'Price per part by ISO country code; "*" for other countries' }),
  transliterate: Type.Boolean(),
});
