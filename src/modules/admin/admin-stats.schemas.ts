// TypeBox schemas of the platform statistics (admins) and of a partner's own figures per
// day: the responses' OpenAPI document and the service's types (Static<typeof …>).
import { Type } from 'typebox';
import { POINTS_TRANSACTION_TYPES, type PointsTransactionType } from '../points/points.tables.js';

const Count = Type.Integer({ minimum: 0 });
const Eur = (description: string) => Type.Number({ description: `${description}; EUR, at most 4 decimals` });

export const Stats = Type.Object({
  from: Type.String({ format: 'date' }),
  to: Type.String({ format: 'date' }),
  partner_id: Type.Union([Type.Integer(), Type.Null()]),
  partners: Type.Object(
    { total: Count, active: Count, new: Count },
    { description: 'total and active: now; new: created in the range' },
  ),
  customers: Type.Object(
    { total: Count, new: Count },
    { description: "Customer accounts; with partner_id, the people holding one of the partner's cards (new: first card issued in the range)" },
  ),
  cards: Type.Object({ total: Count, new: Count }, { description: 'Loyalty cards; new: issued in the range' }),
  transactions: Type.Object(
    {
      count: Count,
      by_type: Type.Object(Object.fromEntries(POINTS_TRANSACTION_TYPES.map((t) => [t, Count])) as Record<PointsTransactionType, typeof Count>),
    },
    { description: 'Points ledger rows created in the range' },
  ),
  points: Type.Object(
    { issued: Type.Integer(), redeemed: Type.Integer(), expired: Count },
    {
      description:
        'Net of refunds made in the range (may be negative): issued: positive points of purchase, bonus, adjust and game rows, less what reversals and returns took back from them; ' +
        'redeemed: points spent on deductions and coupons, less what reversals and returns gave back; expired: lapsed lots',
    },
  ),
  purchase_amount: Eur('Σ purchase amounts recorded in the range, less the reversed and returned amounts below (net of refunds made in the range)'),
  reversed_purchase_amount: Eur('Σ amounts of purchases reversed in the range'),
  returned_purchase_amount: Eur("Σ amounts of purchases' goods returned in the range"),
  sms: Type.Object(
    {
      sent: Type.Integer({ minimum: 0, description: 'Partner messages handed to the carrier in the range' }),
      parts: Type.Integer({ minimum: 0, description: 'Their parts' }),
      revenue: Eur('SMS charges minus refunds booked in the range'),
    },
  ),
});

const DayFigures = {
  transactions: Type.Integer({ minimum: 0, description: 'Purchases and deductions recorded at tills' }),
  points_awarded: Type.Integer({ description: 'Positive points of purchase, bonus, adjust and game rows, less what reversals and returns took back from them that day (may be negative)' }),
  points_deducted: Type.Integer({ description: 'Points spent (deductions, offer claims), less what reversals and returns gave back that day (may be negative)' }),
  coupons_redeemed: Count,
  new_cards: Type.Integer({ minimum: 0, description: "Loyalty cards issued in the partner's programmes" }),
  sms_spend: Type.Number({ description: 'SMS charges minus refunds; EUR, at most 4 decimals' }),
};

export const PartnerStats = Type.Object(
  {
    from: Type.String({ format: 'date' }),
    to: Type.String({ format: 'date' }),
    totals: Type.Object(DayFigures),
    by_day: Type.Array(Type.Object({ day: Type.String({ format: 'date' }), ...DayFigures }), { description: 'Every UTC day of the range, oldest first; zeros where nothing happened' }),
  },
  {
    examples: [
      {
        from: '2026-03-01',
        to: '2026-03-01',
        totals: { transactions: 12, points_awarded: 340, points_deducted: 50, coupons_redeemed: 2, new_cards: 3, sms_spend: 0.087 },
        by_day: [{ day: '2026-03-01', transactions: 12, points_awarded: 340, points_deducted: 50, coupons_redeemed: 2, new_cards: 3, sms_spend: 0.087 }],
      },
    ],
  },
);
