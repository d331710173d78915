// The HTTP conventions every endpoint shares (DESIGN.md §3): the /{locale}/ prefix,
// request ids, JSON parsing, validation as Shape A, and the error and 404 envelopes.
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, ERRORS, type ErrorDefinition, type FieldErrors, type ErrorName } from '../shared/errors.js';
import { isLocale, t, type Locale, type MessageKey, type MessageParams } from '../shared/i18n.js';
import { unstorableTextFields } from '../shared/validation.js';

declare module 'fastify' {
  interface FastifyRequest {
    locale: Locale;
  }
}

// ajv-formats is published as CommonJS with a default export.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

function makeAjv(coerceTypes: boolean | 'array'): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes,
    useDefaults: true,
    removeAdditional: true,
    strict: false,
    // parentSchema lets a schema carry its own message key (`x-message`).
    verbose: true,
  });
  addFormats(ajv);
  return ajv;
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

export interface HttpCoreOptions {
  bodyLimit: number;
}

async function httpCore(app: FastifyInstance, opts: HttpCoreOptions) {
  app.decorateRequest('locale', 'en');

  // Bodies are validated strictly (a string is not a number); query strings and paths
  // arrive as text and are coerced to the declared types.
  const bodyAjv = makeAjv(false);
  const textAjv = makeAjv('array');
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : textAjv).compile(schema));

  // An empty body with Content-Type: application/json is read as "no body": tills
  // and HTTP clients commonly send the header on every POST.
  const defaultJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (typeof body === 'string' && body.trim() === '') return done(null, undefined);
    return defaultJson(req, body as string, done);
  });

  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
    const routeUrl = req.routeOptions.url;
    if (routeUrl?.startsWith('/:locale/')) {
      const locale = (req.params as { locale?: string }).locale;
      if (!isLocale(locale)) throw new AppError('ROUTE_NOT_FOUND');
      req.locale = locale;
    } else {
      req.locale = localeOfUrl(req.url);
    }
  });

  // No body (or an empty one) on a route that takes one reads as `{}`, so that the 422 names
  // the missing fields (docs/decisions.md "Empty bodies") instead of "must be an object", and
  // routes whose fields are all optional accept no body at all.
  app.addHook('preValidation', async (req) => {
    // (Multipart bodies are read as streams by their routes and are never `req.body`.)
    const type = req.headers['content-type'];
    const jsonOrNone = type === undefined || /^application\/json\b/i.test(type);
    if (req.body === undefined && jsonOrNone && req.routeOptions.schema?.body !== undefined) req.body = {};
    // Text PostgreSQL cannot store (U+0000, unpaired surrogates) is a 422 on its field, for
    // every route, before any module builds a query with it.
    const fields = [...unstorableTextFields(req.query), ...unstorableTextFields(req.body)];
    if (fields.length > 0) {
      const errors: FieldErrors = {};
      for (const field of fields) errors[field] = [{ key: 'validation.unstorable_text' }];
      throw new AppError(isSmsPath(req.url) ? 'SMS_VALIDATION' : 'VALIDATION', { fields: errors });
    }
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
    req.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send(errorBody(req, ERRORS.INTERNAL));
  });
}

export default fp(httpCore, { name: 'http-core', fastify: '5.x' });
