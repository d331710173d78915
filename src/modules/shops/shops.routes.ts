import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../infra/auth.js';
import type { Idempotency } from '../../infra/idempotency.js';
import { envelopeNoData, envelopeOf, listWithMeta } from '../../shared/envelope.js';
import { fieldError, notFound } from '../../shared/errors.js';
import { pageWindow } from '../../shared/pagination.js';
import { DateTime, EmptyEnvelope, Name, Envelope, errorResponses, ListEnvelope, LocaleIdParams, LocaleParams, PageQuery } from '../../shared/schemas.js';
import type { ShopsService } from './shops.service.js';

const Shop = Type.Object({
  id: Type.Integer(),
  partner_id: Type.Integer(),
  name: Type.String(),
  address: Type.Union([Type.String(), Type.Null()]),
  city: Type.Union([Type.String(), Type.Null()]),
  lat: Type.Union([Type.Number(), Type.Null()]),
  lng: Type.Union([Type.Number(), Type.Null()]),
  created_at: DateTime,
  updated_at: DateTime,
});

const optionalText = (max: number) => Type.Optional(Type.Union([Type.String({ maxLength: max }), Type.Null()]));
const ShopFields = {
  address: optionalText(500),
  city: optionalText(120),
  lat: Type.Optional(Type.Union([Type.Number({ minimum: -90, maximum: 90 }), Type.Null()])),
  lng: Type.Optional(Type.Union([Type.Number({ minimum: -180, maximum: 180 }), Type.Null()])),
};
const CreateShop = Type.Object({ name: Name(255), ...ShopFields });
const UpdateShop = Type.Object({ name: Type.Optional(Name(255)), ...ShopFields });

/** Coordinates come as a pair or not at all. */
function checkCoordinates(body: { lat?: number | null; lng?: number | null }) {
  const hasLat = body.lat !== undefined && body.lat !== null;
  const hasLng = body.lng !== undefined && body.lng !== null;
  if (hasLat !== hasLng) throw fieldError(hasLat ? 'lng' : 'lat', 'validation.required');
}

export const shopsRoutes: FastifyPluginAsyncTypebox<{ shops: ShopsService; idempotency: Idempotency }> = async (
  app,
  { shops, idempotency },
) => {
  app.post(
    '/:locale/partners/shops',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Create a shop',
        description: 'Honours Idempotency-Key: a retried request returns the first response.',
        params: LocaleParams,
        body: CreateShop,
        response: { 201: Envelope(Shop), ...errorResponses(400, 401, 403, 409, 422, 429) },
      },
    },
    async (req, reply) => {
      const { partnerId } = principalOf(req, 'partner');
      checkCoordinates(req.body);
      return idempotency.run(req, reply, `partner:${partnerId}`, async (tx) => ({
        status: 201,
        body: envelopeOf(req, await shops.create(partnerId, req.body, tx), 'ok.created', 201),
      }));
    },
  );

  app.get(
    '/:locale/partners/shops',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: "List the partner's shops",
        params: LocaleParams,
        querystring: PageQuery,
        response: { 200: ListEnvelope(Shop), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const page = pageWindow(req.query);
      const { items, total } = await shops.list(principalOf(req, 'partner').partnerId, page);
      return listWithMeta(req, items, page, total);
    },
  );

  app.get(
    '/:locale/partners/shops/:id',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'One shop',
        params: LocaleIdParams,
        response: { 200: Envelope(Shop), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      const shop = await shops.get(principalOf(req, 'partner').partnerId, req.params.id);
      if (!shop) throw notFound('resource.shop');
      return envelopeOf(req, shop);
    },
  );

  app.put(
    '/:locale/partners/shops/:id',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Update a shop (every field optional)',
        params: LocaleIdParams,
        body: UpdateShop,
        response: { 200: Envelope(Shop), ...errorResponses(400, 401, 403, 404, 422, 429) },
      },
    },
    async (req) => {
      const { partnerId } = principalOf(req, 'partner');
      const current = await shops.get(partnerId, req.params.id);
      if (!current) throw notFound('resource.shop');
      checkCoordinates({ lat: req.body.lat === undefined ? current.lat : req.body.lat, lng: req.body.lng === undefined ? current.lng : req.body.lng });
      const shop = await shops.update(partnerId, req.params.id, req.body);
      if (!shop) throw notFound('resource.shop');
      return envelopeOf(req, shop, 'ok.updated');
    },
  );

  app.delete(
    '/:locale/partners/shops/:id',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Delete a shop',
        params: LocaleIdParams,
        response: { 200: EmptyEnvelope, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      if (!(await shops.delete(principalOf(req, 'partner').partnerId, req.params.id))) throw notFound('resource.shop');
      return envelopeNoData(req, 'ok.deleted');
    },
  );

  app.get(
    '/:locale/shop/shops',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['shop'],
        summary: "The partner's shops (locations)",
        params: LocaleParams,
        querystring: PageQuery,
        response: { 200: ListEnvelope(Shop), ...errorResponses(401, 422, 429) },
      },
    },
    async (req) => {
      const page = pageWindow(req.query);
      const { items, total } = await shops.list(principalOf(req, 'api').partnerId, page);
      return listWithMeta(req, items, page, total);
    },
  );
};
