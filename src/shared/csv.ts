// CSV as exports write it (RFC 4180, CRLF), streamed so that memory stays flat.
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';

/** One field; free text that a spreadsheet would run as a formula is neutralised with a leading '. */
export function csvField(value: string | number | null, freeText = false): string {
  if (value === null) return '';
  let text = String(value);
  if (freeText && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Stream `chunks` as a CSV download. */
export function sendCsv(reply: FastifyReply, chunks: AsyncIterable<string>, filename: string) {
  reply.header('content-type', 'text/csv; charset=utf-8');
  reply.header('content-disposition', `attachment; filename="${filename}"`);
  // A stream bypasses the response serializer; a route's declared schema is for the OpenAPI document.
  return reply.send(Readable.from(chunks) as never);
}
