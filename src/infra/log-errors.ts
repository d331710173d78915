// How an error appears in a log line (pino's `err` serializer, for every logger of the
// process): what it is and where it was thrown, never the values it carried. pino's own
// serializer copies every property of an error, and the errors that reach the logs carry
// values: a failed query holds its parameters (phone numbers, scan-code digests, message
// texts) in `params` and repeats them in its message and stack; a PostgreSQL error names the
// offending value in `detail` and, for a data exception, in its message; Fastify's "reply
// already sent" names the raw URL, which may hold a QR session id or a phone number.
//
// So the fields are an allow-list, as for the request line (docs/operations.md "Logs"):
// type, message, code, the constraint/table/column a database error names, the stack frames,
// and the cause, serialised the same way. Only errors pay for this; plain objects pass as they
// are (callers that log `{ err: { message } }` chose those fields themselves).

const MAX_CAUSE_DEPTH = 3;

/** Fastify errors whose message holds the request's path. */
const PATH_IN_MESSAGE = new Set(['FST_ERR_REP_ALREADY_SENT', 'FST_ERR_BAD_URL', 'FST_ERR_MAX_PARAM_LENGTH', 'FST_ERR_NOT_FOUND']);

export type LoggedError = {
  type: string;
  message: string;
  stack: string;
  code?: string | number;
  statusCode?: number;
  constraint?: string;
  table?: string;
  column?: string;
  cause?: LoggedError | unknown;
};

interface ErrorProps {
  code?: unknown;
  statusCode?: unknown;
  severity?: unknown;
  constraint?: unknown;
  table?: unknown;
  column?: unknown;
  query?: unknown;
  params?: unknown;
  cause?: unknown;
}

/** A PostgreSQL error (node-postgres or PGlite): a SQLSTATE code and a severity. */
function isDatabaseError(e: ErrorProps): boolean {
  return typeof e.code === 'string' && e.code.length === 5 && typeof e.severity === 'string';
}

/** drizzle's DrizzleQueryError: `Failed query: <sql>\nparams: <values>`, with `query` and `params`. */
function isFailedQuery(e: ErrorProps): e is ErrorProps & { query: string } {
  return typeof e.query === 'string' && Array.isArray(e.params);
}

function safeMessage(err: Error, e: ErrorProps): string {
  // `invalid input syntax for type integer: "…"`, `value "…" is out of range`: quoted parts
  // are values or names; the names that matter are logged as their own fields. (PGlite's
  // errors also carry the query and its values, like drizzle's below.)
  if (isDatabaseError(e)) return err.message.replace(/"[^"]*"/g, '"…"');
  // The statement's text has placeholders ($1, …); its values stay out.
  if (isFailedQuery(e)) return `Failed query: ${e.query}`;
  if (typeof e.code === 'string' && PATH_IN_MESSAGE.has(e.code)) return e.code;
  return err.message;
}

/** The stack's frames under a first line of our own: V8 starts the stack with the raw message. */
function safeStack(type: string, message: string, stack: string | undefined): string {
  const frames = (stack ?? '').split('\n').filter((line) => line.startsWith('    at '));
  return [`${type}: ${message}`, ...frames].join('\n');
}

function serialize(err: unknown, depth: number): unknown {
  if (!(err instanceof Error)) {
    // A non-error cause (a string, a value) may be anything: its type only.
    return depth === 0 ? err : { type: typeof err };
  }
  const e = err as Error & ErrorProps;
  // (PGlite's bundle minifies its error class's name.)
  const type = isDatabaseError(e) ? 'DatabaseError' : e.constructor?.name || e.name || 'Error';
  const message = safeMessage(err, e);
  const out: LoggedError = { type, message, stack: safeStack(type, message, err.stack) };
  if (typeof e.code === 'string' || typeof e.code === 'number') out.code = e.code;
  if (typeof e.statusCode === 'number') out.statusCode = e.statusCode;
  if (typeof e.constraint === 'string') out.constraint = e.constraint;
  if (typeof e.table === 'string') out.table = e.table;
  if (typeof e.column === 'string') out.column = e.column;
  if (e.cause !== undefined && depth < MAX_CAUSE_DEPTH) out.cause = serialize(e.cause, depth + 1);
  return out;
}

/**
 * pino's `err` serializer: an error's kind, place and cause, never the values it carried.
 * (pino hands over whatever a line has under `err`; anything but an error is returned as is.)
 */
export function errorLogSerializer(err: Error): LoggedError {
  return serialize(err, 0) as LoggedError;
}
