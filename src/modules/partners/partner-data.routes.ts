// The partner's view of its business (partner JWT): its own record, the customers holding
// its cards, its points transactions (list and CSV export) and its figures per day.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../infra/auth.js';
import { sendCsv } from '../../shared/csv.js';
import { envelopeOf, listWithMeta } from '../../shared/envelope.js';
import { notFound, unwrap } from '../../shared/errors.js';
import { pageWindow } from '../../shared/pagination.js';
import { DateTime, Envelope, errorResponses, IdParam, ListEnvelope, LocaleIdParams, LocaleParams, PageQuery } from '../../shared/schemas.js';
import type { CustomersService } from '../customers/customers.service.js';
import { LoyaltyCard } from '../loyalty-cards/loyalty-cards.schemas.js';
import type { LoyaltyCardsService } from '../loyalty-cards/loyalty-cards.service.js';
import { Transaction, TransactionDetails, TransactionFilterQuery } from '../points/points.schemas.js';
import type { PointsLedger } from '../points/ledger.service.js';
import type { PointsService } from '../points/points.service.js';
import { filterOf } from '../points/transaction-filter.js';
import { PartnerStats } from '../admin/admin-stats.schemas.js';
import { DEFAULT_STATS_DAYS, MAX_STATS_DAYS, type AdminStatsService } from '../admin/admin-stats.service.js';
import { DAY_PATTERN } from '../../shared/calendar.js';
import { Partner } from './partners.schemas.js';
import type { PartnersService } from './partners.service.js';

const PartnerCustomer = Type.Object(
  {
    id: Type.Integer(),
    name: Type.Union([Type.String(), Type.Null()]),
    phone: Type.String(),
    email: Type.Union([Type.String(), Type.Null()]),
    created_at: DateTime,
    points_balance: Type.Integer({ description: "Total over the partner's cards of the customer" }),
    points_debt: Type.Integer({ description: "Points the customer owes on the partner's cards after returns (DESIGN.md §12)" }),
    cards: Type.Array(LoyaltyCard, { description: "The customer's cards in the partner's programmes" }),
  },
  { description: "A customer holding the partner's cards" },
);

const TransactionsQuery = Type.Object({ ...TransactionFilterQuery, shop_id: Type.Optional(IdParam), user_id: Type.Optional(IdParam) });

export const partnerDataRoutes: FastifyPluginAsyncTypebox<{
  partners: PartnersService;
  customers: CustomersService;
  cards: LoyaltyCardsService;
  points: PointsService;
  ledger: PointsLedger;
  stats: AdminStatsService;
}> = async (app, { partners, customers, cards, points, ledger, stats }) => {
  app.get(
    '/:locale/partners/stats',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: "The partner's figures per UTC day",
        description:
          `from and to are inclusive UTC days (default: the last ${DEFAULT_STATS_DAYS} days through today); from after to, ` +
          `or more than ${MAX_STATS_DAYS} days, is 422. Transactions, points awarded and deducted, coupons redeemed, new cards ` +
          'and SMS spend for every day, and their totals.',
        params: LocaleParams,
        querystring: Type.Object({
          from: Type.Optional(Type.String({ format: 'date', pattern: DAY_PATTERN, description: 'First UTC day, YYYY-MM-DD' })),
          to: Type.Optional(Type.String({ format: 'date', pattern: DAY_PATTERN, description: 'Last UTC day, YYYY-MM-DD' })),
        }),
        response: { 200: Envelope(PartnerStats), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const { partnerId } = principalOf(req, 'partner');
      const { from, to } = req.query;
      return envelopeOf(req, unwrap(await stats.partnerDays(partnerId, { ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}) })));
    },
  );

  app.get(
    '/:locale/partners/:id',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'The partner (its own record only)',
        description: "Another partner's id is 404, like an id that does not exist.",
        params: LocaleIdParams,
        response: { 200: Envelope(Partner), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      const { partnerId } = principalOf(req, 'partner');
      const partner = req.params.id === partnerId ? await partners.get(partnerId) : undefined;
      if (!partner) throw notFound('resource.partner');
      return envelopeOf(req, partner);
    },
  );

  app.get(
    '/:locale/partners/customers',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: "Customers holding the partner's cards, newest first",
        description: 'search matches part of the name, phone or e-mail (case-insensitive).',
        params: LocaleParams,
        querystring: Type.Object({ ...PageQuery.properties, search: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) }),
        response: { 200: ListEnvelope(PartnerCustomer), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const { partnerId } = principalOf(req, 'partner');
      const page = pageWindow(req.query);
      const { items, total } = await customers.listForPartner(partnerId, req.query.search?.trim() || undefined, page);
      await ledger.refreshDue({ partnerId });
      const held = await cards.ofCustomers(partnerId, items.map((c) => c.id));
      const data = items.map((c) => {
        const own = held.get(c.id) ?? [];
        return {
          id: c.id,
          name: c.name,
          phone: c.phone,
          email: c.email,
          created_at: c.created_at,
          points_balance: own.reduce((sum, card) => sum + card.points_balance, 0),
          points_debt: own.reduce((sum, card) => sum + card.points_debt, 0),
          cards: own,
        };
      });
      return listWithMeta(req, data, page, total);
    },
  );

  app.get(
    '/:locale/partners/transactions',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: "The partner's points transactions, newest first",
        description: 'Filters: from / to (date-time, or a date = whole UTC day), shop_id, card_id, user_id, type.',
        params: LocaleParams,
        querystring: Type.Object({ ...PageQuery.properties, ...TransactionsQuery.properties }),
        response: { 200: ListEnvelope(Transaction), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const page = pageWindow(req.query);
      const { items, total } = await points.list({ partnerId: principalOf(req, 'partner').partnerId }, filterOf(req.query), page);
      return listWithMeta(req, items, page, total);
    },
  );

  app.get(
    '/:locale/partners/transactions/:id',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'One of the partner\'s points transactions, with its lines, breakdown and returns',
        params: LocaleIdParams,
        response: { 200: Envelope(TransactionDetails), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      const tx = await points.get({ partnerId: principalOf(req, 'partner').partnerId }, req.params.id);
      if (!tx) throw notFound('resource.transaction');
      return envelopeOf(req, tx);
    },
  );

  app.get(
    '/:locale/partners/transactions/export',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: "The partner's points transactions as CSV",
        description: 'Streams text/csv, oldest first, with the filters of the list; the columns of POST /shop/transactions/export (last: reverses_id, returns_id).',
        params: LocaleParams,
        querystring: TransactionsQuery,
        produces: ['text/csv'],
        response: { 200: { description: 'CSV', content: { 'text/csv': { schema: { type: 'string' } } } }, ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req, reply) => sendCsv(reply, points.exportCsv({ partnerId: principalOf(req, 'partner').partnerId }, filterOf(req.query)), 'transactions.csv'),
  );
};
