// The Shop routes of realtime (spec "Authentication and realtime (Shop)", DESIGN.md §5, §7):
// where clients connect, and channel authorisation for the partner's private channels. Both
// take API credentials or the partner's own JWT (the console's live import progress, §11).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../../config.js';
import { actingPartnerOf } from '../auth.js';
import { envelopeOf } from '../../shared/envelope.js';
import { AppError } from '../../shared/errors.js';
import { Envelope, errorResponses, LocaleParams } from '../../shared/schemas.js';
import { MAX_CHANNEL_NAME_LENGTH } from './protocol.js';
import type { Realtime } from './realtime.js';

const RealtimeConfigData = Type.Object({
  key: Type.String({ description: 'App key: connect to ws(s)://host:port/app/{key}?protocol=7' }),
  host: Type.String(),
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
  scheme: Type.Union([Type.Literal('http'), Type.Literal('https')], { description: '`https` means TLS (wss://)' }),
});

const TokenBody = Type.Object({
  socket_id: Type.String({ maxLength: 41, pattern: '^\\d+\\.\\d+$', 'x-message': 'validation.socket_id' }),
  channel_name: Type.String({
    minLength: 1,
    maxLength: MAX_CHANNEL_NAME_LENGTH,
    pattern: '^[A-Za-z0-9_\\-=@,.;]+$',
    'x-message': 'validation.channel_name',
  }),
});

const TokenResponse = Type.Object({
  success: Type.Literal(true),
  code: Type.Integer(),
  message: Type.String(),
  data: Type.Object({ auth: Type.String() }),
  auth: Type.String({ description: 'The same value at the top level, where pusher-js reads it' }),
  request_id: Type.String(),
});

/** Where clients connect: overrides, else PUBLIC_BASE_URL, else the address this request reached. */
function connectTarget(config: Config, req: FastifyRequest) {
  const rt = config.realtime;
  if (rt.external) {
    return {
      host: rt.publicHost ?? rt.external.host,
      port: rt.publicPort ?? rt.external.port,
      scheme: rt.publicScheme ?? rt.external.scheme,
    };
  }
  let host: string;
  let scheme: 'http' | 'https';
  let port: number | undefined;
  if (config.publicBaseUrl) {
    const u = new URL(config.publicBaseUrl);
    host = u.hostname.replace(/^\[|\]$/g, '');
    scheme = u.protocol === 'https:' ? 'https' : 'http';
    port = u.port ? Number(u.port) : undefined;
  } else {
    host = req.hostname.replace(/^\[|\]$/g, '');
    scheme = req.protocol === 'https' ? 'https' : 'http';
    port = req.port ?? undefined;
  }
  scheme = rt.publicScheme ?? scheme;
  return {
    host: rt.publicHost ?? host,
    port: rt.publicPort ?? port ?? (scheme === 'https' ? 443 : 80),
    scheme,
  };
}

export const realtimeShopRoutes: FastifyPluginAsyncTypebox<{ realtime: Realtime; config: Config }> = async (app, { realtime, config }) => {
  // pusher-js's built-in authoriser posts socket_id=…&channel_name=… as a form; JSON works too.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    const out: Record<string, string> = {};
    for (const [k, v] of new URLSearchParams(body as string)) if (!(k in out)) out[k] = v;
    done(null, out);
  });

  app.get(
    '/:locale/shop/realtime/config',
    {
      config: { auth: ['api', 'partner'] },
      schema: {
        tags: ['shop'],
        summary: 'Realtime connection details',
        description:
          'Where a Pusher-protocol client (pusher-js) connects: `ws(s)://{host}:{port}/app/{key}`, TLS when `scheme` is `https`. See docs/realtime.md.',
        params: LocaleParams,
        response: { 200: Envelope(RealtimeConfigData), ...errorResponses(401, 429) },
      },
    },
    async (req) => {
      actingPartnerOf(req);
      return envelopeOf(req, { key: realtime.app.key, ...connectTarget(config, req) });
    },
  );

  app.post(
    '/:locale/shop/wsvendor/token',
    {
      config: { auth: ['api', 'partner'] },
      schema: {
        tags: ['shop'],
        summary: 'Authorise a socket on a private partner channel',
        description:
          "Pusher channel authorisation for the caller's own channels: `private-partner.{partner_id}` and names starting " +
          '`private-partner.{partner_id}.`; any other channel is 403 `ACCESS_DENIED`. Accepts JSON or the form body ' +
          "pusher-js's authoriser sends (`socket_id=…&channel_name=…`). `auth` is in `data` and, for pusher-js, at the top level too.",
        params: LocaleParams,
        body: TokenBody,
        response: { 200: TokenResponse, ...errorResponses(400, 401, 403, 422, 429) },
      },
    },
    async (req) => {
      const partnerId = actingPartnerOf(req);
      const channel = req.body.channel_name;
      const own = `private-partner.${partnerId}`;
      if (channel !== own && !channel.startsWith(`${own}.`)) {
        throw new AppError('ACCESS_DENIED', {
          items: [{ field: 'channel_name', code: 'ACCESS_DENIED', key: 'realtime.channel_not_allowed' }],
        });
      }
      const { auth } = realtime.authorizeChannel(req.body.socket_id, channel);
      return { ...envelopeOf(req, { auth }), auth };
    },
  );
};
