// One closed catalogue of error codes: HTTP status, application code and message key.
// Services return expected failures as values (`Result`); only the HTTP edge turns them
// into responses, by throwing AppError into the error handler (src/infra/http-core.ts).
import type { MessageKey, MessageParams } from './i18n.js';

export interface ErrorDefinition {
  status: number;
  /** Application code as the spec shows it: a number or a string code. */
  code: number | string;
  message: MessageKey;
  /** Business errors carry Shape B `errors: [{field, message, code, meta}]`. */
  shapeB?: boolean;
}

export const ERRORS = {
  // 400
  MALFORMED_JSON: { status: 400, code: 400, message: 'error.malformed_json' },
  BODY_TOO_LARGE: { status: 400, code: 400, message: 'error.body_too_large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 400, code: 400, message: 'error.unsupported_media_type' },
  BAD_REQUEST: { status: 400, code: 400, message: 'error.bad_request' },
  REQUEST_TIMEOUT: { status: 408, code: 408, message: 'error.request_timeout' },
  HEADERS_TOO_LARGE: { status: 431, code: 431, message: 'error.headers_too_large' },
  // 413: an uploaded feed over XML_IMPORT_MAX_BYTES (DESIGN.md §9), recorded as a failed import
  PAYLOAD_TOO_LARGE: { status: 413, code: 413, message: 'error.body_too_large' },
  // 401
  API_CREDENTIALS_INVALID: { status: 401, code: 1001, message: 'error.api_credentials_invalid' },
  API_CREDENTIALS_MISSING: { status: 401, code: 1004, message: 'error.api_credentials_missing' },
  MISSING_AUTHENTICATION: { status: 401, code: 'MISSING_AUTHENTICATION', message: 'error.token_missing' },
  INVALID_TOKEN_FORMAT: { status: 401, code: 'INVALID_TOKEN_FORMAT', message: 'error.token_malformed' },
  EXPIRED_TOKEN: { status: 401, code: 'EXPIRED_TOKEN', message: 'error.token_expired' },
  INVALID_TOKEN: { status: 401, code: 'INVALID_CREDENTIALS', message: 'error.token_invalid' },
  INVALID_CREDENTIALS: { status: 401, code: 'INVALID_CREDENTIALS', message: 'error.login_failed' },
  // 403
  INSUFFICIENT_PERMISSIONS: {
    status: 403,
    code: 'INSUFFICIENT_PERMISSIONS',
    message: 'error.insufficient_permissions',
  },
  ACCESS_DENIED: { status: 403, code: 'ACCESS_DENIED', message: 'error.access_denied', shapeB: true },
  STORE_ACCESS_DENIED: { status: 403, code: 'STORE_ACCESS_DENIED', message: 'error.access_denied', shapeB: true },
  // 404
  ROUTE_NOT_FOUND: { status: 404, code: 404, message: 'error.route_not_found' },
  RESOURCE_NOT_FOUND: {
    status: 404,
    code: 'RESOURCE_NOT_FOUND',
    message: 'error.resource_not_found',
    shapeB: true,
  },
  // 409
  DUPLICATE_VALUE: { status: 409, code: 'DUPLICATE_VALUE', message: 'error.duplicate_value', shapeB: true },
  INVALID_STATE: { status: 409, code: 'INVALID_STATE', message: 'error.invalid_state', shapeB: true },
  COMMISSION_LOCKED: { status: 409, code: 'COMMISSION_LOCKED', message: 'error.commission_locked', shapeB: true },
  CONCURRENT_LIMIT_EXCEEDED: {
    status: 409,
    code: 'CONCURRENT_LIMIT_EXCEEDED',
    message: 'error.idempotency_in_progress',
    shapeB: true,
  },
  // 422
  VALIDATION: { status: 422, code: 422, message: 'error.validation' },
  SMS_VALIDATION: { status: 422, code: 'VALIDATION_ERROR', message: 'error.validation' },
  INVALID_VALUE: { status: 422, code: 'INVALID_VALUE', message: 'error.validation', shapeB: true },
  INSUFFICIENT_BALANCE: {
    status: 422,
    code: 'INSUFFICIENT_BALANCE',
    message: 'error.insufficient_balance',
    shapeB: true,
  },
  EXPIRED_OFFER: { status: 422, code: 'EXPIRED_OFFER', message: 'error.expired_offer', shapeB: true },
  OUT_OF_RANGE: { status: 422, code: 'OUT_OF_RANGE', message: 'error.out_of_range', shapeB: true },
  QUOTA_EXCEEDED: { status: 422, code: 'QUOTA_EXCEEDED', message: 'error.quota_exceeded', shapeB: true },
  SENDER_NOT_APPROVED: { status: 422, code: 2001, message: 'error.sender_not_approved' },
  // 429
  RATE_LIMIT_EXCEEDED: { status: 429, code: 1003, message: 'error.rate_limited' },
  DAILY_QUOTA_EXCEEDED: { status: 429, code: 'DAILY_QUOTA_EXCEEDED', message: 'error.daily_quota_exceeded', shapeB: true },
  // 5xx
  INTERNAL: { status: 500, code: 500, message: 'error.internal' },
  UNAVAILABLE: { status: 503, code: 503, message: 'error.unavailable' },
} as const satisfies Record<string, ErrorDefinition>;

export type ErrorName = keyof typeof ERRORS;

/** Shape A: field (dotted path) → messages. */
export type FieldErrors = Record<string, Array<{ key: MessageKey; params?: MessageParams }>>;

/** Shape B item before localisation. */
export interface ShapeBItem {
  field: string;
  code: string;
  key: MessageKey;
  params?: MessageParams;
  meta?: Record<string, unknown>;
}

export interface AppErrorOptions {
  params?: MessageParams;
  /** Shape A details (validation). */
  fields?: FieldErrors;
  /** Shape B details (business rules). */
  items?: ShapeBItem[];
  /** Overrides the catalogue message key. */
  message?: MessageKey;
  headers?: Record<string, string>;
}

export class AppError extends Error {
  readonly definition: ErrorDefinition;
  constructor(
    readonly errorName: ErrorName,
    readonly options: AppErrorOptions = {},
  ) {
    super(errorName);
    this.name = 'AppError';
    this.definition = ERRORS[errorName];
  }
}

/** An expected domain failure, returned as a value by services. */
export interface DomainError {
  error: ErrorName;
  options?: AppErrorOptions;
}

export type Result<T> = { ok: true; value: T } | { ok: false; failure: DomainError };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const fail = <T = never>(error: ErrorName, options?: AppErrorOptions): Result<T> => ({
  ok: false,
  failure: { error, options },
});

/** The HTTP edge: turn a failed Result into the error response. */
export function unwrap<T>(result: Result<T>): T {
  if (result.ok) return result.value;
  throw new AppError(result.failure.error, result.failure.options);
}

export function notFound(resource: MessageKey, field = 'id'): AppError {
  return new AppError('RESOURCE_NOT_FOUND', {
    params: { resource },
    items: [{ field, code: 'RESOURCE_NOT_FOUND', key: 'error.resource_not_found', params: { resource } }],
  });
}

/** The same 404 as a failed Result, for services. */
export function missing(resource: MessageKey, field = 'id'): Result<never> {
  return fail('RESOURCE_NOT_FOUND', notFound(resource, field).options);
}

export function fieldError(field: string, key: MessageKey, params?: MessageParams): AppError {
  return new AppError('VALIDATION', { fields: { [field]: [{ key, params }] } });
}

/** A Shape B business failure on one field, as services return it. */
export function failOn(error: ErrorName, field: string, key: MessageKey, opts: { params?: MessageParams; meta?: Record<string, unknown> } = {}): Result<never> {
  return fail<never>(error, {
    message: key,
    ...(opts.params ? { params: opts.params } : {}),
    items: [{ field, code: String(ERRORS[error].code), key, ...(opts.params ? { params: opts.params } : {}), ...(opts.meta ? { meta: opts.meta } : {}) }],
  });
}
