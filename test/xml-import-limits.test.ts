// The bounds that keep an import's memory flat whatever the feed declares (DESIGN.md §9
// "Memory stays flat with the default settings"), over HTTP: the categories an import keeps
// ids of (MAX_IMPORT_CATEGORIES), past which further categories are not linked, with one error;
// and the server thread's heap during a large import (IMPORT_HEAP_SLACK_MB; on PostgreSQL it grew
// by 140 MB without it — on PGlite the queries themselves make V8 collect often).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import v8 from 'node:v8';
import { sql } from 'drizzle-orm';
import { IMPORT_HEAP_SLACK_MB, MAX_IMPORT_CATEGORIES } from '../src/modules/catalog/import-job.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { importFeed, uploadFeed, waitForImport } from './helpers/catalog.js';
import { createPartner } from './helpers/fixtures.js';
import { apiHeaders, request } from './helpers/http.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(async () => {
  await t.close();
});

it(`keeps ids of at most MAX_IMPORT_CATEGORIES (${MAX_IMPORT_CATEGORIES}) categories per import: the rest are not created or linked, with one error`, async () => {
  const p = await createPartner(t);
  // 410 items × 50 categories (an item's most), every one new: 20,500 categories (top-level
  // ones: a tree's parent links would only slow the test).
  const depth = 1;
  const perItem = 50;
  const items = 410;
  const path = (i: number, j: number) => Array.from({ length: depth }, (_, d) => `C${i}-${j}-${d}`).join(' &gt; ');
  const item = (i: number) =>
    `<product id="P${i}"><name>Item ${i}</name><price>1.00</price>${Array.from({ length: perItem }, (_, j) => `<category>${path(i, j)}</category>`).join('')}</product>\n`;
  const feed = `<?xml version="1.0" encoding="UTF-8"?>\n<products>\n${Array.from({ length: items }, (_, i) => item(i + 1)).join('')}</products>\n`;
  const rec = await importFeed(t, p.apiKey, feed);
  assert.equal(rec.status, 'completed', JSON.stringify(rec.errors));
  assert.deepEqual([rec.created, rec.skipped], [items, 0]);
  const limitErrors = rec.errors.filter((e: { message: string }) => e.message.includes('categories'));
  assert.equal(limitErrors.length, 1);
  assert.equal(limitErrors[0].message, `The feed has more than ${MAX_IMPORT_CATEGORIES} categories; the rest are not linked`);
  assert.ok(limitErrors[0].item > 1 && limitErrors[0].line > 1, JSON.stringify(limitErrors[0]));

  // validate runs where the import runs and judges categories as it does: the same one error,
  // at the same item (before, it said nothing of the limit).
  const validated = await request(t.url, 'POST', '/en/shop/xml-import/validate', {
    headers: { ...apiHeaders(p.apiKey), 'content-type': 'application/xml' },
    raw: Buffer.from(feed),
  });
  assert.equal(validated.status, 200, validated.text);
  assert.equal(validated.body.data.valid, true);
  assert.deepEqual(validated.body.data.errors, rec.errors);

  const rows = async <T>(q: ReturnType<typeof sql>) => ((await t.app.context.database.db.execute(q)) as unknown as { rows: T[] }).rows;
  const [counts] = await rows<{ categories: number; linked: number }>(sql`
    select (select count(*)::int from catalog_categories where partner_id = ${p.id}) as categories,
           (select count(distinct pc.category_id)::int from catalog_product_categories pc
              join catalog_products pr on pr.id = pc.product_id where pr.partner_id = ${p.id}) as linked`);
  assert.ok(counts!.categories <= MAX_IMPORT_CATEGORIES && counts!.categories > MAX_IMPORT_CATEGORIES - perItem * depth, JSON.stringify(counts));
  // Each linked category is the leaf of a path; the leaves written are all linked.
  assert.equal(counts!.linked, counts!.categories / depth);
  // The first item's categories are all there, the last item's none of them.
  const [first] = await rows<{ n: number }>(sql`select count(*)::int as n from catalog_categories where partner_id = ${p.id} and name like 'C1-%'`);
  const [last] = await rows<{ n: number }>(sql`select count(*)::int as n from catalog_categories where partner_id = ${p.id} and name like ${`C${items}-%`}`);
  assert.deepEqual([first!.n, last!.n], [perItem * depth, 0]);
});

it(`keeps the server's heap within IMPORT_HEAP_SLACK_MB (${IMPORT_HEAP_SLACK_MB} MB) of growth while a large feed imports`, async () => {
  const p = await createPartner(t);
  const n = 40_000;
  const item = (i: number) =>
    `<product id="H${i}"><name>Item ${i}</name><sku>SKU-${i}</sku><price>${(i % 900) + 1}.99</price><category>Cat ${i % 30} &gt; Sub ${i % 7}</category>` +
    `<description>Porcelain cup ${i}: dishwasher and microwave safe, 300 ml, white with a blue rim, made in Lithuania, two years of warranty.</description></product>\n`;
  const feed = Buffer.from(`<products>\n${Array.from({ length: n }, (_, i) => item(i + 1)).join('')}</products>\n`);
  const used = () => v8.getHeapStatistics().used_heap_size;
  const start = used();
  let peak = start;
  const sampler = setInterval(() => (peak = Math.max(peak, used())), 5);
  try {
    const res = await uploadFeed(t, p.apiKey, feed);
    assert.equal(res.status, 202, res.text);
    const rec = await waitForImport(t, p.apiKey, res.body.data.import_id, 240_000);
    assert.deepEqual([rec.status, rec.created], ['completed', n]);
  } finally {
    clearInterval(sampler);
  }
  const grewMb = (peak - start) / 1024 / 1024;
  // The slack, plus one batch arriving and the feed held by this test (~8 MB as text).
  assert.ok(grewMb < IMPORT_HEAP_SLACK_MB + 32, `heap grew ${grewMb.toFixed(0)} MB`);

  // validate parses in the import's worker too: the server's heap holds one batch at a time
  // and the keys' digests, not the parse. Measured on this 8 MB feed: 25 MB of growth, 44 MB
  // when validate parsed on this thread (239 MB for a 101 MB feed: it grew with the feed).
  const before = used();
  peak = before;
  const validating = setInterval(() => (peak = Math.max(peak, used())), 5);
  try {
    const validated = await request(t.url, 'POST', '/en/shop/xml-import/validate', {
      headers: { ...apiHeaders(p.apiKey), 'content-type': 'application/xml' },
      raw: feed,
    });
    assert.equal(validated.status, 200, validated.text);
    assert.deepEqual([validated.body.data.valid, validated.body.data.items_found, validated.body.data.errors], [true, n, []]);
  } finally {
    clearInterval(validating);
  }
  const validateMb = (peak - before) / 1024 / 1024;
  assert.ok(validateMb < IMPORT_HEAP_SLACK_MB + 32, `validate: heap grew ${validateMb.toFixed(0)} MB`);
});
