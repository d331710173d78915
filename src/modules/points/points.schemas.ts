import { Type } from 'typebox';
import { DateTime, DecimalInput } from '../../shared/schemas.js';
import { cardTierProperties } from '../tiers/tiers.schemas.js';

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
      description: 'EUR: the purchase amount, or the value of the points redeemed; negative on a reversal and on a return (what came back)',
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

export const Summary = Type.Object({
  transactions: Type.Integer(),
  points_earned: Type.Integer({ description: 'Purchases, bonuses, positive adjustments and game prizes' }),
  points_spent: Type.Integer({ description: 'Deductions, negative adjustments and points spent on coupons' }),
  points_expired: Type.Integer(),
  points_reversed: Type.Integer({ description: 'Net points of reversals' }),
  purchases: Type.Integer(),
  purchase_amount: Type.Number({ description: 'EUR, net of reversed purchases and of returns' }),
  cards: Type.Integer(),
  points_balance: Type.Integer({ description: 'Current total balance of the cards in scope' }),
});

export const Balance = Type.Object({
  card_id: Type.Integer(),
  points_balance: Type.Integer(),
  points_debt: Type.Integer({ description: 'Points owed after returns (DESIGN.md §12); later earnings pay it off first' }),
  ...cardTierProperties,
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

export const Amount = DecimalInput(4, true, 'EUR, positive, at most 1000000000 and 4 decimals (a number, or a decimal string for exactness)');

export const Points = Type.Integer({ minimum: 1, maximum: 10_000_000 });
export const Reason = Type.String({ minLength: 1, maxLength: 255 });

// --- Baskets and campaigns (DESIGN.md §12) ---------------------------------------------

export const BasketLineBody = Type.Object(
  {
    line_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Unique within the receipt; default the 1-based position' })),
    product_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: 'A product of your catalogue' })),
    sku: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    ean: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    quantity: DecimalInput(3, true, 'Units, > 0, at most 1000000000 and 3 decimals'),
    amount: DecimalInput(4, false, 'EUR paid for the line after discounts, ≥ 0, at most 1000000000 and 4 decimals'),
  },
  { additionalProperties: false },
);

export const BasketItems = Type.Array(BasketLineBody, { minItems: 1, maxItems: 500, description: 'Basket lines (at most 500); amount is their sum' });

export const BreakdownRow = Type.Object({
  source: Type.Union([Type.Literal('base'), Type.Literal('tier'), Type.Literal('campaign')]),
  campaign_id: Type.Union([Type.Integer(), Type.Null()]),
  name: Type.Union([Type.String(), Type.Null()]),
  points: Type.Integer(),
  line_ids: Type.Array(Type.String(), { description: 'The lines the source applied to (empty without lines)' }),
});

export const TransactionItem = Type.Object({
  line_id: Type.String(),
  product_id: Type.Union([Type.Integer(), Type.Null()], { description: 'The catalogue product the line matched' }),
  sku: Type.Union([Type.String(), Type.Null()]),
  ean: Type.Union([Type.String(), Type.Null()]),
  name: Type.Union([Type.String(), Type.Null()]),
  quantity: Type.Number(),
  amount: Type.Number(),
  points: Type.Integer({ description: "The line's points from every source" }),
  returned_quantity: Type.Number(),
});

export const TransactionDetails = Type.Object({
  ...Transaction.properties,
  items: Type.Array(TransactionItem, { description: 'A purchase\'s basket lines (empty otherwise)' }),
  breakdown: Type.Array(BreakdownRow, { description: "Where a purchase's points came from (empty for other types)" }),
  returns: Type.Array(Transaction, { description: 'The return entries of this purchase or deduction, oldest first' }),
});
