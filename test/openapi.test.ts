// The OpenAPI 3.1 document at /openapi.json: it covers every route, states each
// operation's security, and passes the Redocly linter without errors.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { compilePending } from '../src/infra/schema-compilers.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { request } from './helpers/http.js';

type Operation = {
  operationId?: string;
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ in: string; name: string; required?: boolean; schema: Record<string, unknown> }>;
  responses: Record<string, unknown>;
};
type Doc = { openapi: string; paths: Record<string, Record<string, Operation>> };

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** Every route of this issue, with the credentials each operation must declare. */
const EXPECTED: Array<[method: string, path: string, security: string]> = [
  ['post', '/{locale}/shop/validate-credentials', 'api'],
  ['get', '/{locale}/shop/health', 'api'],
  ['get', '/{locale}/shop/system/health', 'api'],
  ['get', '/{locale}/shop/shops', 'api'],
  ['post', '/{locale}/partners/auth/login', 'none'],
  ['get', '/{locale}/partners/auth/me', 'partner'],
  ['post', '/{locale}/partners/auth/logout', 'partner'],
  ['post', '/{locale}/partners/auth/password', 'partner'],
  ['post', '/{locale}/partners/api-keys', 'partner'],
  ['get', '/{locale}/partners/api-keys', 'partner'],
  ['delete', '/{locale}/partners/api-keys/{id}', 'partner'],
  ['post', '/{locale}/partners/shops', 'partner'],
  ['get', '/{locale}/partners/shops', 'partner'],
  ['get', '/{locale}/partners/shops/{id}', 'partner'],
  ['put', '/{locale}/partners/shops/{id}', 'partner'],
  ['delete', '/{locale}/partners/shops/{id}', 'partner'],
  ['post', '/{locale}/partners/cards', 'partner'],
  ['get', '/{locale}/partners/cards', 'partner'],
  ['get', '/{locale}/partners/cards/{id}', 'partner'],
  ['put', '/{locale}/partners/cards/{id}', 'partner'],
  ['delete', '/{locale}/partners/cards/{id}', 'partner'],
  ['post', '/{locale}/partners/games', 'partner'],
  ['get', '/{locale}/partners/games', 'partner'],
  ['get', '/{locale}/partners/games/{id}', 'partner'],
  ['put', '/{locale}/partners/games/{id}', 'partner'],
  ['post', '/{locale}/admin/auth/login', 'none'],
  ['post', '/{locale}/admin/auth/logout', 'admin'],
  ['post', '/{locale}/admin/auth/password', 'admin'],
  ['put', '/{locale}/admin/partners/{id}/password', 'admin'],
  ['post', '/{locale}/admin/partners', 'admin'],
  ['get', '/{locale}/admin/partners', 'admin'],
  ['get', '/{locale}/admin/partners/{id}', 'admin'],
  ['get', '/{locale}/shop/realtime/config', 'api|partner'],
  ['post', '/{locale}/shop/wsvendor/token', 'api|partner'],
  ['get', '/{locale}/admin/partners/stats', 'admin'],
  ['get', '/{locale}/admin/partners/{id}/commission/rates', 'admin'],
  ['put', '/{locale}/admin/partners/{id}/commission/rates', 'admin'],
  ['post', '/{locale}/admin/partners/{id}/commission/lock', 'admin'],
  ['post', '/{locale}/admin/partners/{id}/commission/unlock', 'admin'],
  ['get', '/{locale}/admin/partners/{id}/commission/lock-status', 'admin'],
  ['post', '/{locale}/admin/partners/{id}/commission/force-sync', 'admin'],
  ['get', '/{locale}/admin/partners/{id}/commission', 'admin'],
  ['get', '/{locale}/admin/partners/{id}/commission/periods', 'admin'],
  ['get', '/{locale}/admin/partners/{id}/messages', 'admin'],
  ['post', '/{locale}/admin/partners/{id}/messages', 'admin'],
  ['get', '/{locale}/admin/partners/{id}/messages/{messageId}/attachment/{attachmentId}', 'admin'],
  ['post', '/{locale}/admin/partners/{id}/send-email', 'admin'],
  ['get', '/{locale}/admin/partners/{id}/emails', 'admin'],
  ['get', '/{locale}/partners/messages', 'partner'],
  ['post', '/{locale}/partners/messages', 'partner'],
  ['get', '/{locale}/partners/messages/{messageId}/attachment/{attachmentId}', 'partner'],
  ['get', '/{locale}/shop/products', 'api|partner'],
  ['get', '/{locale}/shop/products/{id}', 'api|partner'],
  ['get', '/{locale}/shop/products/categories', 'api|partner'],
  ['get', '/{locale}/shop/products/sync-status', 'api|partner'],
  ['get', '/{locale}/shop/categories', 'api|partner'],
  ['post', '/{locale}/shop/xml-import/from-url', 'api|partner'],
  ['post', '/{locale}/shop/xml-import/from-file', 'api|partner'],
  ['post', '/{locale}/shop/xml-import/validate', 'api|partner'],
  ['get', '/{locale}/shop/xml-import/field-mappings', 'api|partner'],
  ['get', '/{locale}/shop/xml-import/stats', 'api|partner'],
  ['get', '/{locale}/shop/xml-import/history', 'api|partner'],
  ['get', '/{locale}/shop/xml-import/{import_id}', 'api|partner'],
  ['get', '/{locale}/shop/xml-import/feeds', 'api|partner'],
  ['delete', '/{locale}/shop/xml-import/feeds/{id}', 'api|partner'],
  ['get', '/healthz', 'none'],
  ['get', '/readyz', 'none'],
  ['get', '/metrics', 'none'],
  ['post', '/{locale}/app/auth/otp/request', 'none'],
  ['post', '/{locale}/app/auth/otp/verify', 'none'],
  ['post', '/{locale}/app/auth/logout', 'customer'],
  ['get', '/{locale}/shop/auth/me', 'customer'],
  ['put', '/{locale}/shop/auth/profile', 'customer'],
  ['get', '/{locale}/shop/loyalty-cards', 'api'],
  ['get', '/{locale}/shop/loyalty-cards/info', 'api'],
  ['get', '/{locale}/shop/loyalty-cards/balance', 'api'],
  ['get', '/{locale}/shop/loyalty-cards/{id}', 'customer|api'],
  ['post', '/{locale}/shop/loyalty-cards', 'customer'],
  ['post', '/{locale}/shop/loyalty-cards/third-party', 'customer'],
  ['post', '/{locale}/shop/transactions/create', 'api'],
  ['post', '/{locale}/shop/transactions/award-points', 'api'],
  ['post', '/{locale}/shop/transactions/deduct-points', 'api'],
  ['post', '/{locale}/shop/transactions/{id}/reverse', 'api'],
  ['post', '/{locale}/shop/transactions/{id}/return', 'api'],
  ['get', '/{locale}/shop/transactions', 'customer'],
  ['get', '/{locale}/shop/transactions/{id}', 'customer|api'],
  ['post', '/{locale}/shop/transactions/preview', 'api|partner'],
  ['get', '/{locale}/shop/transactions/summary', 'customer'],
  ['post', '/{locale}/shop/transactions/export', 'customer|api'],
  ['get', '/{locale}/shop/points', 'customer|api'],
  ['get', '/{locale}/shop/points/summary', 'customer|api'],
  ['get', '/{locale}/shop/points/card/{card_id}/balance', 'customer|api'],
  ['post', '/{locale}/shop/points', 'api'],
  ['post', '/{locale}/shop/points/bulk', 'api'],
  ['get', '/{locale}/partners/{id}', 'partner'],
  ['get', '/{locale}/partners/customers', 'partner'],
  ['get', '/{locale}/partners/transactions', 'partner'],
  ['get', '/{locale}/partners/stats', 'partner'],
  ['get', '/{locale}/partners/transactions/export', 'partner'],
  ['get', '/{locale}/partners/transactions/{id}', 'partner'],
  ['post', '/{locale}/shop/auth/qr-login/generate', 'api'],
  ['post', '/{locale}/shop/auth/qr-login/poll/{session_id}', 'api'],
  ['post', '/{locale}/shop/qr-card/generate', 'api'],
  ['get', '/{locale}/shop/qr-card/status/{sessionId}', 'api'],
  ['post', '/{locale}/shop/auth/send-app-link', 'api'],
  ['post', '/{locale}/app/qr-login/scan', 'customer'],
  ['post', '/{locale}/app/qr-login/confirm', 'customer'],
  ['post', '/{locale}/app/qr-login/reject', 'customer'],
  ['post', '/{locale}/app/qr-card/scan', 'customer'],
  ['post', '/{locale}/partners/offers', 'partner'],
  ['get', '/{locale}/partners/offers', 'partner'],
  ['get', '/{locale}/partners/offers/{id}', 'partner'],
  ['put', '/{locale}/partners/offers/{id}', 'partner'],
  ['delete', '/{locale}/partners/offers/{id}', 'partner'],
  ['post', '/{locale}/partners/campaigns', 'partner'],
  ['get', '/{locale}/partners/campaigns', 'partner'],
  ['get', '/{locale}/partners/campaigns/{id}', 'partner'],
  ['put', '/{locale}/partners/campaigns/{id}', 'partner'],
  ['delete', '/{locale}/partners/campaigns/{id}', 'partner'],
  ['get', '/{locale}/partners/tiers/summary', 'partner'],
  ['get', '/{locale}/partners/loyalty-cards/{id}/tier-history', 'partner'],
  ['get', '/{locale}/shop/offers', 'customer|api'],
  ['get', '/{locale}/shop/offers/featured', 'customer|api'],
  ['post', '/{locale}/shop/offers/{id}/claim', 'customer'],
  ['get', '/{locale}/shop/sync-status', 'api'],
  ['post', '/{locale}/shop/coupons/verify', 'api'],
  ['post', '/{locale}/shop/coupons/{id}/redeem', 'api'],
  ['post', '/{locale}/shop/coupons/{id}/release', 'api'],
  ['post', '/{locale}/shop/coupons/{id}/rollback', 'api'],
  ['get', '/{locale}/shop/coupons', 'customer|api'],
  ['get', '/{locale}/partners/coupons', 'partner'],
  ['get', '/{locale}/partners/coupons/export', 'partner'],
  ['get', '/{locale}/partners/coupons/{id}', 'partner'],
  ['get', '/{locale}/shop/games', 'customer|api'],
  ['post', '/{locale}/shop/games/{id}/start', 'customer'],
  ['post', '/{locale}/shop/games/sessions/{sessionKey}/progress', 'customer|api'],
  ['post', '/{locale}/shop/games/sessions/{sessionKey}/claim-reward', 'customer|api'],
  ['get', '/{locale}/shop/user/games/history', 'customer'],
];

const SECURITY: Record<string, Array<Record<string, string[]>>> = {
  api: [{ apiKey: [], apiSecret: [] }],
  partner: [{ partnerJwt: [] }],
  admin: [{ adminJwt: [] }],
  customer: [{ customerJwt: [] }],
  'customer|api': [{ customerJwt: [] }, { apiKey: [], apiSecret: [] }],
  'api|partner': [{ apiKey: [], apiSecret: [] }, { partnerJwt: [] }],
  none: [],
};

function operations(doc: Doc): Array<[string, string, Operation]> {
  const out: Array<[string, string, Operation]> = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) if (item[method]) out.push([method, path, item[method]!]);
  }
  return out;
}

/**
 * [method, OpenAPI-style path] of every route in the router, read from printRoutes' tree
 * (lines like `│   └── /:id (GET, HEAD)`), so a route added later is checked too.
 */
function routerRoutes(t: TestApp): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const stack: string[] = [];
  for (const line of t.app.fastify.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^((?:│ {3}| {4})*)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    const path = stack.join('').replace(/:(\w+)/g, '{$1}');
    for (const method of m[3]?.split(', ') ?? []) out.push([method.toLowerCase(), path]);
  }
  return out;
}

/** The values a parameter schema allows: a plain enum, or a union of literals. */
function allowedValues(schema: Record<string, unknown>): unknown[] | undefined {
  if (Array.isArray(schema.enum)) return schema.enum;
  if (Array.isArray(schema.anyOf)) {
    const values = (schema.anyOf as Array<Record<string, unknown>>).map((s) => allowedValues(s) ?? ('const' in s ? [s.const] : undefined));
    return values.every((v) => v !== undefined) ? values.flat() : undefined;
  }
  return 'const' in schema ? [schema.const] : undefined;
}

describe('OpenAPI document', () => {
  let t: TestApp;
  let doc: Doc;

  before(async () => {
    t = await startTestApp();
    const res = await request<Doc>(t.url, 'GET', '/openapi.json');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    doc = res.body;
  });
  after(() => t.close());

  it('compiles every route\'s validators and serializers (they are compiled on first use otherwise)', () => {
    // What the server does in the background once it listens (src/server.ts): a schema that
    // AJV or fast-json-stringify cannot compile fails here, not on a route's first request.
    assert.ok(compilePending() > 300);
  });

  it('is OpenAPI 3.1.0 and needs no credentials', () => {
    assert.equal(doc.openapi, '3.1.0');
  });

  it('documents every route with the security it requires', () => {
    const missing = EXPECTED.filter(([m, p]) => !doc.paths[p]?.[m]).map(([m, p]) => `${m.toUpperCase()} ${p}`);
    assert.deepEqual(missing, [], `not documented: ${missing.join(', ')}`);
    for (const [method, path, kind] of EXPECTED) {
      assert.deepEqual(doc.paths[path]![method]!.security, SECURITY[kind], `${method} ${path}`);
    }
  });

  it('documents every route the router knows (except the docs themselves and Pusher\'s events API)', () => {
    const documented = new Set(operations(doc).map(([m, p]) => `${m} ${p}`));
    // /apps/{app_id}/… is Pusher's HTTP API for the pusher SDKs, documented in docs/realtime.md;
    // /dashboard… are the web console's files (src/infra/dashboard.ts), not API operations.
    const routed = routerRoutes(t).filter(
      ([m, p]) => m !== 'head' && !p.startsWith('/docs') && p !== '/openapi.json' && !p.startsWith('/apps/') && !p.startsWith('/dashboard'),
    );
    assert.ok(routed.length >= EXPECTED.length, JSON.stringify(routed));
    assert.ok(routed.some(([m, p]) => m === 'delete' && p === '/{locale}/partners/api-keys/{id}'), 'nested routes are read');
    const undocumented = routed.map(([m, p]) => `${m} ${p}`).filter((k) => !documented.has(k));
    assert.deepEqual(undocumented, []);
  });

  it('leaves the documentation routes themselves and the Pusher events API out of the document', () => {
    assert.ok(routerRoutes(t).some(([m, p]) => m === 'post' && p === '/apps/{appId}/events'), 'the events API is routed');
    assert.deepEqual(Object.keys(doc.paths).filter((p) => p.startsWith('/apps/')), []);
    assert.equal(doc.paths['/openapi.json'], undefined);
    assert.deepEqual(Object.keys(doc.paths).filter((p) => p.startsWith('/docs')), []);
    assert.deepEqual(Object.keys(doc.paths).filter((p) => p.startsWith('/dashboard')), []);
  });

  it('gives every operation a unique operationId', () => {
    const ids = operations(doc).map(([, , op]) => op.operationId);
    assert.ok(ids.every((id) => typeof id === 'string' && /^[A-Za-z][A-Za-z0-9]*$/.test(id)), JSON.stringify(ids));
    assert.equal(new Set(ids).size, ids.length);
    assert.equal(doc.paths['/{locale}/shop/validate-credentials']!.post!.operationId, 'postShopValidateCredentials');
    assert.equal(doc.paths['/{locale}/partners/shops/{id}']!.get!.operationId, 'getPartnersShopsById');
  });

  it('declares the locale path parameter as required, lt or en, on every localised operation', () => {
    let count = 0;
    for (const [method, path, op] of operations(doc)) {
      if (!path.startsWith('/{locale}/')) continue;
      const locale = op.parameters?.find((p) => p.in === 'path' && p.name === 'locale');
      assert.ok(locale, `${method} ${path} has no locale parameter`);
      assert.equal(locale.required, true);
      assert.deepEqual(allowedValues(locale.schema)?.sort(), ['en', 'lt'], `${method} ${path}`);
      count++;
    }
    assert.ok(count >= 18);
  });

  it('gives every offers, coupons and games operation an example (request or response)', () => {
    const engagement = EXPECTED.filter(([, p]) => /\/(offers|coupons|sync-status|shop\/games|user\/games)/.test(p));
    assert.ok(engagement.length >= 22);
    const without = engagement.filter(([m, p]) => !/"examples?"/.test(JSON.stringify(doc.paths[p]![m]))).map(([m, p]) => `${m} ${p}`);
    assert.deepEqual(without, []);
  });

  it('marks a body that may be left out as not required', () => {
    const lock = doc.paths['/{locale}/admin/partners/{id}/commission/lock']!.post! as Operation & { requestBody: { required: boolean } };
    assert.equal(lock.requestBody.required, false);
    const unlock = doc.paths['/{locale}/admin/partners/{id}/commission/unlock']!.post! as Operation & { requestBody: { required: boolean } };
    assert.equal(unlock.requestBody.required, true);
  });

  it('refers error responses to the shared ErrorEnvelope schema', () => {
    const op = doc.paths['/{locale}/shop/validate-credentials']!.post!;
    assert.deepEqual(Object.keys(op.responses).sort(), ['200', '400', '401', '429', '500']);
    assert.deepEqual(op.responses['401'], {
      description: 'Error envelope',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
    });
  });

  it('passes the Redocly "recommended" lint without errors', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
    const errors = problems.filter((p) => p.severity === 'error');
    const describe = (p: (typeof problems)[number]) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`;
    assert.deepEqual(errors.map(describe), [], `lint errors:\n${errors.map(describe).join('\n')}`);

    // The same linter does catch a broken document.
    const broken = structuredClone(doc);
    broken.paths['/{locale}/shop/validate-credentials']!.post!.responses['401'] = {
      description: 'x',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Nope' } } },
    };
    const brokenProblems = await lintFromString({ source: JSON.stringify(broken), absoluteRef: 'openapi.json', config });
    assert.ok(brokenProblems.some((p) => p.severity === 'error' && p.ruleId === 'no-unresolved-refs'));
  });

  it('serves interactive docs at /docs', async () => {
    const res = await fetch(`${t.url}/docs`, { redirect: 'follow' });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await res.text(), /swagger-ui/i);
  });
});
