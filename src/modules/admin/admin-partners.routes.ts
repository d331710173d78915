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
import { Envelope, errorResponses, IdParam, ListEnvelope, LocaleIdParams, LocaleParams, Name, PageQuery } from '../../shared/schemas.js';
import { DAY_PATTERN } from '../../shared/calendar.js';
import { Mail } from '../mail/mail.schemas.js';
import { existingPartner, type PartnersService } from '../partners/partners.service.js';
import { Stats } from './admin-stats.schemas.js';
import { DEFAULT_STATS_DAYS, MAX_STATS_DAYS, type AdminStatsService } from './admin-stats.service.js';

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
