// XML feed import on the Shop interface (API credentials, DESIGN.md §9; the partner's JWT
// too, for the console's Imports page, DESIGN.md §11):
//   POST /{locale}/shop/xml-import/from-url, /from-file, /validate
//   GET  /{locale}/shop/xml-import/{import_id}, /history, /stats, /field-mappings, /feeds
//   DELETE /{locale}/shop/xml-import/feeds/{id}
// This plugin is its own scope: the XML / gzip body parsers and multipart apply to these
// routes only; every other route keeps answering non-JSON bodies with 400.
import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { actingPartnerOf } from '../../infra/auth.js';
import type { Idempotency } from '../../infra/idempotency.js';
import { envelopeNoData, envelopeOf, listWithMeta } from '../../shared/envelope.js';
import { AppError, unwrap, type FieldErrors } from '../../shared/errors.js';
import { pageWindow } from '../../shared/pagination.js';
import { EmptyEnvelope, Envelope, errorResponses, ListEnvelope, LocaleIdParams, LocaleParams, PageQuery } from '../../shared/schemas.js';
import { addFieldError } from '../../shared/validation.js';
import type { ImportMode } from './catalog.tables.js';
import {
  Feed as FeedSchema,
  FieldMappings,
  FromUrlBody,
  ImportIdParams,
  ImportRecord,
  ImportStats,
  Queued,
  UploadQuery,
  Validation,
  ValidateUrlBody,
} from './catalog.schemas.js';
import { FEED_CONTENT_TYPES, isFeedBody, readUpload, type Upload } from './feed-upload.js';
import type { ImportRow } from './imports.repository.js';
import { checkMapping, type ImportOptions, type XmlImportService } from './xml-import.service.js';

/** API credentials, or the partner's own JWT (the console's Imports page). */
const API_OR_PARTNER = ['api', 'partner'] as const;

const fileBody = (description: string, extra: Record<string, unknown> = {}) => ({
  content: {
    'multipart/form-data': {
      // No root type: the form is read as a stream, so the validator sees no body.
      schema: {
        properties: {
          file: { type: 'string', format: 'binary', description: 'The feed (.xml or .xml.gz)' },
          mode: { type: 'string', enum: ['upsert', 'replace'] },
          allow_mass_deactivation: { type: 'string', enum: ['true', 'false'] },
          mapping: { type: 'string', description: 'JSON object field → tag' },
        },
        required: ['file'],
      },
    },
    // No type either: the body is read as a stream (req.raw), never parsed into a value.
    ...Object.fromEntries(FEED_CONTENT_TYPES.map((type) => [type, { schema: { format: 'binary', description } }])),
    ...extra,
  },
});

function checkMode(value: unknown, errors: FieldErrors): ImportMode {
  if (value === undefined || value === '') return 'upsert';
  if (value === 'upsert' || value === 'replace') return value;
  addFieldError(errors, 'mode', 'validation.enum', { values: 'upsert, replace' });
  return 'upsert';
}

function checkAllow(value: unknown, errors: FieldErrors): boolean {
  if (value === undefined || value === '' || value === 'false' || value === false) return false;
  if (value === 'true' || value === true) return true;
  addFieldError(errors, 'allow_mass_deactivation', 'validation.enum', { values: 'true, false' });
  return false;
}

/** mode, mapping and allow_mass_deactivation of an upload: form fields, or the query string for a raw body. */
function uploadOptions(upload: Upload, query: { mode?: string; mapping?: string; allow_mass_deactivation?: string }): { options: ImportOptions; errors: FieldErrors } {
  const errors: FieldErrors = {};
  const mode = checkMode(upload.fields.mode ?? query.mode, errors);
  const mapping = checkMapping(upload.fields.mapping ?? query.mapping, errors);
  const allowMassDeactivation = checkAllow(upload.fields.allow_mass_deactivation ?? query.allow_mass_deactivation, errors);
  return { options: { mode, mapping, allowMassDeactivation }, errors };
}

export const xmlImportRoutes: FastifyPluginAsyncTypebox<{ imports: XmlImportService; idempotency: Idempotency }> = async (
  app,
  { imports, idempotency },
) => {
  await app.register(multipart, {
    // A file over the limit is cut off and flagged (truncated): readUpload answers 413.
    throwFileSizeLimit: false,
    limits: { fieldNameSize: 100, fieldSize: 64 * 1024, fields: 10, fileSize: imports.maxBytes, files: 1, parts: 20, headerPairs: 50 },
  });
  // A raw feed body is read as a stream by the route (req.raw), never buffered here.
  app.addContentTypeParser(FEED_CONTENT_TYPES, (_req, _payload, done) => done(null));

  const queued = (req: FastifyRequest, row: ImportRow) => envelopeOf(req, { import_id: row.id, status: 'queued' as const }, 'catalog.import_queued', 202);

  app.post(
    '/:locale/shop/xml-import/from-url',
    {
      config: { auth: API_OR_PARTNER },
      schema: {
        tags: ['xml-import'],
        summary: 'Import products from a feed URL',
        description:
          'Queues the import (202); it runs in the background (GET shop/xml-import/{import_id}, `import.progress` events on ' +
          '`private-partner.{partner_id}`). With `every_minutes` the URL is kept as a feed, re-imported with conditional GET. ' +
          'Private addresses are refused (422 on `url`). Honours Idempotency-Key.',
        params: LocaleParams,
        body: FromUrlBody,
        response: { 202: Envelope(Queued), ...errorResponses(400, 401, 403, 409, 422, 429) },
      },
    },
    async (req, reply) => {
      const partnerId = actingPartnerOf(req);
      const errors: FieldErrors = {};
      const mapping = checkMapping(req.body.mapping, errors);
      if (Object.keys(errors).length > 0) throw new AppError('VALIDATION', { fields: errors });
      unwrap(await imports.checkUrl(req.body.url));
      let row: ImportRow | undefined;
      const body = await idempotency.run(req, reply, `partner:${partnerId}`, async (tx) => {
        row = await imports.queueFromUrl(tx, partnerId, req.body.url, {
          mode: req.body.mode ?? 'upsert',
          mapping,
          allowMassDeactivation: req.body.allow_mass_deactivation ?? false,
          ...(req.body.every_minutes !== undefined ? { everyMinutes: req.body.every_minutes } : {}),
        });
        return { status: 202, body: queued(req, row) };
      });
      if (row) imports.announceQueued(row);
      return body;
    },
  );

  app.post(
    '/:locale/shop/xml-import/from-file',
    {
      config: { auth: API_OR_PARTNER },
      schema: {
        tags: ['xml-import'],
        summary: 'Import products from an uploaded feed',
        description:
          'multipart/form-data with the feed in field `file` (and optional `mode`, `mapping`), or the feed itself as an ' +
          '`application/xml`, `text/xml` or `application/gzip` body (`mode`, `mapping`, `filename` in the query). `.gz` is ' +
          'recognised by its bytes. A feed over XML_IMPORT_MAX_BYTES is refused with 413 and recorded as a failed import. ' +
          'Queues the import (202). Honours Idempotency-Key.',
        params: LocaleParams,
        querystring: UploadQuery,
        body: fileBody('The feed') as never,
        response: { 202: Envelope(Queued), ...errorResponses(400, 401, 403, 409, 413, 422, 429) },
      },
    },
    async (req, reply) => {
      const partnerId = actingPartnerOf(req);
      const upload = await readUpload(req, imports.files, imports.maxBytes, req.query);
      const { options, errors } = uploadOptions(upload, req.query);
      if (Object.keys(errors).length > 0) {
        if (upload.file) await imports.files.remove(upload.file.key);
        throw new AppError('VALIDATION', { fields: errors });
      }
      if (!upload.file) {
        await imports.recordTooLarge(partnerId, upload.filename, options);
        throw new AppError('PAYLOAD_TOO_LARGE', { message: 'catalog.feed_too_large', params: { limit: imports.maxBytes } });
      }
      const file = upload.file;
      // What identifies the request for Idempotency-Key: the file's digest and the options.
      req.body = { sha256: file.sha256, size: file.size, filename: upload.filename, ...options };
      let row: ImportRow | undefined;
      try {
        const body = await idempotency.run(req, reply, `partner:${partnerId}`, async (tx) => {
          row = await imports.queueFromFile(tx, partnerId, file, upload.filename, options);
          return { status: 202, body: queued(req, row) };
        });
        if (row) imports.announceQueued(row);
        return body;
      } finally {
        // A replay (or a refusal) does not use this copy.
        if (!row) await imports.files.remove(file.key);
      }
    },
  );

  app.post(
    '/:locale/shop/xml-import/validate',
    {
      config: { auth: API_OR_PARTNER },
      schema: {
        tags: ['xml-import'],
        summary: 'Check a feed without importing it',
        description:
          'The same inputs as from-file, or JSON `{url, mapping?}`. Reads the whole feed as an import would and writes ' +
          'nothing. Malformed or unsafe XML is `valid: false` with its line and column, not an error status.',
        params: LocaleParams,
        querystring: UploadQuery,
        body: fileBody('The feed', { 'application/json': { schema: ValidateUrlBody } }) as never,
        response: { 200: Envelope(Validation), ...errorResponses(400, 401, 403, 413, 422, 429) },
      },
    },
    async (req) => {
      const contentType = req.headers['content-type'] ?? '';
      if (/^application\/json\b/i.test(contentType) || (req.body !== undefined && !isFeedBody(req) && !req.isMultipart())) {
        const body = req.body as { url?: string; mapping?: unknown } | undefined;
        const errors: FieldErrors = {};
        if (typeof body?.url !== 'string') addFieldError(errors, 'url', 'validation.required');
        const mapping = checkMapping(body?.mapping, errors);
        if (Object.keys(errors).length > 0) throw new AppError('VALIDATION', { fields: errors });
        unwrap(await imports.checkUrl(body!.url!));
        return envelopeOf(req, await imports.validateUrl(body!.url!, mapping, req.locale), 'catalog.validated');
      }
      const query = req.query as { mode?: string; mapping?: string; filename?: string };
      const upload = await readUpload(req, imports.files, imports.maxBytes, query);
      const { options, errors } = uploadOptions(upload, query);
      if (Object.keys(errors).length > 0) {
        if (upload.file) await imports.files.remove(upload.file.key);
        throw new AppError('VALIDATION', { fields: errors });
      }
      if (!upload.file) throw new AppError('PAYLOAD_TOO_LARGE', { message: 'catalog.feed_too_large', params: { limit: imports.maxBytes } });
      try {
        const stored = await imports.files.open(upload.file.key);
        if (!stored) throw new Error('uploaded file vanished');
        return envelopeOf(req, await imports.validate(stored.stream, options.mapping, req.locale), 'catalog.validated');
      } finally {
        await imports.files.remove(upload.file.key);
      }
    },
  );

  app.get(
    '/:locale/shop/xml-import/field-mappings',
    {
      config: { auth: API_OR_PARTNER },
      schema: {
        tags: ['xml-import'],
        summary: 'The recognised item elements and the tags read for each product field',
        description: "The spec's table; for each field the first tag an item carries wins. `mapping` overrides it per import.",
        params: LocaleParams,
        response: { 200: Envelope(FieldMappings), ...errorResponses(401, 403, 429) },
      },
    },
    async (req) => envelopeOf(req, imports.fieldMappings()),
  );

  app.get(
    '/:locale/shop/xml-import/stats',
    {
      config: { auth: API_OR_PARTNER },
      schema: {
        tags: ['xml-import'],
        summary: 'Import statistics',
        params: LocaleParams,
        response: { 200: Envelope(ImportStats), ...errorResponses(401, 403, 429) },
      },
    },
    async (req) => envelopeOf(req, await imports.stats(actingPartnerOf(req))),
  );

  app.get(
    '/:locale/shop/xml-import/history',
    {
      config: { auth: API_OR_PARTNER },
      schema: {
        tags: ['xml-import'],
        summary: 'Import history, newest first',
        params: LocaleParams,
        querystring: PageQuery,
        response: { 200: ListEnvelope(ImportRecord), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const page = pageWindow(req.query);
      const { items, total } = await imports.history(actingPartnerOf(req), page, req.locale);
      return listWithMeta(req, items, page, total);
    },
  );

  app.get(
    '/:locale/shop/xml-import/feeds',
    {
      config: { auth: API_OR_PARTNER },
      schema: {
        tags: ['xml-import'],
        summary: 'Feed subscriptions (URLs re-imported every `every_minutes`)',
        params: LocaleParams,
        querystring: PageQuery,
        response: { 200: ListEnvelope(FeedSchema), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const page = pageWindow(req.query);
      const { items, total } = await imports.feeds(actingPartnerOf(req), page);
      return listWithMeta(req, items, page, total);
    },
  );

  app.delete(
    '/:locale/shop/xml-import/feeds/:id',
    {
      config: { auth: API_OR_PARTNER },
      schema: {
        tags: ['xml-import'],
        summary: 'Stop a feed subscription',
        description: 'No further runs are queued; imports already made stay in the history.',
        params: LocaleIdParams,
        response: { 200: EmptyEnvelope, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      unwrap(await imports.deleteFeed(actingPartnerOf(req), req.params.id));
      return envelopeNoData(req, 'catalog.feed_deleted');
    },
  );

  app.get(
    '/:locale/shop/xml-import/:import_id',
    {
      config: { auth: API_OR_PARTNER },
      schema: {
        tags: ['xml-import'],
        summary: 'One import (its history record)',
        params: ImportIdParams,
        response: { 200: Envelope(ImportRecord), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => envelopeOf(req, unwrap(await imports.get(actingPartnerOf(req), req.params.import_id, req.locale))),
  );
};

