// Rate limits as a client sees them (DESIGN.md §3 and §7): counted per API key, per
// token for JWTs and per IP when unauthenticated, with X-RateLimit-* headers on every
// response of a limited route and 429 code 1003 + Retry-After once a window is spent.
// In-process by default; against Redis when REDIS_URL is set (startTestApp passes it on).
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type Env, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { createAdmin, createPartner, type AdminFixture, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request, type Response } from './helpers/http.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Every app of this file shares one database (starting PGlite per app is slow); each has its own limiter. */
let db: TestDatabase;
const apps: TestApp[] = [];

async function app(overrides: Env): Promise<TestApp> {
  const t = await startTestApp({ RATE_LIMIT_DISABLED: 'false', ...overrides }, db);
  apps.push(t);
  return t;
}

before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  for (const t of apps) await t.close();
  await db.drop();
});

function intHeader(res: Response, name: string): number {
  const raw = res.headers.get(name);
  assert.ok(raw !== null, `header ${name} missing (status ${res.status})`);
  assert.match(raw, /^\d+$/, `header ${name} is not an integer: ${raw}`);
  return Number(raw);
}

/** A response of a limited route: the three X-RateLimit-* headers with sane values. */
function assertLimitHeaders(res: Response, limit: number, remaining: number, maxReset = 60) {
  assert.equal(intHeader(res, 'x-ratelimit-limit'), limit);
  assert.equal(intHeader(res, 'x-ratelimit-remaining'), remaining);
  const reset = intHeader(res, 'x-ratelimit-reset');
  assert.ok(reset >= 1 && reset <= maxReset, `X-RateLimit-Reset ${reset} not in 1..${maxReset}`);
}

/** 429 with code 1003, the error envelope, Retry-After and the X-RateLimit-* headers. */
function assertLimited(res: Response, limit: number, maxWait = 60) {
  assert.equal(res.status, 429, `expected 429, got ${res.status}: ${res.text}`);
  assert.deepEqual(Object.keys(res.body).sort(), ['code', 'message', 'request_id', 'success']);
  assert.equal(res.body.success, false);
  assert.equal(res.body.code, 1003);
  assert.equal(typeof res.body.message, 'string');
  assert.ok(res.body.message.length > 0);
  assert.match(res.body.request_id, UUID);
  assert.equal(res.headers.get('x-request-id'), res.body.request_id);
  const retryAfter = intHeader(res, 'retry-after');
  assert.ok(retryAfter >= 1 && retryAfter <= maxWait, `Retry-After ${retryAfter} not in 1..${maxWait}`);
  assertLimitHeaders(res, limit, 0, maxWait);
}

function assertNoLimitHeaders(res: Response) {
  for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after']) {
    assert.equal(res.headers.get(h), null, `unexpected header ${h} on ${res.status}`);
  }
}

const validate = (t: TestApp, key: { key: string; secret: string }) =>
  request(t.url, 'POST', '/en/shop/validate-credentials', { headers: apiHeaders(key) });

/** Every token handed out so far: each test gets a token with a budget of its own. */
const issued = new Set<string>();

/** A new, different token for the same account (JWTs signed within the same second are identical). */
async function anotherToken(t: TestApp, kind: 'partner' | 'admin', subject: number, existing: string): Promise<string> {
  issued.add(existing);
  for (;;) {
    const { token } = await t.app.context.tokens.sign({ kind, subject });
    if (!issued.has(token)) {
      issued.add(token);
      return token;
    }
    await sleep(200);
  }
}

describe('API credentials (RATE_LIMIT_API_PER_MINUTE=5)', () => {
  let t: TestApp;
  let a: PartnerFixture;
  let b: PartnerFixture;

  before(async () => {
    t = await app({ RATE_LIMIT_API_PER_MINUTE: '5' });
    a = await createPartner(t);
    b = await createPartner(t);
  });

  it('counts down 4..0 on 200s, then answers 429 code 1003 with Retry-After', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await validate(t, a.apiKey);
      assert.equal(res.status, 200, `call ${i + 1}: ${res.text}`);
      assertLimitHeaders(res, 5, 4 - i);
      assert.equal(res.headers.get('retry-after'), null);
    }
    const sixth = await validate(t, a.apiKey);
    assertLimited(sixth, 5);
    // Still limited on the next call, and the refusal does not reset the window.
    assertLimited(await validate(t, a.apiKey), 5);
  });

  it('answers in the locale of the path when limiting', async () => {
    const en = await validate(t, a.apiKey);
    const lt = await request(t.url, 'POST', '/lt/shop/validate-credentials', { headers: apiHeaders(a.apiKey) });
    assertLimited(en, 5);
    assertLimited(lt, 5);
    assert.notEqual(en.body.message, lt.body.message);
  });

  it("counts per API key: another partner's key and a second key of the same partner are still allowed", async () => {
    assertLimited(await validate(t, a.apiKey), 5);
    const other = await validate(t, b.apiKey);
    assert.equal(other.status, 200);
    assertLimitHeaders(other, 5, 4);
    assert.equal(other.body.data.partner.id, b.id);

    const second = await t.app.context.services.apiKeys.create(a.id, 'second key');
    const res = await validate(t, second);
    assert.equal(res.status, 200);
    assertLimitHeaders(res, 5, 4);
    assert.equal(res.body.data.partner.id, a.id);
  });

  it('limits every API route of the key, not only the one that spent it', async () => {
    const res = await request(t.url, 'GET', '/en/shop/health', { headers: apiHeaders(a.apiKey) });
    assertLimited(res, 5);
  });
});

describe('API credentials, hourly window (RATE_LIMIT_API_PER_HOUR=3, per minute 100)', () => {
  let t: TestApp;
  let a: PartnerFixture;

  before(async () => {
    t = await app({ RATE_LIMIT_API_PER_HOUR: '3', RATE_LIMIT_API_PER_MINUTE: '100' });
    a = await createPartner(t);
  });

  it('binds when the per-minute burst is far away: the 4th call is 429', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await validate(t, a.apiKey);
      assert.equal(res.status, 200);
      // The window closest to running out is the one reported.
      assertLimitHeaders(res, 3, 2 - i, 3600);
    }
    const fourth = await validate(t, a.apiKey);
    assertLimited(fourth, 3, 3600);
    // The caller must wait for the hour window, not just the minute.
    assert.ok(Number(fourth.headers.get('retry-after')) > 60, `Retry-After ${fourth.headers.get('retry-after')}`);
  });
});

describe('JWTs are limited per token (RATE_LIMIT_PARTNER_PER_MINUTE=3, RATE_LIMIT_ADMIN_PER_MINUTE=4)', () => {
  let t: TestApp;
  let partner: PartnerFixture;
  let admin: AdminFixture;

  before(async () => {
    t = await app({
      RATE_LIMIT_PARTNER_PER_MINUTE: '3',
      RATE_LIMIT_ADMIN_PER_MINUTE: '4',
      RATE_LIMIT_API_PER_MINUTE: '2',
    });
    partner = await createPartner(t);
    admin = await createAdmin(t);
  });

  it('partner token: 3 calls then 429; another token of the same partner is still allowed', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await request(t.url, 'GET', '/en/partners/auth/me', { headers: bearer(partner.token) });
      assert.equal(res.status, 200, res.text);
      assertLimitHeaders(res, 3, 2 - i);
    }
    // Any partner route shares the token's budget.
    assertLimited(await request(t.url, 'GET', '/en/partners/shops', { headers: bearer(partner.token) }), 3);

    const fresh = await anotherToken(t, 'partner', partner.id, partner.token);
    const res = await request(t.url, 'GET', '/en/partners/auth/me', { headers: bearer(fresh) });
    assert.equal(res.status, 200);
    assertLimitHeaders(res, 3, 2);
  });

  it("the partner's API key has its own budget, untouched by the token's", async () => {
    const res = await validate(t, partner.apiKey);
    assert.equal(res.status, 200);
    assertLimitHeaders(res, 2, 1);
  });

  it("a token used on another kind's route (403) spends its own budget and then gets 429", async () => {
    const token = await anotherToken(t, 'partner', partner.id, partner.token);
    for (let i = 0; i < 3; i++) {
      const res = await request(t.url, 'GET', '/en/admin/partners', { headers: bearer(token) });
      assert.equal(res.status, 403, res.text);
      assert.equal(res.body.code, 'INSUFFICIENT_PERMISSIONS');
      assertLimitHeaders(res, 3, 2 - i);
    }
    assertLimited(await request(t.url, 'GET', '/en/admin/partners', { headers: bearer(token) }), 3);
    // It is the same budget as on the token's own routes.
    assertLimited(await request(t.url, 'GET', '/en/partners/auth/me', { headers: bearer(token) }), 3);
  });

  it('admin token: 4 calls then 429; another admin token is still allowed', async () => {
    for (let i = 0; i < 4; i++) {
      const res = await request(t.url, 'GET', '/en/admin/partners', { headers: bearer(admin.token) });
      assert.equal(res.status, 200, res.text);
      assertLimitHeaders(res, 4, 3 - i);
    }
    assertLimited(await request(t.url, 'GET', '/en/admin/partners', { headers: bearer(admin.token) }), 4);

    const fresh = await anotherToken(t, 'admin', admin.id, admin.token);
    const res = await request(t.url, 'GET', '/en/admin/partners', { headers: bearer(fresh) });
    assert.equal(res.status, 200);
    assertLimitHeaders(res, 4, 3);
  });
});

describe('unauthenticated requests are limited per IP (RATE_LIMIT_IP_PER_MINUTE=3)', () => {
  let t: TestApp;
  let partner: PartnerFixture;
  // TRUST_PROXY lets each test come from its own client address.
  const from = (ip: string, headers: Record<string, string> = {}) => ({ ...headers, 'x-forwarded-for': ip });
  const badLogin = (ip: string) =>
    request(t.url, 'POST', '/en/partners/auth/login', {
      headers: from(ip),
      json: { email: partner.email, password: 'not-the-password' },
    });

  before(async () => {
    t = await app({ RATE_LIMIT_IP_PER_MINUTE: '3', TRUST_PROXY: '1' });
    partner = await createPartner(t);
  });

  it('login with a wrong password: 401 three times, then 429 instead of 401', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await badLogin('10.0.0.1');
      assert.equal(res.status, 401, res.text);
      assert.equal(res.body.code, 'INVALID_CREDENTIALS');
      assertLimitHeaders(res, 3, 2 - i);
    }
    assertLimited(await badLogin('10.0.0.1'), 3);
    // The right password does not get through either: the budget is the address's.
    const good = await request(t.url, 'POST', '/en/partners/auth/login', {
      headers: from('10.0.0.1'),
      json: { email: partner.email, password: partner.password },
    });
    assertLimited(good, 3);
  });

  it('another address still gets its own budget', async () => {
    const res = await request(t.url, 'POST', '/en/partners/auth/login', {
      headers: from('10.0.0.2'),
      json: { email: partner.email, password: partner.password },
    });
    assert.equal(res.status, 200, res.text);
    assertLimitHeaders(res, 3, 2);
  });

  it('API calls without credentials: 401 code 1004, then 429 code 1003', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await request(t.url, 'POST', '/en/shop/validate-credentials', { headers: from('10.0.0.3') });
      assert.equal(res.status, 401);
      assert.equal(res.body.code, 1004);
      assertLimitHeaders(res, 3, 2 - i);
    }
    assertLimited(await request(t.url, 'POST', '/en/shop/validate-credentials', { headers: from('10.0.0.3') }), 3);
    // Wrong credentials and missing bearer tokens spend the same budget.
    const wrong = await request(t.url, 'POST', '/en/shop/validate-credentials', {
      headers: from('10.0.0.3', { 'x-api-key': partner.apiKey.key, 'x-api-secret': 'wrong' }),
    });
    assertLimited(wrong, 3);
    assertLimited(await request(t.url, 'GET', '/en/partners/auth/me', { headers: from('10.0.0.3') }), 3);
  });

  it('authenticated callers are not held to the exhausted address budget', async () => {
    const api = await request(t.url, 'POST', '/en/shop/validate-credentials', { headers: from('10.0.0.3', apiHeaders(partner.apiKey)) });
    assert.equal(api.status, 200);
    const jwt = await request(t.url, 'GET', '/en/partners/auth/me', { headers: from('10.0.0.3', bearer(partner.token)) });
    assert.equal(jwt.status, 200);
  });

  it('never limits the documentation (/docs, /openapi.json)', async () => {
    assertLimited(await badLogin('10.0.0.1'), 3);
    for (const path of ['/docs/', '/openapi.json', '/docs/static/index.css']) {
      for (let i = 0; i < 5; i++) {
        const res = await request(t.url, 'GET', path, { headers: from('10.0.0.1') });
        assert.equal(res.status, 200, `${path}: ${res.status}`);
        assertNoLimitHeaders(res);
      }
    }
  });

  it('never limits /healthz, /readyz and /metrics', async () => {
    // 10.0.0.1 has spent its budget above.
    assertLimited(await badLogin('10.0.0.1'), 3);
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      for (let i = 0; i < 6; i++) {
        const res = await request(t.url, 'GET', path, { headers: from('10.0.0.1') });
        assert.equal(res.status, 200, `${path}: ${res.status}`);
        assertNoLimitHeaders(res);
      }
    }
  });
});

describe('per-IP limit without TRUST_PROXY (RATE_LIMIT_IP_PER_MINUTE=2)', () => {
  let t: TestApp;

  before(async () => {
    t = await app({ RATE_LIMIT_IP_PER_MINUTE: '2' });
  });

  it('counts the connection address: a forged X-Forwarded-For buys no new budget', async () => {
    const call = (ip: string) =>
      request(t.url, 'POST', '/en/shop/validate-credentials', { headers: { 'x-forwarded-for': ip } });
    for (const [i, ip] of ['192.0.2.1', '192.0.2.2'].entries()) {
      const res = await call(ip);
      assert.equal(res.status, 401);
      assert.equal(res.body.code, 1004);
      assertLimitHeaders(res, 2, 1 - i);
    }
    assertLimited(await call('192.0.2.3'), 2);
    const login = await request(t.url, 'POST', '/en/partners/auth/login', { json: { email: 'nobody@example.com', password: 'whatever' } });
    assertLimited(login, 2);
  });
});

describe('RATE_LIMIT_DISABLED=true', () => {
  let t: TestApp;
  let partner: PartnerFixture;

  before(async () => {
    t = await app({
      RATE_LIMIT_DISABLED: 'true',
      RATE_LIMIT_API_PER_MINUTE: '1',
      RATE_LIMIT_IP_PER_MINUTE: '1',
      RATE_LIMIT_PARTNER_PER_MINUTE: '1',
    });
    partner = await createPartner(t);
  });

  it('never answers 429 and sends no X-RateLimit headers', async () => {
    for (let i = 0; i < 5; i++) {
      const api = await validate(t, partner.apiKey);
      assert.equal(api.status, 200);
      assertNoLimitHeaders(api);
      const jwt = await request(t.url, 'GET', '/en/partners/auth/me', { headers: bearer(partner.token) });
      assert.equal(jwt.status, 200);
      assertNoLimitHeaders(jwt);
      const anonymous = await request(t.url, 'POST', '/en/partners/auth/login', {
        json: { email: partner.email, password: 'not-the-password' },
      });
      assert.equal(anonymous.status, 401);
      assertNoLimitHeaders(anonymous);
    }
  });
});
