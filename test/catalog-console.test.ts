// What the console's Products page reads (DESIGN.md §9, §11): the catalogue with the partner's
// own JWT (as the XML import takes it), the products an import created or changed
// (`import_id`), and the offers that name a product (`GET partners/offers?product_id`).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { importFeed } from './helpers/catalog.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { bearer, request } from './helpers/http.js';

const feed = (items: Array<{ id: string; name: string; price: string; sale?: string }>) =>
  `<?xml version="1.0" encoding="UTF-8"?><products>${items
    .map((i) => `<product><id>${i.id}</id><name>${i.name}</name><price>${i.price}</price>${i.sale ? `<sale_price>${i.sale}</sale_price>` : ''}<currency>EUR</currency></product>`)
    .join('')}</products>`;

describe('catalogue for the console', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let other: PartnerFixture;
  let first: any;
  let second: any;

  const get = (path: string, token = p.token) => request(t.url, 'GET', path, { headers: bearer(token) });

  before(async () => {
    t = await startTestApp();
    p = await createPartner(t);
    other = await createPartner(t);
    first = await importFeed(t, p.apiKey, feed([{ id: 'A1', name: 'Puodelis', price: '12.99', sale: '9.99' }, { id: 'A2', name: 'Šaukštas', price: '3.50' }]));
    // The second feed holds A2 (changed) and A3 (new), not A1: A1's last import stays the first.
    second = await importFeed(t, p.apiKey, feed([{ id: 'A2', name: 'Šaukštas', price: '3.90' }, { id: 'A3', name: 'Lėkštė', price: '5.00' }]));
    await importFeed(t, other.apiKey, feed([{ id: 'B1', name: 'Kita', price: '1.00' }]));
  });
  after(() => t.close());

  it("reads the partner's products, a product and the categories with the partner's JWT", async () => {
    const list = await get('/en/shop/products?per_page=100');
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.body.data.map((x: any) => x.xml_id ?? x.external_id).sort(), ['A1', 'A2', 'A3']);
    const one = await get(`/en/shop/products/${list.body.data[0].id}`);
    assert.equal(one.status, 200, one.text);
    assert.equal((await get('/en/shop/categories')).status, 200);
    const foreign = (await get('/en/shop/products?per_page=100', other.token)).body.data[0];
    assert.equal((await get(`/en/shop/products/${foreign.id}`)).status, 404);
  });

  it('import_id lists the products whose last import it was', async () => {
    assert.equal(first.status, 'completed', JSON.stringify(first));
    assert.equal(second.status, 'completed', JSON.stringify(second));
    const names = async (importId: number) => {
      const res = await get(`/en/shop/products?import_id=${importId}&per_page=100`);
      assert.equal(res.status, 200, res.text);
      for (const x of res.body.data) assert.equal(x.last_import_id, importId);
      return res.body.data.map((x: any) => x.name).sort();
    };
    assert.deepEqual(await names(first.id), ['Puodelis']);
    assert.deepEqual(await names(second.id), ['Lėkštė', 'Šaukštas']);
    const bad = await get('/en/shop/products?import_id=abc');
    assert.equal(bad.status, 422, bad.text);
  });

  it('partners/offers?product_id lists the offers naming the product: import-sourced and by product_ids', async () => {
    const products = (await get('/en/shop/products?per_page=100')).body.data as any[];
    const mug = products.find((x) => x.name === 'Puodelis');
    const spoon = products.find((x) => x.name === 'Šaukštas');
    const named = await request(t.url, 'POST', '/en/partners/offers', {
      headers: bearer(p.token),
      json: { title: 'Šaukštas dovanų', discount_type: 'gift', product_ids: [spoon.id, mug.id] },
    });
    assert.equal(named.status, 201, named.text);
    await request(t.url, 'POST', '/en/partners/offers', { headers: bearer(p.token), json: { title: 'Kava', discount_type: 'gift' } });

    const forMug = await get(`/en/partners/offers?product_id=${mug.id}`);
    assert.equal(forMug.status, 200, forMug.text);
    assert.deepEqual(forMug.body.data.map((o: any) => o.title).sort(), ['Puodelis', 'Šaukštas dovanų']);
    assert.ok(forMug.body.data.some((o: any) => o.source === 'import'));
    assert.equal(forMug.body.meta.total, 2);
    const forSpoon = await get(`/en/partners/offers?product_id=${spoon.id}`);
    assert.deepEqual(forSpoon.body.data.map((o: any) => o.title), ['Šaukštas dovanų']);
    const none = await get(`/en/partners/offers?product_id=${mug.id}`, other.token);
    assert.deepEqual(none.body.data, []);
    assert.equal((await get('/en/partners/offers?product_id=0')).status, 422);
  });
});
