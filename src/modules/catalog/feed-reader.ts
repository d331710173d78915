// A feed's bytes → its text, streaming: gzip (by its magic bytes, whatever the file name or
// content type said) through zlib, the size limit counted on the decompressed bytes (a
// gzip bomb stops at the limit, not at the end of memory), and the character encoding from
// the byte-order mark or the XML declaration, decoded by iconv-lite: any encoding it knows
// (UTF-8, UTF-16, ISO-8859-x, windows-125x, KOI8-R/-U, …); an unknown one is refused by name.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import iconv from 'iconv-lite';
import { FeedError } from './feed-parser.js';

/** Labels iconv-lite would read differently from what the declaration means. */
const ALIASES: Record<string, string> = { usascii: 'utf8', ascii: 'utf8' };
/** Names iconv-lite knows that are not character encodings of text. */
const NOT_TEXT = new Set(['base64', 'hex', 'binary']);

/** The encoding label a feed declared → iconv-lite's name; FeedError naming it when unknown. */
export function encodingFor(label: string): string {
  const normalised = label.toLowerCase().replace(/[^a-z0-9]/g, '');
  const name = ALIASES[normalised] ?? normalised;
  if (name === '' || NOT_TEXT.has(name) || !iconv.encodingExists(name)) throw new FeedError('catalog.feed_encoding', { encoding: label.slice(0, 40) }, 1, 1);
  return name;
}

/** Bytes needed to see a byte-order mark and the whole XML declaration. */
const HEAD_BYTES = 512;

/** The encoding of a feed from its first bytes: BOM, then the XML declaration, else UTF-8. */
export function sniffEncoding(head: Buffer): { encoding: string; bomBytes: number } {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return { encoding: 'utf8', bomBytes: 3 };
  if (head[0] === 0xff && head[1] === 0xfe) return { encoding: 'utf16le', bomBytes: 2 };
  if (head[0] === 0xfe && head[1] === 0xff) return { encoding: 'utf16be', bomBytes: 2 };
  // "<?" in UTF-16 without a mark.
  if (head[0] === 0x3c && head[1] === 0x00 && head[2] === 0x3f && head[3] === 0x00) return { encoding: 'utf16le', bomBytes: 0 };
  if (head[0] === 0x00 && head[1] === 0x3c && head[2] === 0x00 && head[3] === 0x3f) return { encoding: 'utf16be', bomBytes: 0 };
  // An ASCII-compatible encoding: the declaration itself is ASCII.
  const start = head.subarray(0, HEAD_BYTES).toString('latin1');
  const decl = /^\s*<\?xml\s[^>]*?encoding\s*=\s*(["'])([A-Za-z][A-Za-z0-9._-]*)\1/.exec(start);
  return { encoding: decl ? encodingFor(decl[2]!) : 'utf8', bomBytes: 0 };
}

/** Bytes looked at to tell a feed that declares a single-byte encoding but is written in UTF-8. */
const SNIFF_BYTES = 64 * 1024;

/**
 * A feed that declares a single-byte encoding (windows-1251, …) but whose first bytes are
 * non-ASCII and valid UTF-8 is UTF-8 (a common mistake of hand-made feeds: text in one
 * single-byte encoding is practically never valid UTF-8 once it has letters beyond ASCII).
 */
export function mislabelledUtf8(head: Buffer, declared: string): boolean {
  if (declared.startsWith('utf')) return false;
  let end = Math.min(head.length, SNIFF_BYTES);
  let nonAscii = false;
  for (let i = 0; i < end; i++) {
    if (head[i]! >= 0x80) {
      nonAscii = true;
      break;
    }
  }
  if (!nonAscii) return false;
  // Do not judge a character cut at the end of the sample.
  let back = 0;
  while (back < 3 && end - back - 1 >= 0 && (head[end - back - 1]! & 0xc0) === 0x80) back++;
  if (end - back - 1 >= 0 && head[end - back - 1]! >= 0xc0) end = end - back - 1;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, end));
    return true;
  } catch {
    return false;
  }
}

export interface FeedTextOptions {
  maxBytes: number;
  signal?: AbortSignal;
}

/** At most `maxBytes` of `source`; more is a FeedError (the source is then destroyed). */
async function* limited(source: AsyncIterable<Buffer>, maxBytes: number): AsyncGenerator<Buffer> {
  let total = 0;
  for await (const chunk of source) {
    total += chunk.length;
    if (total > maxBytes) throw new FeedError('catalog.feed_too_large', { limit: maxBytes });
    yield chunk;
  }
}

/** The first chunk(s) up to `bytes`, and an iterable of everything (those included). */
async function peek(source: AsyncIterable<Buffer>, bytes: number): Promise<{ head: Buffer; all: AsyncIterable<Buffer> }> {
  const it = source[Symbol.asyncIterator]();
  const first: Buffer[] = [];
  let size = 0;
  let done = false;
  while (size < bytes) {
    const next = await it.next();
    if (next.done) {
      done = true;
      break;
    }
    first.push(next.value);
    size += next.value.length;
  }
  const head = Buffer.concat(first);
  async function* all(): AsyncGenerator<Buffer> {
    if (head.length > 0) yield head;
    if (done) return;
    for (;;) {
      const next = await it.next();
      if (next.done) return;
      yield next.value;
    }
  }
  return { head, all: all() };
}

/** The decompressed bytes of a feed (gzip recognised by its magic number). */
async function* decompressed(source: AsyncIterable<Buffer>, signal: AbortSignal | undefined): AsyncGenerator<Buffer> {
  const { head, all } = await peek(source, 2);
  if (head[0] !== 0x1f || head[1] !== 0x8b) {
    yield* all;
    return;
  }
  const gunzip = zlib.createGunzip();
  const feeding = pipeline(Readable.from(all), gunzip, signal ? { signal } : {});
  feeding.catch(() => undefined);
  try {
    for await (const chunk of gunzip) yield chunk as Buffer;
    await feeding;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code?.startsWith('Z_')) throw new FeedError('catalog.feed_gzip', { detail: (err as Error).message });
    throw err;
  } finally {
    gunzip.destroy();
  }
}

/**
 * The text of a feed, chunk by chunk. Throws FeedError for a feed over `maxBytes`
 * (decompressed), a broken gzip stream or an unsupported encoding.
 */
export async function* feedText(source: AsyncIterable<Buffer>, opts: FeedTextOptions): AsyncGenerator<string> {
  const bytes = limited(decompressed(source, opts.signal), opts.maxBytes);
  const { head, all } = await peek(bytes, SNIFF_BYTES);
  const sniffed = sniffEncoding(head).encoding;
  const encoding = mislabelledUtf8(head, sniffed) ? 'utf8' : sniffed;
  // The decoder drops a byte-order mark itself.
  const decoder = iconv.getDecoder(encoding, { stripBOM: true });
  for await (const chunk of all) {
    const text = decoder.write(chunk);
    if (text.length > 0) yield text;
  }
  const rest = decoder.end();
  if (rest) yield rest;
}
