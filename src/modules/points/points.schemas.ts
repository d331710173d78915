import { Type } from 'typebox';
import { DateTime } from '../../shared/schemas.js';

// Spelled out (not mapped from POINTS_TRANSACTION_TYPES) so that TypeBox infers the literal union.
export const TransactionType = Type.Union(
  [
    Type.Literal('purchase'),
    Type.Literal('deduct'),
    Type.Literal('adjust'),
    Type.Literal('bonus'),
    Type.Literal('expire'),
    Type.Literal('reversal'),
    Type.Literal('redeem'),
    Type.Literal('game'),
    Type.Literal('return'),
  ],
  {
    description:
      'purchase, deduct, adjust (manual), bonus (welcome), expire, reversal, redeem (points spent on a coupon), game (points won in a game), return (goods returned: points taken back from a purchase, or given back from a deduction)',
  },
);

export const Transaction = Type.Object(
  {
    id: Type.Integer(),
    card_id: Type.Integer(),
    user_id: Type.Integer(),
    shop_id: Type.Union([Type.Integer(), Type.Null()]),
    type: TransactionType,
    points: Type.Integer({ description: 'Signed: positive earns, negative spends' }),
    amount: Type.Union([Type.Number(), Type.Null()], {
      description: 'EUR: the purchase amount, or the value of the points redeemed; negative on a reversal',
    }),
    balance_after: Type.Integer(),
    receipt_number: Type.Union([Type.String(), Type.Null()]),
    reason: Type.Union([Type.String(), Type.Null()]),
    reverses_id: Type.Union([Type.Integer(), Type.Null()]),
    returns_id: Type.Union([Type.Integer(), Type.Null()], { description: 'On a return: the purchase or deduction whose goods came back' }),
    created_at: DateTime,
  },
  { description: 'Points transaction (ledger entry)' },
);

export const Reversal = Type.Object({
  ...Transaction.properties,
  points_not_recovered: Type.Integer({ description: 'Earned points already spent, which could not be taken back' }),
});

export const Summary = Type.Object({
  transactions: Type.Integer(),
  points_earned: Type.Integer({ description: 'Purchases, bonuses, positive adjustments and game prizes' }),
  points_spent: Type.Integer({ description: 'Deductions, negative adjustments and points spent on coupons' }),
  points_expired: Type.Integer(),
  points_reversed: Type.Integer({ description: 'Net points of reversals' }),
  purchases: Type.Integer(),
  purchase_amount: Type.Number({ description: 'EUR, net of reversed purchases' }),
  cards: Type.Integer(),
  points_balance: Type.Integer({ description: 'Current total balance of the cards in scope' }),
});

export const Balance = Type.Object({
  card_id: Type.Integer(),
  points_balance: Type.Integer(),
  expiring: Type.Array(Type.Object({ points: Type.Integer(), expires_at: DateTime })),
});

const Day = Type.String({ format: 'date' });
export const DateBound = Type.Union([DateTime, Day], { description: 'ISO 8601 date-time, or a date (UTC day)' });

export const TransactionFilterQuery = {
  card_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647 })),
  type: Type.Optional(TransactionType),
  from: Type.Optional(DateBound),
  to: Type.Optional(DateBound),
};

export const Amount = Type.Union(
  [Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000_000 }), Type.String({ pattern: '^\\d{1,10}(\\.\\d{1,4})?$', maxLength: 20 })],
  { description: 'EUR, positive, at most 4 decimals (a number, or a decimal string for exactness)' },
);

export const Points = Type.Integer({ minimum: 1, maximum: 10_000_000 });
export const Reason = Type.String({ minLength: 1, maxLength: 255 });
