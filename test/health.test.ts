// Health endpoints (DESIGN.md §7): the credentialed shop health checks and the
// credential-free liveness and readiness probes for load balancers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, request } from './helpers/http.js';

const HEALTH_PATHS = ['/en/shop/health', '/en/shop/system/health'];
const expectedRedis = process.env.REDIS_URL ? 'ok' : 'disabled';

describe('health', () => {
  let t: TestApp;
  let partner: PartnerFixture;

  before(async () => {
    t = await startTestApp();
    partner = await createPartner(t);
  });
  after(() => t.close());

  for (const path of HEALTH_PATHS) {
    it(`GET ${path} with API credentials reports status, version and checks`, async () => {
      const res = await request(t.url, 'GET', path, { headers: apiHeaders(partner.apiKey) });
      assert.equal(res.status, 200);
      assert.equal(res.body.success, true);
      assert.equal(res.body.code, 200);
      assert.deepEqual(res.body.data, {
        status: 'ok',
        version: '0.0.0-test',
        checks: { database: 'ok', redis: expectedRedis },
      });
      assert.equal(res.body.message, 'Service is healthy');
    });

    it(`GET ${path} without credentials is 401 code 1004, with wrong ones 1001`, async () => {
      const missing = await request(t.url, 'GET', path);
      assert.equal(missing.status, 401);
      assert.equal(missing.body.code, 1004);
      assert.equal(missing.body.data, undefined);
      const wrong = await request(t.url, 'GET', path, { headers: apiHeaders({ key: partner.apiKey.key, secret: 'nope' }) });
      assert.equal(wrong.status, 401);
      assert.equal(wrong.body.code, 1001);
    });
  }

  it('answers in the path locale', async () => {
    const res = await request(t.url, 'GET', '/lt/shop/health', { headers: apiHeaders(partner.apiKey) });
    assert.equal(res.status, 200);
    assert.equal(res.body.message, 'Paslauga veikia');
  });

  it('GET /healthz needs no credentials and answers {status: "ok"}', async () => {
    const res = await request(t.url, 'GET', '/healthz');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ok' });
  });

  it('GET /readyz needs no credentials and answers {status: "ready"}', async () => {
    const res = await request(t.url, 'GET', '/readyz');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ready' });
  });
});

describe('health with the database gone', () => {
  it('reports degraded health and 503 not_ready, while liveness stays ok', async () => {
    const t = await startTestApp();
    try {
      const partner = await createPartner(t);
      // A key seen once authenticates from the in-process cache, so the health check itself
      // can still answer after the store goes away.
      const before = await request(t.url, 'GET', '/en/shop/health', { headers: apiHeaders(partner.apiKey) });
      assert.equal(before.status, 200);
      await t.db.database.close();

      const ready = await request(t.url, 'GET', '/readyz');
      assert.equal(ready.status, 503);
      assert.deepEqual(ready.body, { status: 'not_ready' });
      const live = await request(t.url, 'GET', '/healthz');
      assert.equal(live.status, 200);

      const health = await request(t.url, 'GET', '/en/shop/health', { headers: apiHeaders(partner.apiKey) });
      assert.equal(health.status, 200);
      assert.deepEqual(health.body.data, { status: 'degraded', version: '0.0.0-test', checks: { database: 'error', redis: expectedRedis } });
      assert.equal(health.body.message, 'Service is degraded');
    } finally {
      await t.app.fastify.close();
      await t.db.drop().catch(() => undefined);
    }
  });
});
