// TypeBox schemas of the engine's responses (DESIGN.md §12): the award, its preview and the
// reversal. They are the types too: the engine returns their Static types. The ledger's own
// shapes (a transaction, its lines and breakdown) stay in points.schemas.ts, below the engine.
import { Type } from 'typebox';
import { BreakdownRow, Transaction, TransactionItem } from '../points/points.schemas.js';

/** A purchase as create answers it: the entry, its lines and where its points came from. */
export const AwardedTransaction = Type.Object({
  ...Transaction.properties,
  items: Type.Array(TransactionItem),
  breakdown: Type.Array(BreakdownRow),
});

export const Reversal = Type.Object({
  ...Transaction.properties,
  points_not_recovered: Type.Integer({ description: 'Earned points already spent, which could not be taken back' }),
});

export const SkipReason = Type.Union([
  Type.Literal('outside_dates'),
  Type.Literal('outside_schedule'),
  Type.Literal('shop'),
  Type.Literal('tier'),
  Type.Literal('conditions'),
  Type.Literal('limit'),
  Type.Literal('budget'),
  Type.Literal('exclusive'),
]);

export const Preview = Type.Object({
  points: Type.Integer(),
  breakdown: Type.Array(BreakdownRow),
  balance_after: Type.Union([Type.Integer(), Type.Null()], { description: 'With a card: its balance after the award' }),
  tier: Type.Union(
    [Type.Object({ id: Type.Integer(), name: Type.Object({ en: Type.String(), lt: Type.String() }), color: Type.Union([Type.String(), Type.Null()]) }), Type.Null()],
    { description: "The card's tier the award earns at (DESIGN.md §13); null without a card or a tier" },
  ),
  campaigns_skipped: Type.Array(Type.Object({ campaign_id: Type.Integer(), name: Type.String(), reason: SkipReason })),
});
