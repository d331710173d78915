// SMS accounts: administrators top up, set prices and approve senders (DESIGN.md §7);
// partners read their own account and message history.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../infra/auth.js';
import { envelopeNoData, envelopeOf, listWithMeta } from '../../shared/envelope.js';
import { AppError, fieldError, notFound } from '../../shared/errors.js';
import { formatAmount, parseAmount } from '../../shared/money.js';
import { pageWindow } from '../../shared/pagination.js';
import {
  DateTime,
  EmptyEnvelope,
  Envelope,
  errorResponses,
  IdParam,
  ListEnvelope,
  LocaleIdParams,
  LocaleParam,
  LocaleParams,
  PageQuery,
} from '../../shared/schemas.js';
import { existingPartner, type PartnersService } from '../partners/partners.service.js';
import type { SmsAccountsService } from './sms-accounts.service.js';
import { SmsAccount as Account, statusProperties } from './sms.schemas.js';
import { historyView, type SmsService } from './sms.service.js';

const HistoryItem = Type.Object({
  ...statusProperties,
  message: Type.String(),
  parts: Type.Integer(),
  encoding: Type.Union([Type.Literal('GSM-7'), Type.Literal('UCS-2')]),
  transliterated: Type.Boolean(),
  created_at: DateTime,
  expired_at: Type.Union([DateTime, Type.Null()]),
  refunded: Type.Boolean(),
});

const Amount = Type.Union([Type.Number({ exclusiveMinimum: 0 }), Type.String({ pattern: '^\\d{1,12}(\\.\\d{1,4})?$' })], {
  description: 'EUR, positive, at most 4 decimals',
});
const SenderName = Type.String({ minLength: 1, maxLength: 11, pattern: '^[A-Za-z0-9 ]*[A-Za-z0-9][A-Za-z0-9 ]*$', 'x-message': 'sms.invalid_source' });
const PartnerIdParams = Type.Object({ locale: LocaleParam, partner_id: IdParam });

function amountOf(value: number | string, field: string): bigint {
  const units = parseAmount(value);
  if (units === undefined || units <= 0n || units > 1_000_000n * 10_000n) throw fieldError(field, 'sms.invalid_amount');
  return units;
}

export const smsAccountsRoutes: FastifyPluginAsyncTypebox<{
  accounts: SmsAccountsService;
  sms: SmsService;
  partners: PartnersService;
}> = async (app, { accounts, sms, partners }) => {

  app.get(
    '/:locale/admin/partners/sms-accounts',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'SMS accounts of all partners',
        params: LocaleParams,
        querystring: PageQuery,
        response: { 200: ListEnvelope(Account), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const page = pageWindow(req.query);
      const { items, total } = await accounts.list(page);
      return listWithMeta(req, items, page, total);
    },
  );

  app.post(
    '/:locale/admin/partners/sms-accounts/:partner_id/top-up',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: "Top up a partner's SMS balance",
        params: PartnerIdParams,
        body: Type.Object({ amount: Amount }),
        response: { 200: Envelope(Account), ...errorResponses(400, 401, 403, 404, 422, 429) },
      },
    },
    async (req) => {
      const amount = amountOf(req.body.amount, 'amount');
      await existingPartner(partners, req.params.partner_id, 'partner_id');
      return envelopeOf(req, await accounts.topUp(req.params.partner_id, amount), 'sms.account_updated');
    },
  );

  app.put(
    '/:locale/admin/partners/sms-accounts/:partner_id',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Override prices per country and the transliteration default',
        description: 'prices: {"LT": 0.03} sets the price per part for Lithuania; null removes an override.',
        params: PartnerIdParams,
        body: Type.Object({
          prices: Type.Optional(
            Type.Record(Type.String({ pattern: '^([A-Z]{2}|\\*)$' }), Type.Union([Amount, Type.Null()]), { maxProperties: 300 }),
          ),
          transliterate: Type.Optional(Type.Boolean()),
        }),
        response: { 200: Envelope(Account), ...errorResponses(400, 401, 403, 404, 422, 429) },
      },
    },
    async (req) => {
      const prices: Record<string, string | null> = {};
      for (const [cc, value] of Object.entries(req.body.prices ?? {})) {
        if (!/^([A-Z]{2}|\*)$/.test(cc)) throw fieldError(`prices.${cc}`, 'validation.pattern');
        prices[cc] = value === null ? null : formatAmount(amountOf(value, `prices.${cc}`));
      }
      await existingPartner(partners, req.params.partner_id, 'partner_id');
      const view = await accounts.configure(req.params.partner_id, {
        prices,
        ...(req.body.transliterate !== undefined ? { transliterate: req.body.transliterate } : {}),
      });
      return envelopeOf(req, view, 'sms.account_updated');
    },
  );

  app.post(
    '/:locale/admin/partners/:id/sms-senders',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Approve a sender name for a partner',
        params: LocaleIdParams,
        body: Type.Object({ name: SenderName }),
        response: { 201: Envelope(Account), ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (req, reply) => {
      await existingPartner(partners, req.params.id);
      if (!(await accounts.approveSender(req.params.id, req.body.name))) {
        throw new AppError('DUPLICATE_VALUE', {
          message: 'sms.sender_already_approved',
          items: [{ field: 'name', code: 'DUPLICATE_VALUE', key: 'sms.sender_already_approved' }],
        });
      }
      reply.code(201);
      return envelopeOf(req, await accounts.view(req.params.id), 'sms.sender_approved', 201);
    },
  );

  app.delete(
    '/:locale/admin/partners/:id/sms-senders/:name',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: "Revoke a partner's sender name",
        params: Type.Object({ locale: LocaleParam, id: IdParam, name: Type.String({ minLength: 1, maxLength: 11 }) }),
        response: { 200: EmptyEnvelope, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      if (!(await accounts.revokeSender(req.params.id, req.params.name))) throw notFound('resource.sms_sender', 'name');
      return envelopeNoData(req, 'sms.sender_revoked');
    },
  );

  app.get(
    '/:locale/partners/sms-account',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Own SMS account: balance, prices, approved senders',
        params: LocaleParams,
        response: { 200: Envelope(Account), ...errorResponses(401, 403, 429) },
      },
    },
    async (req) => envelopeOf(req, await accounts.view(principalOf(req, 'partner').partnerId)),
  );

  app.put(
    '/:locale/partners/sms-account',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Own SMS settings: transliteration by default',
        params: LocaleParams,
        body: Type.Object({ transliterate: Type.Boolean() }),
        response: { 200: Envelope(Account), ...errorResponses(400, 401, 403, 422, 429) },
      },
    },
    async (req) => {
      const view = await accounts.configure(principalOf(req, 'partner').partnerId, { transliterate: req.body.transliterate });
      return envelopeOf(req, view, 'sms.account_updated');
    },
  );

  app.get(
    '/:locale/partners/sms/messages',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Own SMS messages, newest first',
        params: LocaleParams,
        querystring: PageQuery,
        response: { 200: ListEnvelope(HistoryItem), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const page = pageWindow(req.query);
      const { items, total } = await sms.history(principalOf(req, 'partner').partnerId, page);
      return listWithMeta(req, items.map(historyView), page, total);
    },
  );
};
