import { Type } from 'typebox';
import { DateTime } from '../../shared/schemas.js';
import { cardTierProperties } from '../tiers/tiers.schemas.js';

export const LoyaltyCard = Type.Object(
  {
    id: Type.Integer(),
    card_number: Type.String(),
    user_id: Type.Integer(),
    partner_card_id: Type.Integer(),
    partner_id: Type.Integer(),
    points_balance: Type.Integer({ description: 'What the card can spend; never negative' }),
    points_debt: Type.Integer({ description: 'Points owed after a return the balance could not cover (DESIGN.md §12); later earnings pay it off first' }),
    qr_content: Type.String({ description: 'What the app shows as a QR code for a till to scan (the card number).' }),
    source: Type.Union([Type.Literal('issued'), Type.Literal('third_party')]),
    ...cardTierProperties,
    created_at: DateTime,
    updated_at: DateTime,
  },
  { description: 'Loyalty card' },
);

export const Expiring = Type.Array(Type.Object({ points: Type.Integer(), expires_at: DateTime }), {
  description: 'Points that will expire, soonest first',
});

export const CardInfo = Type.Object({
  card: LoyaltyCard,
  user: Type.Object({
    id: Type.Integer(),
    name: Type.Union([Type.String(), Type.Null()]),
    phone: Type.String(),
    email: Type.Union([Type.String(), Type.Null()]),
  }),
  programme: Type.Object({
    id: Type.Integer(),
    title: Type.Object({ en: Type.String(), lt: Type.String() }),
    is_active: Type.Boolean(),
    points_enabled: Type.Boolean(),
    points_redemption_enabled: Type.Boolean(),
    points_per_euro: Type.Number(),
    euro_per_point: Type.Number(),
    min_points_for_redemption: Type.Integer(),
    max_points_per_redemption: Type.Union([Type.Integer(), Type.Null()]),
  }),
  expiring: Expiring,
});

export const CardBalance = Type.Object({
  card_id: Type.Integer(),
  card_number: Type.String(),
  points_balance: Type.Integer(),
  points_debt: Type.Integer({ description: 'Points owed after returns; later earnings pay it off first' }),
  ...cardTierProperties,
  expiring: Expiring,
});

/** Find a card by its number (what a till scans) or its id. */
export const CardLookupQuery = Type.Object({
  card_number: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  card_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647 })),
});

export const CardNumber = Type.String({
  minLength: 4,
  maxLength: 32,
  pattern: '^[A-Za-z0-9-]+$',
  'x-message': 'validation.pattern',
  description: 'An existing card number: 4 to 32 letters, digits or hyphens.',
});
