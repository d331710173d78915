// Shops: partner CRUD (/partners/shops, partner JWT) and the Shop interface's list, nearby
// search, analytics, import and export (/shop/shops…, DESIGN.md §10).
import multipart, { type Multipart } from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../infra/auth.js';
import type { Idempotency } from '../../infra/idempotency.js';
import { isUniqueViolation } from '../../infra/db/index.js';
import { sendCsv } from '../../shared/csv.js';
import { envelopeNoData, envelopeOf, listWithMeta } from '../../shared/envelope.js';
import { AppError, fieldError, notFound, unwrap } from '../../shared/errors.js';
import { t } from '../../shared/i18n.js';
import { pageWindow } from '../../shared/pagination.js';
import { EmptyEnvelope, Envelope, errorResponses, ListEnvelope, LocaleIdParams, LocaleParams, PageQuery } from '../../shared/schemas.js';
import type { LoyaltyCardsService } from '../loyalty-cards/loyalty-cards.service.js';
import {
  AnalyticsQuery,
  CreateShop,
  ImportFailure,
  ImportReport,
  importBody,
  NearbyQuery,
  NearbyShop,
  Shop,
  ShopAnalytics,
  UpdateShop,
} from './shops.schemas.js';
import { csvHeader, csvLine, ImportRejected, MAX_IMPORT_BYTES, MAX_IMPORT_ROWS, planImport, readCsv, readJson, type RawRows } from './shops-import.js';
import { MAX_ANALYTICS_DAYS, type ShopsService } from './shops.service.js';

/** Coordinates come as a pair or not at all. */
function checkCoordinates(body: { lat?: number | null; lng?: number | null }) {
  const hasLat = body.lat !== undefined && body.lat !== null;
  const hasLng = body.lng !== undefined && body.lng !== null;
  if (hasLat !== hasLng) throw fieldError(hasLat ? 'lng' : 'lat', 'validation.required');
}

interface Deps {
  shops: ShopsService;
  cards: Pick<LoyaltyCardsService, 'partnerIdsOf'>;
  idempotency: Idempotency;
}

export const shopsRoutes: FastifyPluginAsyncTypebox<Deps> = async (app, deps) => {
  const { shops, cards, idempotency } = deps;

  app.post(
    '/:locale/partners/shops',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Create a shop',
        description: 'A `code` another shop of the partner has is 409 DUPLICATE_VALUE. Honours Idempotency-Key: a retried request returns the first response.',
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
        body: envelopeOf(req, unwrap(await shops.add(partnerId, req.body, tx)), 'ok.created', 201),
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
        description: 'A `code` another shop of the partner has is 409 DUPLICATE_VALUE.',
        params: LocaleIdParams,
        body: UpdateShop,
        response: { 200: Envelope(Shop), ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (req) => {
      const { partnerId } = principalOf(req, 'partner');
      const current = await shops.get(partnerId, req.params.id);
      if (!current) throw notFound('resource.shop');
      checkCoordinates({ lat: req.body.lat === undefined ? current.lat : req.body.lat, lng: req.body.lng === undefined ? current.lng : req.body.lng });
      return envelopeOf(req, unwrap(await shops.update(partnerId, req.params.id, req.body)), 'ok.updated');
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

  app.get(
    '/:locale/shop/shops/nearby',
    {
      config: { auth: ['customer', 'api'] },
      schema: {
        tags: ['shop'],
        summary: 'Shops near a point, nearest first',
        description:
          "Active shops with coordinates within `radius_km` (default 10, at most 100) of (`lat`, `lng`), ordered by great-circle " +
          "distance (haversine, mean Earth radius 6371.0088 km), each with `distance_km` to 3 decimals; at most `limit` (default 20, " +
          "at most 100). With API credentials: the partner's shops; with a customer token: the shops of every partner the customer " +
          'holds a card of (a QR-login token: that partner only). Works across the antimeridian and near the poles.',
        params: LocaleParams,
        querystring: NearbyQuery,
        response: { 200: Envelope(Type.Array(NearbyShop)), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const radius = req.query.radius_km ?? 10;
      const limit = req.query.limit ?? 20;
      return envelopeOf(req, await shops.nearby(await partnerIdsOf(req, cards), { lat: req.query.lat, lng: req.query.lng }, radius, limit));
    },
  );

  app.get(
    '/:locale/shop/shops/:id/analytics',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['shop'],
        summary: "A shop's activity per UTC day",
        description:
          `\`from\`..\`to\` are UTC days, both included (default: the last 30 days ending today; at most ${MAX_ANALYTICS_DAYS} days). ` +
          'Counts the ledger entries made at the shop (transactions, purchase amount and points in and out net of reversals and returns, ' +
          'distinct customers), cards first used at this shop, and coupons redeemed there (a rolled-back redemption is not counted). ' +
          "Another partner's shop is 404.",
        params: LocaleIdParams,
        querystring: AnalyticsQuery,
        response: { 200: Envelope(ShopAnalytics), ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (req) => {
      const { partnerId } = principalOf(req, 'api');
      const window = shops.analyticsWindow(req.query.from, req.query.to);
      if ('error' in window) {
        throw window.error === 'inverted'
          ? fieldError('from', 'shops.inverted_range')
          : fieldError('from', 'shops.range_too_long', { limit: MAX_ANALYTICS_DAYS });
      }
      const analytics = await shops.analytics(partnerId, req.params.id, window);
      if (!analytics) throw notFound('resource.shop');
      return envelopeOf(req, analytics);
    },
  );

  app.post(
    '/:locale/shop/shops/export',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['shop'],
        summary: "Export the partner's shops as CSV",
        description:
          'Streams text/csv (UTF-8, CRLF, header row), in id order, with `id` and every field of the shop as columns. Cells of free ' +
          'text starting with = + - @ (or apostrophes and then one of those) get one leading apostrophe, which the import strips: ' +
          'an export imports back unchanged (0 created).',
        params: LocaleParams,
        produces: ['text/csv'],
        response: {
          200: { description: 'CSV', content: { 'text/csv': { schema: { type: 'string' }, example: `${csvHeader()}3,Vilnius Old Town,VNO-01,…\r\n` } } },
          ...errorResponses(400, 401, 403, 429),
        },
      },
    },
    async (req, reply) => {
      const { partnerId } = principalOf(req, 'api');
      async function* lines() {
        yield csvHeader();
        for await (const shop of shops.allShops(partnerId)) yield csvLine(shop);
      }
      return sendCsv(reply, lines(), 'shops.csv');
    },
  );

  // The import takes CSV and multipart bodies: their parsers live in this child scope only,
  // so every other route keeps answering those content types with 400.
  await app.register(async (scope: FastifyInstance) => importRoute(scope, deps));
};

async function partnerIdsOf(req: FastifyRequest, cards: Deps['cards']): Promise<number[]> {
  if (req.principal?.kind === 'customer') {
    const c = principalOf(req, 'customer');
    return c.partnerId !== undefined ? [c.partnerId] : cards.partnerIdsOf(c.customerId);
  }
  return [principalOf(req, 'api').partnerId];
}

async function readImport(req: FastifyRequest): Promise<{ rows: RawRows; fingerprint: unknown }> {
  if (typeof req.body === 'string') return { rows: readCsv(req.body), fingerprint: req.body };
  if (req.isMultipart()) {
    let text: string | undefined;
    try {
      for await (const part of req.parts() as AsyncIterable<Multipart>) {
        if (part.type !== 'file') continue;
        if (part.fieldname !== 'file' || text !== undefined) {
          part.file.resume();
          continue;
        }
        const buffer = await part.toBuffer();
        text = buffer.toString('utf8');
      }
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'FST_REQ_FILE_TOO_LARGE') throw new AppError('BODY_TOO_LARGE', { params: { limit: MAX_IMPORT_BYTES } });
      if (code?.startsWith('FST_') || /multipart|boundary|unexpected end|premature close/i.test((err as Error).message ?? '')) {
        throw new AppError('BAD_REQUEST', { message: 'shops.malformed_form' });
      }
      throw err;
    }
    if (text === undefined) throw new ImportRejected([{ row: 0, field: 'file', key: 'shops.file_required' }]);
    if (text.includes('\u0000')) throw new ImportRejected([{ row: 0, field: 'file', key: 'validation.unstorable_text' }]);
    return { rows: readCsv(text), fingerprint: { file: text } };
  }
  return { rows: readJson(req.body), fingerprint: req.body };
}

async function importRoute(app: FastifyInstance, { shops, idempotency }: Deps) {
  await app.register(multipart, {
    limits: { fieldNameSize: 100, fieldSize: 1024, fields: 5, fileSize: MAX_IMPORT_BYTES, files: 1, parts: 10, headerPairs: 50 },
  });
  app.addContentTypeParser('text/csv', { parseAs: 'string', bodyLimit: MAX_IMPORT_BYTES }, (_req, body, done) => done(null, body));

  app.post(
    '/:locale/shop/shops/import',
    {
      bodyLimit: MAX_IMPORT_BYTES,
      config: { auth: 'api' },
      schema: {
        tags: ['shop'],
        summary: 'Create or update shops from CSV or JSON',
        description:
          `Each row: an \`id\` of the partner's shop updates that shop (another partner's id is an error on \`id\`); else a \`code\` ` +
          'one of its shops has updates that shop; else the row creates a shop (`name` required). Columns left out keep their ' +
          'values; an empty CSV cell is null; `created_at`, `updated_at` are read-only and ignored. All or nothing: if any row is ' +
          `bad the answer is 422 listing every bad row (\`row\` counts data rows from 1; 0 = header or file) and nothing is written. ` +
          `At most ${MAX_IMPORT_ROWS} rows and ${MAX_IMPORT_BYTES / 1024 / 1024} MiB. Honours Idempotency-Key.`,
        params: LocaleParams,
        body: importBody as never,
        response: {
          200: Envelope(ImportReport),
          // Bad rows (ImportFailure), or text the database cannot store (the usual Shape A).
          422: Type.Union([ImportFailure, Type.Unsafe<Record<string, unknown>>(Type.Ref('ErrorEnvelope'))]),
          ...errorResponses(400, 401, 403, 409, 429),
        },
      },
    },
    async (req, reply) => {
      const { partnerId } = principalOf(req, 'api');
      const contentType = req.headers['content-type'];
      const isJson = contentType === undefined || /^application\/json\b/i.test(contentType);
      if (!isJson && typeof req.body !== 'string' && !req.isMultipart()) {
        throw new AppError('UNSUPPORTED_MEDIA_TYPE', { message: 'shops.unsupported_media_type' });
      }
      try {
        const { rows, fingerprint } = await readImport(req);
        // What identifies the request for Idempotency-Key: the rows as sent (a multipart body is read as a stream).
        req.body = fingerprint;
        return await idempotency.run(req, reply, `partner:${partnerId}`, async (tx) => {
          const plan = planImport(rows, await shops.currentShops(tx, partnerId));
          await shops.applyImport(tx, partnerId, plan);
          const created = plan.creates.length;
          return {
            status: 200,
            body: envelopeOf(req, { created, updated: plan.updated, errors: [] }, 'shops.imported', 200, { created, updated: plan.updated }),
          };
        });
      } catch (err) {
        if (err instanceof ImportRejected) {
          const errors = err.localised(req.locale);
          return reply.code(422).send({
            success: false,
            code: 422,
            message: t(req.locale, 'shops.import_failed'),
            request_id: req.id,
            errors,
            data: { created: 0, updated: 0, errors },
          });
        }
        // Another import of the partner took a code between our check and our write.
        if (isUniqueViolation(err)) {
          throw new AppError('DUPLICATE_VALUE', { message: 'shops.code_taken', items: [{ field: 'code', code: 'DUPLICATE_VALUE', key: 'shops.code_taken' }] });
        }
        throw err;
      }
    },
  );
}
