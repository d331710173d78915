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

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** `POST /{locale}/shop/validate-credentials` → `postShopValidateCredentials`; `{id}` → `ById`. */
function operationIdOf(method: string, url: string): string {
  const words = url
    .split('/')
    .filter((seg) => seg !== '' && seg !== '{locale}')
    .flatMap((seg) => {
      const param = /^\{(\w+)\}$/.exec(seg);
      return param ? ['by', ...param[1]!.split('_')] : seg.split(/[^A-Za-z0-9]+/);
    })
    .filter((w) => w !== '');
  return [method.toLowerCase(), ...words.map((w) => w[0]!.toUpperCase() + w.slice(1))].join('');
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * TypeBox writes a union of literals as `anyOf: [{const: a}, {const: b}]`; integrators'
 * code generators read `enum: [a, b]` far better. Same values, same validation.
 */
function simplifyLiteralUnions(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(simplifyLiteralUnions);
  if (!isObject(node)) return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) out[k] = simplifyLiteralUnions(v);
  const branches = out.anyOf;
  if (Array.isArray(branches) && branches.length > 1) {
    const literal = (b: unknown) => {
      if (!isObject(b)) return undefined;
      const keys = Object.keys(b).filter((k) => k !== 'type');
      if (keys.length !== 1) return undefined;
      if (keys[0] === 'const') return [b.const];
      if (keys[0] === 'enum' && Array.isArray(b.enum)) return b.enum as unknown[];
      return undefined;
    };
    const values = branches.map(literal);
    const types = new Set(branches.map((b) => (isObject(b) ? b.type : undefined)));
    const [type] = types;
    if (values.every((v) => v !== undefined) && types.size === 1 && typeof type === 'string') {
      delete out.anyOf;
      out.type = type;
      out.enum = values.flat();
    }
  }
  return out;
}

/**
 * @fastify/swagger always writes `requestBody.required: true`; a body schema carrying
 * `x-optional-body: true` (a POST that may be sent without a body) says otherwise.
 */
function markOptionalBody(op: Json): void {
  const body = op.requestBody;
  if (!isObject(body) || !isObject(body.content)) return;
  const schemas = Object.values(body.content).map((c) => (isObject(c) ? c.schema : undefined));
  if (schemas.length > 0 && schemas.every((s) => isObject(s) && s['x-optional-body'] === true)) body.required = false;
}

/** Final touches on the generated document: operation ids and simpler enums. */
function finishDocument(doc: Json): Json {
  const finished = simplifyLiteralUnions(doc) as Json;
  const paths = isObject(finished.paths) ? finished.paths : {};
  for (const [url, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (isObject(op) && op.operationId === undefined) op.operationId = operationIdOf(method, url);
      if (isObject(op)) markOptionalBody(op);
    }
  }
  return finished;
}

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
        { name: 'app', description: 'Mobile-app sign-in (no credentials; gives a customer JWT)' },
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
    transformObject: (doc) => finishDocument(('openapiObject' in doc ? doc.openapiObject : doc.swaggerObject) as Json) as never,
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } });
  app.get(
    '/openapi.json',
    { config: { rateLimit: false }, schema: { hide: true } },
    async () => app.swagger(),
  );
}

export default fp(openapiPlugin, { name: 'openapi', dependencies: ['http-core'], fastify: '5.x' });
