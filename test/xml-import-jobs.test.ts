// The import job (DESIGN.md §9 "durable job row, any node"): an import interrupted too often
// is marked failed instead of staying `running`; a node that stops hands its import back and
// another resumes it; several nodes on one database run every import once, never two of one
// partner at a time; a due feed is queued once however many nodes look. Real concurrency on
// PostgreSQL (DATABASE_URL); the same assertions hold on the embedded store.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { LocalFileStore } from '../src/infra/files.js';
import { noImportedOffers } from '../src/modules/catalog/imported-offers.js';
import { importsRepository } from '../src/modules/catalog/imports.repository.js';
import { XmlImportService } from '../src/modules/catalog/xml-import.service.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { uploadFeed, waitForImport } from './helpers/catalog.js';
import { createPartner } from './helpers/fixtures.js';
import { apiHeaders, request } from './helpers/http.js';

let t: TestApp;
const rows = async <T>(q: ReturnType<typeof sql>) => ((await t.app.context.database.db.execute(q)) as unknown as { rows: T[] }).rows;

const feed = (prefix: string, n: number) =>
  `<products>${Array.from({ length: n }, (_, i) => `<product id="${prefix}${i}"><name>Item ${i}</name><price>${i}.50</price></product>`).join('')}</products>`;

/** Another node: its own import service and worker on the same database. */
function node(t: TestApp): XmlImportService {
  const c = t.config.xmlImport;
  return new XmlImportService({
    database: t.app.context.database,
    fileStore: new LocalFileStore(c.dir),
    offers: noImportedOffers,
    publish: async () => undefined,
    maxBytes: c.maxBytes,
    timeoutMs: c.timeoutMs,
    leaseMs: 2000,
    concurrency: 2,
    pollIntervalMs: 20,
    allowPrivateUrls: true,
  });
}

before(async () => {
  t = await startTestApp({ ALLOW_PRIVATE_URLS: 'true', XML_IMPORT_LEASE_MS: '2000' });
});
after(() => t.close());

describe('interruptions', () => {
  it('marks an import failed once it was interrupted MAX_ATTEMPTS times, instead of leaving it running', async () => {
    const p = await createPartner(t);
    const [row] = await rows<{ id: number }>(sql`insert into catalog_imports (partner_id, source, url, status, mode, attempts, lease_until, started_at)
      values (${p.id}, 'url', 'http://127.0.0.1:9/never', 'running', 'upsert', 3, now() - interval '1 second', now()) returning id`);
    t.app.context.services.xmlImports.worker.wake();
    const rec = await waitForImport(t, p.apiKey, row!.id);
    assert.equal(rec.status, 'failed');
    assert.deepEqual(rec.errors, [{ line: null, column: null, item: null, message: 'The import was interrupted 3 times (a node stopped while running it) and was given up' }]);
  });

  it('hands an import back when its node stops, and another node resumes it', async () => {
    const p = await createPartner(t);
    let release: (() => void) | undefined;
    let served = 0;
    const server = http.createServer((_req, res) => {
      res.writeHead(200);
      res.write(`<products>${feed('G', 2500).slice('<products>'.length, -'</products>'.length)}`);
      // The first answer stalls until released; later ones are whole.
      if (served++ === 0) release = () => res.end('</products>');
      else res.end('</products>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/feed.xml`;
      const res = await request(t.url, 'POST', '/en/shop/xml-import/from-url', { headers: apiHeaders(p.apiKey), json: { url } });
      const id = res.body.data.import_id;
      let committed = 0;
      while (committed === 0) {
        const [r] = await rows<{ items_seen: number }>(sql`select items_seen from catalog_imports where id = ${id}`);
        committed = r!.items_seen;
        if (committed === 0) await new Promise((r) => setTimeout(r, 20));
      }
      await t.app.context.services.xmlImports.stop();
      const [stopped] = await rows<{ status: string; attempts: number; items_seen: number }>(sql`select status, attempts, items_seen from catalog_imports where id = ${id}`);
      assert.equal(stopped!.status, 'queued');
      assert.equal(stopped!.attempts, 0);
      assert.ok(stopped!.items_seen >= committed && stopped!.items_seen < 2500, String(stopped!.items_seen));
      release?.();
      const other = node(t);
      await other.start();
      try {
        const rec = await waitForImport(t, p.apiKey, id);
        assert.deepEqual([rec.status, rec.items_seen, rec.created, rec.skipped], ['completed', 2500, 2500, 0]);
      } finally {
        await other.stop();
      }
    } finally {
      await t.app.context.services.xmlImports.start();
      release?.();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('several nodes on one database', () => {
  it('run each import once, one at a time per partner', async () => {
    await t.app.context.services.xmlImports.stop();
    const nodes = [node(t), node(t), node(t)];
    try {
      const partners = [await createPartner(t), await createPartner(t), await createPartner(t)];
      const ids: Array<{ p: (typeof partners)[number]; id: number }> = [];
      for (let i = 0; i < 12; i++) {
        const p = partners[i % 3]!;
        const res = await uploadFeed(t, p.apiKey, feed(`N${i}-`, 300));
        assert.equal(res.status, 202);
        ids.push({ p, id: res.body.data.import_id });
      }
      await Promise.all(nodes.map((n) => n.start()));
      for (const { p, id } of ids) assert.equal((await waitForImport(t, p.apiKey, id)).created, 300);
      const done = await rows<{ partner_id: number; attempts: number; started_at: string; finished_at: string }>(
        sql`select partner_id, attempts, started_at, finished_at from catalog_imports where id in ${sql.raw(`(${ids.map((x) => x.id).join(',')})`)} order by started_at`,
      );
      assert.ok(done.every((d) => d.attempts === 1), 'each claimed once');
      for (const p of partners) {
        const own = done.filter((d) => d.partner_id === p.id);
        for (let i = 1; i < own.length; i++) assert.ok(new Date(own[i]!.started_at) >= new Date(own[i - 1]!.finished_at), 'never two of one partner at once');
      }
      const [products] = await rows<{ n: number }>(sql`select count(*)::int as n from catalog_products where import_key like 'xml_id:N%'`);
      assert.equal(products!.n, 12 * 300);
    } finally {
      await Promise.all(nodes.map((n) => n.stop()));
      await t.app.context.services.xmlImports.start();
    }
  });

  it('queue a due feed once, however many look at the same moment', async () => {
    const p = await createPartner(t);
    await t.app.context.services.xmlImports.stop();
    try {
      for (let i = 0; i < 10; i++) {
        await t.app.context.database.db.execute(sql`insert into catalog_feeds (partner_id, url, mode, every_minutes, next_run_at)
          values (${p.id}, ${`http://127.0.0.1:9/feed-${i}.xml`}, 'upsert', 15, now() - interval '1 second')`);
      }
      const results = await Promise.all(Array.from({ length: 4 }, () => importsRepository.queueDueFeeds(t.app.context.database.db, 20)));
      assert.equal(results.flat().length, 10);
      const perFeed = await rows<{ feed_id: number; n: number }>(sql`select feed_id, count(*)::int as n from catalog_imports where partner_id = ${p.id} group by feed_id`);
      assert.equal(perFeed.length, 10);
      assert.ok(perFeed.every((f) => f.n === 1));
      const [next] = await rows<{ ok: boolean }>(sql`select bool_and(next_run_at > now() + interval '14 minutes') as ok from catalog_feeds where partner_id = ${p.id}`);
      assert.equal(next!.ok, true);
      // Due again while the earlier run is still queued: skipped, not stacked.
      await t.app.context.database.db.execute(sql`update catalog_feeds set next_run_at = now() - interval '1 second' where partner_id = ${p.id}`);
      assert.equal((await importsRepository.queueDueFeeds(t.app.context.database.db, 20)).length, 0);
    } finally {
      await t.app.context.database.db.execute(sql`delete from catalog_imports where partner_id = ${p.id} and status = 'queued'`);
      await t.app.context.services.xmlImports.start();
    }
  });
});
