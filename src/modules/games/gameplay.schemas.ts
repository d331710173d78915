// TypeBox schemas of the gameplay routes (DESIGN.md §8).
import { Type, type TSchema } from 'typebox';
import { DateTime, PageQuery } from '../../shared/schemas.js';
import { Coupon } from '../coupons/coupons.schemas.js';
import { Transaction } from '../points/points.schemas.js';
import { DISCOUNT_TYPES, GAME_TYPES, REWARD_TYPES } from './games.tables.js';

const Nullable = <T extends TSchema>(schema: T, options: Record<string, unknown> = {}) => Type.Union([schema, Type.Null()], options);

export const SessionKeyParam = Type.String({ minLength: 16, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$', description: 'The session_key start returned' });

const SessionStatus = Type.Enum(['started', 'in_progress', 'finished', 'claimed', 'expired'] as const);

export const Reward = Type.Object(
  {
    id: Type.Integer(),
    label: Type.String(),
    reward_type: Type.Enum(REWARD_TYPES, { description: 'points, coupon or none (a losing segment)' }),
    points: Type.Optional(Type.Integer({ description: 'Points won (reward_type points)' })),
    coupon: Type.Optional(
      Type.Object(
        { title: Type.String(), discount_type: Type.Enum(DISCOUNT_TYPES), discount_value: Type.Number() },
        { description: 'The coupon won (reward_type coupon); claim-reward issues it' },
      ),
    ),
  },
  { description: 'The drawn reward, shown once the play completed' },
);

export const LiveGame = Type.Object(
  {
    id: Type.Integer(),
    type: Type.Enum(GAME_TYPES),
    name: Type.String(),
    description: Nullable(Type.String()),
    partner_card_id: Nullable(Type.Integer()),
    ends_at: Nullable(DateTime),
    rewards: Type.Array(Type.Object({ id: Type.Integer(), label: Type.String(), reward_type: Type.Enum(REWARD_TYPES) }), {
      description: 'The segments, in order (their odds are not shown)',
    }),
    plays_left_today: Type.Optional(Type.Integer({ description: 'Only with a customer token: plays left in this UTC day' })),
  },
  {
    examples: [
      {
        id: 4,
        type: 'spin_wheel',
        name: 'Summer wheel',
        description: null,
        partner_card_id: 1,
        ends_at: null,
        rewards: [
          { id: 10, label: '10 points', reward_type: 'points' },
          { id: 11, label: '5% off', reward_type: 'coupon' },
          { id: 12, label: 'Try again', reward_type: 'none' },
        ],
        plays_left_today: 1,
      },
    ],
  },
);

export const Started = Type.Object(
  {
    session_key: Type.String({ description: '≥ 128 random bits, base64url: the secret of the channel' }),
    game_id: Type.Integer(),
    status: Type.Literal('started'),
    channel: Type.String({ description: 'Public realtime channel game-session.{session_key}: event status_update {status, progress, reward?}' }),
    expires_at: DateTime,
  },
  {
    examples: [
      {
        session_key: 'q0Vh3cX4m8u1bKqzS2yWf7n9Lp5tR6aD',
        game_id: 4,
        status: 'started',
        channel: 'game-session.q0Vh3cX4m8u1bKqzS2yWf7n9Lp5tR6aD',
        expires_at: '2026-03-01T10:30:00.000Z',
      },
    ],
  },
);

export const ProgressBody = Type.Object(
  {
    progress: Type.Integer({ minimum: 0, maximum: 100, description: 'How far the play got, 0 to 100' }),
    completed: Type.Optional(Type.Boolean({ default: false, description: 'true ends the play (progress becomes 100) and reveals the reward' })),
  },
  { examples: [{ progress: 40 }, { progress: 100, completed: true }] },
);

export const Progress = Type.Object(
  {
    status: Type.Enum(['in_progress', 'finished'] as const),
    progress: Type.Integer(),
    reward: Type.Optional(Reward),
  },
  { examples: [{ status: 'finished', progress: 100, reward: { id: 10, label: '10 points', reward_type: 'points', points: 10 } }] },
);

export const Claimed = Type.Object(
  {
    reward: Reward,
    transaction: Type.Optional(Transaction),
    coupon: Type.Optional(Coupon),
  },
  { description: 'A points reward comes with its ledger transaction (type game), a coupon reward with the coupon; a losing segment with neither' },
);

export const HistoryItem = Type.Object(
  {
    session_key: Type.String(),
    game: Type.Object({ id: Type.Integer(), name: Type.String(), type: Type.Enum(GAME_TYPES) }),
    status: SessionStatus,
    reward: Nullable(Reward, { description: 'null until the play completed' }),
    started_at: DateTime,
    finished_at: Nullable(DateTime),
    claimed_at: Nullable(DateTime),
  },
  {
    examples: [
      {
        session_key: 'q0Vh3cX4m8u1bKqzS2yWf7n9Lp5tR6aD',
        game: { id: 4, name: 'Summer wheel', type: 'spin_wheel' },
        status: 'claimed',
        reward: { id: 10, label: '10 points', reward_type: 'points', points: 10 },
        started_at: '2026-03-01T10:00:00.000Z',
        finished_at: '2026-03-01T10:00:20.000Z',
        claimed_at: '2026-03-01T10:00:21.000Z',
      },
    ],
  },
);

export const GamesQuery = Type.Object({ ...PageQuery.properties });
