// Serving the consoles (src/infra/dashboard.ts): each console's page for its paths, with a
// Content-Security-Policy that allows no inline script; hashed assets cached for good and
// served compressed; the API and its docs keep their own headers.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import Fastify from 'fastify';
import dashboardPlugin, { DASHBOARD_CSP } from '../src/infra/dashboard.js';
import httpCore from '../src/infra/http-core.js';

describe('dashboard serving', () => {
  let root: string;
  let app: ReturnType<typeof Fastify>;
  const asset = `console.log(${JSON.stringify('x'.repeat(2000))});`;

  before(async () => {
    // A build of our own, so the test does not depend on web/dist.
    root = await mkdtemp(path.join(tmpdir(), 'loyalty-dashboard-'));
    await mkdir(path.join(root, 'admin'));
    await mkdir(path.join(root, 'assets'));
    await writeFile(path.join(root, 'index.html'), '<!doctype html><title>partner</title><script type="module" src="/dashboard/assets/a-1.js"></script>');
    await writeFile(path.join(root, 'admin/index.html'), '<!doctype html><title>admin</title>');
    await writeFile(path.join(root, 'assets/a-1.js'), asset);
    await writeFile(path.join(root, 'assets/a-1.js.gz'), gzipSync(asset));
    app = Fastify();
    await app.register(httpCore, { bodyLimit: 1024 });
    await app.register(dashboardPlugin, { root });
    app.get('/en/ping', async () => ({ ok: true }));
    await app.ready();
  });
  after(async () => {
    await app.close();
    await rm(root, { recursive: true, force: true });
  });

  it('answers the partner console’s paths with its page, under the CSP', async () => {
    for (const url of ['/dashboard/', '/dashboard/shops', '/dashboard/card-programmes/12?x=1']) {
      const res = await app.inject({ url });
      assert.equal(res.statusCode, 200, url);
      assert.match(res.body, /<title>partner<\/title>/, url);
      assert.equal(res.headers['content-security-policy'], DASHBOARD_CSP);
      assert.equal(res.headers['cache-control'], 'no-cache');
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
    }
    assert.match(DASHBOARD_CSP, /script-src 'self'(;|$)/);
    assert.doesNotMatch(DASHBOARD_CSP, /unsafe-inline|unsafe-eval|\*/);
  });

  it('answers the admin console’s paths with its own page', async () => {
    for (const url of ['/dashboard/admin', '/dashboard/admin/', '/dashboard/admin/statistics']) {
      const res = await app.inject({ url });
      assert.equal(res.statusCode, 200, url);
      assert.match(res.body, /<title>admin<\/title>/, url);
    }
  });

  it('redirects /dashboard to /dashboard/', async () => {
    const res = await app.inject({ url: '/dashboard' });
    assert.equal(res.statusCode, 301);
    assert.equal(res.headers.location, '/dashboard/');
  });

  it('serves hashed assets immutable, compressed when asked, and 404s missing ones', async () => {
    const plain = await app.inject({ url: '/dashboard/assets/a-1.js' });
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.body, asset);
    assert.match(String(plain.headers['cache-control']), /immutable/);
    const gz = await app.inject({ url: '/dashboard/assets/a-1.js', headers: { 'accept-encoding': 'gzip' } });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    const missing = await app.inject({ url: '/dashboard/assets/nope.js' });
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().code, 404);
    const escape = await app.inject({ url: '/dashboard/assets/..%2F..%2Findex.html' });
    assert.ok(escape.statusCode === 400 || escape.statusCode === 404, String(escape.statusCode));
    assert.doesNotMatch(escape.body, /<title>/);
  });

  it('leaves other routes’ headers alone', async () => {
    const res = await app.inject({ url: '/en/ping' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-security-policy'], undefined);
  });

  it('says how to build when there is no build', async () => {
    const bare = Fastify();
    await bare.register(httpCore, { bodyLimit: 1024 });
    await bare.register(dashboardPlugin, { root: path.join(root, 'missing') });
    const res = await bare.inject({ url: '/dashboard/' });
    assert.equal(res.statusCode, 503);
    assert.match(res.body, /npm run build/);
    await bare.close();
  });
});
