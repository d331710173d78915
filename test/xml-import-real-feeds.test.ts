// Real feeds through the whole import (DESIGN.md §9 "The feeds shops in the region actually
// publish"), read in place from ../shared/feeds/ (see test/helpers/shared-feeds.ts): what is
// stored for each format, validate predicting the import, the two importpc versions in
// replace mode (exactly the 65 changed products updated), the &nbsp; feed failing with its
// line, and the replace guard. Counts and fields of every feed are checked without a database
// in src/modules/catalog/real-feeds.test.ts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { allProducts, importFeed, uploadFeed, waitForImport } from './helpers/catalog.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, request } from './helpers/http.js';
import { manifestCounts, sharedFeed } from './helpers/shared-feeds.js';

let t: TestApp;
const counts = manifestCounts();
const feedBytes = (name: string) => readFileSync(sharedFeed(name));
const bySku = (list: any[]) => new Map(list.map((p) => [p.sku, p]));
const byXmlId = (list: any[]) => new Map(list.map((p) => [p.xml_id, p]));

async function validate(p: PartnerFixture, body: Buffer, query = ''): Promise<any> {
  const res = await request(t.url, 'POST', `/en/shop/xml-import/validate${query}`, {
    headers: { ...apiHeaders(p.apiKey), 'content-type': 'application/xml' },
    raw: body,
  });
  assert.equal(res.status, 200, res.text);
  return res.body.data;
}

before(async () => {
  t = await startTestApp();
});
after(() => t.close());

describe('real feeds imported', () => {
  it('Heureka, Ceneo, Skroutz, YML (vendor.model, windows-1251): counts stored, fields as the feed says, validate predicting each', async () => {
    const cases: Array<{ file: string; check(products: any[]): void }> = [
      {
        file: 'heureka-orris.xml',
        check(products) {
          const p = byXmlId(products).get('49915334295890');
          assert.deepEqual([p.name, p.sku, p.ean, p.brand, p.price, p.availability], ['Afnan 9 AM EDP Default Title', 'NT202412', '6290171002345', 'AFNAN', 615, true]);
          assert.deepEqual(p.categories.map((c: any) => c.name), ['Perfume']);
        },
      },
      {
        file: 'ceneo-kompre.xml',
        check(products) {
          const p = byXmlId(products).get('6730');
          assert.deepEqual([p.name, p.brand, p.sku, p.price, p.currency, p.stock_quantity], ['Oryginalny Zasilacz Lenovo USB typ C 65W', 'LENOVO', '5678', 129, 'PLN', 2]);
          assert.equal(p.image_url, 'https://sklep998844.shoparena.pl/userdata/public/gfx/80638.png');
        },
      },
      {
        file: 'skroutz-ruris.xml',
        check(products) {
          assert.ok(products.every((p) => typeof p.price === 'number' && p.currency === 'EUR'), 'every product priced');
          const p = byXmlId(products).get('24000rur26a');
          assert.deepEqual([p.price, p.ean, p.sku, p.delivery_info, p.availability], [32.99, '5940739030587', '24000rur26a', '1-3', true]);
          assert.equal(p.name, 'RURIS ALFA UP 2400e X-Charge Battery 20V 4Ah 80Wh, Bidirectional USB-C, LED, USB-C Cable Included');
        },
      },
      {
        file: 'yml-official-example.xml',
        check(products) {
          const p = byXmlId(products).get('A1VV');
          assert.deepEqual([p.name, p.sku, p.price, p.discounted_price], ['Сэндвичница Brand K220Y9', 'A1234567B', 1399, 1099]);
          const book = byXmlId(products).get('755B');
          assert.deepEqual([book.image_url, book.images], ['https://example.shop/img/model_2.jpg', ['https://example.shop/img/model_2_1.jpg', 'https://example.shop/img/model_2_2.jpg']]);
        },
      },
      {
        file: 'yml-bitrix-gismining.cp1251.xml',
        check(products) {
          assert.deepEqual([bySku(products).get('323').name, bySku(products).get('323').price], ['Контейнер 40 футов НС Flagman', 4450000]);
        },
      },
    ];
    for (const { file, check } of cases) {
      const p = await createPartner(t);
      const body = feedBytes(file);
      const predicted = await validate(p, body);
      const rec = await importFeed(t, p.apiKey, body);
      assert.equal(rec.status, 'completed', file);
      assert.equal(rec.items_seen, counts.get(file), file);
      assert.equal(predicted.items_found, rec.items_seen, file);
      assert.deepEqual(predicted.errors, rec.errors, `${file}: validate reports what the import records`);
      assert.equal(predicted.valid, true);
      const products = await allProducts(t, p.apiKey);
      assert.equal(products.length, rec.created, file);
      assert.equal(rec.created, rec.items_seen - rec.skipped, file);
      check(products);
    }
  });

  it('Google Merchant Atom (1,763 entries) is imported whole', async () => {
    const p = await createPartner(t);
    const rec = await importFeed(t, p.apiKey, feedBytes('google-atom-destovka.xml'));
    assert.deepEqual([rec.status, rec.items_seen, rec.created, rec.skipped], ['completed', 1763, 1763, 0]);
    const p36 = byXmlId(await allProducts(t, p.apiKey, 'q=AS-REWA ECO 4 EO')).get('0036');
    assert.deepEqual([p36.name, p36.price, p36.currency, p36.external_url], ['Podzemní nádrž na dešťovou vodu AS-REWA ECO 4 EO - 4,2 m3', 39990, 'CZK', 'https://eshop.destovka.eu/as-rewa-eco-4-eo/']);
  });

  it('the importpc feed two days apart, in replace mode, updates exactly the 65 changed products', async () => {
    const p = await createPartner(t);
    const older = await importFeed(t, p.apiKey, feedBytes('google-importpc-68295b6.xml'));
    // 1,255 items, 1,254 distinct g:id: the repeat is skipped, with where it is.
    assert.deepEqual([older.status, older.items_seen, older.created, older.skipped], ['completed', 1255, 1254, 1]);
    const dup = older.errors.find((e: any) => /came earlier/.test(e.message));
    assert.ok(dup && dup.line !== null && dup.column !== null && dup.item > 1, JSON.stringify(dup));
    const newer = await importFeed(t, p.apiKey, feedBytes('google-importpc.xml'), { mode: 'replace' });
    assert.deepEqual(
      [newer.status, newer.items_seen, newer.created, newer.updated, newer.unchanged, newer.deactivated, newer.skipped],
      ['completed', 1255, 0, 65, 1189, 0, 1],
    );
  });

  it('the &nbsp; feed fails with its line and imports nothing; validate says so too', async () => {
    const p = await createPartner(t);
    const body = feedBytes('facebook-sundorica-011c244-nbsp.xml');
    const rec = await importFeed(t, p.apiKey, body);
    assert.deepEqual([rec.status, rec.created, rec.errors[0].line], ['failed', 0, 98]);
    assert.match(rec.errors[0].message, /line 98/);
    assert.equal((await allProducts(t, p.apiKey)).length, 0);
    const predicted = await validate(p, body);
    assert.deepEqual([predicted.valid, predicted.errors[0].line], [false, 98]);
  });
});

describe('the replace guard', () => {
  it('deactivates nothing for an all-skipped or misread feed, nor more than half without allow_mass_deactivation', async () => {
    const p = await createPartner(t);
    const first = await importFeed(t, p.apiKey, feedBytes('heureka-orris.xml'));
    assert.equal(first.created, 75);
    const active = async () => (await allProducts(t, p.apiKey)).length;

    // A WordPress export: 47 items, none with a key — nothing accepted, nothing deactivated.
    const wxr = feedBytes('woocommerce-sample-products.xml');
    assert.equal((await validate(p, wxr)).valid, false, 'validate: no item would be imported');
    const skipped = await importFeed(t, p.apiKey, wxr, { mode: 'replace' });
    assert.deepEqual([skipped.status, skipped.items_seen, skipped.skipped, skipped.deactivated], ['completed', 47, 47, 0]);
    assert.match(skipped.errors.at(-1).message, /no item of this feed was accepted/);
    assert.equal(await active(), 75);

    // The same feed misread (a mapping that finds no name): every item skipped, nothing
    // deactivated — even with allow_mass_deactivation, which does not cover a feed that gave nothing.
    const misread = await importFeed(t, p.apiKey, feedBytes('heureka-orris.xml'), {
      mode: 'replace',
      mapping: JSON.stringify({ name: 'NAZEV' }),
      allow_mass_deactivation: 'true',
    });
    assert.deepEqual([misread.status, misread.skipped, misread.deactivated], ['completed', 75, 0]);
    assert.equal(await active(), 75);

    // Another shop's feed: 14 products accepted (18 items: 2 without a key, 2 repeating an EAN), all 75 would go — more than half: none does.
    const other = feedBytes('heureka-official-example.xml');
    const guarded = await importFeed(t, p.apiKey, other, { mode: 'replace' });
    assert.deepEqual([guarded.status, guarded.created, guarded.deactivated], ['completed', 14, 0]);
    assert.match(guarded.errors.at(-1).message, /75 of 75 active imported products are missing/);
    assert.equal(await active(), 89);

    // Said on purpose: the 75 are deactivated.
    const allowed = await importFeed(t, p.apiKey, other, { mode: 'replace', allow_mass_deactivation: 'true' });
    assert.deepEqual([allowed.status, allowed.unchanged, allowed.deactivated], ['completed', 14, 75]);
    assert.equal(await active(), 14);
  });

  it('takes allow_mass_deactivation as a multipart form field too, and refuses a value that is not a boolean', async () => {
    const p = await createPartner(t);
    await importFeed(t, p.apiKey, '<products><product><id>1</id><name>A</name></product><product><id>2</id><name>B</name></product></products>');
    const form = new FormData();
    form.append('mode', 'replace');
    form.append('allow_mass_deactivation', 'true');
    form.append('file', new Blob(['<products><product><id>3</id><name>C</name></product></products>']), 'feed.xml');
    const res = await fetch(`${t.url}/en/shop/xml-import/from-file`, { method: 'POST', headers: apiHeaders(p.apiKey), body: form });
    assert.equal(res.status, 202);
    const rec = await waitForImport(t, p.apiKey, ((await res.json()) as any).data.import_id);
    assert.deepEqual([rec.created, rec.deactivated], [1, 2]);
    const bad = await uploadFeed(t, p.apiKey, '<products/>', { mode: 'replace', allow_mass_deactivation: 'yes' });
    assert.equal(bad.status, 422);
  });
});
