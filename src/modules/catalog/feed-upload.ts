// Reading an uploaded feed off a request (from-file, validate): a multipart form (field
// `file`, optional `mode` and `mapping`) or a raw XML / gzip body. The bytes go to the file
// store as they arrive, at most XML_IMPORT_MAX_BYTES of them (the import reads them later,
// on whichever node claims it); nothing of a refused upload is kept.
import type { Multipart } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { Transform, type Readable } from 'node:stream';
import type { FileStore, StoredFile } from '../../infra/files.js';
import { AppError } from '../../shared/errors.js';

/** Content types of a raw feed body (gzip is recognised by its bytes, whatever the type says). */
export const FEED_CONTENT_TYPES = ['application/xml', 'text/xml', 'application/rss+xml', 'application/gzip', 'application/x-gzip', 'application/octet-stream'];

export interface Upload {
  /** Undefined when the upload went over the limit (nothing kept). */
  file: StoredFile | undefined;
  filename: string | null;
  fields: Record<string, string>;
}

class TooLarge extends Error {}

function limit(maxBytes: number): Transform {
  let total = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      total += chunk.length;
      if (total > maxBytes) done(new TooLarge());
      else done(null, chunk);
    },
  });
}

/** The client's file name without any path or control characters. */
function cleanFilename(name: string | undefined): string | null {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  const cleaned = base.replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 255);
  return cleaned === '' ? null : cleaned;
}

const formError = () =>
  new AppError('BAD_REQUEST', { message: 'catalog.malformed_form', fields: { file: [{ key: 'catalog.malformed_form' }] } });

export function isFeedBody(req: FastifyRequest): boolean {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  return FEED_CONTENT_TYPES.includes(type);
}

async function store(files: FileStore, source: Readable, maxBytes: number): Promise<StoredFile | undefined> {
  try {
    return await files.write(source.pipe(limit(maxBytes)));
  } catch (err) {
    if (err instanceof TooLarge) return undefined;
    throw err;
  }
}

/**
 * The upload of a request: multipart or a raw feed body. Throws 400 for another content type,
 * a malformed form or a form without `file`.
 */
export async function readUpload(req: FastifyRequest, files: FileStore, maxBytes: number, query: { filename?: string }): Promise<Upload> {
  if (isFeedBody(req)) {
    const file = await store(files, req.raw, maxBytes);
    // Over the limit: the rest of the body is read and dropped, so the client gets the answer.
    if (!file) req.raw.resume();
    return { file, filename: cleanFilename(query.filename), fields: {} };
  }
  if (!req.isMultipart()) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', { message: 'catalog.unsupported_media_type' });
  }
  const fields: Record<string, string> = {};
  let upload: Upload | undefined;
  let tooLarge = false;
  let tooLargeName: string | null = null;
  try {
    for await (const part of req.parts() as AsyncIterable<Multipart>) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file' || upload || tooLarge) {
          part.file.resume();
          continue;
        }
        const file = await files.write(part.file);
        if (part.file.truncated) {
          await files.remove(file.key);
          tooLarge = true;
          tooLargeName = cleanFilename(part.filename);
        } else {
          upload = { file, filename: cleanFilename(part.filename), fields };
        }
      } else if (typeof part.value === 'string') {
        fields[part.fieldname] = part.value;
      }
    }
  } catch (err) {
    if (upload?.file) await files.remove(upload.file.key);
    const code = (err as { code?: string }).code;
    if (code?.startsWith('FST_') || /multipart|boundary|unexpected end|premature close/i.test((err as Error).message ?? '')) throw formError();
    throw err;
  }
  if (tooLarge) return { file: undefined, filename: tooLargeName, fields };
  if (!upload) throw new AppError('VALIDATION', { fields: { file: [{ key: 'catalog.file_required' }] } });
  return upload;
}
