// The signature of DESIGN.md §4: X-Loyalty-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + body)>.
// The HMAC key is the secret string itself (DESIGN.md §7).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

/** A new webhook secret: `whsec_` + 32 random bytes, base64url. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url');
}

export function signatureOf(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');
}

/** The X-Loyalty-Signature header value for `body` signed at `timestamp` (unix seconds). */
export function signatureHeader(secret: string, body: string, timestamp: number = Math.floor(Date.now() / 1000)): string {
  return `t=${timestamp},v1=${signatureOf(secret, timestamp, body)}`;
}

/**
 * What a receiver does: parse the header, recompute the HMAC over the raw body, compare in
 * constant time and refuse a timestamp further than `toleranceSeconds` from now (replays).
 */
export function verifySignature(
  secret: string,
  body: string,
  header: string | undefined,
  opts: { toleranceSeconds?: number; now?: number } = {},
): boolean {
  if (!header) return false;
  const parts = new Map<string, string[]>();
  for (const item of header.split(',')) {
    const i = item.indexOf('=');
    if (i <= 0) return false;
    const key = item.slice(0, i).trim();
    parts.set(key, [...(parts.get(key) ?? []), item.slice(i + 1).trim()]);
  }
  const t = parts.get('t');
  if (!t || t.length !== 1 || !/^\d{1,12}$/.test(t[0]!)) return false;
  const timestamp = Number(t[0]);
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (opts.toleranceSeconds ?? 300)) return false;
  const expected = Buffer.from(signatureOf(secret, timestamp, body), 'hex');
  return (parts.get('v1') ?? []).some((v) => {
    if (!/^[0-9a-f]{64}$/.test(v)) return false;
    return timingSafeEqual(Buffer.from(v, 'hex'), expected);
  });
}
