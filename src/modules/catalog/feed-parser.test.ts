// The feed reading pipeline without a database: bytes → text (gzip, encodings, limit) →
// items (saxes) → mapped products, on the fixture feeds of test/fixtures/feeds/.
import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import v8 from 'node:v8';
import { resolveMapping, type Dialect } from './feed-format.js';
import { FeedError, FeedParser, MAX_GOOGLE_PREFIXES, type CategoryDefinition, type RawItem } from './feed-parser.js';
import { feedText, sniffEncoding } from './feed-reader.js';
import { mapItem, parseFlag, parsePrice, type MappedProduct } from './product-mapper.js';

const fixture = (name: string) => new URL(`../../../test/fixtures/feeds/${name}`, import.meta.url);

async function read(source: AsyncIterable<Buffer>, opts: { maxBytes?: number; mapping?: Record<string, string> } = {}) {
  const items: RawItem[] = [];
  const categories: CategoryDefinition[] = [];
  let dialect: Dialect = 'generic';
  const parser = new FeedParser({ item: (i) => items.push(i), category: (c) => categories.push(c), root: (d) => (dialect = d) });
  for await (const text of feedText(source, { maxBytes: opts.maxBytes ?? 10 * 1024 * 1024 })) parser.write(text);
  parser.close();
  const mapping = resolveMapping(dialect, opts.mapping);
  const mapped = items.map((i) => mapItem(i, mapping, dialect));
  return { parser, items, categories, dialect, mapped };
}

const readFile_ = (name: string, opts?: Parameters<typeof read>[1]) => read(createReadStream(fixture(name)), opts);
const readText = (xml: string, opts?: Parameters<typeof read>[1]) => read(Readable.from([Buffer.from(xml)]), opts);
const products = (r: Awaited<ReturnType<typeof read>>) =>
  r.mapped.filter((m): m is Extract<typeof m, { ok: true }> => m.ok).map((m) => m.product);
const byKey = (list: MappedProduct[]) => new Map(list.map((p) => [p.importKey, p]));

async function failure(promise: Promise<unknown>): Promise<FeedError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof FeedError, `expected a FeedError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the feed to be refused');
}

describe('feed reading', () => {
  it('reads a home-made feed: attributes as tags, nested categories, comma decimals, skips with lines', async () => {
    const r = await readFile_('home-made.xml');
    assert.equal(r.parser.itemElement, 'products/product');
    assert.equal(r.items.length, 5);
    const list = products(r);
    assert.equal(list.length, 3);
    const mug = byKey(list).get('xml_id:1001')!;
    assert.equal(mug.name, 'Kavos puodelis „Vilnius“');
    assert.equal(mug.description, '<p>Porcelianinis puodelis, 300 ml.</p>');
    assert.equal(mug.sku, 'MUG-300');
    assert.equal(mug.external_id, '1001');
    assert.equal(mug.price, '12.9900');
    assert.equal(mug.discounted_price, '9.9900');
    assert.equal(mug.stock_quantity, 25);
    assert.equal(mug.availability, true);
    assert.equal(mug.featured, true);
    assert.deepEqual(mug.categories.map((c) => c.key), ['path:Namai > Virtuvė', 'path:Dovanos']);
    const teapot = byKey(list).get('xml_id:1002')!;
    assert.equal(teapot.price, '19.9900');
    assert.equal(teapot.availability, false);
    assert.equal(teapot.weight, '0.8 kg');
    assert.equal(byKey(list).get('xml_id:1003')!.price, '1299.5000');
    const skipped = r.mapped.filter((m) => !m.ok).map((m) => (m.ok ? undefined : m.error));
    assert.deepEqual(skipped, [
      { line: 40, column: 13, item: 4, key: 'catalog.item_no_name' },
      { line: 44, column: 13, item: 5, key: 'catalog.item_no_key' },
    ]);
  });

  it('reads YML: categories block with parents, categoryId, available attribute, oldprice as the price', async () => {
    const r = await readFile_('yml.xml');
    assert.equal(r.dialect, 'yml');
    assert.equal(r.parser.itemElement, 'offers/offer');
    assert.deepEqual(
      r.categories.map((c) => [c.id, c.parentId, c.name]),
      [
        ['1', null, 'Elektronika'],
        ['2', '1', 'Telefonai'],
        ['3', '1', 'Ausinės'],
      ],
    );
    const [phone, headphones] = products(r);
    assert.equal(phone!.importKey, 'xml_id:A-1');
    assert.equal(phone!.price, '249.0000');
    assert.equal(phone!.discounted_price, '199.0000');
    assert.equal(phone!.currency, 'EUR');
    assert.equal(phone!.brand, 'Acme');
    assert.equal(phone!.ean, '4770000000028');
    assert.equal(phone!.image_url, 'https://demo.example.lt/img/a-1.jpg');
    assert.deepEqual(phone!.categories, [{ key: 'id:2' }]);
    assert.equal(headphones!.availability, false);
    assert.equal(headphones!.discounted_price, null);
  });

  it('reads Google Merchant RSS: g: elements by local name, "12.99 EUR" prices, nested g:shipping ignored', async () => {
    const r = await readFile_('google.xml');
    assert.equal(r.dialect, 'google');
    assert.equal(r.parser.itemElement, 'item');
    const [shoes, socks] = products(r);
    assert.equal(shoes!.importKey, 'xml_id:G-100');
    assert.equal(shoes!.name, 'Running shoes');
    assert.equal(shoes!.price, '89.9900');
    assert.equal(shoes!.discounted_price, '69.9900');
    assert.equal(shoes!.currency, 'EUR');
    assert.equal(shoes!.ean, '4006381333931');
    assert.equal(shoes!.image_url, 'https://shop.example.com/img/g-100.jpg');
    assert.equal(shoes!.external_url, 'https://shop.example.com/p/g-100');
    assert.equal(shoes!.delivery_info, 'LT 3.99 EUR');
    assert.deepEqual(shoes!.categories.map((c) => c.key), ['path:Apparel > Shoes']);
    assert.equal(socks!.availability, false);
  });

  it('decodes windows-1257 and UTF-16 from the declaration and the byte-order mark', async () => {
    const lt = products(await readFile_('windows-1257.xml'));
    assert.equal(lt[0]!.name, 'Šaltibarščių rinkinys – ąčęėįšųūž ĄČĘĖĮŠŲŪŽ');
    assert.equal(lt[0]!.price, '4.5000');
    const u16 = products(await readFile_('utf-16.xml'));
    assert.equal(u16[0]!.name, 'Ūsų kremas');
    assert.equal(u16[0]!.importKey, 'xml_id:U-1');
  });

  it('reads a gzip file the same as the plain one', async () => {
    const plain = products(await readFile_('home-made.xml'));
    const gz = products(await readFile_('home-made.xml.gz'));
    assert.deepEqual(gz, plain);
  });

  it('applies mapping overrides: the field reads only the named tag', async () => {
    const r = await readText('<products><product><code>C-1</code><title>Wrong</title><label>Right</label></product></products>', {
      mapping: { name: 'label' },
    });
    const [p] = products(r);
    assert.equal(p!.name, 'Right');
    assert.equal(p!.importKey, 'sku:C-1');
  });

  it('refuses a DOCTYPE with entity declarations before anything is expanded (XXE, billion laughs)', async () => {
    for (const name of ['xxe.xml', 'billion-laughs.xml']) {
      const err = await failure(readFile_(name));
      assert.equal(err.key, 'catalog.feed_entities', name);
      assert.ok(err.line !== null && err.line > 1, name);
    }
  });

  it('reports the line and column of malformed XML', async () => {
    const err = await failure(readFile_('malformed.xml'));
    assert.equal(err.key, 'catalog.feed_malformed');
    assert.equal(err.line, 10);
    assert.equal(err.column, 12);
    assert.match(String(err.params.detail), /close tag/);
  });

  it('stops a gzip bomb at the limit, counted after decompression', async () => {
    const err = await failure(readFile_('gzip-bomb.xml.gz', { maxBytes: 1024 * 1024 }));
    assert.equal(err.key, 'catalog.feed_too_large');
    assert.equal(err.params.limit, 1024 * 1024);
  });

  it('refuses one text node larger than the construct limit (saxes would buffer it whole)', async () => {
    const huge = Readable.from(
      (function* () {
        yield Buffer.from('<products>');
        const chunk = Buffer.alloc(1024 * 1024, 0x61);
        for (let i = 0; i < 10; i++) yield chunk;
        yield Buffer.from('</products>');
      })(),
    );
    const err = await failure(read(huge, { maxBytes: 100 * 1024 * 1024 }));
    assert.equal(err.key, 'catalog.feed_construct_too_large');
  });

  it('keeps namespace declarations only while their element is open, and at most MAX_GOOGLE_PREFIXES of them', async () => {
    // 20,000 items, each declaring prefixes of its own: before, every prefix ever seen was kept
    // for the whole parse (a 110 MB feed of declarations grew the process by 440 MB).
    const G = 'http://base.google.com/ns/1.0';
    const held: number[] = [];
    const items: RawItem[] = [];
    const parser = new FeedParser({ item: (i) => (items.push(i), held.push(parser.namespaceBindings)) });
    parser.write(`<rss xmlns:g="${G}"><channel>`);
    for (let i = 0; i < 20_000; i++) {
      const decl = Array.from({ length: 3 }, (_, k) => `xmlns:p${i}x${k}="${G}"`).join(' ');
      parser.write(`<item ${decl} xmlns:other${i}="urn:x"><p${i}x0:title>T${i}</p${i}x0:title><g:id>${i}</g:id></item>`);
    }
    parser.write('</channel></rss>');
    parser.close();
    assert.equal(items.length, 20_000);
    // Inside each item its own prefixes are in effect (read by local name, as g: is)…
    assert.deepEqual(items[19_999]!.tags.get('title'), ['T19999']);
    assert.deepEqual(items[19_999]!.tags.get('id'), ['19999']);
    // …and gone when it closes: after each item only the root's g: is held.
    assert.equal(Math.max(...held), 1);
    assert.equal(parser.namespaceBindings, 0);

    // A prefix rebound to another namespace inside an element is not Google's there, and is again after.
    const scoped: RawItem[] = [];
    const p2 = new FeedParser({ item: (i) => scoped.push(i) });
    p2.write(`<rss xmlns:g="${G}"><channel><item xmlns:g="urn:other"><g:price>1</g:price></item><item><g:price>2</g:price></item></channel></rss>`);
    p2.close();
    assert.deepEqual(scoped[0]!.tags.get('price'), undefined);
    assert.deepEqual(scoped[1]!.tags.get('price'), ['2']);

    // One element declaring more Google prefixes than the cap holds no more than the cap.
    const capped = new FeedParser({ item: () => undefined });
    const many = Array.from({ length: MAX_GOOGLE_PREFIXES * 4 }, (_, k) => `xmlns:q${k}="${G}"`).join(' ');
    capped.write(`<rss ${many}><channel>`);
    assert.equal(capped.namespaceBindings, MAX_GOOGLE_PREFIXES);
  });

  it('refuses an encoding the decoder does not know, by name', async () => {
    const err = await failure(readText('<?xml version="1.0" encoding="X-MAC-KLINGON"?><products/>'));
    assert.equal(err.key, 'catalog.feed_encoding');
    assert.equal(err.params.encoding, 'X-MAC-KLINGON');
    assert.equal(sniffEncoding(Buffer.from('<?xml version="1.0" encoding="ISO-8859-13"?>')).encoding, 'iso885913');
  });
});

describe('value reading', () => {
  it('reads prices exactly, with their currency, and refuses what is not one', () => {
    assert.deepEqual(parsePrice('19.99'), { amount: '19.9900', currency: null });
    assert.deepEqual(parsePrice('19,99'), { amount: '19.9900', currency: null });
    assert.deepEqual(parsePrice('1 299,00'), { amount: '1299.0000', currency: null });
    assert.deepEqual(parsePrice('1.299,00'), { amount: '1299.0000', currency: null });
    assert.deepEqual(parsePrice('1,299.00'), { amount: '1299.0000', currency: null });
    assert.deepEqual(parsePrice('12.99 EUR'), { amount: '12.9900', currency: 'EUR' });
    assert.deepEqual(parsePrice('EUR 12.99'), { amount: '12.9900', currency: 'EUR' });
    assert.deepEqual(parsePrice('€5'), { amount: '5.0000', currency: null });
    assert.deepEqual(parsePrice('0.12345'), { error: 'decimals' });
    assert.deepEqual(parsePrice('free'), { error: 'format' });
    assert.deepEqual(parsePrice('-1'), { error: 'format' });
  });

  it('reads availability words', () => {
    for (const w of ['in stock', 'in_stock', 'TRUE', '1', 'yes', 'yra', 'preorder']) assert.equal(parseFlag(w), true, w);
    for (const w of ['out of stock', 'out_of_stock', 'false', '0', 'no', 'nėra']) assert.equal(parseFlag(w), false, w);
    assert.equal(parseFlag('maybe'), undefined);
  });
});

it('reads the fixture files as committed (sanity)', async () => {
  assert.ok((await readFile(fixture('windows-1257.xml'))).includes(Buffer.from([0xd0])), 'Š is 0xD0 in windows-1257');
});

it('keeps the saxes parser a fast-properties object with every handler set (a dictionary-mode parser reads 5 × slower)', () => {
  v8.setFlagsFromString('--allow-natives-syntax');
  // %-natives parse only in code compiled after the flag: a function made now.
  const hasFastProperties = new Function('o', 'return %HasFastProperties(o)') as (o: object) => boolean;
  const parser = new FeedParser({ item: () => undefined, category: () => undefined });
  parser.write('<?xml version="1.0"?><products><product id="1"><name>A</name></product>');
  assert.equal(hasFastProperties((parser as unknown as { parser: object }).parser), true);
});
