// The engine's routes on the Shop interface (issue 31: the award's path reads top-down —
// route → engine shell (awards.service.ts) → evaluator → ledger write): award points for a
// purchase, preview it, return goods of it, reverse a transaction. Each writing route runs in
// one transaction under the card's row lock and honours Idempotency-Key.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actingPartnerOf, principalOf } from '../../infra/auth.js';
import type { Idempotency } from '../../infra/idempotency.js';
import { envelopeOf } from '../../shared/envelope.js';
import { fieldError, unwrap } from '../../shared/errors.js';
import { Envelope, errorResponses, IdParam, LocaleIdParams, LocaleParams } from '../../shared/schemas.js';
import { Amount, BasketItems, BasketLineBody, Reason, Transaction } from '../points/points.schemas.js';
import { AwardedTransaction, Preview, Reversal } from './awards.schemas.js';
import type { AwardsEngine } from './awards.service.js';
import { parseBasket } from './basket-body.js';

/** `amount` is required unless `items` carry it (their sum). */
const amountOrItems = { if: { not: { required: ['items'] } }, then: { required: ['amount'] } };

const AwardBody = Type.Object(
  {
    card_id: IdParam,
    shop_id: IdParam,
    amount: Type.Optional(Amount),
    items: Type.Optional(BasketItems),
    receipt_number: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 64, description: 'The till receipt; a second award for the same receipt at the same shop is 409 DUPLICATE_VALUE.' }), Type.Null()]),
    ),
  },
  amountOrItems,
);

const PreviewBody = Type.Object(
  {
    card_id: Type.Optional(IdParam),
    partner_card_id: Type.Optional(IdParam),
    shop_id: IdParam,
    amount: Type.Optional(Amount),
    items: Type.Optional(BasketItems),
    receipt_number: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()])),
  },
  amountOrItems,
);

const ReturnBody = Type.Object(
  {
    items: Type.Optional(
      Type.Array(
        Type.Object({ line_id: Type.String({ minLength: 1, maxLength: 64 }), quantity: BasketLineBody.properties.quantity }, { additionalProperties: false }),
        { minItems: 1, maxItems: 500, description: 'A purchase with lines: the lines and quantities coming back' },
      ),
    ),
    amount: Type.Optional(Amount),
    points: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000, description: 'A deduction: the points given back' })),
    receipt_number: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 64, description: 'The refund receipt' }), Type.Null()])),
    reason: Type.Optional(Type.Union([Reason, Type.Null()])),
  },
);

export const awardsRoutes: FastifyPluginAsyncTypebox<{
  awards: AwardsEngine;
  idempotency: Idempotency;
}> = async (app, { awards, idempotency }) => {
  // transactions/award-points is an alias of transactions/create (the spec names both).
  for (const [path, summary] of [
    ['/:locale/shop/transactions/create', 'Award points for a purchase'],
    ['/:locale/shop/transactions/award-points', 'Award points for a purchase (alias of transactions/create)'],
  ] as const) {
    app.post(
      path,
      {
        config: { auth: 'api', idempotencyRoute: '/:locale/shop/transactions/create' },
        schema: {
          tags: ['shop'],
          summary,
          description:
            'Base points = amount / currency_amount × points_per_currency (rounded up if round_points_up, else down) + points_per_visit, clamped to min..max_points_per_purchase, shared over the basket lines by amount; then the running campaigns (docs/campaigns.md), each a row of `breakdown`. With `items` (at most 500 lines) `amount` may be left out (it is their sum). Honours Idempotency-Key; a receipt number earns once per shop (409 DUPLICATE_VALUE).',
          params: LocaleParams,
          body: AwardBody,
          response: { 201: Envelope(AwardedTransaction), ...errorResponses(400, 401, 404, 409, 422, 429) },
        },
      },
      async (req, reply) => {
        const { partnerId } = principalOf(req, 'api');
        const { amount, lines } = parseBasket(req.body);
        const input = { cardId: req.body.card_id, shopId: req.body.shop_id, amount, lines, receiptNumber: req.body.receipt_number ?? null };
        // The award is one statement: without an Idempotency-Key it needs no transaction around it.
        return idempotency.respondAtomic(req, reply, `partner:${partnerId}`, { message: 'points.awarded' }, (exec, inTransaction) =>
          awards.awardPurchase(exec, partnerId, input, inTransaction),
        );
      },
    );
  }

  app.post(
    '/:locale/shop/transactions/preview',
    {
      // The console's Preview panel calls it with the partner's own JWT (docs/decisions.md "Dashboard").
      config: { auth: ['api', 'partner'] },
      schema: {
        tags: ['shop'],
        summary: 'What an award would give, writing nothing',
        description:
          'The create body, with card_id or partner_card_id (without a card: no tier, no per-customer limit, first_purchase_only counts as met). Equal to what transactions/create would award at this moment with nothing else happening; uses no budget. campaigns_skipped says why each live campaign of the programme did not apply.',
        params: LocaleParams,
        body: PreviewBody,
        response: { 200: Envelope(Preview), ...errorResponses(400, 401, 404, 409, 422, 429) },
      },
    },
    async (req) => {
      const partnerId = actingPartnerOf(req);
      const cardId = req.body.card_id ?? null;
      const partnerCardId = req.body.partner_card_id ?? null;
      if ((cardId === null) === (partnerCardId === null)) throw fieldError('card_id', 'points.card_or_programme');
      const { amount, lines } = parseBasket(req.body);
      const result = await awards.preview(partnerId, { cardId, partnerCardId, shopId: req.body.shop_id, amount, lines });
      return envelopeOf(req, unwrap(result), 'points.previewed');
    },
  );

  app.post(
    '/:locale/shop/transactions/:id/reverse',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['shop'],
        summary: 'Reverse a transaction (refund, void)',
        description:
          'Writes the compensating entry. A reversed deduction gives back what it drew (less what its returns gave back): first paying the card\'s points_debt, the rest into exactly the lots it drew from; a reversed award takes back its points (first from its own lot; points already spent are taken from the balance, never below zero — see points_not_recovered). Once per transaction (409 INVALID_STATE). Honours Idempotency-Key.',
        params: LocaleIdParams,
        body: Type.Object({ reason: Type.Optional(Type.Union([Reason, Type.Null()])) }),
        response: { 201: Envelope(Reversal), ...errorResponses(400, 401, 404, 409, 422, 429) },
      },
    },
    async (req, reply) => {
      const { partnerId } = principalOf(req, 'api');
      return idempotency.respond(req, reply, `partner:${partnerId}`, { message: 'points.reversed' }, (tx) => awards.reverse(tx, partnerId, req.params.id, req.body.reason ?? null));
    },
  );

  app.post(
    '/:locale/shop/transactions/:id/return',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['shop'],
        summary: 'Return goods of a purchase, or points of a deduction',
        description:
          'On a purchase: `items` [{line_id, quantity}] (a purchase with lines) or `amount` (one without), cumulative up to what was bought (422 OUT_OF_RANGE on the field). Each line\'s points come back source by source and cumulatively: after a return, all the line\'s returns have taken back ⌊points × total returned quantity ÷ quantity⌋ of each source (this return takes the difference), and the return that completes a line takes exactly what is left of it; the same by cumulative `amount` without lines; campaign points go back to the campaign\'s budget. Taken from the purchase\'s own lot, then other lots; what the balance cannot cover becomes the card\'s points_debt, paid off by later earnings. The entry: type `return`, `points` ≤ 0 (all taken back, balance and debt), `amount` the EUR returned (negative), `returns_id` the purchase. On a deduction: `points`, up to what was deducted (cumulative), given back (`points` > 0): they pay the card\'s points_debt first, the rest goes back to the lots it drew from. A reversed transaction, or one of another type, is 409 INVALID_STATE. Honours Idempotency-Key.',
        params: LocaleIdParams,
        body: ReturnBody,
        response: { 201: Envelope(Transaction), ...errorResponses(400, 401, 404, 409, 422, 429) },
      },
    },
    async (req, reply) => {
      const { partnerId } = principalOf(req, 'api');
      const b = req.body;
      const input = {
        ...(b.items !== undefined ? { items: b.items } : {}),
        ...(b.amount !== undefined ? { amount: b.amount } : {}),
        ...(b.points !== undefined ? { points: b.points } : {}),
        receiptNumber: b.receipt_number ?? null,
        reason: b.reason ?? null,
      };
      return idempotency.respond(req, reply, `partner:${partnerId}`, { message: 'points.returned' }, (tx) => awards.returnGoods(tx, partnerId, req.params.id, input));
    },
  );

};
