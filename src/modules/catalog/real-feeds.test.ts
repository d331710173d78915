// The feeds shops in the region actually publish (DESIGN.md §9), read in place from
// ../shared/feeds/ (never copied here): every well-formed one gives the item count of
// MANIFEST.md (counted independently with xmllint), and a few items of each give the fields
// their text says. No database: the pipeline bytes → text → items → mapped products, as the
// import and validate run it.
import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { manifestCounts, sharedFeed } from '../../../test/helpers/shared-feeds.js';
import { resolveMapping, type Dialect } from './feed-format.js';
import { FeedError, FeedParser, type RawItem } from './feed-parser.js';
import { feedText } from './feed-reader.js';
import { mapItem, type MappedProduct, type MapResult } from './product-mapper.js';

interface Read {
  parser: FeedParser;
  dialect: Dialect;
  results: MapResult[];
  products: Map<string, MappedProduct>;
}

async function readSource(source: AsyncIterable<Buffer>): Promise<Read> {
  const items: RawItem[] = [];
  const definitions = new Set<string>();
  let dialect: Dialect = 'generic';
  const parser = new FeedParser({ item: (i) => items.push(i), root: (d) => (dialect = d), category: (c) => definitions.add(c.id) });
  for await (const text of feedText(source, { maxBytes: 50 * 1024 * 1024 })) parser.write(text);
  parser.close();
  const mapping = resolveMapping(dialect, null);
  const results = items.map((i) => mapItem(i, mapping, dialect, { knownCategory: (id) => definitions.has(id) }));
  const products = new Map<string, MappedProduct>();
  for (const r of results) if (r.ok && !products.has(r.product.importKey)) products.set(r.product.importKey, r.product);
  return { parser, dialect, results, products };
}

const cache = new Map<string, Promise<Read>>();
const read = (name: string): Promise<Read> => {
  let r = cache.get(name);
  if (!r) cache.set(name, (r = readSource(createReadStream(sharedFeed(name)))));
  return r;
};
const readXml = (xml: string) => readSource(Readable.from([Buffer.from(xml)]));

const warningsOf = (r: Read) => r.results.flatMap((x) => (x.ok ? x.warnings : [x.error]));
const pathsOf = (p: MappedProduct) => p.categories.map((c) => (c.path ? c.path.join(' > ') : c.key));
function product(r: Read, key: string): MappedProduct {
  const p = r.products.get(key);
  assert.ok(p, `no product ${key}`);
  return p;
}

describe('real feeds: counts against MANIFEST.md', () => {
  const counts = manifestCounts();
  const wellFormed = [...counts.keys()].filter((name) => !name.includes('nbsp'));

  it('lists every feed of the folder', () => {
    assert.equal(counts.size, 19);
    assert.equal(wellFormed.length, 18);
  });

  for (const name of wellFormed) {
    it(`${name}: ${counts.get(name)} items`, async () => {
      const r = await read(name);
      assert.equal(r.parser.itemsFound, counts.get(name));
    });
  }

  it('the &nbsp; feed is refused with its line (98, as xmllint says), not half read', async () => {
    let items = 0;
    const parser = new FeedParser({ item: () => items++ });
    await assert.rejects(
      (async () => {
        for await (const text of feedText(createReadStream(sharedFeed('facebook-sundorica-011c244-nbsp.xml')), { maxBytes: 1e7 })) parser.write(text);
        parser.close();
      })(),
      (err: unknown) => err instanceof FeedError && err.key === 'catalog.feed_malformed' && err.line === 98,
    );
  });
});

describe('real feeds: fields', () => {
  it('YML (Yandex example): vendor.model name, vendorCode as sku, oldprice only when above price', async () => {
    const r = await read('yml-official-example.xml');
    assert.equal(r.dialect, 'yml');
    assert.equal(r.parser.itemElement, 'offers/offer');
    assert.equal(r.products.size, 8);
    const sandwich = product(r, 'xml_id:A1VV');
    assert.deepEqual(
      [sandwich.name, sandwich.xml_id, sandwich.sku, sandwich.brand, sandwich.model, sandwich.price, sandwich.discounted_price, sandwich.currency],
      ['Сэндвичница Brand K220Y9', 'A1VV', 'A1234567B', 'Brand', 'K220Y9', '1399.0000', '1099.0000', 'RUR'],
    );
    const printer = product(r, 'xml_id:1511AB');
    assert.deepEqual([printer.name, printer.sku, printer.price, printer.discounted_price], ['Принтер Brother 331', 'ABC1234', '89990.0000', '80990.0000']);
    assert.deepEqual(pathsOf(printer), ['id:6']);
    // Every <picture> after the first is kept in images.
    const book = product(r, 'xml_id:755B');
    assert.deepEqual(
      [book.image_url, book.images],
      ['https://example.shop/img/model_2.jpg', ['https://example.shop/img/model_2_1.jpg', 'https://example.shop/img/model_2_2.jpg']],
    );
    assert.deepEqual(sandwich.images, []);
    // categoryId 101 is not in the categories block: reported, not linked.
    assert.deepEqual(pathsOf(sandwich), []);
    const warnings = warningsOf(r);
    assert.deepEqual(warnings.filter((w) => w.key === 'catalog.item_unknown_category').map((w) => [w.line, w.item, w.params?.id]), [[81, 2, '101']]);
    // Every oldprice of the example is above its price but one (alco: 1600 vs its price), which is ignored with a warning.
    const ignored = warnings.filter((w) => w.key === 'catalog.item_oldprice_ignored');
    for (const w of ignored) {
      const p = [...r.products.values()].find((x) => x.discounted_price === null && x.price === `${w.params!.price}.0000`);
      assert.ok(p, 'the item keeps its price as the regular price');
    }
    assert.equal(ignored.length, 1);
  });

  it('YML by 1C-Bitrix in windows-1251, and the same text in UTF-8 mislabelled windows-1251, read the same', async () => {
    const cp = await read('yml-bitrix-gismining.cp1251.xml');
    const utf = await read('yml-bitrix-gismining.utf8.xml');
    const p = product(cp, 'xml_id:323');
    assert.deepEqual([p.name, p.price, p.currency, p.image_url], ['Контейнер 40 футов НС Flagman', '4450000.0000', 'RUB', 'http://gis-mining.ru/upload/iblock/375/o7k2m16i9ib13j8yjari6ag6xwxfp627.png']);
    assert.deepEqual([...utf.products.values()].map((x) => x.hash), [...cp.products.values()].map((x) => x.hash));
  });

  it('YML of real shops: every offer read, categories by id', async () => {
    const larou = await read('yml-larou.xml');
    assert.equal(larou.products.size, 22);
    const pp = await read('yml-ppbgroup.xml');
    assert.equal(pp.products.size, 10);
    assert.ok([...pp.products.values()].every((p) => p.categories.length > 0 && p.categories.every((c) => c.key.startsWith('id:'))));
  });

  it('Google Merchant RSS (importpc): g:mpn is the sku, g:gtin the ean, g:product_type the category path', async () => {
    const r = await read('google-importpc.xml');
    assert.equal(r.dialect, 'google');
    // 1,255 items, 1,254 distinct g:id: the repeat is skipped as a duplicate by the import.
    assert.equal(r.products.size, 1254);
    const p = product(r, 'xml_id:2ed1c8b3-157c-4aec-b2e4-2c16d17df109');
    assert.deepEqual(
      [p.name, p.sku, p.ean, p.brand, p.price, p.currency, p.availability, p.external_url],
      ['Nabíječka Movano 19.5V 4.62A (4.5x3.0 PIN) pro Dell', 'LA90PM111', '5902687180165', 'Movano', '599.0000', 'CZK', true, 'https://www.importpc.cz/ZZ-DEL195462P/'],
    );
    assert.deepEqual(pathsOf(p), ['Elektronika > Počítače > Příslušenství > Nabíječky']);
    assert.deepEqual(p.images.slice(0, 2), [
      'https://raw.githubusercontent.com/petrfilo-arch/importpc-feed/main/images/ZZ-DEL195462P_2.jpg',
      'https://raw.githubusercontent.com/petrfilo-arch/importpc-feed/main/images/ZZ-DEL195462P_3.jpg',
    ]);
    const gz = await read('google-importpc.xml.gz');
    assert.deepEqual([...gz.products.values()].map((x) => x.hash), [...r.products.values()].map((x) => x.hash));
  });

  it('Google Merchant Atom 1.0 (destovka): feed/entry, link as text, white space of titles collapsed', async () => {
    const r = await read('google-atom-destovka.xml');
    assert.deepEqual([r.dialect, r.parser.itemElement], ['google', 'feed/entry']);
    const p = product(r, 'xml_id:0036');
    assert.deepEqual(
      [p.name, p.brand, p.price, p.currency, p.availability, p.external_url],
      ['Podzemní nádrž na dešťovou vodu AS-REWA ECO 4 EO - 4,2 m3', 'ASIO', '39990.0000', 'CZK', false, 'https://eshop.destovka.eu/as-rewa-eco-4-eo/'],
    );
    assert.deepEqual(pathsOf(p), ['Produkty > Podzemní nádrže a jímky > Samonosné na desku']);
    const last = product(r, 'xml_id:ZB00070842');
    assert.deepEqual([last.ean, last.brand, last.price, last.availability], ['8596455041023', 'Leo Pumps', '9590.0000', true]);
  });

  it('Atom: a <link href> with no text is the URL', async () => {
    const r = await readXml(
      '<feed xmlns="http://www.w3.org/2005/Atom" xmlns:g="http://base.google.com/ns/1.0"><entry><g:id>7</g:id><title>Lamp</title>' +
        '<link href="https://shop.example/lamp" rel="alternate"/><g:price>9.50 EUR</g:price><g:mpn>L-7</g:mpn></entry></feed>',
    );
    const p = product(r, 'xml_id:7');
    assert.deepEqual([p.external_url, p.sku, p.price, p.currency], ['https://shop.example/lamp', 'L-7', '9.5000', 'EUR']);
  });

  it('Google RSS of other shops: Arabic names and sale prices, Romanian gtin, Shopware plain titles, Meta emoji', async () => {
    const uae = await read('google-makhzoon-uae.xml');
    const first = product(uae, 'xml_id:1');
    assert.deepEqual([first.name, first.price, first.discounted_price, first.currency], ['سخان مياه الدش الفوري', '290.0000', '240.0000', 'AED']);
    const ro = await read('google-marsupiu-ro.xml');
    assert.deepEqual([product(ro, 'xml_id:2510').ean, product(ro, 'xml_id:2510').discounted_price], ['6427416002130', '169.0000']);
    const gr = await read('google-groundies-shopware.xml');
    assert.equal(product(gr, 'xml_id:019498947e9e70eb953a19a2a3a8e53a').name, 'GROUNDIES® Nova GO1 Women');
    const fb = await read('facebook-sundorica.xml');
    assert.equal(product(fb, 'xml_id:0rys3DWbAPszQqQUAKa6').price, '1450.0000');
    assert.ok([...fb.products.values()].some((p) => /\p{Extended_Pictographic}/u.test(p.description ?? '')), 'emoji kept');
  });

  it('Heureka (orris): SHOP/SHOPITEM, PRODUCTNAME the name (never <PRODUCT> as the item), PRODUCTNO the sku, PRICE_VAT', async () => {
    const r = await read('heureka-orris.xml');
    assert.deepEqual([r.dialect, r.parser.itemElement], ['heureka', 'SHOP/SHOPITEM']);
    assert.equal(r.products.size, 75);
    const p = product(r, 'xml_id:49915334295890');
    assert.deepEqual(
      [p.name, p.sku, p.ean, p.brand, p.price, p.availability],
      ['Afnan 9 AM EDP Default Title', 'NT202412', '6290171002345', 'AFNAN', '615.0000', true],
    );
    assert.deepEqual(pathsOf(p), ['Perfume']);
    assert.match(p.description!, /^Afnan 9 AM EDP\nDiscover/, 'descriptions keep their line breaks');
  });

  it('Heureka (documentation example): default namespace, CATEGORYTEXT split on |, DELIVERY_DATE other than 0 not in stock', async () => {
    const r = await read('heureka-official-example.xml');
    assert.equal(r.parser.itemElement, 'SHOP/SHOPITEM');
    const p = product(r, 'ean:6417182041488');
    assert.deepEqual([p.name, p.brand, p.price, p.availability], ['Nokia 5800 XpressMusic', 'NOKIA', '6000.0000', false]);
    assert.deepEqual(pathsOf(p), ['Elektronika > Mobilní telefony']);
    // Two items of the example carry no ITEM_ID, EAN or PRODUCTNO: skipped, with where they are.
    const skipped = r.results.filter((x) => !x.ok).map((x) => (x.ok ? null : [x.error.key, x.error.item]));
    assert.deepEqual(skipped, [['catalog.item_no_key', 2], ['catalog.item_no_key', 3]]);
  });

  it('Ceneo (kompre): offers/o attributes, imgs/main@url, attrs/a[@name] for brand and sku, cat path', async () => {
    const r = await read('ceneo-kompre.xml');
    assert.deepEqual([r.dialect, r.parser.itemElement], ['ceneo', 'offers/o']);
    assert.equal(r.products.size, 81);
    const p = product(r, 'xml_id:6730');
    assert.deepEqual(
      [p.name, p.brand, p.sku, p.price, p.currency, p.stock_quantity, p.availability, p.image_url, p.external_url],
      [
        'Oryginalny Zasilacz Lenovo USB typ C 65W',
        'LENOVO',
        '5678',
        '129.0000',
        'PLN',
        2,
        true,
        'https://sklep998844.shoparena.pl/userdata/public/gfx/80638.png',
        'https://kompre.pl/pl/p/Oryginalny-Zasilacz-Lenovo-USB-typ-C-65W/6730',
      ],
    );
    assert.deepEqual(pathsOf(p), ['Zasilacze do laptopów']);
    assert.deepEqual(p.images, [
      'https://sklep998844.shoparena.pl/userdata/public/gfx/80639.jpg',
      'https://sklep998844.shoparena.pl/userdata/public/gfx/80640.jpg',
      'https://sklep998844.shoparena.pl/userdata/public/gfx/80641.jpg',
    ]);
  });

  it('Ceneo: Kod_producenta is the sku, EAN the ean, a cat path split on /', async () => {
    const r = await readXml(
      '<offers><group name="other"><o id="5" url="https://s.example/5" price="19.90" avail="99" stock="0"><cat>Dom/Kuchnia</cat><name>Kubek</name>' +
        '<attrs><a name="Producent">Acme</a><a name="EAN">5901234123457</a><a name="Kod_producenta">K-5</a></attrs></o></group></offers>',
    );
    const p = product(r, 'xml_id:5');
    assert.deepEqual([p.brand, p.ean, p.sku, p.price, p.availability], ['Acme', '5901234123457', 'K-5', '19.9000', false]);
    assert.deepEqual(pathsOf(p), ['Dom > Kuchnia']);
  });

  it('Skroutz (ruris): price_with_vat with its currency, instock Y, availability text as delivery_info, names unwrapped', async () => {
    const r = await read('skroutz-ruris.xml');
    assert.deepEqual([r.dialect, r.parser.itemElement], ['skroutz', 'products/product']);
    assert.equal(r.products.size, 149);
    assert.ok([...r.products.values()].every((p) => p.price !== null && p.currency === 'EUR'), 'every product has its price');
    const p = product(r, 'xml_id:24000rur26a');
    assert.deepEqual(
      [p.name, p.sku, p.ean, p.brand, p.price, p.availability, p.delivery_info, p.stock_quantity],
      ['RURIS ALFA UP 2400e X-Charge Battery 20V 4Ah 80Wh, Bidirectional USB-C, LED, USB-C Cable Included', '24000rur26a', '5940739030587', 'RURIS', '32.9900', true, '1-3', 10],
    );
    assert.deepEqual(pathsOf(p), ['Garden > Battery Tool Accessories']);
  });

  it('WooCommerce WXR (a site export, not a product feed): 47 items seen, none accepted', async () => {
    const r = await read('woocommerce-sample-products.xml');
    assert.equal(r.products.size, 0);
    assert.ok(r.results.every((x) => !x.ok));
  });
});

describe('item elements from the structure, case-sensitively', () => {
  it('a field spelled like an item in another case is never an item', async () => {
    // <Product> is a field of <goods>; case-insensitively it would be taken for the item.
    const r = await readXml('<catalog><goods><Product>Kettle</Product><id>1</id></goods></catalog>');
    assert.equal(r.parser.itemElement, null);
    assert.equal(r.parser.itemsFound, 0);
    // Heureka's <PRODUCT> inside <SHOPITEM> is the longer name, used only without PRODUCTNAME.
    const h = await readXml(
      '<SHOP><SHOPITEM><ITEM_ID>9</ITEM_ID><PRODUCT>Long name</PRODUCT>' +
        '<PARAM><PARAM_NAME>Barva</PARAM_NAME><VAL>černá</VAL></PARAM><PARAM><PARAM_NAME>Velikost</PARAM_NAME><VAL>XL</VAL></PARAM></SHOPITEM></SHOP>',
    );
    assert.deepEqual([h.parser.itemElement, h.parser.itemsFound, product(h, 'xml_id:9').name], ['SHOP/SHOPITEM', 1, 'Long name']);
    // PARAM pairs give colour and size.
    assert.deepEqual([product(h, 'xml_id:9').color, product(h, 'xml_id:9').size], ['černá', 'XL']);
  });

  it('collapses the white space of single-line fields and category names, not of descriptions', async () => {
    const names: string[] = [];
    const parser = new FeedParser({ item: () => undefined, category: (c) => names.push(c.name) });
    parser.write('<yml_catalog><shop><categories><category id="1">Kava\n   ir  arbata</category></categories></shop></yml_catalog>');
    parser.close();
    assert.deepEqual(names, ['Kava ir arbata']);
    const r = await readXml('<products><product><id>1</id><name>Two\n    lines</name><brand> A\tB </brand><description>One\nTwo</description><category>X  >  Y\nZ</category></product></products>');
    const p = product(r, 'xml_id:1');
    assert.deepEqual([p.name, p.brand, p.description, pathsOf(p)], ['Two lines', 'A B', 'One\nTwo', ['X > Y Z']]);
  });

  it('reads KOI8-R and ISO-8859-2 from the declaration', async () => {
    const iconv = (await import('iconv-lite')).default;
    const koi = iconv.encode('<?xml version="1.0" encoding="KOI8-R"?><products><product><id>1</id><name>Чайник</name></product></products>', 'koi8r');
    const latin2 = iconv.encode('<?xml version="1.0" encoding="ISO-8859-2"?><products><product><id>1</id><name>Žluťoučký kůň</name></product></products>', 'iso88592');
    assert.equal(product(await readSource(Readable.from([koi])), 'xml_id:1').name, 'Чайник');
    assert.equal(product(await readSource(Readable.from([latin2])), 'xml_id:1').name, 'Žluťoučký kůň');
  });
});
