// Issue 12, "resume or fail an import interrupted by a process kill": a server process is
// killed (SIGKILL) while an import is half-way through its feed; the import row is left
// `running` with a lease nobody renews. A new process on the same store claims it once the
// lease ran out and resumes after the last committed batch: the import completes with every
// item counted exactly once and no product written twice. Runs on the embedded store and,
// with DATABASE_URL, on PostgreSQL.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { openDatabase } from '../src/infra/db/index.js';
import { waitForImport } from './helpers/catalog.js';
import { apiHeaders, request } from './helpers/http.js';
import { processStore, startServerProcess, type ProcessStore } from './helpers/server-process.js';

const ITEMS = 3000;
const HANG_AFTER = 2200;

const item = (i: number) => `<product id="P${i}"><name>Product ${i}</name><price>${i}.99</price><category>Group ${i % 7}</category></product>\n`;

describe('an import survives SIGKILL', () => {
  let shared: ProcessStore;
  let feedServer: http.Server;
  let feedUrl: string;
  let requests = 0;
  const hanging: http.ServerResponse[] = [];

  before(async () => {
    shared = await processStore('loyalty-import-crash-');
    // The first fetch sends most of the feed and then stalls (the node is killed meanwhile);
    // later fetches send it whole.
    feedServer = http.createServer((_req, res) => {
      requests++;
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.write('<?xml version="1.0"?>\n<products>\n');
      const stall = requests === 1;
      const upTo = stall ? HANG_AFTER : ITEMS;
      let body = '';
      for (let i = 1; i <= upTo; i++) body += item(i);
      res.write(body);
      if (stall) hanging.push(res);
      else res.end('</products>\n');
    });
    await new Promise<void>((resolve) => feedServer.listen(0, '127.0.0.1', resolve));
    feedUrl = `http://127.0.0.1:${(feedServer.address() as AddressInfo).port}/feed.xml`;
  });
  after(async () => {
    await shared?.close();
    for (const res of hanging) res.destroy();
    await new Promise((resolve) => feedServer.close(resolve));
  });

  const env = () =>
    shared.env({
      ALLOW_PRIVATE_URLS: 'true',
      XML_IMPORT_LEASE_MS: '1500',
      XML_IMPORT_TIMEOUT_MS: '60000',
    });

  it('resumes after the last committed batch and completes with exact counts', { timeout: 240_000 }, async () => {
    const first = await startServerProcess(env());
    shared.servers.push(first);
    assert.ok(first.apiKey, 'the demo seed printed API credentials');
    const key = first.apiKey;
    const res = await request(first.url, 'POST', '/en/shop/xml-import/from-url', { headers: apiHeaders(key), json: { url: feedUrl } });
    assert.equal(res.status, 202, res.text);
    const id = res.body.data.import_id;

    // Killed once some batches are committed and the feed is stalled mid-way.
    const deadline = Date.now() + 90_000;
    let seen = 0;
    while (seen < 1000) {
      const rec = await request(first.url, 'GET', `/en/shop/xml-import/${id}`, { headers: apiHeaders(key) });
      assert.ok(['queued', 'running'].includes(rec.body.data.status), rec.text);
      seen = rec.body.data.items_seen;
      assert.ok(Date.now() < deadline, `only ${seen} items committed`);
      if (seen < 1000) await new Promise((r) => setTimeout(r, 25));
    }
    await first.kill('SIGKILL');

    const second = await startServerProcess(env());
    shared.servers.push(second);
    const rec = await waitForImport(second, key, id, 90_000);
    assert.deepEqual(
      { status: rec.status, items_seen: rec.items_seen, created: rec.created, updated: rec.updated, unchanged: rec.unchanged, skipped: rec.skipped, errors_count: rec.errors_count },
      { status: 'completed', items_seen: ITEMS, created: ITEMS, updated: 0, unchanged: 0, skipped: 0, errors_count: 0 },
    );
    assert.equal(requests, 2, 'fetched again by the node that resumed it');
    assert.equal(await second.kill('SIGTERM'), 0);

    const store = await openDatabase({ databaseUrl: shared.db?.url, databasePoolMax: 2, dataDir: shared.dataDir });
    try {
      const rows = async <T>(q: ReturnType<typeof sql>) => ((await store.db.execute(q)) as unknown as { rows: T[] }).rows;
      const [counts] = await rows<{ products: number; keys: number; attempts: number; last: number }>(sql`
        select (select count(*)::int from catalog_products) as products,
               (select count(distinct import_key)::int from catalog_products) as keys,
               (select attempts from catalog_imports where id = ${id}) as attempts,
               (select count(*)::int from catalog_products where last_import_id = ${id}) as last`);
      assert.deepEqual(counts, { products: ITEMS, keys: ITEMS, attempts: 2, last: ITEMS });
      const [price] = await rows<{ price: string }>(sql`select price::text from catalog_products where import_key = 'xml_id:P2345'`);
      assert.equal(price?.price, '2345.9900');
    } finally {
      await store.close();
    }
  });
});
