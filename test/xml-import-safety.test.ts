// Hostile and oversized feeds (DESIGN.md §9 "Limits and safety"): XXE and billion laughs are
// refused without expanding or fetching anything; private addresses are refused when the URL
// is given and again when the feed is fetched; a gzip bomb stops at XML_IMPORT_MAX_BYTES
// (counted after decompression); an upload over the limit is 413 and a failed import; a
// malformed feed reports its line and column.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { startTestApp, type TestApp } from './helpers/app.js';
import { allProducts, fixtureFeed, importFeed, uploadFeed, waitForImport } from './helpers/catalog.js';
import { createPartner } from './helpers/fixtures.js';
import { apiHeaders, request } from './helpers/http.js';

const LIMIT = 1024 * 1024;
let t: TestApp;
let filesDir: string;
let server: http.Server;
let base: string;
const hits: string[] = [];

before(async () => {
  server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/xml' }).end('<products><product id="1"><name>x</name></product></products>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // ALLOW_PRIVATE_URLS is off: the defaults a production node runs with.
  filesDir = await mkdtemp(path.join(tmpdir(), 'loyalty-import-files-'));
  t = await startTestApp({ XML_IMPORT_MAX_BYTES: String(LIMIT), FILES_DIR: filesDir });
});
after(async () => {
  await t.close();
  await rm(filesDir, { recursive: true, force: true });
  await new Promise((resolve) => server.close(resolve));
});

describe('entities', () => {
  it('refuses an XXE feed without fetching the external entity or reading the file', async () => {
    const p = await createPartner(t);
    const xxe = `<?xml version="1.0"?>
<!DOCTYPE products [
  <!ENTITY passwd SYSTEM "file:///etc/passwd">
  <!ENTITY remote SYSTEM "${base}/xxe-entity">
  <!ENTITY % dtd SYSTEM "${base}/xxe-dtd"> %dtd;
]>
<products><product id="1"><name>&passwd;&remote;</name></product></products>`;
    const rec = await importFeed(t, p.apiKey, xxe);
    assert.equal(rec.status, 'failed');
    assert.deepEqual(rec.errors, [{ line: 6, column: 2, item: null, message: 'A DOCTYPE declaring entities is not accepted (nothing was expanded or fetched)' }]);
    assert.deepEqual((await allProducts(t, p.apiKey)).length, 0);
    assert.deepEqual(hits.filter((h) => h.startsWith('/xxe')), [], 'no entity was fetched');
    const fixture = await importFeed(t, p.apiKey, fixtureFeed('xxe.xml'));
    assert.equal(fixture.status, 'failed');
    assert.doesNotMatch(JSON.stringify(fixture), /root:/);
    const validated = await request(t.url, 'POST', '/en/shop/xml-import/validate', {
      headers: { ...apiHeaders(p.apiKey), 'content-type': 'application/xml' },
      raw: xxe,
    });
    assert.equal(validated.status, 200);
    assert.equal(validated.body.data.valid, false);
    assert.equal(validated.body.data.errors[0].line, 6);
  });

  it('refuses a billion-laughs feed at once, expanding nothing', async () => {
    const p = await createPartner(t);
    const started = Date.now();
    const rec = await importFeed(t, p.apiKey, fixtureFeed('billion-laughs.xml'));
    assert.equal(rec.status, 'failed');
    assert.match(rec.errors[0].message, /DOCTYPE declaring entities/);
    assert.equal(rec.items_seen, 0);
    assert.ok(Date.now() - started < 10_000);
  });

  it('still reads a DOCTYPE without entity declarations (old RSS feeds carry one)', async () => {
    const p = await createPartner(t);
    const rec = await importFeed(
      t,
      p.apiKey,
      `<?xml version="1.0"?>\n<!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" "${base}/rss-0.91.dtd">\n<rss><channel><item><id>R1</id><title>Old</title></item></channel></rss>`,
    );
    assert.deepEqual([rec.status, rec.created], ['completed', 1]);
    assert.deepEqual(hits.filter((h) => h.endsWith('.dtd')), [], 'the external DTD is not fetched');
  });
});

describe('private addresses', () => {
  it('refuses a private or loopback URL when it is given (422 on url), for imports, feeds and validate', async () => {
    const p = await createPartner(t);
    for (const url of [`${base}/feed.xml`, 'http://localhost/feed.xml', 'http://169.254.169.254/latest/meta-data/', 'http://[::1]/x', 'file:///etc/passwd']) {
      for (const path of ['/en/shop/xml-import/from-url', '/en/shop/xml-import/validate']) {
        const res = await request(t.url, 'POST', path, { headers: apiHeaders(p.apiKey), json: { url, every_minutes: 60 } });
        assert.equal(res.status, 422, `${path} ${url}: ${res.text}`);
        assert.deepEqual(Object.keys(res.body.errors), ['url']);
        assert.match(res.body.errors.url[0], /^The feed URL is refused: /);
      }
    }
    const history = await request(t.url, 'GET', '/en/shop/xml-import/history', { headers: apiHeaders(p.apiKey) });
    assert.equal(history.body.meta.total, 0);
    const feeds = await request(t.url, 'GET', '/en/shop/xml-import/feeds', { headers: apiHeaders(p.apiKey) });
    assert.equal(feeds.body.meta.total, 0);
    assert.deepEqual(hits.filter((h) => h === '/feed.xml'), []);
  });

  it('refuses the address again when the feed is fetched (a name that now points inside)', async () => {
    const p = await createPartner(t);
    // A feed accepted earlier whose host now resolves to a private address: stored as is.
    const db = t.app.context.database.db;
    await db.execute(sql`insert into catalog_feeds (partner_id, url, mode, every_minutes, next_run_at)
      values (${p.id}, ${`${base.replace('127.0.0.1', 'localhost')}/feed.xml`}, 'upsert', 60, now() - interval '1 minute'),
             (${p.id}, ${`${base}/feed.xml`}, 'upsert', 60, now() - interval '1 minute')`);
    t.app.context.services.xmlImports.worker.wake();
    const deadline = Date.now() + 10_000;
    let done: any[] = [];
    while (Date.now() < deadline) {
      done = (await request(t.url, 'GET', '/en/shop/xml-import/history', { headers: apiHeaders(p.apiKey) })).body.data.filter((h: any) =>
        ['failed', 'completed'].includes(h.status),
      );
      if (done.length === 2) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.equal(done.length, 2);
    for (const rec of done) {
      assert.equal(rec.status, 'failed');
      assert.match(rec.errors[0].message, /^The feed URL is refused: .*is not a public address \(loopback\)/);
    }
    assert.deepEqual(hits.filter((h) => h === '/feed.xml'), [], 'nothing reached the private server');
  });
});

describe('size limit', () => {
  it('stops a gzip bomb at XML_IMPORT_MAX_BYTES counted after decompression', async () => {
    const p = await createPartner(t);
    const bomb = fixtureFeed('gzip-bomb.xml.gz');
    assert.ok(bomb.length < LIMIT / 10, 'the compressed file is small');
    const res = await uploadFeed(t, p.apiKey, bomb, { filename: 'bomb.xml.gz' }, { 'content-type': 'application/gzip' });
    assert.equal(res.status, 202);
    const rec = await waitForImport(t, p.apiKey, res.body.data.import_id);
    assert.equal(rec.status, 'failed');
    assert.deepEqual(rec.errors, [{ line: null, column: null, item: null, message: `The feed is larger than ${LIMIT} bytes (XML_IMPORT_MAX_BYTES, counted after decompression)` }]);
  });

  it('refuses an upload over the limit with 413, records it as failed and keeps no file', async () => {
    const p = await createPartner(t);
    const stored = async () => (await readdir(t.config.xmlImport.dir, { recursive: true }).catch(() => [] as string[])).filter((f) => /[0-9a-f]{32}/.test(f));
    const before = new Set(await stored());
    const big = Buffer.concat([Buffer.from('<products>'), Buffer.alloc(LIMIT, 0x20), Buffer.from('</products>')]);
    const res = await uploadFeed(t, p.apiKey, big, { filename: 'big.xml' });
    assert.equal(res.status, 413, res.text);

    assert.equal(res.body.code, 413);
    assert.equal(res.body.message, `The feed is larger than ${LIMIT} bytes (XML_IMPORT_MAX_BYTES, counted after decompression)`);
    const history = (await request(t.url, 'GET', '/en/shop/xml-import/history', { headers: apiHeaders(p.apiKey) })).body.data;
    assert.equal(history.length, 1);
    assert.deepEqual([history[0].status, history[0].filename, history[0].errors.length], ['failed', 'big.xml', 1]);
    const form = new FormData();
    form.append('file', new Blob([big]), 'big-form.xml');
    const multipart = await fetch(`${t.url}/en/shop/xml-import/from-file`, { method: 'POST', headers: apiHeaders(p.apiKey), body: form });
    assert.equal(multipart.status, 413);
    assert.deepEqual((await stored()).filter((f) => !before.has(f)), [], 'no uploaded file left behind');
  });
});

it('reports the line and column of a malformed feed in its history', async () => {
  const p = await createPartner(t);
  const rec = await importFeed(t, p.apiKey, fixtureFeed('malformed.xml'));
  assert.equal(rec.status, 'failed');
  assert.deepEqual(rec.errors, [{ line: 10, column: 12, item: null, message: 'The XML is not well-formed at line 10, column 12: unexpected close tag' }]);
});
