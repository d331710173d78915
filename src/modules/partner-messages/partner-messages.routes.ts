// Messages between admins and a partner (DESIGN.md §7 "Messages"), with attachments:
//   admin:   GET|POST /{locale}/admin/partners/{id}/messages,
//            GET /{locale}/admin/partners/{id}/messages/{messageId}/attachment/{attachmentId}
//   partner: GET|POST /{locale}/partners/messages,
//            GET /{locale}/partners/messages/{messageId}/attachment/{attachmentId}
// A post is JSON {body} or multipart/form-data (field `body` + files). Files are streamed to
// the file store as they arrive, within the configured limits; any failure removes the files
// already written, and no row is committed (docs/decisions.md "Message attachments").
import multipart, { type Multipart } from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../infra/auth.js';
import { envelopeOf, listWithMeta } from '../../shared/envelope.js';
import { AppError, notFound } from '../../shared/errors.js';
import { pageWindow } from '../../shared/pagination.js';
import { Envelope, errorResponses, IdParam, ListEnvelope, LocaleIdParams, LocaleParam, LocaleParams, PageQuery } from '../../shared/schemas.js';
import { existingPartner, type PartnersService } from '../partners/partners.service.js';
import { Message } from './partner-messages.schemas.js';
import type { Author, PartnerMessagesService, UploadedFile } from './partner-messages.service.js';

export interface AttachmentLimits {
  maxBytes: number;
  maxFiles: number;
}

/** Longest message text, in characters. */
export const MAX_BODY_CHARS = 10_000;

const MessageBodyText = Type.String({
  minLength: 1,
  maxLength: MAX_BODY_CHARS,
  pattern: '\\S',
  'x-message': 'validation.not_blank',
  description: 'The message text',
});

/** JSON or multipart; only the JSON form is validated by schema, the form is read by hand. */
const postBody = (limits: AttachmentLimits) => ({
  content: {
    'application/json': { schema: Type.Object({ body: MessageBodyText }) },
    'multipart/form-data': {
      // No root type: the multipart body is read as a stream, so the validator sees null.
      schema: {
        properties: {
          body: { type: 'string', minLength: 1, maxLength: MAX_BODY_CHARS, description: 'The message text' },
          files: {
            type: 'array',
            maxItems: limits.maxFiles,
            items: { type: 'string', format: 'binary' },
            description: `Up to ${limits.maxFiles} files of at most ${limits.maxBytes} bytes each, under any field name`,
          },
        },
        required: ['body'],
      },
    },
  },
});

const fileResponse = {
  description: 'The file, with its stored content type, as an attachment',
  content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
};

/** The client's file name without any path, control characters or excess length. */
function cleanFilename(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  const cleaned = base.replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 255);
  return cleaned === '' || cleaned === '.' || cleaned === '..' ? 'attachment' : cleaned;
}

/** A well-formed media type (lower-cased, charset kept), or application/octet-stream. */
function cleanContentType(value: string | undefined): string {
  const m = /^\s*([a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+)\s*(?:;(.*))?$/i.exec(value ?? '');
  if (!m) return 'application/octet-stream';
  const charset = /(?:^|;)\s*charset\s*=\s*"?([a-z0-9._-]{1,40})"?\s*(?:;|$)/i.exec(m[2] ?? '')?.[1];
  return charset ? `${m[1]!.toLowerCase()}; charset=${charset.toLowerCase()}` : m[1]!.toLowerCase();
}

/** RFC 6266 / 8187: `attachment; filename*=UTF-8''…` with every byte outside attr-char escaped. */
export function contentDisposition(filename: string): string {
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename*=UTF-8''${encoded}`;
}

function formError(key: 'messages.too_many_files' | 'messages.too_many_parts' | 'messages.malformed_form', limit?: number): AppError {
  const params = limit === undefined ? undefined : { limit };
  return new AppError('BAD_REQUEST', { message: key, ...(params ? { params } : {}), fields: { files: [{ key, ...(params ? { params } : {}) }] } });
}

function fileTooLarge(filename: string, limit: number): AppError {
  const params = { filename, limit };
  return new AppError('BAD_REQUEST', { message: 'messages.file_too_large', params, fields: { files: [{ key: 'messages.file_too_large', params }] } });
}

/** @fastify/multipart's and busboy's errors → our 400s; anything else is not the client's doing. */
function mapFormError(err: unknown, limits: AttachmentLimits): AppError {
  if (err instanceof AppError) return err;
  const code = (err as { code?: string }).code;
  switch (code) {
    case 'FST_FILES_LIMIT':
      return formError('messages.too_many_files', limits.maxFiles);
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return formError('messages.too_many_parts');
    case 'FST_REQ_FILE_TOO_LARGE': {
      const filename = cleanFilename((err as { part?: { filename?: string } }).part?.filename);
      return fileTooLarge(filename, limits.maxBytes);
    }
    case 'FST_PROTO_VIOLATION':
    case 'FST_INVALID_JSON_FIELD_ERROR':
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return formError('messages.malformed_form');
  }
  const message = err instanceof Error ? err.message : '';
  // busboy's and the stream's words for a cut-off or garbled form.
  if (/multipart|boundary|unexpected end|terminated early|premature close|malformed/i.test(message)) return formError('messages.malformed_form');
  throw err;
}

/**
 * Reads a multipart post: the `body` field and every file part, each file streamed into the
 * file store. On any failure the files written so far are removed before the error is thrown.
 */
async function readForm(
  req: FastifyRequest,
  messages: PartnerMessagesService,
  limits: AttachmentLimits,
): Promise<{ body: string | undefined; uploads: UploadedFile[] }> {
  const uploads: UploadedFile[] = [];
  let body: string | undefined;
  let failure: AppError | undefined;
  const bodyFields: Array<{ value: string; truncated: boolean }> = [];
  try {
    for await (const part of req.parts() as AsyncIterable<Multipart>) {
      if (part.type === 'file') {
        if (failure) {
          // Read the rest of the request so the client gets our answer, not a reset.
          part.file.resume();
          continue;
        }
        const stored = await messages.files.write(part.file);
        const upload = { ...stored, filename: cleanFilename(part.filename), contentType: cleanContentType(part.mimetype) };
        uploads.push(upload);
        // The store got the first maxBytes only; the whole post is refused.
        if (part.file.truncated) failure = fileTooLarge(upload.filename, limits.maxBytes);
      } else if (part.fieldname === 'body') {
        bodyFields.push({ value: String(part.value), truncated: part.valueTruncated });
      }
    }
  } catch (err) {
    try {
      failure ??= mapFormError(err, limits);
    } catch (unexpected) {
      // Not the client's doing (e.g. the disk): still leave no file behind.
      await messages.discard(uploads);
      throw unexpected;
    }
  }
  if (!failure) {
    if (bodyFields.length > 1) failure = new AppError('VALIDATION', { fields: { body: [{ key: 'validation.invalid' }] } });
    else if (bodyFields[0]?.truncated) {
      failure = new AppError('VALIDATION', { fields: { body: [{ key: 'validation.max_length', params: { limit: MAX_BODY_CHARS } }] } });
    } else body = bodyFields[0]?.value;
  }
  if (failure) {
    await messages.discard(uploads);
    throw failure;
  }
  return { body, uploads };
}

/** The message text of a multipart post, checked as the JSON schema checks it (Shape A on `body`). */
function checkBodyText(body: string | undefined): string {
  if (body === undefined) throw new AppError('VALIDATION', { fields: { body: [{ key: 'validation.required' }] } });
  if (!/\S/.test(body)) throw new AppError('VALIDATION', { fields: { body: [{ key: 'validation.not_blank' }] } });
  // PostgreSQL text cannot hold NUL.
  if (body.includes('\u0000')) throw new AppError('VALIDATION', { fields: { body: [{ key: 'validation.invalid' }] } });
  // Characters as JSON Schema counts them (code points), like maxLength on the JSON form.
  if ([...body].length > MAX_BODY_CHARS) {
    throw new AppError('VALIDATION', { fields: { body: [{ key: 'validation.max_length', params: { limit: MAX_BODY_CHARS } }] } });
  }
  return body;
}

async function postMessage(
  req: FastifyRequest,
  reply: FastifyReply,
  messages: PartnerMessagesService,
  limits: AttachmentLimits,
  partnerId: number,
  author: Author,
) {
  let text: string;
  let uploads: UploadedFile[] = [];
  if (req.isMultipart()) {
    const form = await readForm(req, messages, limits);
    uploads = form.uploads;
    try {
      text = checkBodyText(form.body);
    } catch (err) {
      await messages.discard(uploads);
      throw err;
    }
  } else {
    // Validated by the JSON schema when sent as JSON; a request with no body at all is not.
    const json = req.body as { body?: string } | undefined;
    text = checkBodyText(json?.body);
  }
  const view = await messages.post(partnerId, author, text, uploads);
  reply.code(201);
  return envelopeOf(req, view, 'messages.sent', 201);
}

async function sendAttachment(
  reply: FastifyReply,
  file: { filename: string; contentType: string; size: number; stream: NodeJS.ReadableStream },
) {
  return reply
    .header('content-type', file.contentType)
    .header('content-length', String(file.size))
    .header('content-disposition', contentDisposition(file.filename))
    .header('x-content-type-options', 'nosniff')
    // Even if a browser were to render it, the file gets no script and no origin.
    .header('content-security-policy', "sandbox; default-src 'none'")
    .header('cache-control', 'private, no-store')
    .send(file.stream);
}

const AttachmentParams = Type.Object({ locale: LocaleParam, messageId: IdParam, attachmentId: IdParam });
const AdminAttachmentParams = Type.Object({ locale: LocaleParam, id: IdParam, messageId: IdParam, attachmentId: IdParam });

export const partnerMessagesRoutes: FastifyPluginAsyncTypebox<{
  messages: PartnerMessagesService;
  partners: PartnersService;
  limits: AttachmentLimits;
}> = async (app, { messages, partners, limits }) => {
  // Multipart is accepted by these routes only (this plugin's scope).
  await app.register(multipart, {
    throwFileSizeLimit: true,
    limits: {
      fieldNameSize: 100,
      // Bytes: room for MAX_BODY_CHARS characters of up to 4 bytes each.
      fieldSize: MAX_BODY_CHARS * 4,
      fields: 10,
      fileSize: limits.maxBytes,
      files: limits.maxFiles,
      parts: limits.maxFiles + 10,
      headerPairs: 50,
    },
  });


  async function attachmentOr404(partnerId: number, messageId: number, attachmentId: number) {
    const file = await messages.attachment(partnerId, messageId, attachmentId);
    if (!file) throw notFound('resource.attachment');
    return file;
  }

  const postDescription =
    'JSON {body}, or multipart/form-data with a `body` field and up to ' +
    `${limits.maxFiles} files of at most ${limits.maxBytes} bytes each. Over a limit: 400, and nothing is kept.`;

  // --- admin side -------------------------------------------------------------------------

  app.post(
    '/:locale/admin/partners/:id/messages',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Write to a partner',
        description: postDescription,
        params: LocaleIdParams,
        body: postBody(limits) as never,
        response: { 201: Envelope(Message), ...errorResponses(400, 401, 403, 404, 422, 429) },
      },
    },
    async (req, reply) => {
      await existingPartner(partners, req.params.id);
      return postMessage(req, reply, messages, limits, req.params.id, { kind: 'admin', adminId: principalOf(req, 'admin').adminId });
    },
  );

  app.get(
    '/:locale/admin/partners/:id/messages',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: "A partner's message thread, newest first",
        description: "The partner's messages on the page returned become read (read_at).",
        params: LocaleIdParams,
        querystring: PageQuery,
        response: { 200: ListEnvelope(Message), ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (req) => {
      await existingPartner(partners, req.params.id);
      const page = pageWindow(req.query);
      const { items, total } = await messages.list(req.params.id, 'admin', page);
      return listWithMeta(req, items, page, total);
    },
  );

  app.get(
    '/:locale/admin/partners/:id/messages/:messageId/attachment/:attachmentId',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Download an attachment of a message in a partner’s thread',
        params: AdminAttachmentParams,
        response: { 200: fileResponse, ...errorResponses(401, 403, 404, 429) } as never,
      },
    },
    async (req, reply) => {
      const { id, messageId, attachmentId } = req.params as { id: number; messageId: number; attachmentId: number };
      return sendAttachment(reply, await attachmentOr404(id, messageId, attachmentId));
    },
  );

  // --- partner side -----------------------------------------------------------------------

  app.get(
    '/:locale/partners/messages',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Own message thread with the platform, newest first',
        description: 'The admins’ messages on the page returned become read (read_at).',
        params: LocaleParams,
        querystring: PageQuery,
        response: { 200: ListEnvelope(Message), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const page = pageWindow(req.query);
      const { items, total } = await messages.list(principalOf(req, 'partner').partnerId, 'partner', page);
      return listWithMeta(req, items, page, total);
    },
  );

  app.post(
    '/:locale/partners/messages',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Write to the platform (reply)',
        description: postDescription,
        params: LocaleParams,
        body: postBody(limits) as never,
        response: { 201: Envelope(Message), ...errorResponses(400, 401, 403, 422, 429) },
      },
    },
    async (req, reply) => postMessage(req, reply, messages, limits, principalOf(req, 'partner').partnerId, { kind: 'partner' }),
  );

  app.get(
    '/:locale/partners/messages/:messageId/attachment/:attachmentId',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Download an attachment of a message in the own thread',
        params: AttachmentParams,
        response: { 200: fileResponse, ...errorResponses(401, 403, 404, 429) } as never,
      },
    },
    async (req, reply) => {
      const { messageId, attachmentId } = req.params as { messageId: number; attachmentId: number };
      return sendAttachment(reply, await attachmentOr404(principalOf(req, 'partner').partnerId, messageId, attachmentId));
    },
  );
};
