// Prometheus metrics at /metrics: requests by route pattern and status, latency, and the
// database pool on PostgreSQL — with bounded labels and no secrets.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request, type Response } from './helpers/http.js';

/** The value of one series, e.g. `http_requests_total{route="…",method="POST",status="200"}`. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const m = /^[^{]+\{(.*)\} (\S+)$/.exec(line);
    if (!m) continue;
    const have = Object.fromEntries([...m[1]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[2]);
  }
  return undefined;
}

/** The apps of this file share one database (starting PGlite per app is slow); each has its own metrics. */
let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

describe('metrics', () => {
  let t: TestApp;
  let partner: PartnerFixture;
  let text: string;
  const VC = '/:locale/shop/validate-credentials';

  before(async () => {
    t = await startTestApp({}, db);
    partner = await createPartner(t);
    for (let i = 0; i < 3; i++) {
      const ok = await request(t.url, 'POST', '/en/shop/validate-credentials', { headers: apiHeaders(partner.apiKey) });
      assert.equal(ok.status, 200);
    }
    const wrong = await request(t.url, 'POST', '/lt/shop/validate-credentials', {
      headers: apiHeaders({ key: partner.apiKey.key, secret: 'wrong-secret' }),
    });
    assert.equal(wrong.status, 401);
    const missing = await request(t.url, 'POST', '/en/shop/validate-credentials');
    assert.equal(missing.status, 401);
    for (const junk of ['/en/no/such/route-12345', '/wp-admin/setup-config.php', '/xyz-98765?q=1']) {
      assert.equal((await request(t.url, 'GET', junk)).status, 404);
    }
    assert.equal((await request(t.url, 'GET', `/en/partners/shops/424242`, { headers: bearer(partner.token) })).status, 404);

    const res = await request(t.url, 'GET', '/metrics');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    text = res.text;
  });
  after(() => t.close());

  it('counts requests by route pattern and status', () => {
    assert.equal(sample(text, 'http_requests_total', { route: VC, method: 'POST', status: '200' }), 3);
    assert.equal(sample(text, 'http_requests_total', { route: VC, method: 'POST', status: '401' }), 2);
    assert.equal(sample(text, 'http_requests_total', { route: '/:locale/partners/shops/:id', method: 'GET', status: '404' }), 1);
  });

  it('has a latency histogram per route', () => {
    assert.equal(sample(text, 'http_request_duration_seconds_bucket', { route: VC, method: 'POST', le: '+Inf' }), 5);
    assert.equal(sample(text, 'http_request_duration_seconds_count', { route: VC, method: 'POST' }), 5);
    assert.ok(sample(text, 'http_request_duration_seconds_bucket', { route: VC, method: 'POST', le: '0.1' }) !== undefined);
  });

  it('counts unknown URLs as route="unmatched", never the raw path', () => {
    assert.equal(sample(text, 'http_requests_total', { route: 'unmatched', method: 'GET', status: '404' }), 3);
    // Only the labels: a sample's value (a heap size, a start time) may contain any digits.
    const labels = [...text.matchAll(/^[^#\s{]+\{([^}]*)\}/gm)].map((m) => m[1]).join('\n');
    assert.ok(labels.includes('route="unmatched"'));
    assert.doesNotMatch(labels, /no\/such\/route|wp-admin|xyz-98765|424242/);
    const routes = new Set([...text.matchAll(/route="([^"]*)"/g)].map((m) => m[1]));
    for (const r of routes) assert.ok(r === 'unmatched' || r!.startsWith('/'), r);
  });

  it('never contains credentials', () => {
    assert.ok(!text.includes(partner.apiKey.key));
    assert.ok(!text.includes(partner.apiKey.secret));
    assert.ok(!text.includes(partner.token));
    assert.ok(!text.includes('wrong-secret'));
  });

  it('reports the database pool on PostgreSQL only', () => {
    const total = sample(text, 'db_pool_connections', { state: 'total' });
    if (process.env.DATABASE_URL) {
      assert.ok(total !== undefined && total >= 1, `db_pool_connections{state="total"} = ${total}`);
      assert.notEqual(sample(text, 'db_pool_connections', { state: 'idle' }), undefined);
      assert.notEqual(sample(text, 'db_pool_connections', { state: 'waiting' }), undefined);
    } else {
      // PGlite has no pool: the gauge is declared but has no series.
      assert.equal(total, undefined);
    }
  });

  it('includes process metrics', () => {
    assert.match(text, /^process_cpu_seconds_total \d/m);
    assert.match(text, /^nodejs_heap_size_used_bytes \d/m);
  });

  it('METRICS_ENABLED=false removes /metrics (404 envelope)', async () => {
    const off = await startTestApp({ METRICS_ENABLED: 'false' }, t.db);
    try {
      const res = await request(off.url, 'GET', '/metrics');
      assert.equal(res.status, 404);
      assert.equal(res.body.success, false);
    } finally {
      await off.close();
    }
  });
});

describe('METRICS_TOKEN', () => {
  const TOKEN = 'metrics-token-0123456789abcdef';
  let t: TestApp;

  before(async () => {
    t = await startTestApp({ METRICS_TOKEN: TOKEN }, db);
  });
  after(() => t.close());

  /** 401 in the error envelope, with the challenge Prometheus and curl understand. */
  function assertRefused(res: Response, code: string) {
    assert.equal(res.status, 401, res.text);
    assert.equal(res.body.success, false);
    assert.equal(res.body.code, code);
    assert.equal(typeof res.body.message, 'string');
    assert.equal(res.headers.get('x-request-id'), res.body.request_id);
    assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="metrics"');
    assert.doesNotMatch(res.text, /http_requests_total|process_cpu/);
  }

  it('refuses /metrics without a token', async () => {
    assertRefused(await request(t.url, 'GET', '/metrics'), 'MISSING_AUTHENTICATION');
    const head = await request(t.url, 'HEAD', '/metrics');
    assert.equal(head.status, 401);
  });

  it('refuses a wrong token, a near miss and another scheme', async () => {
    for (const wrong of ['x'.repeat(TOKEN.length), TOKEN.slice(0, -1), `${TOKEN}0`, TOKEN.toUpperCase()]) {
      assertRefused(await request(t.url, 'GET', '/metrics', { headers: bearer(wrong) }), 'INVALID_CREDENTIALS');
    }
    const basic = await request(t.url, 'GET', '/metrics', { headers: { authorization: `Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}` } });
    assertRefused(basic, 'INVALID_TOKEN_FORMAT');
  });

  it('serves /metrics with the right token (any case of "Bearer")', async () => {
    for (const authorization of [`Bearer ${TOKEN}`, `bearer ${TOKEN}`]) {
      const res = await request(t.url, 'GET', '/metrics', { headers: { authorization } });
      assert.equal(res.status, 200, res.text);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
      assert.match(res.text, /^http_requests_total\{/m);
      assert.ok(!res.text.includes(TOKEN));
    }
  });

  it('guards only /metrics: the probes stay open', async () => {
    assert.equal((await request(t.url, 'GET', '/healthz')).status, 200);
    assert.equal((await request(t.url, 'GET', '/metrics/')).status, 404);
  });

  it('production start warns that /metrics is public when METRICS_TOKEN is unset, and only then', async () => {
    const warnings = async (env: Record<string, string>) => {
      const lines: Array<{ level: number; msg: string }> = [];
      const logStream = { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) };
      const app = await startTestApp({ NODE_ENV: 'production', LOG_LEVEL: 'warn', ...env }, t.db, { logStream, workers: false });
      await app.close();
      return lines.filter((l) => l.msg.includes('METRICS_TOKEN'));
    };
    const unset = await warnings({});
    assert.equal(unset.length, 1);
    assert.equal(unset[0]!.level, 40);
    assert.match(unset[0]!.msg, /METRICS_TOKEN is not set: \/metrics is public/);
    assert.deepEqual(await warnings({ METRICS_TOKEN: TOKEN }), []);
    assert.deepEqual(await warnings({ METRICS_ENABLED: 'false' }), []);
    assert.deepEqual(await warnings({ NODE_ENV: 'test' }), []);
  });
});
