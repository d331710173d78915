// Coupons at the till (API credentials): verify (reserve for the shop for 10 minutes),
// redeem, release, rollback — each ONE statement when no Idempotency-Key is sent (the key's
// transaction holds it otherwise); the coupon list for tills and apps (either credential,
// `data: {coupons, pagination}`); the partner's list, CSV export and one coupon with its
// history (partner JWT), for the dashboard.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../infra/auth.js';
import type { Idempotency } from '../../infra/idempotency.js';
import { sendCsv } from '../../shared/csv.js';
import { envelopeOf } from '../../shared/envelope.js';
import { fieldError, notFound, unwrap } from '../../shared/errors.js';
import { formatAmount, parseAmount } from '../../shared/money.js';
import { pageMeta, pageWindow } from '../../shared/pagination.js';
import { Envelope, errorResponses, LocaleIdParams, LocaleParams, PageQuery } from '../../shared/schemas.js';
import { filterOf } from '../points/transaction-filter.js';
import { normalizeCouponCode } from './coupon-code.js';
import type { CouponFilter, CouponScope, StatusFilter } from './coupons.repository.js';
import {
  CouponData,
  CouponListData,
  COUPON_CSV_EXAMPLE,
  CouponWithHistory,
  PartnerCouponsFilter,
  RedeemBody,
  RollbackBody,
  ShopBody,
  ShopCouponsQuery,
  Verification,
  VerifyBody,
} from './coupons.schemas.js';
import type { CouponsService } from './coupons.service.js';

const PartnerCouponsQuery = Type.Object({ ...PartnerCouponsFilter, ...PageQuery.properties });
const PartnerExportQuery = Type.Object(PartnerCouponsFilter);

/** The coupons a caller may list: the partner's (API credentials) or the customer's own (customer JWT, one partner's for a QR-login token). */
function scopeOf(req: FastifyRequest): CouponScope {
  if (req.principal?.kind === 'customer') {
    const c = principalOf(req, 'customer');
    return { customerId: c.customerId, ...(c.partnerId !== undefined ? { partnerId: c.partnerId } : {}) };
  }
  return { partnerId: principalOf(req, 'api').partnerId };
}

function partnerFilter(q: {
  status?: string;
  offer_id?: number;
  game_id?: number;
  user_id?: number;
  card_id?: number;
  shop_id?: number;
  code?: string;
  from?: string;
  to?: string;
}): CouponFilter {
  const range = filterOf({ ...(q.from !== undefined ? { from: q.from } : {}), ...(q.to !== undefined ? { to: q.to } : {}) });
  const f: CouponFilter = { status: (q.status ?? 'all') as StatusFilter };
  if (q.offer_id !== undefined) f.offerId = q.offer_id;
  if (q.game_id !== undefined) f.gameId = q.game_id;
  if (q.user_id !== undefined) f.customerId = q.user_id;
  if (q.card_id !== undefined) f.cardId = q.card_id;
  if (q.shop_id !== undefined) f.usedShopId = q.shop_id;
  // A text that cannot be a code matches no coupon.
  if (q.code !== undefined) f.code = normalizeCouponCode(q.code) ?? '-';
  if (range.from) f.from = range.from;
  if (range.to) f.to = range.to;
  return f;
}

/** The sale's EUR amount as exact decimal text; more than 4 decimals is a 422, never silently rounded. */
const amountOf = (value: number | string | null | undefined) => {
  if (value === undefined || value === null) return null;
  const units = parseAmount(value);
  if (units === undefined) throw fieldError('amount', 'validation.decimal_places', { limit: 4 });
  return formatAmount(units);
};

const TILL_REFUSALS =
  'used → 409 INVALID_STATE {status: used}; expired → 422 EXPIRED_OFFER {expired_at}; the coupon is limited to other shops → 403 STORE_ACCESS_DENIED; reserved by another shop → 409 INVALID_STATE {status: pending, pending_shop_id}; another partner\'s coupon or shop → 404.';

export const couponsRoutes: FastifyPluginAsyncTypebox<{ coupons: CouponsService; idempotency: Idempotency }> = async (app, { coupons, idempotency }) => {
  app.post(
    '/:locale/shop/coupons/verify',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['shop'],
        summary: 'Verify a coupon and reserve it for the shop',
        description: `The coupon (its code or its QR text) is reserved for shop_id for 10 minutes (status pending); verifying again at the same shop renews the reservation. The result shows the coupon as it is after the reservation, with its holder, card and the programme's rules. Refusals: unknown code → 404; ${TILL_REFUSALS}`,
        params: LocaleParams,
        body: VerifyBody,
        response: { 200: Envelope(Verification), ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (req) => {
      const { partnerId } = principalOf(req, 'api');
      const code = normalizeCouponCode(req.body.coupon_code);
      if (code === undefined) throw notFound('resource.coupon', 'coupon_code');
      return envelopeOf(req, unwrap(await coupons.verify(partnerId, code, req.body.shop_id)), 'coupons.verified');
    },
  );

  app.post(
    '/:locale/shop/coupons/:id/redeem',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['shop'],
        summary: 'Redeem a coupon',
        description: `Makes an active coupon, or one reserved by this shop, used — exactly once: of parallel redeems one wins, the others get 409 INVALID_STATE {status: used}. receipt_number and amount are kept in the coupon's history. Refusals: ${TILL_REFUSALS} Honours Idempotency-Key.`,
        params: LocaleIdParams,
        body: RedeemBody,
        response: { 200: Envelope(CouponData), ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (req, reply) => {
      const { partnerId } = principalOf(req, 'api');
      const input = { shopId: req.body.shop_id, receiptNumber: req.body.receipt_number ?? null, amount: amountOf(req.body.amount) };
      return idempotency.respondAtomic(req, reply, `partner:${partnerId}`, { message: 'coupons.redeemed', status: 200 }, (exec) => coupons.redeem(exec, partnerId, req.params.id, input));
    },
  );

  app.post(
    '/:locale/shop/coupons/:id/release',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['shop'],
        summary: "End this shop's reservation of a coupon",
        description:
          "The coupon is active again. Refusals: not reserved (active) → 409 INVALID_STATE {status: active}; reserved by another shop → 409 {status: pending, pending_shop_id}; used → 409 {status: used}; expired → 422 EXPIRED_OFFER. Recorded in the coupon's history. Honours Idempotency-Key.",
        params: LocaleIdParams,
        body: ShopBody,
        response: { 200: Envelope(CouponData), ...errorResponses(400, 401, 404, 409, 422, 429) },
      },
    },
    async (req, reply) => {
      const { partnerId } = principalOf(req, 'api');
      return idempotency.respondAtomic(req, reply, `partner:${partnerId}`, { message: 'coupons.released', status: 200 }, (exec) =>
        coupons.release(exec, partnerId, req.params.id, { shopId: req.body.shop_id }),
      );
    },
  );

  app.post(
    '/:locale/shop/coupons/:id/rollback',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['shop'],
        summary: 'Undo a redemption (a cancelled sale)',
        description:
          "A coupon redeemed at this shop within the last 24 hours becomes active again (expired, if its expiry passed meanwhile). Refusals: not used → 409 INVALID_STATE {status}; redeemed at another shop → 409 {status: used, reason: other_shop}; more than 24 hours ago → 409 {status: used, reason: rollback_window_passed}. Recorded in the coupon's history with the reason. Honours Idempotency-Key.",
        params: LocaleIdParams,
        body: RollbackBody,
        response: { 200: Envelope(CouponData), ...errorResponses(400, 401, 404, 409, 422, 429) },
      },
    },
    async (req, reply) => {
      const { partnerId } = principalOf(req, 'api');
      const input = { shopId: req.body.shop_id, reason: req.body.reason ?? null };
      return idempotency.respondAtomic(req, reply, `partner:${partnerId}`, { message: 'coupons.rolled_back', status: 200 }, (exec) => coupons.rollback(exec, partnerId, req.params.id, input));
    },
  );

  app.get(
    '/:locale/shop/coupons',
    {
      config: { auth: ['customer', 'api'] },
      schema: {
        tags: ['shop'],
        summary: 'List coupons',
        description:
          "The partner's coupons (API credentials) or the customer's own (customer JWT; a QR-login token: that partner's only), newest first. status defaults to active (which includes pending).",
        params: LocaleParams,
        querystring: ShopCouponsQuery,
        response: { 200: Envelope(CouponListData), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const q = req.query;
      const page = pageWindow(q);
      const filter: CouponFilter = { status: (q.status ?? 'active') as StatusFilter };
      if (q.shop_id !== undefined) filter.validAtShopId = q.shop_id;
      if (q.user_id !== undefined) filter.customerId = q.user_id;
      if (q.card_id !== undefined) filter.cardId = q.card_id;
      const { items, total } = await coupons.list(scopeOf(req), filter, page);
      return envelopeOf(req, { coupons: items, pagination: pageMeta(page, total) });
    },
  );

  app.get(
    '/:locale/partners/coupons',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: "The partner's coupons, newest first",
        description: 'Filters: status (default all), offer_id, game_id, user_id, card_id, shop_id (redeemed there), code, from / to (created; a date = whole UTC day).',
        params: LocaleParams,
        querystring: PartnerCouponsQuery,
        response: { 200: Envelope(CouponListData), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const page = pageWindow(req.query);
      const { items, total } = await coupons.list({ partnerId: principalOf(req, 'partner').partnerId }, partnerFilter(req.query), page);
      return envelopeOf(req, { coupons: items, pagination: pageMeta(page, total) });
    },
  );

  app.get(
    '/:locale/partners/coupons/export',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: "The partner's coupons as CSV",
        description: 'Streams text/csv, oldest first, with the filters of the list.',
        params: LocaleParams,
        querystring: PartnerExportQuery,
        produces: ['text/csv'],
        response: { 200: { description: 'CSV', content: { 'text/csv': { schema: { type: 'string', example: COUPON_CSV_EXAMPLE } } } }, ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req, reply) => sendCsv(reply, coupons.exportCsv(principalOf(req, 'partner').partnerId, partnerFilter(req.query)), 'coupons.csv'),
  );

  app.get(
    '/:locale/partners/coupons/:id',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'One coupon with its history',
        description: "Every change of the coupon, oldest first: issued, verified, released, redeemed (with receipt and amount), rolled back (with the reason). Another partner's coupon is 404.",
        params: LocaleIdParams,
        response: { 200: Envelope(CouponWithHistory), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      const coupon = await coupons.get({ partnerId: principalOf(req, 'partner').partnerId }, req.params.id);
      if (!coupon) throw notFound('resource.coupon');
      return envelopeOf(req, coupon);
    },
  );
};
