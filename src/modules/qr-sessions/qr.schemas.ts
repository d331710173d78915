// TypeBox schemas of the till's QR-login poll: its OpenAPI document and PollView's type.
import { Type } from 'typebox';
import { DateTime } from '../../shared/schemas.js';
import { Customer } from '../customers/customers.schemas.js';
import { LoyaltyCard } from '../loyalty-cards/loyalty-cards.schemas.js';

export const LoginStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('scanned'),
  Type.Literal('authenticated'),
  Type.Literal('rejected'),
  Type.Literal('expired'),
]);

export const PollData = Type.Object({
  session_id: Type.String(),
  status: LoginStatus,
  device_name: Type.String(),
  expires_at: DateTime,
  user: Type.Optional(
    Type.Object(
      { ...Customer.properties, cards: Type.Array(LoyaltyCard, { description: "The customer's cards in this partner's programmes, with their tier" }) },
      { description: 'The signed-in customer (also in the authenticated status_update event)' },
    ),
  ),
  token: Type.Optional(Type.String({ description: 'Customer JWT scoped to this partner; in the first poll that sees authenticated only' })),
});
