// The import's parse in its worker thread (feed-worker.ts), without a database: the batches
// it posts, and the bounds that keep its memory flat whatever the feed holds.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { FeedError } from './feed-parser.js';
import { BATCH_SIZE, MAX_BATCH_CHARS, MAX_CATEGORY_DEFINITIONS, parseFeed, type ParsedBatch } from './feed-worker.js';

/** The text in chunks of 64 KiB, as a file stream gives it. */
function* chunks(text: string): Generator<Buffer> {
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += 65536) yield bytes.subarray(i, i + 65536);
}

async function batchesOf(xml: string, resumeAfter = 0): Promise<ParsedBatch[]> {
  const out: ParsedBatch[] = [];
  for await (const b of parseFeed(Readable.from(chunks(xml)), { resumeAfter, mapping: null, maxBytes: 200 * 1024 * 1024, signal: new AbortController().signal })) {
    out.push(b);
  }
  return out;
}

const product = (i: number, description = 'd') => `<product id="P${i}"><name>Item ${i}</name><price>1.00</price><description>${description}</description></product>\n`;

describe('feed worker', () => {
  it('posts batches of BATCH_SIZE items in feed order, the last one final, and skips the items a resumed import wrote', async () => {
    const n = BATCH_SIZE * 2 + 10;
    const xml = `<products>\n${Array.from({ length: n }, (_, i) => product(i + 1)).join('')}</products>`;
    const batches = await batchesOf(xml);
    assert.equal(batches.reduce((s, b) => s + b.items.length, 0), n);
    assert.ok(batches.every((b, i) => b.final === (i === batches.length - 1)));
    assert.ok(batches.slice(0, -1).every((b) => b.items.length >= BATCH_SIZE && b.items.length < 2 * BATCH_SIZE));
    const indexes = batches.flatMap((b) => b.items.map((it) => it.item));
    assert.deepEqual(indexes, Array.from({ length: n }, (_, i) => i + 1));
    const first = batches[0]!.items[0]!;
    assert.equal(first.result.ok && first.result.product.xml_id, 'P1');

    const resumed = await batchesOf(xml, 1500);
    assert.deepEqual(resumed.flatMap((b) => b.items.map((it) => it.item))[0], 1501);
    assert.equal(resumed.reduce((s, b) => s + b.items.length, 0), n - 1500);
  });

  it('cuts a batch at MAX_BATCH_CHARS of text, so a batch of large items stays small', async () => {
    const description = 'x'.repeat(60_000);
    const n = Math.ceil((MAX_BATCH_CHARS * 2.5) / description.length);
    const batches = await batchesOf(`<products>${Array.from({ length: n }, (_, i) => product(i + 1, description)).join('')}</products>`);
    assert.ok(batches.length >= 3, `${batches.length} batches`);
    for (const b of batches) assert.ok(b.items.length * description.length < MAX_BATCH_CHARS + 10 * description.length, `${b.items.length} items`);
    assert.equal(batches.reduce((s, b) => s + b.items.length, 0), n);
  });

  it(`keeps at most MAX_CATEGORY_DEFINITIONS (${MAX_CATEGORY_DEFINITIONS}) category definitions, with one error; an item naming one past it has an undefined category`, async () => {
    const over = MAX_CATEGORY_DEFINITIONS + 5;
    const categories = Array.from({ length: over }, (_, i) => `<category id="${i + 1}">C${i + 1}</category>`).join('\n');
    const xml = `<yml_catalog><shop><categories>\n${categories}\n</categories><offers>
<offer id="a"><name>In</name><price>1</price><categoryId>${MAX_CATEGORY_DEFINITIONS}</categoryId></offer>
<offer id="b"><name>Out</name><price>1</price><categoryId>${over}</categoryId></offer>
</offers></shop></yml_catalog>`;
    const batches = await batchesOf(xml);
    const definitions = batches.flatMap((b) => b.definitions);
    assert.equal(definitions.length, MAX_CATEGORY_DEFINITIONS);
    assert.equal(definitions.at(-1)!.key, `id:${MAX_CATEGORY_DEFINITIONS}`);
    const errors = batches.flatMap((b) => b.errors);
    assert.deepEqual(errors.map((e) => [e.key, e.params]), [['catalog.categories_limit', { limit: MAX_CATEGORY_DEFINITIONS }]]);
    const [a, b] = batches.flatMap((x) => x.items).map((it) => it.result);
    assert.ok(a?.ok && b?.ok);
    assert.deepEqual(a.product.categories, [{ key: `id:${MAX_CATEGORY_DEFINITIONS}` }]);
    assert.deepEqual(a.warnings, []);
    assert.deepEqual(b.product.categories, []);
    assert.deepEqual(b.warnings.map((w) => w.key), ['catalog.item_unknown_category']);
  });

  it('reports what the feed did wrong as a FeedError with its position, after the batches before it', async () => {
    const n = BATCH_SIZE * 3;
    const xml = `<products>\n${Array.from({ length: n }, (_, i) => product(i + 1)).join('')}<product><name>x</nam></products>`;
    const seen: number[] = [];
    await assert.rejects(
      (async () => {
        for await (const b of parseFeed(Readable.from(chunks(xml)), { resumeAfter: 0, mapping: null, maxBytes: 1e8, signal: new AbortController().signal })) seen.push(b.items.length);
      })(),
      (err: unknown) => err instanceof FeedError && err.key === 'catalog.feed_malformed' && err.line === n + 2,
    );
    assert.ok(seen.length >= 1 && seen.reduce((a, b) => a + b, 0) < n, `${seen.length} batches before the error`);
    await assert.rejects(batchesOf('<rss><channel><title>no items</title></channel></rss>'), (err: unknown) => err instanceof FeedError && err.key === 'catalog.feed_no_items');
  });

  it('fails the feed, not the server, when the worker outgrows its heap limit', async () => {
    // A comment of 6 M two-byte characters (under MAX_CONSTRUCT_CHARS): saxes holds it whole,
    // 12 MB and its copies — more than a 16 MB heap has room for beside the worker's modules.
    const xml = `<products><!-- ${'ą'.repeat(6_000_000)} --><product id="1"><name>n</name></product></products>`;
    await assert.rejects(
      (async () => {
        const opts = { resumeAfter: 0, mapping: null, maxBytes: 1e9, signal: new AbortController().signal, limits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 2 } };
        for await (const b of parseFeed(Readable.from(chunks(xml)), opts)) void b;
      })(),
      (err: unknown) => err instanceof FeedError && err.key === 'catalog.feed_memory',
    );
  });
});
