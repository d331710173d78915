// QR login and QR card identification: the till's side (API credentials, /shop/...) and the
// app's side (customer JWT, /app/...), plus send-app-link.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../infra/auth.js';
import type { Idempotency } from '../../infra/idempotency.js';
import { envelopeOf } from '../../shared/envelope.js';
import { AppError, notFound, unwrap } from '../../shared/errors.js';
import { DateTime, Envelope, errorResponses, IdParam, LocaleParam, LocaleParams, Name } from '../../shared/schemas.js';
import { CardInfo } from '../loyalty-cards/loyalty-cards.schemas.js';
import { Customer } from '../customers/customers.schemas.js';
import { SendData } from '../sms/sms.schemas.js';
import type { AppLinkService } from './app-link.service.js';
import type { QrCardService } from './qr-card.service.js';
import type { QrLoginService } from './qr-login.service.js';
import { LoginStatus, PollData } from './qr.schemas.js';

const SessionId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' });
const ScanCode = Type.String({ minLength: 1, maxLength: 512, description: "The QR's scan code (the last segment of its link), or the whole link" });

const Generated = Type.Object({
  session_id: Type.String({ description: 'Keep it secret: it names the realtime channel and polls the session' }),
  qr_code: Type.String({ description: 'PNG data URI to display' }),
  qr_content: Type.String({ description: 'The link inside the QR: {APP_LINK_BASE}/qr-login/{scan code}' }),
  channel: Type.String({ description: 'Public Pusher channel to subscribe to; event status_update' }),
  expires_at: DateTime,
});

const AppSession = Type.Object({
  status: LoginStatus,
  device_name: Type.String(),
  partner: Type.Object({ id: Type.Integer(), name: Type.String() }),
  shop: Type.Union([
    Type.Object({
      id: Type.Integer(),
      name: Type.String(),
      address: Type.Union([Type.String(), Type.Null()]),
      city: Type.Union([Type.String(), Type.Null()]),
    }),
    Type.Null(),
  ]),
  expires_at: DateTime,
});

const CardStatus = Type.Object({
  session_id: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('scanned'), Type.Literal('expired')]),
  expires_at: DateTime,
  card: Type.Union([CardInfo, Type.Null()], { description: 'The shared card once scanned: card, holder, programme rules, expiring points' }),
});

export const qrRoutes: FastifyPluginAsyncTypebox<{
  login: QrLoginService;
  card: QrCardService;
  appLink: AppLinkService;
  idempotency: Idempotency;
}> = async (app, { login, card, appLink, idempotency }) => {
  app.post(
    '/:locale/shop/auth/qr-login/generate',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['shop'],
        summary: 'Create a QR login session',
        description:
          'Show qr_code; subscribe to channel (event status_update) or poll. The session expires after 5 minutes. The QR carries a scan code, never the session id.',
        params: LocaleParams,
        body: Type.Object({ device_name: Name(100), shop_id: Type.Optional(IdParam) }),
        response: { 200: Envelope(Generated), ...errorResponses(400, 401, 404, 422, 429) },
      },
    },
    async (req) => envelopeOf(req, unwrap(await login.generate(principalOf(req, 'api').partnerId, { deviceName: req.body.device_name.trim(), ...(req.body.shop_id !== undefined ? { shopId: req.body.shop_id } : {}) })), 'qr.created'),
  );

  app.post(
    '/:locale/shop/auth/qr-login/poll/:session_id',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['shop'],
        summary: 'Poll a QR login session',
        description:
          'status: pending, scanned (opened in the app), authenticated (with user, and token in the first poll only), rejected or expired. Unknown or another partner\'s session: 404.',
        params: Type.Object({ locale: LocaleParam, session_id: SessionId }),
        response: { 200: Envelope(PollData), ...errorResponses(401, 404, 429) },
      },
    },
    async (req) => {
      const view = await login.poll(principalOf(req, 'api').partnerId, req.params.session_id);
      if (!view) throw notFound('resource.qr_session', 'session_id');
      return envelopeOf(req, view, 'qr.status');
    },
  );

  app.post(
    '/:locale/shop/qr-card/generate',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['shop'],
        summary: 'Create a QR card scan session',
        description: 'The customer scans the QR in the app and shares a card; its data arrives on channel (event status_update) and in the status poll.',
        params: LocaleParams,
        body: Type.Object({ device_name: Type.Optional(Name(100)), shop_id: Type.Optional(IdParam) }),
        response: { 200: Envelope(Generated), ...errorResponses(400, 401, 404, 422, 429) },
      },
    },
    async (req) =>
      envelopeOf(
        req,
        unwrap(
          await card.generate(principalOf(req, 'api').partnerId, {
            ...(req.body.device_name !== undefined ? { deviceName: req.body.device_name.trim() } : {}),
            ...(req.body.shop_id !== undefined ? { shopId: req.body.shop_id } : {}),
          }),
        ),
        'qr.created',
      ),
  );

  app.get(
    '/:locale/shop/qr-card/status/:sessionId',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['shop'],
        summary: 'Poll a QR card scan session',
        params: Type.Object({ locale: LocaleParam, sessionId: SessionId }),
        response: { 200: Envelope(CardStatus), ...errorResponses(401, 404, 429) },
      },
    },
    async (req) => {
      const view = await card.status(principalOf(req, 'api').partnerId, req.params.sessionId);
      if (!view) throw notFound('resource.qr_session', 'sessionId');
      return envelopeOf(req, view, 'qr.status');
    },
  );

  app.post(
    '/:locale/shop/auth/send-app-link',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['shop'],
        summary: 'Send the app download link by SMS',
        description:
          "Sent through the partner's SMS account and charged like any SMS; source defaults to the partner's first approved sender. The text is in the path's language. Honours Idempotency-Key.",
        params: LocaleParams,
        body: Type.Object({
          phone: Type.String({ minLength: 1, maxLength: 32 }),
          source: Type.Optional(Type.String({ minLength: 1, maxLength: 11, pattern: '^[A-Za-z0-9 ]+$', 'x-message': 'sms.invalid_source' })),
        }),
        response: { 200: Envelope(SendData), ...errorResponses(400, 401, 409, 422, 429) },
      },
    },
    async (req, reply) => {
      const { partnerId } = principalOf(req, 'api');
      const body = await idempotency.run(req, reply, `partner:${partnerId}`, async (tx) => {
        const { encoding: _e, transliterated: _t, ...data } = unwrap(await appLink.send(tx, partnerId, req.body, req.locale));
        return { status: 200, body: envelopeOf(req, data, 'qr.app_link_sent') };
      });
      appLink.queuedCommitted();
      return body;
    },
  );

  /**
   * The app's own customer (OTP sign-in). A token from a partner's QR login is scoped to that
   * partner (DESIGN.md §5) and cannot act in the app, e.g. confirm another partner's login.
   */
  const appCustomer = (req: FastifyRequest): number => {
    const p = principalOf(req, 'customer');
    if (p.partnerId !== undefined) throw new AppError('INSUFFICIENT_PERMISSIONS');
    return p.customerId;
  };

  const CodeBody = Type.Object({ code: ScanCode });
  const appRoute = (path: string, summary: string, description: string) => ({
    path,
    options: {
      config: { auth: 'customer' as const },
      schema: { tags: ['app'], summary, description, params: LocaleParams },
    },
  });

  const scan = appRoute('/:locale/app/qr-login/scan', 'Open a QR login in the app', 'Marks the session scanned and shows who is asking (device, partner, shop). Only this customer may then confirm or reject.');
  app.post(
    scan.path,
    { ...scan.options, schema: { ...scan.options.schema, body: CodeBody, response: { 200: Envelope(AppSession), ...errorResponses(400, 401, 403, 404, 409, 422, 429) } } },
    async (req) => envelopeOf(req, unwrap(await login.scan(appCustomer(req), req.body.code)), 'qr.scanned'),
  );

  const confirm = appRoute('/:locale/app/qr-login/confirm', 'Confirm a QR login', 'Signs the customer in at the till: it receives status_update {status: authenticated, user, token}. A second confirm, or one after expiry, is 409 INVALID_STATE.');
  app.post(
    confirm.path,
    {
      ...confirm.options,
      schema: {
        ...confirm.options.schema,
        body: CodeBody,
        response: { 200: Envelope(Type.Object({ status: Type.Literal('authenticated'), user: Customer })), ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (req) => envelopeOf(req, unwrap(await login.confirm(appCustomer(req), req.body.code)), 'qr.confirmed'),
  );

  const reject = appRoute('/:locale/app/qr-login/reject', 'Reject a QR login', 'The till receives status_update {status: rejected}.');
  app.post(
    reject.path,
    {
      ...reject.options,
      schema: {
        ...reject.options.schema,
        body: CodeBody,
        response: { 200: Envelope(Type.Object({ status: Type.Literal('rejected') })), ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (req) => envelopeOf(req, unwrap(await login.reject(appCustomer(req), req.body.code)), 'qr.rejected'),
  );

  const share = appRoute('/:locale/app/qr-card/scan', 'Share a card with a till', "Shares one of the customer's own cards (in the till's partner's programmes) with the QR card session.");
  app.post(
    share.path,
    {
      ...share.options,
      schema: {
        ...share.options.schema,
        body: Type.Object({ code: ScanCode, card_id: IdParam }),
        response: { 200: Envelope(Type.Object({ status: Type.Literal('scanned'), card_id: Type.Integer() })), ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (req) => envelopeOf(req, unwrap(await card.share(appCustomer(req), req.body.code, req.body.card_id)), 'qr.card_shared'),
  );
};
