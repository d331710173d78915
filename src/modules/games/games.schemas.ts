// TypeBox schemas of /{locale}/partners/games (configuration only; gameplay comes later).
// The schema checks shapes and ranges; the service adds the exact probability sum, decimal
// places, the reward-type rules, the time window and the partner's own card.
import { Type, type TSchema } from 'typebox';
import { DateTime, Name, PageQuery } from '../../shared/schemas.js';
import { DISCOUNT_TYPES, GAME_TYPES, REWARD_TYPES } from './games.tables.js';

export const MAX_REWARDS = 50;
export const MAX_REWARD_POINTS = 1_000_000_000;
export const MAX_DISCOUNT_VALUE = 1_000_000_000;

const Nullable = <T extends TSchema>(schema: T, options: Record<string, unknown> = {}) => Type.Union([schema, Type.Null()], options);
const OneOf = <V extends string[]>(values: readonly [...V], description: string) => Type.Enum(values, { description });

const CouponIn = Type.Object(
  {
    title: Name(255),
    discount_type: OneOf(DISCOUNT_TYPES, 'percent or fixed (EUR)'),
    discount_value: Type.Number({
      exclusiveMinimum: 0,
      maximum: MAX_DISCOUNT_VALUE,
      description: 'Greater than 0, at most 4 decimals; a percent discount at most 100.',
    }),
  },
  { additionalProperties: false, description: 'The coupon won (reward_type coupon only).' },
);

const RewardIn = Type.Object(
  {
    label: Name(255),
    probability: Type.Number({
      exclusiveMinimum: 0,
      maximum: 1,
      description: 'Chance of this reward, 0 < p ≤ 1, at most 4 decimals. The rewards of a game add up to exactly 1.',
    }),
    reward_type: OneOf(REWARD_TYPES, 'points, coupon or none (a losing segment)'),
    points: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: MAX_REWARD_POINTS }), { description: 'Points won; required for reward_type points.' })),
    coupon: Type.Optional(Nullable(CouponIn)),
  },
  { additionalProperties: false },
);

const Rewards = Type.Array(RewardIn, {
  minItems: 1,
  maxItems: MAX_REWARDS,
  description: `1 to ${MAX_REWARDS} rewards whose probabilities add up to exactly 1. An update that sends rewards replaces them all.`,
});

function gameProperties(withDefaults: boolean) {
  return {
    partner_card_id: Type.Optional(
      Nullable(Type.Integer(), { description: "The partner's own card programme this game belongs to (optional).", ...(withDefaults ? { default: null } : {}) }),
    ),
    description: Type.Optional(Nullable(Type.String({ maxLength: 5000 }), withDefaults ? { default: null } : {})),
    is_active: Type.Optional(Type.Boolean({ ...(withDefaults ? { default: true } : {}) })),
    starts_at: Type.Optional(Nullable(DateTime, { description: 'Start of the game (ISO 8601); null = from now.', ...(withDefaults ? { default: null } : {}) })),
    ends_at: Type.Optional(Nullable(DateTime, { description: 'End of the game; after starts_at; null = open-ended.', ...(withDefaults ? { default: null } : {}) })),
    coupon_validity_days: Type.Optional(
      Nullable(Type.Integer({ minimum: 1, maximum: 3650 }), {
        description: "Days a won coupon stays valid, 1 to 3650; null = the card's default_coupon_validity_days, else never.",
        ...(withDefaults ? { default: null } : {}),
      }),
    ),
    plays_per_customer_per_day: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, ...(withDefaults ? { default: 1 } : {}) })),
  };
}

export const CreateGameBody = Type.Object({
  type: OneOf(GAME_TYPES, 'spin_wheel, scratch_card or slot_machine'),
  name: Name(255),
  rewards: Rewards,
  ...gameProperties(true),
});

export const UpdateGameBody = Type.Object(
  {
    type: Type.Optional(OneOf(GAME_TYPES, 'spin_wheel, scratch_card or slot_machine')),
    name: Type.Optional(Name(255)),
    rewards: Type.Optional(Rewards),
    ...gameProperties(false),
  },
  { description: 'Every field optional; rewards, when sent, replace the stored ones and must add up to 1.' },
);

export const RewardOut = Type.Object({
  id: Type.Integer(),
  label: Type.String(),
  probability: Type.Number(),
  reward_type: OneOf(REWARD_TYPES, 'points, coupon or none'),
  points: Nullable(Type.Integer()),
  coupon: Nullable(
    Type.Object({ title: Type.String(), discount_type: OneOf(DISCOUNT_TYPES, 'percent or fixed'), discount_value: Type.Number() }),
  ),
});

export const Game = Type.Object(
  {
    id: Type.Integer(),
    partner_card_id: Nullable(Type.Integer()),
    type: OneOf(GAME_TYPES, 'spin_wheel, scratch_card or slot_machine'),
    name: Type.String(),
    description: Nullable(Type.String()),
    is_active: Type.Boolean(),
    starts_at: Nullable(DateTime),
    ends_at: Nullable(DateTime),
    rewards: Type.Array(RewardOut),
    coupon_validity_days: Nullable(Type.Integer()),
    plays_per_customer_per_day: Type.Integer(),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { description: 'Game configuration' },
);

export const ListGamesQuery = Type.Object({
  ...PageQuery.properties,
  is_active: Type.Optional(Type.Boolean({ description: 'Only active (true) or inactive (false) games; 1 and 0 are read as true and false.' })),
});
