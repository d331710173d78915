// Wallet passes on the HTTP API (DESIGN.md §15): the partner's configuration, a card's or a
// coupon's pass (.pkpass) and Google save link, and Apple's PassKit web service under
// /wallet/v1 (its paths and statuses are Apple's; auth is the pass's own token).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../infra/auth.js';
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

export const walletRoutes: FastifyPluginAsyncTypebox<{ wallet: WalletService }> = async (app, { wallet }) => {
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
        response: { 200: PkpassResponse, 304: { description: 'Not modified', type: 'null' }, ...errorResponses(401) },
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

  app.post(
    '/wallet/v1/log',
    {
      // Devices report problems with passes here; kept short in the log.
      schema: {
        ...webService,
        summary: 'Apple Wallet: messages from devices about passes',
        body: Type.Object({ logs: Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 100 }) }),
        response: { 200: Empty, ...errorResponses(400, 422) },
      },
    },
    async (req, reply) => {
      req.log.info({ wallet_logs: req.body.logs.slice(0, 20) }, 'Apple Wallet device log');
      return bare(reply, 200);
    },
  );
};
