// OpenAPI 3.1 generated from the route schemas, served at /openapi.json, with interactive
// docs at /docs. Security requirements are derived from each route's `config.auth`.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ErrorEnvelope } from '../shared/schemas.js';
import type { AuthKind } from './auth.js';

const DESCRIPTION = `Loyalty programmes for shops, e-shops and point-of-sale systems.

Every path starts with a locale segment, \`lt\` or \`en\`; messages come back in that language.
Responses use the envelope \`{success, code, message, data, request_id}\`; errors carry
\`errors\` as Shape A (field → messages, HTTP 422) or Shape B (list of \`{field, message, code, meta}\`).
Authentication: \`X-API-Key\` + \`X-API-Secret\` for server-to-server calls, or a bearer JWT
(customer, partner or admin) — see each operation's security.`;

function securityFor(auth: AuthKind | readonly AuthKind[] | undefined) {
  if (auth === undefined) return undefined;
  const kinds = typeof auth === 'string' ? [auth] : auth;
  return kinds.map((k) => (k === 'api' ? { apiKey: [], apiSecret: [] } : { [`${k}Jwt`]: [] }));
}

async function openapiPlugin(app: FastifyInstance, opts: { version: string }) {
  app.addSchema(ErrorEnvelope);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Loyalty API', version: opts.version, description: DESCRIPTION, license: { name: 'MIT', identifier: 'MIT' } },
      servers: [{ url: '/', description: 'This server' }],
      tags: [
        { name: 'shop', description: 'Shop interface (API credentials)' },
        { name: 'partners', description: 'Partner self-service (partner JWT)' },
        { name: 'admin', description: 'Platform administration (admin JWT)' },
        { name: 'operations', description: 'Probes, metrics and documentation' },
      ],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'Partner API key' },
          apiSecret: { type: 'apiKey', in: 'header', name: 'X-API-Secret', description: 'Secret of the API key' },
          partnerJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'From POST /{locale}/partners/auth/login' },
          adminJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'From POST /{locale}/admin/auth/login' },
          customerJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Customer token (QR login or app OTP)' },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transform: ({ schema, url, route }) => {
      const security = securityFor(route.config?.auth as AuthKind | AuthKind[] | undefined);
      const out = { ...(schema ?? {}) } as Record<string, unknown>;
      if (security) out.security = security;
      else if (!out.security) out.security = [];
      return { schema: out as never, url };
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } });
  app.get(
    '/openapi.json',
    { config: { rateLimit: false }, schema: { hide: true } },
    async () => app.swagger(),
  );
}

export default fp(openapiPlugin, { name: 'openapi', dependencies: ['http-core'], fastify: '5.x' });
