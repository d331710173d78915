// Pusher's HTTP events API (library_auth_reference/rest-api.md) on the built-in server, so
// that the official `pusher` server SDKs can publish: POST /apps/{app_id}/events and
// /batch_events. These routes sit outside /{locale}/ and answer as a Pusher server does —
// `{}` on success, `{"error": "...", "code": <status>}` otherwise (soketi's body) — not
// with the Loyalty envelope, because the SDKs are their clients.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { batchToChannelEvents, RealtimeError, toChannelEvents, type BatchEvent, type Realtime } from './realtime.js';
import { MAX_BATCH_EVENTS } from './protocol.js';
import { verifyApiRequest, type ApiAuthFailure } from './signing.js';

/** Ten events of 10 KB each, JSON-escaped, with room to spare; more is 413. */
export const HTTP_API_BODY_LIMIT = 256 * 1024;

const AUTH_MESSAGES: Record<ApiAuthFailure, string> = {
  missing_parameters: 'auth_key, auth_timestamp, auth_version and auth_signature are required',
  unknown_key: 'Unknown auth_key',
  bad_version: 'auth_version must be 1.0',
  bad_timestamp: 'auth_timestamp must be a Unix time in seconds',
  expired: 'Timestamp expired: auth_timestamp must be within 600 seconds of the server time',
  body_md5: 'body_md5 does not match the MD5 of the body',
  bad_signature: 'Invalid signature: expected HMAC SHA256 hex digest of METHOD\\nPATH\\nsorted query',
};

class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface HttpApiOptions {
  realtime: Realtime;
  /** Unix seconds (tests may move the clock). */
  now?: () => number;
}

export async function pusherHttpApi(app: FastifyInstance, opts: HttpApiOptions) {
  const { realtime } = opts;
  const now = opts.now ?? (() => Math.floor(Date.now() / 1000));

  // The signature covers the body's MD5, so the body is kept as received and parsed here.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: HTTP_API_BODY_LIMIT }, (_req, body, done) => done(null, body));

  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (err instanceof ApiError) return reply.code(err.status).send({ error: err.message, code: err.status });
    if (err instanceof RealtimeError) {
      const status = err.reason === 'data_too_large' ? 413 : 400;
      return reply.code(status).send({ error: err.message, code: status });
    }
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return reply.code(413).send({ error: `Request body is larger than ${HTTP_API_BODY_LIMIT} bytes`, code: 413 });
    }
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return reply.code(400).send({ error: 'Malformed request', code: 400 });
    }
    req.log.error({ err }, 'realtime events API failed');
    return reply.code(500).send({ error: 'Internal server error', code: 500 });
  });

  /** The signature check, then the body as JSON. */
  function authenticate(req: FastifyRequest<{ Params: { appId: string } }>): Json {
    const [path, query = ''] = req.raw.url!.split('?', 2) as [string, string?];
    const params: Record<string, string> = {};
    for (const [k, v] of new URLSearchParams(query)) {
      if (k in params) throw new ApiError(400, `Duplicate query parameter ${k}`);
      params[k] = v;
    }
    const body = typeof req.body === 'string' ? req.body : '';
    const failure = verifyApiRequest(realtime.app, { method: req.method, path, params, body, now: now() });
    if (failure) throw new ApiError(401, AUTH_MESSAGES[failure]);
    if (req.params.appId !== realtime.app.id) throw new ApiError(404, 'Unknown app');
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      throw new ApiError(400, 'The body is not valid JSON');
    }
    if (!isObject(parsed)) throw new ApiError(400, 'The body must be a JSON object');
    return parsed;
  }

  const route = { config: { rateLimit: false }, schema: { hide: true } } as const;

  app.post<{ Params: { appId: string } }>('/apps/:appId/events', route, async (req, reply: FastifyReply) => {
    const body = authenticate(req);
    const channels = Array.isArray(body.channels) ? body.channels : typeof body.channel === 'string' ? [body.channel] : undefined;
    if (!channels || !channels.every((c): c is string => typeof c === 'string')) {
      throw new ApiError(400, 'channels (an array of channel names) or channel is required');
    }
    if (typeof body.data !== 'string') throw new ApiError(400, 'data must be a string');
    await realtime.dispatch(toChannelEvents(channels, body.name, body.data, body.socket_id ?? undefined));
    return reply.send({});
  });

  app.post<{ Params: { appId: string } }>('/apps/:appId/batch_events', route, async (req, reply: FastifyReply) => {
    const body = authenticate(req);
    const batch = body.batch;
    if (!Array.isArray(batch) || batch.length === 0) throw new ApiError(400, 'batch (an array of events) is required');
    if (batch.length > MAX_BATCH_EVENTS) throw new ApiError(400, `Batch too large: at most ${MAX_BATCH_EVENTS} events`);
    const events: BatchEvent[] = batch.map((e: unknown, i) => {
      if (!isObject(e) || typeof e.channel !== 'string') throw new ApiError(400, `batch[${i}].channel is required`);
      if (typeof e.data !== 'string') throw new ApiError(400, `batch[${i}].data must be a string`);
      return { channel: e.channel, event: e.name as string, data: e.data, ...(e.socket_id != null ? { socketId: e.socket_id as string } : {}) };
    });
    await realtime.dispatch(batchToChannelEvents(events));
    return reply.send({});
  });
}
