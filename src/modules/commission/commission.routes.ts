// Commission administration (DESIGN.md §7 "Commission"; rules in commission.service.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../infra/auth.js';
import { envelopeOf, listWithMeta } from '../../shared/envelope.js';
import { fieldError, unwrap } from '../../shared/errors.js';
import { pageWindow } from '../../shared/pagination.js';
import { DAY_PATTERN } from '../../shared/calendar.js';
import { Envelope, errorResponses, ListEnvelope, LocaleIdParams, PageQuery } from '../../shared/schemas.js';
import { existingPartner, type PartnersService } from '../partners/partners.service.js';
import { LockStatus, Period, PeriodFigures, Rates } from './commission.schemas.js';
import type { CommissionService } from './commission.service.js';

const RateBody = Type.Object({
  rate_percent: Type.Number({ minimum: 0, maximum: 100, description: 'Percent, 0..100, at most 2 decimals' }),
  valid_from: Type.Optional(Type.String({ format: 'date', pattern: DAY_PATTERN, description: 'First UTC day in force (1970..2999); default today' })),
});

const OptionalPeriodBody = Type.Object({ period: Type.Optional(Period) }, { description: 'May be left out altogether', 'x-optional-body': true });

/** These POSTs need no body: an absent or empty one is read as {} before validation. */
async function emptyBodyIsEmptyObject(req: FastifyRequest) {
  if (req.body === undefined || req.body === null) req.body = {};
}

/** rate_percent as exact decimal text, or a 422 on the field (more than 2 decimals). */
function ratePercentText(value: number): string {
  const text = String(value);
  if (!/^\d{1,3}(\.\d{1,2})?$/.test(text)) throw fieldError('rate_percent', 'commission.rate_decimals');
  return text;
}

export const commissionRoutes: FastifyPluginAsyncTypebox<{ commission: CommissionService; partners: PartnersService }> = async (
  app,
  { commission, partners },
) => {
  const base = '/:locale/admin/partners/:id/commission';

  app.get(
    `${base}/rates`,
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: "A partner's commission rate: the one in force and every version",
        params: LocaleIdParams,
        response: { 200: Envelope(Rates), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      await existingPartner(partners, req.params.id);
      return envelopeOf(req, await commission.rates(req.params.id));
    },
  );

  app.put(
    `${base}/rates`,
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Add a commission rate version',
        description:
          'Appends a version in force from valid_from (default today, UTC) until the next later-starting version. ' +
          'Refused with 409 COMMISSION_LOCKED (meta.period) when a locked month overlaps the days it would apply to.',
        params: LocaleIdParams,
        body: RateBody,
        response: { 200: Envelope(Rates), ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (req) => {
      const ratePercent = ratePercentText(req.body.rate_percent);
      await existingPartner(partners, req.params.id);
      const { adminId } = principalOf(req, 'admin');
      const input = { ratePercent, ...(req.body.valid_from !== undefined ? { validFrom: req.body.valid_from } : {}) };
      return envelopeOf(req, unwrap(await commission.addRate(req.params.id, adminId, input)), 'commission.rate_added');
    },
  );

  app.post(
    `${base}/lock`,
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Lock a month: compute, store and freeze its commission figures',
        description:
          'period defaults to the previous month; the current or a future month is 422. ' +
          'Locking a locked month is 409 INVALID_STATE (meta.status, meta.locked_at): the first lock’s figures stand.',
        params: LocaleIdParams,
        body: OptionalPeriodBody,
        response: { 200: Envelope(PeriodFigures), ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
      preValidation: emptyBodyIsEmptyObject,
    },
    async (req) => {
      await existingPartner(partners, req.params.id);
      const { adminId } = principalOf(req, 'admin');
      const period = req.body.period ?? commission.previousPeriod();
      return envelopeOf(req, unwrap(await commission.lock(req.params.id, adminId, period)), 'commission.locked');
    },
  );

  app.post(
    `${base}/unlock`,
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Unlock a month',
        description: 'A month that is not locked is 409 INVALID_STATE. The stored figures stay until the next force-sync.',
        params: LocaleIdParams,
        body: Type.Object({ period: Period }),
        response: { 200: Envelope(PeriodFigures), ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (req) => {
      await existingPartner(partners, req.params.id);
      return envelopeOf(req, unwrap(await commission.unlock(req.params.id, req.body.period)), 'commission.unlocked');
    },
  );

  app.get(
    `${base}/lock-status`,
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Locked months of a partner',
        params: LocaleIdParams,
        response: { 200: Envelope(LockStatus), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      await existingPartner(partners, req.params.id);
      return envelopeOf(req, await commission.lockStatus(req.params.id));
    },
  );

  app.post(
    `${base}/force-sync`,
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: "Recompute and store a month's commission",
        description: 'period defaults to the current month; a future month is 422, a locked month 409 COMMISSION_LOCKED. Idempotent.',
        params: LocaleIdParams,
        body: OptionalPeriodBody,
        response: { 200: Envelope(PeriodFigures), ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
      preValidation: emptyBodyIsEmptyObject,
    },
    async (req) => {
      await existingPartner(partners, req.params.id);
      const period = req.body.period ?? commission.currentPeriod();
      return envelopeOf(req, unwrap(await commission.forceSync(req.params.id, period)), 'commission.synced');
    },
  );

  app.get(
    base,
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: "A month's commission figures",
        description: 'As stored by the last force-sync or lock (stored: true), or computed for this answer when never stored. Default: the current month.',
        params: LocaleIdParams,
        querystring: Type.Object({ period: Type.Optional(Period) }),
        response: { 200: Envelope(PeriodFigures), ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (req) => {
      await existingPartner(partners, req.params.id);
      return envelopeOf(req, await commission.period(req.params.id, req.query.period ?? commission.currentPeriod()));
    },
  );

  app.get(
    `${base}/periods`,
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Months with stored commission figures, newest first',
        params: LocaleIdParams,
        querystring: PageQuery,
        response: { 200: ListEnvelope(PeriodFigures), ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (req) => {
      await existingPartner(partners, req.params.id);
      const page = pageWindow(req.query);
      const { items, total } = await commission.periods(req.params.id, page);
      return listWithMeta(req, items, page, total);
    },
  );
};
