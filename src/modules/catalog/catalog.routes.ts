// The catalogue on the Shop interface (API credentials, DESIGN.md §9):
//   GET /{locale}/shop/products, /shop/products/{id}, /shop/categories,
//   GET /{locale}/shop/products/categories, /shop/products/sync-status
// Each also takes the partner's own JWT (the console's Products page), as the XML import does.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actingPartnerOf } from '../../infra/auth.js';
import { binaryBooleansInQuery } from '../../infra/http-core.js';
import { envelopeOf, listWithMeta } from '../../shared/envelope.js';
import { unwrap } from '../../shared/errors.js';
import { pageWindow } from '../../shared/pagination.js';
import { Envelope, errorResponses, ListEnvelope, LocaleIdParams, LocaleParams } from '../../shared/schemas.js';
import { Category, CategoryInUse, Product, ProductSyncStatus, ProductsQuery } from './catalog.schemas.js';
import type { CatalogService } from './catalog.service.js';

const API_OR_PARTNER = ['api', 'partner'] as const;

export const catalogRoutes: FastifyPluginAsyncTypebox<{ catalog: CatalogService }> = async (app, { catalog }) => {
  app.get(
    '/:locale/shop/products',
    {
      config: { auth: API_OR_PARTNER },
      preValidation: binaryBooleansInQuery('in_stock', 'featured', 'is_active'),
      schema: {
        tags: ['catalog'],
        summary: "The partner's products",
        description: 'Active products by default (inactive ones only with is_active=false), ordered by id, with `meta` pagination.',
        params: LocaleParams,
        querystring: ProductsQuery,
        response: { 200: ListEnvelope(Product), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const page = pageWindow(req.query);
      const { q, category_id, in_stock, featured, is_active, import_id } = req.query;
      const { items, total } = await catalog.listProducts(
        actingPartnerOf(req),
        {
          isActive: is_active ?? true,
          ...(q !== undefined ? { q } : {}),
          ...(category_id !== undefined ? { categoryId: category_id } : {}),
          ...(in_stock !== undefined ? { inStock: in_stock } : {}),
          ...(featured !== undefined ? { featured } : {}),
          ...(import_id !== undefined ? { importId: import_id } : {}),
        },
        page,
      );
      return listWithMeta(req, items, page, total);
    },
  );

  app.get(
    '/:locale/shop/products/sync-status',
    {
      config: { auth: API_OR_PARTNER },
      schema: {
        tags: ['catalog'],
        summary: 'Product synchronisation status',
        params: LocaleParams,
        response: { 200: Envelope(ProductSyncStatus), ...errorResponses(401, 403, 429) },
      },
    },
    async (req) => envelopeOf(req, await catalog.syncStatus(actingPartnerOf(req))),
  );

  app.get(
    '/:locale/shop/products/categories',
    {
      config: { auth: API_OR_PARTNER },
      schema: {
        tags: ['catalog'],
        summary: 'Categories of active products, with how many each has',
        params: LocaleParams,
        response: { 200: Envelope(Type.Array(CategoryInUse)), ...errorResponses(401, 403, 429) },
      },
    },
    async (req) => envelopeOf(req, await catalog.categoriesInUse(actingPartnerOf(req))),
  );

  app.get(
    '/:locale/shop/products/:id',
    {
      config: { auth: API_OR_PARTNER },
      schema: {
        tags: ['catalog'],
        summary: 'One product (active or not)',
        params: LocaleIdParams,
        response: { 200: Envelope(Product), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => envelopeOf(req, unwrap(await catalog.getProduct(actingPartnerOf(req), req.params.id))),
  );

  app.get(
    '/:locale/shop/categories',
    {
      config: { auth: API_OR_PARTNER },
      schema: {
        tags: ['catalog'],
        summary: "Every category of the partner's catalogue",
        description: 'As imported from feeds, ordered by id; `path` names the categories from the top down.',
        params: LocaleParams,
        response: { 200: Envelope(Type.Array(Category)), ...errorResponses(401, 403, 429) },
      },
    },
    async (req) => envelopeOf(req, await catalog.categories(actingPartnerOf(req))),
  );
};
