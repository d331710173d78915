// Wallet passes on the HTTP API (DESIGN.md §15): the partner's configuration, a card's or a
// coupon's pass (.pkpass) and Google save link, and Apple's PassKit web service under
// /wallet/v1 (its paths and statuses are Apple's; auth is the pass's own token).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../infra/auth.js';
import type { RateLimiter } from '../../infra/rate-limit.js';
import { envelopeOf } from '../../shared/envelope.js';
import { AppError, unwrap } from '../../shared/errors.js';
import { Envelope, errorResponses, LocaleIdParams, LocaleParams } from '../../shared/schemas.js';
import type { CouponScope } from '../coupons/coupons.repository.js';
import type { CardOwner } from '../loyalty-cards/loyalty-cards.repository.js';
import { customerOwner } from '../loyalty-cards/loyalty-cards.service.js';
import { AppleConfigBody, GoogleConfigBody, PkpassResponse, SaveLink, WalletConfigView } from './wallet.schemas.js';
import type { WalletService } from './wallet.service.js';

/** Customer JWT: own cards and coupons (one partner's for a QR-login token); API credentials: the partner's. */
function ownerOf(req: FastifyRequest): CardOwner & CouponScope {
  if (req.principal?.kind === 'customer') return customerOwner(principalOf(req, 'customer'));
  return { partnerId: principalOf(req, 'api').partnerId };
}

function sendPass(reply: FastifyReply, body: Buffer, name: string) {
  reply.header('content-type', 'application/vnd.apple.pkpass');
  reply.header('content-disposition', `attachment; filename="${name}.pkpass"`);
  reply.header('cache-control', 'no-store');
  return reply.send(body);
}

/** Apple's web service answers with a status and no body; a refusal is the usual 401 envelope (devices read only the status). */
function bare(reply: FastifyReply, status: number) {
  if (status === 401) throw new AppError('INVALID_TOKEN');
  return (reply as FastifyReply).code(status).send();
}

const Token = Type.String({ minLength: 1, maxLength: 200 });
const DeviceParams = Type.Object({ deviceLibraryIdentifier: Token, passTypeIdentifier: Token });
const SerialParams = Type.Object({ deviceLibraryIdentifier: Token, passTypeIdentifier: Token, serialNumber: Token });
const PassParams = Type.Object({ passTypeIdentifier: Token, serialNumber: Token });
const Empty = { description: 'No content', type: 'null' } as const;
const ApplePassAuth = Type.Object({ authorization: Type.Optional(Type.String({ description: 'ApplePass {authenticationToken}' })) });
const webService = { tags: ['wallet'], security: [] };

/**
 * Apple Wallet's log endpoint (`POST /wallet/v1/log`) takes no credentials (DESIGN.md §15), so
 * what it takes and writes is bounded: a body of at most 16 KB (more: 400 BODY_TOO_LARGE), at
 * most 50 lines of at most 500 characters (more: 422), 10 requests a minute per client address
 * (more: 429), and at most LOG_LINES_PER_MINUTE lines a minute written per node, whoever sends
 * them (the rest are counted in the next line written). A line is written cut to 200
 * characters with control characters, URL queries, e-mail addresses, tokens and long numbers
 * (card numbers are pass serial numbers) taken out.
 */
export const WALLET_LOG = { bodyBytes: 16 * 1024, lines: 50, lineChars: 500, perAddressPerMinute: 10, loggedLinesPerMinute: 100, loggedLineChars: 200 } as const;

/** A device's log line as it may be written. */
export function redactDeviceLog(line: string): string {
  return (
    line
      // eslint-disable-next-line no-control-regex -- control characters are what is taken out
      .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
      .replace(/ApplePass\s+\S+/gi, 'ApplePass [redacted]')
      .replace(/(https?:\/\/[^\s?#]*)[?#]\S*/gi, '$1?[redacted]')
      .replace(/[^\s@]+@[^\s@]+/g, '[email]')
      .replace(/[A-Za-z0-9+/=_-]{16,}/g, (m) => (/^[A-Za-z.-]+$/.test(m) ? m : '[redacted]'))
      .replace(/\d{6,}/g, '[number]')
      .slice(0, WALLET_LOG.loggedLineChars)
  );
}

export const walletRoutes: FastifyPluginAsyncTypebox<{ wallet: WalletService; rateLimiter: RateLimiter; rateLimitDisabled: boolean }> = async (
  app,
  { wallet, rateLimiter, rateLimitDisabled },
) => {
  app.get(
    '/:locale/partners/wallet',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'What Apple Wallet and Google Wallet configuration the partner has (never a private key)',
        params: LocaleParams,
        response: { 200: Envelope(WalletConfigView), ...errorResponses(401, 403, 429) },
      },
    },
    async (req) => envelopeOf(req, await wallet.configView(principalOf(req, 'partner').partnerId)),
  );

  app.put(
    '/:locale/partners/wallet/apple',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Set the Apple Wallet configuration (Pass Type ID certificate and key, WWDR certificate)',
        description:
          'The key is checked against the certificate and stored encrypted with LOYALTY_SECRETS_KEY; the passphrase is used once. 409 INVALID_STATE {reason: "secrets_key_missing"} when the server has no secrets key (PostgreSQL without LOYALTY_SECRETS_KEY).',
        params: LocaleParams,
        body: AppleConfigBody,
        response: { 200: Envelope(WalletConfigView), ...errorResponses(400, 401, 403, 409, 422, 429) },
      },
    },
    async (req) => envelopeOf(req, unwrap(await wallet.saveApple(principalOf(req, 'partner').partnerId, req.body)), 'wallet.apple_saved'),
  );

  app.put(
    '/:locale/partners/wallet/google',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Set the Google Wallet configuration (issuer id and service-account key file)',
        params: LocaleParams,
        body: GoogleConfigBody,
        response: { 200: Envelope(WalletConfigView), ...errorResponses(400, 401, 403, 409, 422, 429) },
      },
    },
    async (req) => envelopeOf(req, unwrap(await wallet.saveGoogle(principalOf(req, 'partner').partnerId, req.body)), 'wallet.google_saved'),
  );

  const shopSchema = (summary: string, ok: object) => ({
    tags: ['shop'],
    summary,
    description:
      'Customer JWT: own only; API credentials: the partner\'s. Another\'s is 404. 409 INVALID_STATE {reason: "wallet_not_configured"} when the partner has not configured that wallet.',
    params: LocaleIdParams,
    response: { 200: ok, ...errorResponses(401, 403, 404, 409, 422, 429) },
  });

  app.get(
    '/:locale/shop/loyalty-cards/:id/wallet/apple',
    { config: { auth: ['customer', 'api'] }, schema: { ...shopSchema('The card as an Apple Wallet pass', PkpassResponse), produces: ['application/vnd.apple.pkpass'] } },
    async (req, reply) => sendPass(reply, unwrap(await wallet.cardApplePass(ownerOf(req), req.params.id, req.params.locale)), 'card'),
  );

  app.get(
    '/:locale/shop/loyalty-cards/:id/wallet/google',
    { config: { auth: ['customer', 'api'] }, schema: shopSchema('A link that saves the card to Google Wallet', Envelope(SaveLink)) },
    async (req) => envelopeOf(req, unwrap(await wallet.cardGoogleLink(ownerOf(req), req.params.id, req.params.locale))),
  );

  app.get(
    '/:locale/shop/coupons/:id/wallet/apple',
    { config: { auth: ['customer', 'api'] }, schema: { ...shopSchema('The coupon as an Apple Wallet pass', PkpassResponse), produces: ['application/vnd.apple.pkpass'] } },
    async (req, reply) => sendPass(reply, unwrap(await wallet.couponApplePass(ownerOf(req), req.params.id, req.params.locale)), 'coupon'),
  );

  app.get(
    '/:locale/shop/coupons/:id/wallet/google',
    { config: { auth: ['customer', 'api'] }, schema: shopSchema('A link that saves the coupon to Google Wallet', Envelope(SaveLink)) },
    async (req) => envelopeOf(req, unwrap(await wallet.couponGoogleLink(ownerOf(req), req.params.id, req.params.locale))),
  );

  // ---- Apple's PassKit web service (webServiceURL = {PUBLIC_BASE_URL}/wallet) ----

  app.post(
    '/wallet/v1/devices/:deviceLibraryIdentifier/registrations/:passTypeIdentifier/:serialNumber',
    {
      schema: {
        ...webService,
        summary: 'Apple Wallet: register a device for a pass\'s updates',
        params: SerialParams,
        headers: ApplePassAuth,
        body: Type.Object({ pushToken: Type.String({ minLength: 1, maxLength: 200 }) }),
        response: { 200: Empty, 201: Empty, ...errorResponses(400, 401) },
      },
    },
    async (req, reply) => {
      const p = req.params;
      const result = await wallet.register(p.deviceLibraryIdentifier, p.passTypeIdentifier, p.serialNumber, req.headers.authorization, req.body.pushToken);
      return bare(reply, result === 'created' ? 201 : result === 'updated' ? 200 : 401);
    },
  );

  app.delete(
    '/wallet/v1/devices/:deviceLibraryIdentifier/registrations/:passTypeIdentifier/:serialNumber',
    {
      schema: {
        ...webService,
        summary: 'Apple Wallet: unregister a device from a pass',
        params: SerialParams,
        headers: ApplePassAuth,
        response: { 200: Empty, ...errorResponses(401) },
      },
    },
    async (req, reply) => {
      const p = req.params;
      const done = await wallet.unregister(p.deviceLibraryIdentifier, p.passTypeIdentifier, p.serialNumber, req.headers.authorization);
      return bare(reply, done ? 200 : 401);
    },
  );

  app.get(
    '/wallet/v1/devices/:deviceLibraryIdentifier/registrations/:passTypeIdentifier',
    {
      schema: {
        ...webService,
        summary: "Apple Wallet: the device's passes changed since a tag",
        params: DeviceParams,
        querystring: Type.Object({ passesUpdatedSince: Type.Optional(Type.String({ maxLength: 40 })) }),
        response: {
          200: Type.Object({ serialNumbers: Type.Array(Type.String()), lastUpdated: Type.String({ description: 'The tag for the next call' }) }),
          204: Empty,
          ...errorResponses(400),
        },
      },
    },
    async (req, reply) => {
      const changed = await wallet.updatedSerials(req.params.deviceLibraryIdentifier, req.params.passTypeIdentifier, req.query.passesUpdatedSince);
      if (!changed) return bare(reply, 204);
      return changed;
    },
  );

  app.get(
    '/wallet/v1/passes/:passTypeIdentifier/:serialNumber',
    {
      schema: {
        ...webService,
        summary: 'Apple Wallet: the latest version of a pass',
        params: PassParams,
        headers: Type.Object({ ...ApplePassAuth.properties, 'if-modified-since': Type.Optional(Type.String()) }),
        produces: ['application/vnd.apple.pkpass'],
        response: { 200: PkpassResponse, 304: { description: 'Not modified', type: 'null' }, ...errorResponses(401, 429) },
      },
    },
    async (req, reply) => {
      const p = req.params;
      const result = await wallet.latestPass(p.passTypeIdentifier, p.serialNumber, req.headers.authorization, req.headers['if-modified-since']);
      if (result.status === 401) return bare(reply, 401);
      reply.header('last-modified', result.lastModified);
      if (result.status === 304) return bare(reply, 304);
      return sendPass(reply, result.body, 'pass');
    },
  );

  // What this node wrote of devices' logs in the current minute, and what it left out.
  let logWindow = { startedAt: 0, written: 0, dropped: 0 };
  app.post(
    '/wallet/v1/log',
    {
      bodyLimit: WALLET_LOG.bodyBytes,
      // Counted before the body is read: refused bodies count too.
      onRequest: async (req) => {
        if (rateLimitDisabled) return;
        const d = await rateLimiter.consume('wallet_log', req.ip, { perMinute: WALLET_LOG.perAddressPerMinute, perHour: 0 });
        if (!d.allowed) {
          throw new AppError('RATE_LIMIT_EXCEEDED', { params: { seconds: d.retryAfterSeconds }, headers: { 'retry-after': String(d.retryAfterSeconds) } });
        }
      },
      schema: {
        ...webService,
        summary: 'Apple Wallet: messages from devices about passes',
        description: `No credentials: at most ${WALLET_LOG.bodyBytes / 1024} KB, ${WALLET_LOG.lines} lines of ${WALLET_LOG.lineChars} characters, ${WALLET_LOG.perAddressPerMinute} requests a minute per address. Lines are logged shortened, without tokens, numbers or addresses.`,
        body: Type.Object({ logs: Type.Array(Type.String({ maxLength: WALLET_LOG.lineChars }), { maxItems: WALLET_LOG.lines }) }),
        response: { 200: Empty, ...errorResponses(400, 422, 429) },
      },
    },
    async (req, reply) => {
      const now = Date.now();
      if (now - logWindow.startedAt >= 60_000) logWindow = { startedAt: now, written: 0, dropped: logWindow.dropped };
      const room = Math.max(0, WALLET_LOG.loggedLinesPerMinute - logWindow.written);
      const lines = req.body.logs.slice(0, room).map(redactDeviceLog);
      const left = req.body.logs.length - lines.length;
      if (lines.length > 0) {
        logWindow.written += lines.length;
        req.log.info({ wallet_logs: lines, ...(logWindow.dropped > 0 ? { wallet_logs_dropped_before: logWindow.dropped } : {}) }, 'Apple Wallet device log');
        logWindow.dropped = 0;
      }
      logWindow.dropped += left;
      return bare(reply, 200);
    },
  );
};
