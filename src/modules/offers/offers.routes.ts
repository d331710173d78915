// Offers (DESIGN.md §8): the partner's CRUD at /{locale}/partners/offers (partner JWT); what
// tills (API credentials) and apps (customer JWT) see at shop/offers and shop/offers/featured;
// the claim (customer JWT, Idempotency-Key), and shop/sync-status.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../infra/auth.js';
import { binaryBooleansInQuery, bodySchemaErrors, rejectInvalidBody } from '../../infra/http-core.js';
import type { Idempotency } from '../../infra/idempotency.js';
import { envelopeNoData, envelopeOf, listWithMeta } from '../../shared/envelope.js';
import { notFound, unwrap } from '../../shared/errors.js';
import { pageWindow } from '../../shared/pagination.js';
import { EmptyEnvelope, Envelope, errorResponses, ListEnvelope, LocaleIdParams, LocaleParams } from '../../shared/schemas.js';
import { isPlainObject } from '../../shared/validation.js';
import { Coupon } from '../coupons/coupons.schemas.js';
import { CreateOfferBody, ListOffersQuery, Offer, ShopOffersQuery, SyncStatus, UpdateOfferBody } from './offers.schemas.js';
import type { NewOfferInput, OfferAudience, OfferInput, OffersService } from './offers.service.js';

const Deleted = Type.Object(EmptyEnvelope.properties, {
  examples: [{ success: true, code: 200, message: 'Offer deleted', request_id: '6f1c2d3e-0000-4000-8000-000000000000' }],
});

const bodyObject = (body: unknown): Record<string, unknown> => (isPlainObject(body) ? body : {});

/** API credentials: the partner's offers; a customer token: the customer's partners' (or its QR-login partner's). */
function audienceOf(req: FastifyRequest): OfferAudience {
  if (req.principal?.kind === 'customer') {
    const c = principalOf(req, 'customer');
    return { customerId: c.customerId, ...(c.partnerId !== undefined ? { partnerScope: c.partnerId } : {}) };
  }
  return { partnerId: principalOf(req, 'api').partnerId };
}

const LIVE_RULES =
  "Active, started and not ended. With API credentials: the partner's offers; with a customer token: the offers of every partner the customer holds a card of (a QR-login token: that partner's only). Ordered by id, `meta` pagination.";

export const offersRoutes: FastifyPluginAsyncTypebox<{ offers: OffersService; idempotency: Idempotency }> = async (app, { offers, idempotency }) => {
  app.post(
    '/:locale/partners/offers',
    {
      config: { auth: 'partner' },
      attachValidation: true,
      schema: {
        tags: ['partners'],
        summary: 'Create an offer',
        description:
          'A claim of the offer issues a coupon; points_cost > 0 takes that many points from the customer\'s card in partner_card_id. Validation problems come back together as one 422. Honours Idempotency-Key.',
        params: LocaleParams,
        body: CreateOfferBody,
        response: { 201: Envelope(Offer), ...errorResponses(400, 401, 403, 409, 422, 429) },
      },
    },
    async (req, reply) => {
      const { partnerId } = principalOf(req, 'partner');
      if (req.validationError) rejectInvalidBody(bodySchemaErrors(req), unwrap(await offers.problems(partnerId, bodyObject(req.body))));
      return idempotency.respond(req, reply, `partner:${partnerId}`, { message: 'offers.created' }, (tx) => offers.createOffer(partnerId, req.body as NewOfferInput, tx));
    },
  );

  app.get(
    '/:locale/partners/offers',
    {
      config: { auth: 'partner' },
      preValidation: binaryBooleansInQuery('is_active', 'featured'),
      schema: {
        tags: ['partners'],
        summary: "List the partner's offers",
        description: 'Every offer (API and import), ordered by id, with `meta` pagination; filters is_active, featured and product_id.',
        params: LocaleParams,
        querystring: ListOffersQuery,
        response: { 200: ListEnvelope(Offer), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const page = pageWindow(req.query);
      const { items, total } = await offers.listOffers(principalOf(req, 'partner').partnerId, { isActive: req.query.is_active, featured: req.query.featured, productId: req.query.product_id }, page);
      return listWithMeta(req, items, page, total);
    },
  );

  app.get(
    '/:locale/partners/offers/:id',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'One offer',
        description: "Another partner's offer, or a deleted one, is 404.",
        params: LocaleIdParams,
        response: { 200: Envelope(Offer), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      const offer = await offers.getOffer(principalOf(req, 'partner').partnerId, req.params.id);
      if (!offer) throw notFound('resource.offer');
      return envelopeOf(req, offer);
    },
  );

  app.put(
    '/:locale/partners/offers/:id',
    {
      config: { auth: 'partner' },
      attachValidation: true,
      schema: {
        tags: ['partners'],
        summary: 'Update an offer (any subset of the fields)',
        description:
          'Only the fields sent change; `data` is the whole offer. Coupons already issued keep the terms they were issued with. Lowering max_claims below claims_count makes the offer sold out.',
        params: LocaleIdParams,
        body: UpdateOfferBody,
        response: { 200: Envelope(Offer), ...errorResponses(400, 401, 403, 404, 422, 429) },
      },
    },
    async (req) => {
      const { partnerId } = principalOf(req, 'partner');
      if (req.validationError) rejectInvalidBody(bodySchemaErrors(req), unwrap(await offers.problems(partnerId, bodyObject(req.body), req.params.id)));
      return envelopeOf(req, unwrap(await offers.updateOffer(partnerId, req.params.id, req.body as OfferInput)), 'offers.updated');
    },
  );

  app.delete(
    '/:locale/partners/offers/:id',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Delete an offer',
        description: 'It can no longer be seen or claimed; coupons already issued stay valid, with their terms.',
        params: LocaleIdParams,
        response: { 200: Deleted, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      if (!(await offers.deleteOffer(principalOf(req, 'partner').partnerId, req.params.id))) throw notFound('resource.offer');
      return envelopeNoData(req, 'offers.deleted');
    },
  );

  app.get(
    '/:locale/shop/offers',
    {
      config: { auth: ['customer', 'api'] },
      schema: {
        tags: ['shop'],
        summary: 'Offers a till or an app can show',
        description: `${LIVE_RULES} Filters: shop_id (valid there), category_id.`,
        params: LocaleParams,
        querystring: ShopOffersQuery,
        response: { 200: ListEnvelope(Offer), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const page = pageWindow(req.query);
      const { items, total } = await offers.listLive(audienceOf(req), { shopId: req.query.shop_id, categoryId: req.query.category_id }, page);
      return listWithMeta(req, items, page, total);
    },
  );

  app.get(
    '/:locale/shop/offers/featured',
    {
      config: { auth: ['customer', 'api'] },
      schema: {
        tags: ['shop'],
        summary: 'Featured offers',
        description: `The featured ones among shop/offers. ${LIVE_RULES}`,
        params: LocaleParams,
        querystring: ShopOffersQuery,
        response: { 200: ListEnvelope(Offer), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const page = pageWindow(req.query);
      const { items, total } = await offers.listLive(audienceOf(req), { featured: true, shopId: req.query.shop_id, categoryId: req.query.category_id }, page);
      return listWithMeta(req, items, page, total);
    },
  );

  app.post(
    '/:locale/shop/offers/:id/claim',
    {
      config: { auth: 'customer' },
      schema: {
        tags: ['shop'],
        summary: 'Claim an offer: get its coupon',
        description:
          "When points_cost > 0 the points leave the customer's card in the offer's programme in the same transaction (ledger type redeem; they do not come back if the coupon expires unused). Refusals: ended → 422 EXPIRED_OFFER {expired_at}; inactive or not started → 409 INVALID_STATE {reason: inactive | not_started}; sold out or the customer's limit reached → 409 INVALID_STATE {reason: sold_out | claim_limit}; no card in the programme → 409 INVALID_STATE {reason: no_card}; too few points → 422 INSUFFICIENT_BALANCE {available_points, requested_points}. Honours Idempotency-Key (a replay charges nothing).",
        params: LocaleIdParams,
        response: {
          201: Envelope(Type.Object({ coupon: Coupon })),
          ...errorResponses(401, 403, 404, 409, 422, 429),
        },
      },
    },
    async (req, reply) => {
      const c = principalOf(req, 'customer');
      const customer = { customerId: c.customerId, ...(c.partnerId !== undefined ? { partnerScope: c.partnerId } : {}) };
      return idempotency.respond(req, reply, `customer:${c.customerId}`, { message: 'offers.claimed' }, (tx) => offers.claim(tx, customer, req.params.id));
    },
  );

  app.get(
    '/:locale/shop/sync-status',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['shop'],
        summary: 'Offer synchronisation status',
        description: "Counts every offer of the partner (API and import); last_sync is the last change to any of them.",
        params: LocaleParams,
        response: { 200: Envelope(SyncStatus), ...errorResponses(401, 429) },
      },
    },
    async (req) => envelopeOf(req, await offers.syncStatus(principalOf(req, 'api').partnerId)),
  );
};
