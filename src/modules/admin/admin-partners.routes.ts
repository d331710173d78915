// Administrator endpoints over partners beyond the account itself: platform statistics
// (GET /admin/partners/stats) and e-mail to a partner (DESIGN.md §7 "Admin e-mail").
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../infra/auth.js';
import type { Idempotency } from '../../infra/idempotency.js';
import type { MailService } from '../../modules/mail/mail.service.js';
import { envelopeOf, listWithMeta } from '../../shared/envelope.js';
import { fieldError, unwrap } from '../../shared/errors.js';
import { pageWindow } from '../../shared/pagination.js';
import { DateTime, Envelope, errorResponses, IdParam, ListEnvelope, LocaleIdParams, LocaleParams, Name, PageQuery } from '../../shared/schemas.js';
import { DAY_PATTERN } from '../../shared/calendar.js';
import { POINTS_TRANSACTION_TYPES } from '../points/points.tables.js';
import { existingPartner, type PartnersService } from '../partners/partners.service.js';
import { DEFAULT_STATS_DAYS, MAX_STATS_DAYS, type AdminStatsService } from './admin-stats.service.js';

const Count = Type.Integer({ minimum: 0 });
const Eur = (description: string) => Type.Number({ description: `${description}; EUR, at most 4 decimals` });

const Stats = Type.Object({
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
      by_type: Type.Object(Object.fromEntries(POINTS_TRANSACTION_TYPES.map((t) => [t, Count])) as Record<string, typeof Count>),
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

const Mail = Type.Object({
  id: Type.Integer(),
  to: Type.String({ description: "The partner's e-mail address at the time of sending" }),
  subject: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('sent'), Type.Literal('failed')]),
  attempts: Type.Integer(),
  last_error: Type.Union([Type.String(), Type.Null()]),
  created_at: DateTime,
  sent_at: Type.Union([DateTime, Type.Null()]),
});

export const adminPartnersRoutes: FastifyPluginAsyncTypebox<{
  stats: AdminStatsService;
  partners: PartnersService;
  mail: MailService;
  idempotency: Idempotency;
}> = async (app, { stats, partners, mail, idempotency }) => {
  app.get(
    '/:locale/admin/partners/stats',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Platform statistics over a range of UTC days',
        description:
          `from and to are inclusive UTC days (default: the last ${DEFAULT_STATS_DAYS} days through today); ` +
          `from after to, or more than ${MAX_STATS_DAYS} days, is 422. partner_id narrows every figure to one partner.`,
        params: LocaleParams,
        querystring: Type.Object({
          from: Type.Optional(Type.String({ format: 'date', pattern: DAY_PATTERN, description: 'First UTC day, YYYY-MM-DD (1970..2999)' })),
          to: Type.Optional(Type.String({ format: 'date', pattern: DAY_PATTERN, description: 'Last UTC day, YYYY-MM-DD (1970..2999)' })),
          partner_id: Type.Optional(IdParam),
        }),
        response: { 200: Envelope(Stats), ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (req) => {
      const { from, to, partner_id: partnerId } = req.query;
      if (partnerId !== undefined) await existingPartner(partners, partnerId, 'partner_id');
      const view = unwrap(
        await stats.stats({
          ...(from !== undefined ? { from } : {}),
          ...(to !== undefined ? { to } : {}),
          ...(partnerId !== undefined ? { partnerId } : {}),
        }),
      );
      return envelopeOf(req, view, 'admin.stats');
    },
  );

  app.post(
    '/:locale/admin/partners/:id/send-email',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'E-mail a partner',
        description:
          "Queues a plain-text e-mail to the partner's address and answers 202; the mail worker delivers it " +
          '(SMTP, or an .eml file on the embedded setup) with retries. Honours Idempotency-Key.',
        params: LocaleIdParams,
        body: Type.Object({
          subject: Name(200),
          body: Type.String({ minLength: 1, maxLength: 50_000, pattern: '\\S', 'x-message': 'validation.not_blank' }),
        }),
        response: { 202: Envelope(Mail), ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (req, reply) => {
      if (/[\r\n]/.test(req.body.subject)) throw fieldError('subject', 'admin.single_line');
      // (NUL, which neither PostgreSQL nor a mail header can hold, is refused for every route in http-core.)
      const partner = await existingPartner(partners, req.params.id);
      const { adminId } = principalOf(req, 'admin');
      const body = await idempotency.run(req, reply, `admin:${adminId}`, async (tx) => {
        const queued = await mail.enqueue(tx, {
          to: partner.email,
          subject: req.body.subject.trim(),
          body: req.body.body,
          partnerId: partner.id,
          sentByAdminId: adminId,
        });
        return { status: 202, body: envelopeOf(req, queued, 'admin.email_queued', 202) };
      });
      mail.wake();
      return body;
    },
  );

  app.get(
    '/:locale/admin/partners/:id/emails',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'E-mails sent to a partner, newest first, with their delivery status',
        params: LocaleIdParams,
        querystring: PageQuery,
        response: { 200: ListEnvelope(Mail), ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (req) => {
      await existingPartner(partners, req.params.id);
      const page = pageWindow(req.query);
      const { items, total } = await mail.listForPartner(req.params.id, page);
      return listWithMeta(req, items, page, total);
    },
  );
};
