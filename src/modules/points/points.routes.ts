// Points and transactions on the Shop interface (the ledger's routes; award, preview, return
// and reverse are the engine's: awards.routes.ts). Tills (API credentials) move value —
// deduct, adjust — each in one transaction under the card's row lock and
// honouring Idempotency-Key; customers (customer JWT) read their own history.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { principalOf } from '../../infra/auth.js';
import type { Idempotency } from '../../infra/idempotency.js';
import { sendCsv } from '../../shared/csv.js';
import { envelopeOf, listWithMeta } from '../../shared/envelope.js';
import { AppError, notFound, type ShapeBItem } from '../../shared/errors.js';
import { pageWindow } from '../../shared/pagination.js';
import { Envelope, errorResponses, IdParam, ListEnvelope, LocaleIdParams, LocaleParam, LocaleParams, PageQuery } from '../../shared/schemas.js';
import { customerOwner } from '../loyalty-cards/loyalty-cards.service.js';
import type { LoyaltyCardsService } from '../loyalty-cards/loyalty-cards.service.js';
import type { PointsLedger } from './ledger.service.js';
import type { TransactionScope } from './points.repository.js';
import { filterOf } from './transaction-filter.js';
import {
  Balance,
  Points,
  Reason,
  Summary,
  Transaction,
  TransactionDetails,
  TransactionFilterQuery,
} from './points.schemas.js';
import type { PointsService } from './points.service.js';

const MAX_BULK_ROWS = 1000;

/** The ledger rows a caller may read: a partner's (API) or a customer's own (JWT, narrowed to one partner for QR-login tokens). */
function scopeOf(req: FastifyRequest): TransactionScope {
  if (req.principal?.kind === 'customer') return customerOwner(principalOf(req, 'customer'));
  return { partnerId: principalOf(req, 'api').partnerId };
}

const DeductBody = Type.Object({
  card_id: IdParam,
  shop_id: IdParam,
  points: Points,
  reason: Type.Optional(Type.Union([Reason, Type.Null()])),
});

const AdjustRow = Type.Object({
  card_id: IdParam,
  points: Type.Integer({ minimum: -10_000_000, maximum: 10_000_000, not: { const: 0 }, description: 'Non-zero; negative removes points' }),
  reason: Reason,
  shop_id: Type.Optional(Type.Union([IdParam, Type.Null()])),
  expires_in_days: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 3650 }), Type.Null()], { description: 'Expiry of added points; default the programme\'s; null never' })),
});

export const pointsRoutes: FastifyPluginAsyncTypebox<{
  ledger: PointsLedger;
  points: PointsService;
  cards: LoyaltyCardsService;
  idempotency: Idempotency;
}> = async (app, { ledger, points, cards, idempotency }) => {
  app.post(
    '/:locale/shop/transactions/deduct-points',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['shop'],
        summary: 'Redeem (deduct) points',
        description:
          'Subject to the programme: points_redemption_enabled (else 409 INVALID_STATE), min_points_for_redemption / max_points_per_redemption (422 OUT_OF_RANGE). Too few points: 422 INSUFFICIENT_BALANCE with meta available_points and requested_points. amount in the result is the EUR value redeemed. Honours Idempotency-Key.',
        params: LocaleParams,
        body: DeductBody,
        response: { 201: Envelope(Transaction), ...errorResponses(400, 401, 404, 409, 422, 429) },
      },
    },
    async (req, reply) => {
      const { partnerId } = principalOf(req, 'api');
      const input = { cardId: req.body.card_id, shopId: req.body.shop_id, points: req.body.points, reason: req.body.reason ?? null };
      return idempotency.respond(req, reply, `partner:${partnerId}`, { message: 'points.deducted' }, (tx) => ledger.deduct(tx, partnerId, input));
    },
  );

  app.get(
    '/:locale/shop/transactions',
    {
      config: { auth: 'customer' },
      schema: {
        tags: ['shop'],
        summary: "The customer's transactions, newest first",
        params: LocaleParams,
        querystring: Type.Object({ ...PageQuery.properties, ...TransactionFilterQuery }),
        response: { 200: ListEnvelope(Transaction), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const page = pageWindow(req.query);
      const { items, total } = await points.list(scopeOf(req), filterOf(req.query), page);
      return listWithMeta(req, items, page, total);
    },
  );

  app.get(
    '/:locale/shop/transactions/summary',
    {
      config: { auth: 'customer' },
      schema: {
        tags: ['shop'],
        summary: "Totals of the customer's transactions and cards",
        params: LocaleParams,
        querystring: Type.Object(TransactionFilterQuery),
        response: { 200: Envelope(Summary), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => envelopeOf(req, await points.summary(scopeOf(req), filterOf(req.query))),
  );

  app.get(
    '/:locale/shop/transactions/:id',
    {
      config: { auth: ['customer', 'api'] },
      schema: {
        tags: ['shop'],
        summary: "One of the customer's transactions (customer JWT), or of the partner's (API credentials)",
        description: "With a purchase's basket lines (items), the breakdown of its points by source and its returns.",
        params: LocaleIdParams,
        response: { 200: Envelope(TransactionDetails), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      const tx = await points.get(scopeOf(req), req.params.id);
      if (!tx) throw notFound('resource.transaction');
      return envelopeOf(req, tx);
    },
  );

  app.post(
    '/:locale/shop/transactions/export',
    {
      config: { auth: ['customer', 'api'] },
      schema: {
        tags: ['shop'],
        summary: 'Export transactions as CSV',
        description:
          "Streams text/csv, oldest first: the partner's transactions (API credentials) or the customer's own (customer JWT). Filters as the list. Columns: id, created_at, type, points, amount, balance_after, card_id, user_id, shop_id, receipt_number, reason, reverses_id, returns_id (new columns only at the end).",
        params: LocaleParams,
        body: Type.Object({ ...TransactionFilterQuery, user_id: Type.Optional(IdParam) }),
        produces: ['text/csv'],
        response: { 200: { description: 'CSV', content: { 'text/csv': { schema: { type: 'string' } } } }, ...errorResponses(400, 401, 403, 422, 429) },
      },
    },
    async (req, reply) => {
      return sendCsv(reply, points.exportCsv(scopeOf(req), filterOf(req.body)), 'transactions.csv');
    },
  );

  app.get(
    '/:locale/shop/points',
    {
      config: { auth: ['customer', 'api'] },
      schema: {
        tags: ['shop'],
        summary: 'Points ledger entries, newest first',
        description: "The partner's (API credentials, filter by user_id or card_id) or the customer's own (customer JWT).",
        params: LocaleParams,
        querystring: Type.Object({ ...PageQuery.properties, ...TransactionFilterQuery, user_id: Type.Optional(IdParam) }),
        response: { 200: ListEnvelope(Transaction), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const page = pageWindow(req.query);
      const { items, total } = await points.list(scopeOf(req), filterOf(req.query), page);
      return listWithMeta(req, items, page, total);
    },
  );

  app.get(
    '/:locale/shop/points/summary',
    {
      config: { auth: ['customer', 'api'] },
      schema: {
        tags: ['shop'],
        summary: 'Points totals',
        description: "Earned, spent, expired and outstanding points: the partner's (API credentials) or the customer's (customer JWT).",
        params: LocaleParams,
        querystring: Type.Object({ ...TransactionFilterQuery, user_id: Type.Optional(IdParam) }),
        response: { 200: Envelope(Summary), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => envelopeOf(req, await points.summary(scopeOf(req), filterOf(req.query))),
  );

  app.get(
    '/:locale/shop/points/card/:card_id/balance',
    {
      config: { auth: ['customer', 'api'] },
      schema: {
        tags: ['shop'],
        summary: "A card's balance and upcoming expiries",
        params: Type.Object({ locale: LocaleParam, card_id: IdParam }),
        response: { 200: Envelope(Balance), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      const scope = scopeOf(req);
      const balance = await cards.balance({ partnerId: scope.partnerId, customerId: scope.customerId }, { cardId: req.params.card_id });
      if (!balance) throw notFound('resource.loyalty_card', 'card_id');
      const { card_number: _number, ...view } = balance;
      return envelopeOf(req, view);
    },
  );

  app.post(
    '/:locale/shop/points',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['shop'],
        summary: 'Adjust a card\'s points by hand',
        description:
          'Positive points add a lot (expiring after expires_in_days, default the programme\'s points_expiration_days); negative points are taken like a deduction but without the redemption rules. Honours Idempotency-Key.',
        params: LocaleParams,
        body: AdjustRow,
        response: { 201: Envelope(Transaction), ...errorResponses(400, 401, 404, 422, 429) },
      },
    },
    async (req, reply) => {
      const { partnerId } = principalOf(req, 'api');
      const b = req.body;
      return idempotency.respond(req, reply, `partner:${partnerId}`, { message: 'points.adjusted' }, (tx) => ledger.adjust(tx, partnerId, adjustInput(b)));
    },
  );

  app.post(
    '/:locale/shop/points/bulk',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['shop'],
        summary: 'Adjust points on many cards, all or nothing',
        description: `Up to ${MAX_BULK_ROWS} rows in one transaction. If any row fails, nothing is applied and every failing row is reported (errors[].field = rows.{index}.{field}). Honours Idempotency-Key.`,
        params: LocaleParams,
        body: Type.Object({ rows: Type.Array(AdjustRow, { minItems: 1, maxItems: MAX_BULK_ROWS }) }),
        response: {
          201: Envelope(Type.Object({ count: Type.Integer(), transactions: Type.Array(Transaction) })),
          ...errorResponses(400, 401, 404, 422, 429),
        },
      },
    },
    async (req, reply) => {
      const { partnerId } = principalOf(req, 'api');
      const rows = req.body.rows.map(adjustInput);
      return idempotency.run(req, reply, `partner:${partnerId}`, async (tx) => {
        const result = await ledger.adjustMany(tx, partnerId, rows);
        if (!result.ok) throw bulkFailure(result.failures);
        return {
          status: 201,
          body: envelopeOf(req, { count: result.value.length, transactions: result.value }, 'points.bulk_applied', 201, { count: result.value.length }),
        };
      });
    },
  );

};

function adjustInput(b: Static<typeof AdjustRow>) {
  return {
    cardId: b.card_id,
    points: b.points,
    reason: b.reason,
    ...(b.shop_id !== undefined ? { shopId: b.shop_id } : {}),
    ...(b.expires_in_days !== undefined ? { expiresInDays: b.expires_in_days } : {}),
  };
}

/** All failing rows in one error: the status of the first failure, every row's item under rows.{i}. */
function bulkFailure(failures: Array<{ index: number; failure: { ok: false; failure: { error: string; options?: { items?: ShapeBItem[] } } } | { ok: true } }>): AppError {
  const items: ShapeBItem[] = [];
  let first: string | undefined;
  for (const { index, failure } of failures) {
    if (failure.ok) continue;
    first ??= failure.failure.error;
    for (const item of failure.failure.options?.items ?? []) items.push({ ...item, field: `rows.${index}.${item.field}` });
  }
  return new AppError((first ?? 'INVALID_VALUE') as never, { message: 'points.bulk_failed', params: { count: failures.length }, items });
}
