// Authentication and authorisation as a client sees them (DESIGN.md §2, §3): API
// credentials, partner and admin logins, bearer tokens, admin-only endpoints, partner
// creation and API-key issue and revocation.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { SignJWT } from 'jose';
import { ACCOUNTS_CHANNEL } from '../src/infra/account-cache.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createAdmin, createPartner, type AdminFixture, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request, type Response } from './helpers/http.js';

const ARGON2 = /\$argon2/;

/** A JWT signed with `secret`, shaped like the service's own (HS256, issuer "loyalty"). */
async function signJwt(secret: string, claims: { kind: string; sub: string; exp: number; iat?: number }): Promise<string> {
  return new SignJWT({ kind: claims.kind })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer('loyalty')
    .setSubject(claims.sub)
    .setIssuedAt(claims.iat ?? Math.floor(Date.now() / 1000))
    .setExpirationTime(claims.exp)
    .sign(new TextEncoder().encode(secret));
}

function assertError(res: Response, status: number, code: number | string, label = '') {
  assert.equal(res.status, status, `${label} status (body: ${res.text})`);
  assert.equal(res.body?.success, false, label);
  assert.equal(res.body.code, code, `${label} code`);
  assert.equal(typeof res.body.message, 'string', label);
  assert.equal(typeof res.body.request_id, 'string', label);
}

/** Shape A: 422, code 422, errors = {field: [message, ...]}. */
function assertShapeA(res: Response, fields: string[], label = '') {
  assertError(res, 422, 422, label);
  assert.deepEqual(Object.keys(res.body.errors).sort(), [...fields].sort(), label);
  for (const messages of Object.values(res.body.errors)) {
    assert.ok(Array.isArray(messages) && messages.length > 0 && messages.every((m) => typeof m === 'string'), label);
  }
}

describe('API credentials', () => {
  let t: TestApp;
  let partner: PartnerFixture;
  let other: PartnerFixture;

  before(async () => {
    t = await startTestApp();
    partner = await createPartner(t);
    other = await createPartner(t);
  });
  after(() => t.close());

  const validate = (headers: Record<string, string>) => request(t.url, 'POST', '/en/shop/validate-credentials', { headers });

  it('accepts a valid key and secret and acts for its partner', async () => {
    const res = await validate(apiHeaders(partner.apiKey));
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, { valid: true, partner: { id: partner.id, name: partner.name } });
  });

  it('answers missing credentials with 401 code 1004', async () => {
    const cases: Array<[string, Record<string, string>]> = [
      ['no headers', {}],
      ['key only', { 'x-api-key': partner.apiKey.key }],
      ['secret only', { 'x-api-secret': partner.apiKey.secret }],
      ['empty key', { 'x-api-key': '', 'x-api-secret': partner.apiKey.secret }],
      ['empty secret', { 'x-api-key': partner.apiKey.key, 'x-api-secret': '' }],
    ];
    for (const [label, headers] of cases) assertError(await validate(headers), 401, 1004, label);
  });

  it('answers wrong credentials with 401 code 1001', async () => {
    const cases: Array<[string, Record<string, string>]> = [
      ['wrong secret', { 'x-api-key': partner.apiKey.key, 'x-api-secret': `${partner.apiKey.secret}x` }],
      ['another key’s secret', { 'x-api-key': partner.apiKey.key, 'x-api-secret': other.apiKey.secret }],
      ['unknown key', { 'x-api-key': 'lk_does-not-exist', 'x-api-secret': partner.apiKey.secret }],
      ['very long key', { 'x-api-key': 'k'.repeat(300), 'x-api-secret': partner.apiKey.secret }],
    ];
    // The key has been used (and so cached) above: a wrong secret must still fail.
    const messages = new Set<string>();
    for (const [label, headers] of cases) {
      const res = await validate(headers);
      assertError(res, 401, 1001, label);
      assert.equal(res.body.data, undefined, label);
      messages.add(res.body.message);
    }
    assert.equal(messages.size, 1, 'an unknown key and a wrong secret look alike');
    assert.equal((await validate(apiHeaders(partner.apiKey))).status, 200);
  });

  it('does not accept a bearer token in place of API credentials', async () => {
    assertError(await validate(bearer(partner.token)), 401, 1004, 'partner token');
    const admin = await createAdmin(t);
    assertError(await validate(bearer(admin.token)), 401, 1004, 'admin token');
    const res = await request(t.url, 'GET', '/en/shop/shops', { headers: bearer(partner.token) });
    assertError(res, 401, 1004, 'GET /shop/shops');
  });
});

describe('partner and admin login', () => {
  let t: TestApp;
  let partner: PartnerFixture;
  let admin: AdminFixture;

  before(async () => {
    t = await startTestApp();
    partner = await createPartner(t);
    admin = await createAdmin(t);
  });
  after(() => t.close());

  const logins = () => [
    { who: 'partner', path: '/en/partners/auth/login', account: partner, dataKey: 'partner', probe: '/en/partners/shops' },
    { who: 'admin', path: '/en/admin/auth/login', account: admin, dataKey: 'admin', probe: '/en/admin/partners' },
  ];

  it('gives a working token and the account, without any password hash', async () => {
    for (const { who, path, account, dataKey, probe } of logins()) {
      const res = await request(t.url, 'POST', path, { json: { email: account.email, password: account.password } });
      assert.equal(res.status, 200, who);
      assert.equal(res.body.success, true, who);
      assert.equal(res.body.code, 200, who);
      assert.equal(typeof res.body.data.token, 'string', who);
      assert.equal(res.body.data[dataKey].id, account.id, who);
      assert.equal(res.body.data[dataKey].email, account.email, who);
      assert.doesNotMatch(res.text, ARGON2, who);
      assert.doesNotMatch(res.text, /password/i, who);
      assert.ok(!res.text.includes(account.password), who);
      const use = await request(t.url, 'GET', probe, { headers: bearer(res.body.data.token) });
      assert.equal(use.status, 200, `${who} token works`);
    }
  });

  it('treats the e-mail address case-insensitively', async () => {
    for (const { who, path, account } of logins()) {
      const email = ` ${account.email.toUpperCase()}`;
      const res = await request(t.url, 'POST', path, { json: { email, password: account.password } });
      assert.equal(res.status, 200, who);
    }
  });

  it('answers a wrong password or an unknown e-mail with 401 INVALID_CREDENTIALS, alike', async () => {
    for (const { who, path, account } of logins()) {
      const wrong = await request(t.url, 'POST', path, { json: { email: account.email, password: `${account.password}x` } });
      const unknown = await request(t.url, 'POST', path, { json: { email: `nobody-${account.email}`, password: account.password } });
      assertError(wrong, 401, 'INVALID_CREDENTIALS', `${who} wrong password`);
      assertError(unknown, 401, 'INVALID_CREDENTIALS', `${who} unknown e-mail`);
      assert.equal(wrong.body.message, unknown.body.message, `${who}: the message does not tell which was wrong`);
      assert.equal(wrong.body.data, undefined);
    }
  });

  it('does not let a partner log in as an admin, or an admin as a partner', async () => {
    const asAdmin = await request(t.url, 'POST', '/en/admin/auth/login', { json: { email: partner.email, password: partner.password } });
    assertError(asAdmin, 401, 'INVALID_CREDENTIALS', 'partner on admin login');
    const asPartner = await request(t.url, 'POST', '/en/partners/auth/login', { json: { email: admin.email, password: admin.password } });
    assertError(asPartner, 401, 'INVALID_CREDENTIALS', 'admin on partner login');
  });

  it('answers missing fields with 422 Shape A', async () => {
    for (const { who, path, account } of logins()) {
      assertShapeA(await request(t.url, 'POST', path, { json: {} }), ['email', 'password'], `${who} {}`);
      assertShapeA(await request(t.url, 'POST', path, { json: { email: account.email } }), ['password'], `${who} no password`);
      assertShapeA(await request(t.url, 'POST', path, { json: { password: account.password } }), ['email'], `${who} no e-mail`);
      assertShapeA(
        await request(t.url, 'POST', path, { json: { email: account.email, password: 12345678901 } }),
        ['password'],
        `${who} password not a string`,
      );
    }
  });
});

describe('bearer tokens on partner routes', () => {
  let t: TestApp;
  let partner: PartnerFixture;
  let secret: string;

  before(async () => {
    t = await startTestApp();
    partner = await createPartner(t);
    assert.ok(t.config.jwtSecret, 'startTestApp sets JWT_SECRET');
    secret = t.config.jwtSecret;
  });
  after(() => t.close());

  const shops = (headers: Record<string, string>) => request(t.url, 'GET', '/en/partners/shops', { headers });
  const now = () => Math.floor(Date.now() / 1000);

  it('accepts the partner’s own token', async () => {
    const res = await shops(bearer(partner.token));
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, []);
  });

  it('accepts a token it did not issue itself as long as it is signed with the app secret', async () => {
    // The control for the forged-token cases below: only the secret differs there.
    const token = await signJwt(secret, { kind: 'partner', sub: String(partner.id), exp: now() + 600 });
    assert.equal((await shops(bearer(token))).status, 200);
  });

  it('answers a missing Authorization header with 401 MISSING_AUTHENTICATION', async () => {
    assertError(await shops({}), 401, 'MISSING_AUTHENTICATION', 'no header');
    assertError(await shops({ authorization: '' }), 401, 'MISSING_AUTHENTICATION', 'empty header');
    // API credentials are not a partner login.
    assertError(await shops(apiHeaders(partner.apiKey)), 401, 'MISSING_AUTHENTICATION', 'API headers');
  });

  it('answers a malformed Authorization header with 401 INVALID_TOKEN_FORMAT', async () => {
    for (const authorization of ['Basic xxx', 'Bearer not-a-jwt', 'Bearer', `Token ${partner.token}`, 'Bearer a.b', 'Bearer a.b.c', 'Bearer a.b.c.d']) {
      assertError(await shops({ authorization }), 401, 'INVALID_TOKEN_FORMAT', authorization);
    }
  });

  it('answers an expired token with 401 EXPIRED_TOKEN', async () => {
    const token = await signJwt(secret, { kind: 'partner', sub: String(partner.id), iat: now() - 7200, exp: now() - 3600 });
    assertError(await shops(bearer(token)), 401, 'EXPIRED_TOKEN');
  });

  it('answers a token signed with another secret, or tampered with, with 401 INVALID_CREDENTIALS', async () => {
    const forged = await signJwt('another-secret-another-secret-another-secret', {
      kind: 'partner',
      sub: String(partner.id),
      exp: now() + 600,
    });
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const [header, , signature] = partner.token.split('.');
    const claims = { kind: 'partner', sub: String(partner.id + 1), iss: 'loyalty', exp: now() + 600 };
    const cases: Array<[string, string]> = [
      ['another secret', forged],
      ['payload swapped', `${header}.${b64(claims)}.${signature}`],
      ['alg none', `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.${signature}`],
    ];
    for (const [label, token] of cases) assertError(await shops(bearer(token)), 401, 'INVALID_CREDENTIALS', label);
  });

  it('answers a token for a partner that does not exist with 401 INVALID_CREDENTIALS', async () => {
    const token = await signJwt(secret, { kind: 'partner', sub: '999999', exp: now() + 600 });
    assertError(await shops(bearer(token)), 401, 'INVALID_CREDENTIALS');
  });

  it('answers a valid token of another kind with 403 INSUFFICIENT_PERMISSIONS', async () => {
    const customer = await t.app.context.tokens.sign({ kind: 'customer', subject: 1 });
    const admin = await createAdmin(t);
    for (const [label, token] of [
      ['customer', customer.token],
      ['admin', admin.token],
    ] as const) {
      assertError(await shops(bearer(token)), 403, 'INSUFFICIENT_PERMISSIONS', label);
    }
  });

  it('refuses the token of a suspended partner with 401, and its login and API key too', async () => {
    const suspended = await createPartner(t);
    assert.equal((await shops(bearer(suspended.token))).status, 200);
    // The node remembers that the partner may act; the suspension reaches it as the database's
    // notification when it commits (infra/account-cache.ts). Heard here through the same
    // connection, after the node's own listener: the next request is refused.
    let heardIt = () => undefined as void;
    const heard = new Promise<void>((resolve) => (heardIt = resolve));
    await t.app.context.database.listen(ACCOUNTS_CHANNEL, (payload) => payload === `partner ${suspended.id}` && heardIt(), () => undefined);
    await t.app.context.database.db.execute(sql`update partners set status = 'suspended' where id = ${suspended.id}`);
    await heard;

    assertError(await shops(bearer(suspended.token)), 401, 'INVALID_CREDENTIALS', 'token');
    const login = await request(t.url, 'POST', '/en/partners/auth/login', { json: { email: suspended.email, password: suspended.password } });
    assertError(login, 401, 'INVALID_CREDENTIALS', 'login');
    // This key was never used, so nothing about it is cached.
    const api = await request(t.url, 'POST', '/en/shop/validate-credentials', { headers: apiHeaders(suspended.apiKey) });
    assertError(api, 401, 1001, 'API key');
    // Other partners are not affected.
    assert.equal((await shops(bearer(partner.token))).status, 200);
  });
});

describe('admin endpoints', () => {
  let t: TestApp;
  let admin: AdminFixture;
  let partner: PartnerFixture;
  let customerToken: string;

  before(async () => {
    t = await startTestApp();
    admin = await createAdmin(t);
    partner = await createPartner(t);
    customerToken = (await t.app.context.tokens.sign({ kind: 'customer', subject: 1 })).token;
  });
  after(() => t.close());

  const INTRUDER = { name: 'Intruder', email: 'intruder@example.com', password: 'intruder-password' };
  const REQUIRED = ['POST /en/admin/partners', 'GET /en/admin/partners', 'GET /en/admin/partners/{id}'];

  /**
   * Every admin operation the service documents (so that one added later is covered too),
   * with path parameters filled in. Bodies are valid where we know the endpoint; the
   * caller is refused before the body is looked at anyway.
   */
  async function adminEndpoints() {
    const doc = (await request(t.url, 'GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, { security?: Array<Record<string, unknown>> }>>;
    };
    const out: Array<{ label: string; method: string; path: string; json: unknown }> = [];
    for (const [template, item] of Object.entries(doc.paths)) {
      if (!template.startsWith('/{locale}/admin/') || template === '/{locale}/admin/auth/login') continue;
      for (const [method, op] of Object.entries(item)) {
        if (!['get', 'put', 'post', 'patch', 'delete'].includes(method)) continue;
        const label = `${method.toUpperCase()} ${template.replace('{locale}', 'en')}`;
        assert.deepEqual(op.security, [{ adminJwt: [] }], `${label} is documented as admin-only`);
        const path = template.replace('{locale}', 'en').replace(/\{\w+\}/g, String(partner.id));
        const json = label === 'POST /en/admin/partners' ? INTRUDER : ['post', 'put', 'patch'].includes(method) ? {} : undefined;
        out.push({ label, method: method.toUpperCase(), path, json });
      }
    }
    const labels = out.map((e) => e.label);
    for (const required of REQUIRED) assert.ok(labels.includes(required), `${required} is among ${labels.join(', ')}`);
    return out;
  }

  it('are open to an admin token', async () => {
    const list = await request(t.url, 'GET', '/en/admin/partners', { headers: bearer(admin.token) });
    assert.equal(list.status, 200);
    assert.ok(list.body.data.some((p: { id: number }) => p.id === partner.id));
    const one = await request(t.url, 'GET', `/en/admin/partners/${partner.id}`, { headers: bearer(admin.token) });
    assert.equal(one.status, 200);
    assert.equal(one.body.data.email, partner.email);
    const missing = await request(t.url, 'GET', '/en/admin/partners/999999', { headers: bearer(admin.token) });
    assertError(missing, 404, 'RESOURCE_NOT_FOUND');
  });

  it('refuse partner and customer tokens with 403 and no token with 401, changing nothing', async () => {
    const callers: Array<[string, Record<string, string>, number, string]> = [
      ['partner token', bearer(partner.token), 403, 'INSUFFICIENT_PERMISSIONS'],
      ['customer token', bearer(customerToken), 403, 'INSUFFICIENT_PERMISSIONS'],
      ['no token', {}, 401, 'MISSING_AUTHENTICATION'],
      ['API credentials', apiHeaders(partner.apiKey), 401, 'MISSING_AUTHENTICATION'],
    ];
    for (const { label, method, path, json } of await adminEndpoints()) {
      for (const [caller, headers, status, code] of callers) {
        const res = await request(t.url, method, path, { headers, json });
        assertError(res, status, code, `${label} with ${caller}`);
        assert.equal(res.body.data, undefined);
      }
    }
    const list = await request(t.url, 'GET', '/en/admin/partners', { headers: bearer(admin.token) });
    assert.ok(!list.body.data.some((p: { email: string }) => p.email === INTRUDER.email), 'no partner was created');
  });

  it('create a partner who can then log in; a duplicate e-mail is 409 DUPLICATE_VALUE', async () => {
    const input = { name: 'Corner Bakery', email: 'Owner@Corner-Bakery.example', password: 'bakery-password-1' };
    const res = await request(t.url, 'POST', '/en/admin/partners', { headers: bearer(admin.token), json: input });
    assert.equal(res.status, 201);
    assert.equal(res.body.success, true);
    assert.equal(res.body.code, 201);
    assert.deepEqual(Object.keys(res.body.data).sort(), ['created_at', 'email', 'id', 'name', 'status', 'updated_at']);
    assert.equal(res.body.data.name, input.name);
    assert.equal(res.body.data.email, input.email.toLowerCase());
    assert.equal(res.body.data.status, 'active');
    assert.ok(Number.isInteger(res.body.data.id));
    assert.doesNotMatch(res.text, ARGON2);
    assert.ok(!res.text.includes(input.password));

    const login = await request(t.url, 'POST', '/en/partners/auth/login', { json: { email: input.email, password: input.password } });
    assert.equal(login.status, 200);
    assert.equal(login.body.data.partner.id, res.body.data.id);
    const me = await request(t.url, 'GET', '/en/partners/auth/me', { headers: bearer(login.body.data.token) });
    assert.equal(me.status, 200);
    assert.equal(me.body.data.id, res.body.data.id);

    const dup = await request(t.url, 'POST', '/en/admin/partners', {
      headers: bearer(admin.token),
      json: { name: 'Copycat', email: 'OWNER@corner-bakery.EXAMPLE', password: 'copycat-password' },
    });
    assertError(dup, 409, 'DUPLICATE_VALUE');
    assert.ok(Array.isArray(dup.body.errors));
    assert.equal(dup.body.errors.length, 1);
    assert.equal(dup.body.errors[0].field, 'email');
    assert.equal(dup.body.errors[0].code, 'DUPLICATE_VALUE');
    assert.equal(typeof dup.body.errors[0].message, 'string');
    // The first partner's password still works; the copycat's does not.
    const copycat = await request(t.url, 'POST', '/en/partners/auth/login', {
      json: { email: input.email, password: 'copycat-password' },
    });
    assertError(copycat, 401, 'INVALID_CREDENTIALS');
  });

  it('validate a new partner as Shape A', async () => {
    const res = await request(t.url, 'POST', '/en/admin/partners', {
      headers: bearer(admin.token),
      json: { name: '', email: 'not-an-email', password: 'short' },
    });
    assertShapeA(res, ['email', 'name', 'password']);
  });
});

describe('API keys', () => {
  let t: TestApp;
  let partner: PartnerFixture;

  before(async () => {
    t = await startTestApp();
    partner = await createPartner(t);
  });
  after(() => t.close());

  const issue = (name: string) => request(t.url, 'POST', '/en/partners/api-keys', { headers: bearer(partner.token), json: { name } });
  const list = () => request(t.url, 'GET', '/en/partners/api-keys', { headers: bearer(partner.token) });
  const revoke = (id: number) => request(t.url, 'DELETE', `/en/partners/api-keys/${id}`, { headers: bearer(partner.token) });
  const validate = (key: { key: string; secret: string }) =>
    request(t.url, 'POST', '/en/shop/validate-credentials', { headers: apiHeaders(key) });

  it('issues a key with its secret once; lists never show a secret; the secret is stored only as a hash', async () => {
    const res = await issue('Till 1');
    assert.equal(res.status, 201);
    assert.equal(res.body.code, 201);
    const created = res.body.data;
    assert.deepEqual(Object.keys(created).sort(), ['created_at', 'id', 'key', 'name', 'secret']);
    assert.equal(created.name, 'Till 1');
    assert.ok(typeof created.key === 'string' && created.key.length >= 16);
    assert.ok(typeof created.secret === 'string' && created.secret.length >= 32);
    assert.notEqual(created.key, created.secret);

    const listed = await list();
    assert.equal(listed.status, 200);
    const item = listed.body.data.find((k: { id: number }) => k.id === created.id);
    assert.deepEqual(item, { id: created.id, name: 'Till 1', key: created.key, created_at: created.created_at });
    assert.ok(!listed.text.includes(created.secret));
    assert.doesNotMatch(listed.text, /secret/i);

    const stored = (await t.app.context.database.db.execute(sql`select * from api_keys where id = ${created.id}`)) as unknown as {
      rows: Array<Record<string, unknown>>;
    };
    assert.equal(stored.rows.length, 1);
    const row = stored.rows[0]!;
    assert.equal(row.key, created.key, 'the row read back is the new key');
    for (const [column, value] of Object.entries(row)) {
      assert.ok(!String(value).includes(created.secret), `column ${column} holds the secret`);
    }

    assert.equal((await validate(created)).status, 200);
  });

  it('validates the name as Shape A', async () => {
    assertShapeA(await issue(''), ['name']);
    const res = await request(t.url, 'POST', '/en/partners/api-keys', { headers: bearer(partner.token), json: {} });
    assertShapeA(res, ['name']);
  });

  it('revokes at once, even right after the key was used, and only that key', async () => {
    const created = (await issue('Till 2')).body.data;
    const keep = (await issue('Till 3')).body.data;
    // Used twice: the second call is served from whatever the service caches.
    assert.equal((await validate(created)).status, 200);
    assert.equal((await validate(created)).status, 200);
    assert.equal((await validate(keep)).status, 200);

    const res = await revoke(created.id);
    assert.equal(res.status, 200);
    assert.equal(res.body.success, true);
    assert.equal(res.body.code, 200);

    assertError(await validate(created), 401, 1001, 'the very next call');
    assertError(await validate(created), 401, 1001, 'and the one after');
    assert.equal((await validate(keep)).status, 200, 'other keys keep working');
    assert.equal((await validate(partner.apiKey)).status, 200, 'the fixture key keeps working');

    const listed = await list();
    assert.ok(!listed.body.data.some((k: { id: number }) => k.id === created.id), 'a revoked key is not listed');
    assert.ok(listed.body.data.some((k: { id: number }) => k.id === keep.id));

    assertError(await revoke(created.id), 404, 'RESOURCE_NOT_FOUND', 'revoking twice');
    assertError(await revoke(999999), 404, 'RESOURCE_NOT_FOUND', 'an unknown id');
  });

  it('needs a partner token to issue, list or revoke', async () => {
    const admin = await createAdmin(t);
    const cases: Array<[string, string, unknown]> = [
      ['POST', '/en/partners/api-keys', { name: 'x' }],
      ['GET', '/en/partners/api-keys', undefined],
      ['DELETE', `/en/partners/api-keys/${partner.apiKey.id}`, undefined],
    ];
    for (const [method, path, json] of cases) {
      assertError(await request(t.url, method, path, { json }), 401, 'MISSING_AUTHENTICATION', `${method} no token`);
      assertError(
        await request(t.url, method, path, { json, headers: apiHeaders(partner.apiKey) }),
        401,
        'MISSING_AUTHENTICATION',
        `${method} API credentials`,
      );
      assertError(
        await request(t.url, method, path, { json, headers: bearer(admin.token) }),
        403,
        'INSUFFICIENT_PERMISSIONS',
        `${method} admin token`,
      );
    }
    assert.equal((await validate(partner.apiKey)).status, 200, 'the key was not revoked');
  });
});
