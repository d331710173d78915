// Signatures of the Pusher protocol: channel authorisation (socket_id:channel[:channel_data])
// and the HTTP API's request signature (library_auth_reference/rest-api.md). Every
// comparison is constant-time; a length mismatch is checked without leaking the secret.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export function hmacSha256Hex(secret: string, value: string): string {
  return createHmac('sha256', secret).update(value, 'utf8').digest('hex');
}

export function md5Hex(body: string | Buffer): string {
  return createHash('md5').update(body).digest('hex');
}

/** Constant-time equality of two strings (their lengths are not secret). */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The string a private or presence channel authorisation signs. */
export function channelAuthString(socketId: string, channel: string, channelData?: string): string {
  return channelData === undefined ? `${socketId}:${channel}` : `${socketId}:${channel}:${channelData}`;
}

/** `auth` for pusher:subscribe: "<key>:<hex HMAC-SHA256(secret, socket_id:channel[:channel_data])>". */
export function signChannel(key: string, secret: string, socketId: string, channel: string, channelData?: string): string {
  return `${key}:${hmacSha256Hex(secret, channelAuthString(socketId, channel, channelData))}`;
}

export function verifyChannelAuth(
  app: { key: string; secret: string },
  auth: unknown,
  socketId: string,
  channel: string,
  channelData?: string,
): boolean {
  if (typeof auth !== 'string') return false;
  return safeEqual(auth, signChannel(app.key, app.secret, socketId, channel, channelData));
}

/**
 * The string an HTTP API request signs: METHOD\nPATH\nquery, where the query is every
 * parameter but auth_signature, keys lowercased and sorted, `k=v` joined with `&`, not
 * URL-escaped.
 */
export function apiStringToSign(method: string, path: string, params: Record<string, string>): string {
  const query = Object.entries(params)
    .map(([k, v]) => [k.toLowerCase(), v] as const)
    .filter(([k]) => k !== 'auth_signature')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  return `${method.toUpperCase()}\n${path}\n${query}`;
}

export function signApiRequest(secret: string, method: string, path: string, params: Record<string, string>): string {
  return hmacSha256Hex(secret, apiStringToSign(method, path, params));
}

export type ApiAuthFailure =
  | 'missing_parameters'
  | 'unknown_key'
  | 'bad_version'
  | 'bad_timestamp'
  | 'expired'
  | 'body_md5'
  | 'bad_signature';

export interface ApiRequestToVerify {
  method: string;
  path: string;
  params: Record<string, string>;
  /** The raw body as received ('' when none). */
  body: string;
  /** Unix seconds now. */
  now: number;
}

/** Allowed difference between auth_timestamp and the server's clock (rest-api.md: 600 s). */
export const API_TIMESTAMP_WINDOW_SECONDS = 600;

export function verifyApiRequest(app: { key: string; secret: string }, req: ApiRequestToVerify): ApiAuthFailure | undefined {
  const { auth_key: key, auth_timestamp: ts, auth_version: version, auth_signature: signature } = req.params;
  if (key === undefined || ts === undefined || version === undefined || signature === undefined) return 'missing_parameters';
  if (!safeEqual(key, app.key)) return 'unknown_key';
  if (version !== '1.0') return 'bad_version';
  if (!/^\d{1,12}$/.test(ts)) return 'bad_timestamp';
  if (Math.abs(req.now - Number(ts)) > API_TIMESTAMP_WINDOW_SECONDS) return 'expired';
  if (req.body.length > 0) {
    const md5 = req.params.body_md5;
    if (md5 === undefined || !safeEqual(md5.toLowerCase(), md5Hex(req.body))) return 'body_md5';
  }
  const expected = signApiRequest(app.secret, req.method, req.path, req.params);
  if (!safeEqual(signature.toLowerCase(), expected)) return 'bad_signature';
  return undefined;
}
