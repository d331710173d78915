// The HTTP conventions every endpoint shares (DESIGN.md §3): the /{locale}/ prefix,
// request ids, JSON parsing, validation as Shape A, and the error and 404 envelopes.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ErrorObject } from 'ajv';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, ERRORS, type ErrorDefinition, type FieldErrors, type ErrorName } from '../shared/errors.js';
import { isLocale, t, type Locale, type MessageKey, type MessageParams } from '../shared/i18n.js';
import { unstorableTextFields } from '../shared/validation.js';
import { isDatabaseUnavailable } from './db/index.js';
import { lazyValidator } from './schema-compilers.js';

declare module 'fastify' {
  interface FastifyRequest {
    locale: Locale;
  }
}

/** The locale of a URL, for responses produced before or without routing. */
export function localeOfUrl(url: string): Locale {
  const seg = url.split('/')[1];
  return isLocale(seg) ? seg : 'en';
}

function fieldOf(err: ErrorObject): string {
  const base = err.instancePath.replace(/^\//, '').replace(/\//g, '.').replace(/~1/g, '/').replace(/~0/g, '~');
  if (err.keyword === 'required') {
    const missing = (err.params as { missingProperty: string }).missingProperty;
    return base ? `${base}.${missing}` : missing;
  }
  return base || '_';
}

function messageOf(err: ErrorObject): { key: MessageKey; params?: MessageParams } {
  const custom = (err.parentSchema as Record<string, unknown> | undefined)?.['x-message'];
  // A schema's own message explains its pattern or format ("#RRGGBB", "not blank"); length,
  // range and type keep their generic messages, which name the limit.
  if (typeof custom === 'string' && (err.keyword === 'pattern' || err.keyword === 'format')) {
    return { key: custom as MessageKey };
  }
  const p = err.params as Record<string, unknown>;
  switch (err.keyword) {
    case 'required':
      return { key: 'validation.required' };
    case 'type':
      return { key: 'validation.type', params: { type: String(p.type) } };
    case 'minLength':
      return { key: 'validation.min_length', params: { limit: Number(p.limit) } };
    case 'maxLength':
      return { key: 'validation.max_length', params: { limit: Number(p.limit) } };
    case 'minimum':
      return { key: 'validation.minimum', params: { limit: Number(p.limit) } };
    case 'maximum':
      return { key: 'validation.maximum', params: { limit: Number(p.limit) } };
    case 'exclusiveMinimum':
      return { key: 'validation.exclusive_minimum', params: { limit: Number(p.limit) } };
    case 'exclusiveMaximum':
      return { key: 'validation.exclusive_maximum', params: { limit: Number(p.limit) } };
    case 'pattern':
      return { key: 'validation.pattern' };
    case 'format':
      return p.format === 'email'
        ? { key: 'validation.email' }
        : { key: 'validation.format', params: { format: String(p.format) } };
    case 'enum':
      return { key: 'validation.enum', params: { values: (p.allowedValues as unknown[]).join(', ') } };
    case 'const':
      return { key: 'validation.enum', params: { values: String(p.allowedValue) } };
    case 'minItems':
      return { key: 'validation.min_items', params: { limit: Number(p.limit) } };
    case 'maxItems':
      return { key: 'validation.max_items', params: { limit: Number(p.limit) } };
    case 'uniqueItems':
      return { key: 'validation.unique_items' };
    case 'additionalProperties':
      return { key: 'validation.additional_properties' };
    default:
      return { key: 'validation.invalid' };
  }
}

/** AJV errors → Shape A, one entry per field, type alternatives merged ("integer or null"). */
export function toFieldErrors(errors: ErrorObject[]): FieldErrors {
  const byField = new Map<string, ErrorObject[]>();
  for (const e of errors) {
    // "must match the then schema": the then-schema's own errors (a required field) say what.
    if (e.keyword === 'if') continue;
    const f = fieldOf(e);
    byField.set(f, [...(byField.get(f) ?? []), e]);
  }
  const out: FieldErrors = {};
  for (const [field, errs] of byField) {
    const specific = errs.filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'oneOf');
    const types = specific.filter((e) => e.keyword === 'type').map((e) => String((e.params as { type: string }).type));
    const rest = specific.filter((e) => e.keyword !== 'type');
    // A nullable object that is an object reports its inner fields; the null branch's
    // "must be null" on the object itself would only confuse.
    if (rest.length === 0 && [...byField.keys()].some((other) => other.startsWith(`${field}.`))) continue;
    const messages: FieldErrors[string] = [];
    // A value that matched one branch's type but broke its constraint reports the constraint.
    if (rest.length > 0) messages.push(...rest.map(messageOf));
    else if (types.length > 0) messages.push({ key: 'validation.type', params: { type: [...new Set(types)].join(' or ') } });
    else messages.push({ key: 'validation.invalid' });
    const seen = new Set<string>();
    out[field] = messages.filter((m) => {
      const k = `${m.key}:${JSON.stringify(m.params ?? {})}`;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    });
  }
  return out;
}

/**
 * For routes with `attachValidation` that add checks of their own, so that one 422 lists
 * every problem: the body schema's errors as Shape A fields (empty when the body passed).
 * A path or query failure is thrown to the error handler, which answers it as usual.
 */
export function bodySchemaErrors(req: FastifyRequest): FieldErrors {
  const err = req.validationError as (FastifyError & { validationContext?: string; validation?: ErrorObject[] }) | undefined;
  if (!err) return {};
  if (err.validationContext !== 'body' || !err.validation) throw err;
  return toFieldErrors(err.validation);
}

/** One 422 listing both the schema's and the route's own problems; the schema's message wins for a field both report. */
export function rejectInvalidBody(schemaErrors: FieldErrors, ruleErrors: FieldErrors, name: ErrorName = 'VALIDATION'): void {
  const merged: FieldErrors = { ...ruleErrors, ...schemaErrors };
  if (Object.keys(merged).length > 0) throw new AppError(name, { fields: merged });
}

/**
 * A preValidation hook for list filters: tills and form posts often send booleans as 1/0,
 * which the query schema's coercion (true/false only) would refuse.
 */
export function binaryBooleansInQuery(...names: string[]) {
  return async (req: FastifyRequest) => {
    const query = req.query as Record<string, unknown>;
    for (const name of names) {
      if (query[name] === '1') query[name] = 'true';
      else if (query[name] === '0') query[name] = 'false';
    }
  };
}

export function errorBody(req: FastifyRequest, def: ErrorDefinition, err?: AppError) {
  const locale = req.locale ?? localeOfUrl(req.url);
  const opts = err?.options ?? {};
  const body: Record<string, unknown> = {
    success: false,
    code: def.code,
    message: t(locale, opts.message ?? def.message, opts.params),
    request_id: req.id,
  };
  if (opts.fields) {
    const errors: Record<string, string[]> = {};
    for (const [field, msgs] of Object.entries(opts.fields)) {
      errors[field] = msgs.map((m) => t(locale, m.key, m.params));
    }
    body.errors = errors;
  } else if (opts.items) {
    body.errors = opts.items.map((i) => ({
      field: i.field,
      message: t(locale, i.key, i.params),
      code: i.code,
      ...(i.meta ? { meta: i.meta } : {}),
    }));
  }
  return body;
}

export function sendError(req: FastifyRequest, reply: FastifyReply, err: AppError) {
  const def = err.definition;
  if (err.options.headers) reply.headers(err.options.headers);
  return reply.code(def.status).send(errorBody(req, def, err));
}

const isSmsPath = (url: string) => /^\/(lt|en)\/sms(\/|$|\?)/.test(url);

/** The route of a request log line that matched no route: its path is whatever the caller
 * typed (a session id, a phone number), so it is not written. */
export const UNMATCHED_ROUTE = '(no route)';

/**
 * Path parameters a request log line may show, by name: the locale and ids of the caller's
 * own records. An allow-list, so that any other parameter — a QR session id, a scan code, a
 * game session key, a phone number, and whatever a new route adds — stays out by default.
 * docs/operations.md "Logs".
 */
const LOGGED_PARAMS: ReadonlySet<string> = new Set(['locale', 'id', 'card_id', 'import_id', 'partner_id', 'messageId', 'attachmentId']);

/** Per route pattern, its parameters that LOGGED_PARAMS allows: worked out once per route, not per request. */
const loggedParamsByRoute = new Map<string, readonly string[]>();

function loggedParamsOf(route: string): readonly string[] {
  let names = loggedParamsByRoute.get(route);
  if (names === undefined) {
    names = [...route.matchAll(/:(\w+)/g)].map((m) => m[1]!).filter((name) => LOGGED_PARAMS.has(name));
    loggedParamsByRoute.set(route, names);
  }
  return names;
}

export type RequestLogFields = {
  method: string;
  /** The route pattern (`/:locale/shop/auth/qr-login/poll/:session_id`), never the path. */
  route: string;
  params?: Record<string, unknown>;
  host?: string;
  remoteAddress?: string;
  remotePort?: number;
};

/**
 * What a log line says about a request: the route pattern, not the path, and no query string
 * or header. `withParams` (the request line of a request that succeeded) adds the allowed path
 * parameters — a locale that is one, an id that validated as a number; on a failure they are
 * whatever the caller typed and stay out too.
 */
export function requestLogFields(req: FastifyRequest, withParams = false): RequestLogFields {
  const route = req.routeOptions.url;
  const fields: RequestLogFields = {
    method: req.method,
    route: route ?? UNMATCHED_ROUTE,
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
  if (withParams && route !== undefined) {
    const names = loggedParamsOf(route);
    const params = req.params as Record<string, unknown> | undefined;
    let kept: Record<string, unknown> | undefined;
    for (const name of names) {
      const value = params?.[name];
      if (name === 'locale' ? isLocale(value) : typeof value === 'number') (kept ??= {})[name] = value;
    }
    if (kept) fields.params = kept;
  }
  return fields;
}

/** pino's `req` serializer: a Fastify request becomes its log fields; fields built already pass. */
export function requestLogSerializer(req: FastifyRequest | RequestLogFields): RequestLogFields {
  return 'raw' in req ? requestLogFields(req) : req;
}

function mapFrameworkError(err: FastifyError, req: FastifyRequest, bodyLimit: number): AppError | undefined {
  if (err.validation) {
    const context = (err as FastifyError & { validationContext?: string }).validationContext;
    // A path id that cannot exist is a missing resource, not a form error.
    if (context === 'params') return new AppError('RESOURCE_NOT_FOUND', { params: { resource: 'resource.resource' } });
    const name: ErrorName = isSmsPath(req.url) ? 'SMS_VALIDATION' : 'VALIDATION';
    return new AppError(name, { fields: toFieldErrors(err.validation as ErrorObject[]) });
  }
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      // A route may raise the limit (card images); name the one that applied.
      return new AppError('BODY_TOO_LARGE', { params: { limit: req.routeOptions.bodyLimit ?? bodyLimit } });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('UNSUPPORTED_MEDIA_TYPE');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('MALFORMED_JSON');
  }
  if (err instanceof SyntaxError || err.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') return new AppError('MALFORMED_JSON');
  if (err.statusCode === 404) return new AppError('ROUTE_NOT_FOUND');
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) return new AppError('BAD_REQUEST');
  return undefined;
}

/**
 * What Node's HTTP parser refuses before any request exists (headers or URL over 16 KiB, a
 * request that never finished arriving, bytes that are not HTTP): the error envelope with a
 * fresh request id, like every other refusal. Passed as the `clientErrorHandler` option.
 */
export function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const name: ErrorName = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'REQUEST_TIMEOUT' : err.code === 'HPE_HEADER_OVERFLOW' ? 'HEADERS_TOO_LARGE' : 'BAD_REQUEST';
  const def = ERRORS[name];
  const requestId = randomUUID();
  const body = JSON.stringify({ success: false, code: def.code, message: t('en', def.message), request_id: requestId });
  this.log.info({ code: err.code, status: def.status, request_id: requestId }, 'client error');
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${def.status} ${STATUS_CODES[def.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

export interface HttpCoreOptions {
  bodyLimit: number;
}

/** Deepest JSON nesting a body may have: ours need a handful of levels; a validator (and a
 * recursive walk) over 10,000 would exhaust the stack. */
export const MAX_JSON_DEPTH = 32;

/** True when `text` nests arrays/objects deeper than `limit` (one linear scan, strings skipped). */
export function jsonDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * Fastify's own refusals that happen before routing (an undecodable path such as `%FF` or a
 * lone surrogate, a path parameter over `maxParamLength`), answered like every other error:
 * the envelope, `request_id` and `X-Request-Id`. Passed as the `frameworkErrors` option.
 */
export function frameworkErrors(error: FastifyError, req: FastifyRequest, reply: FastifyReply) {
  req.locale = localeOfUrl(req.url);
  reply.header('x-request-id', req.id);
  // An over-long parameter names nothing that can exist: like any impossible path id, 404.
  const err =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new AppError('RESOURCE_NOT_FOUND', { params: { resource: 'resource.resource' } })
      : new AppError('BAD_REQUEST', { message: 'error.bad_url' });
  // No request line follows (these never reach the route's hooks): this line is the request's.
  req.log.info({ req: requestLogFields(req), code: error.code, status: err.definition.status }, 'request rejected');
  return sendError(req, reply, err);
}

async function httpCore(app: FastifyInstance, opts: HttpCoreOptions) {
  app.decorateRequest('locale', 'en');

  // Strict for bodies, coercing for query strings and paths; compiled on first use
  // (infra/schema-compilers.ts).
  app.setValidatorCompiler(lazyValidator);

  // An empty body with Content-Type: application/json is read as "no body": tills
  // and HTTP clients commonly send the header on every POST.
  const defaultJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (typeof body === 'string' && body.trim() === '') return done(null, undefined);
    if (jsonDeeperThan(body as string, MAX_JSON_DEPTH)) {
      return done(new AppError('MALFORMED_JSON', { message: 'error.json_too_deep', params: { limit: MAX_JSON_DEPTH } }), undefined);
    }
    return defaultJson(req, body as string, done);
  });
  // Every other content type is refused with 400 (DESIGN §3), JSON sent as text/plain
  // included — unless the body is empty, which reads as no body whatever the header says
  // (`curl -d ''` sends a form type). Routes that take XML, CSV or multipart register their
  // own parsers in their own scope, which win over this catch-all.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('*', (req, _payload, done) => {
    if (req.headers['content-length'] === '0') return done(null, undefined);
    return done(new AppError('UNSUPPORTED_MEDIA_TYPE'), undefined);
  });

  // The hooks that never wait are written in Fastify's callback style: an `async` hook costs
  // every request a promise and a turn of the microtask queue. (A throw in a callback-style
  // hook reaches the error handler just the same.)
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    req.log.debug({ req }, 'incoming request');
    const routeUrl = req.routeOptions.url;
    if (routeUrl?.startsWith('/:locale/')) {
      const locale = (req.params as { locale?: string }).locale;
      if (!isLocale(locale)) throw new AppError('ROUTE_NOT_FOUND');
      req.locale = locale;
    } else {
      req.locale = localeOfUrl(req.url);
    }
    done();
  });

  // No body (or an empty one) on a route that takes one reads as `{}`, so that the 422 names
  // the missing fields (docs/decisions.md "Empty bodies") instead of "must be an object", and
  // routes whose fields are all optional accept no body at all.
  app.addHook('preValidation', (req, _reply, done) => {
    // (Multipart bodies are read as streams by their routes and are never `req.body`.)
    const type = req.headers['content-type'];
    const jsonOrNone = type === undefined || /^application\/json\b/i.test(type);
    if (req.body === undefined && jsonOrNone && req.routeOptions.schema?.body !== undefined) req.body = {};
    // Text PostgreSQL cannot store (U+0000, unpaired surrogates) is a 422 on its field, for
    // every route, before any module builds a query with it.
    // In a path parameter (`/sms/status/%00`) such text names nothing that can exist: 404.
    if (unstorableTextFields(req.params).length > 0) throw new AppError('RESOURCE_NOT_FOUND', { params: { resource: 'resource.resource' } });
    const fields = [...unstorableTextFields(req.query), ...unstorableTextFields(req.body)];
    if (fields.length > 0) {
      const errors: FieldErrors = {};
      for (const field of fields) errors[field] = [{ key: 'validation.unstorable_text' }];
      throw new AppError(isSmsPath(req.url) ? 'SMS_VALIDATION' : 'VALIDATION', { fields: errors });
    }
    done();
  });

  // The request log: one line when the response has gone. The route pattern, not the path
  // (docs/operations.md "Logs").
  app.addHook('onResponse', (req, reply, done) => {
    req.log.info({ req: requestLogFields(req, reply.statusCode < 400), res: reply, responseTime: reply.elapsedTime }, 'request completed');
    done();
  });

  app.setNotFoundHandler((req, reply) => {
    req.locale = localeOfUrl(req.url);
    return sendError(req, reply, new AppError('ROUTE_NOT_FOUND'));
  });

  app.setErrorHandler((error: FastifyError, req, reply) => {
    if (error instanceof AppError) return sendError(req, reply, error);
    const mapped = mapFrameworkError(error, req, opts.bodyLimit);
    if (mapped) {
      req.log.info({ code: error.code, status: mapped.definition.status }, 'request rejected');
      return sendError(req, reply, mapped);
    }
    if (isDatabaseUnavailable(error)) {
      // A failover or a dropped connection: nothing was wrong with the request, and the
      // client should retry (the pool reconnects on the next checkout).
      // (The error through the `err` serializer: a failed query's message lists its values.)
      req.log.warn({ err: error }, 'database unavailable');
      return reply.code(503).header('retry-after', '1').send(errorBody(req, ERRORS.UNAVAILABLE));
    }
    req.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send(errorBody(req, ERRORS.INTERNAL));
  });
}

export default fp(httpCore, { name: 'http-core', fastify: '5.x' });
