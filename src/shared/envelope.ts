// The success envelope of DESIGN.md §3: {success, code, message, data, request_id}.
import type { FastifyRequest } from 'fastify';
import { t, type MessageKey, type MessageParams } from './i18n.js';
import type { PageWindow } from './pagination.js';
import { pageMeta } from './pagination.js';

export function envelopeOf<T>(req: FastifyRequest, data: T, message: MessageKey = 'ok', code = 200, params?: MessageParams) {
  return { success: true as const, code, message: t(req.locale, message, params), data, request_id: req.id };
}

export function envelopeNoData(req: FastifyRequest, message: MessageKey = 'ok', code = 200) {
  return { success: true as const, code, message: t(req.locale, message), request_id: req.id };
}

export function listWithMeta<T>(req: FastifyRequest, items: T[], page: PageWindow, total: number) {
  return { ...envelopeOf(req, items), meta: pageMeta(page, total) };
}

export function listWithPagination<T>(req: FastifyRequest, items: T[], page: PageWindow, total: number) {
  return { ...envelopeOf(req, items), pagination: pageMeta(page, total) };
}
