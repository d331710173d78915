// Tenancy (DESIGN.md §2) of the catalogue and the imports: every route that takes an id
// answers B's request for A's product, import or feed with the same 404 as an id never used,
// and changes nothing; every list shows only the caller's own.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { importFeed, waitForImport } from './helpers/catalog.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, request, type Response } from './helpers/http.js';

/** What B sees, minus the request id: it must not tell an existing object from a missing one. */
const seen = (res: Response) => ({ status: res.status, body: { ...res.body, request_id: undefined } });

describe('tenancy of products, imports and feeds', () => {
  let t: TestApp;
  let a: PartnerFixture;
  let b: PartnerFixture;
  let server: http.Server;
  let product: number;
  let importId: number;
  let feedId: number;

  before(async () => {
    server = http.createServer((_req, res) => res.writeHead(200).end('<products><product id="X1"><name>Feed item</name></product></products>'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/feed.xml`;
    t = await startTestApp({ ALLOW_PRIVATE_URLS: 'true' });
    a = await createPartner(t, 'Partner A');
    b = await createPartner(t, 'Partner B');
    const rec = await importFeed(t, a.apiKey, '<products><product id="A1"><name>A only</name><price>1</price><category>A cat</category></product></products>');
    importId = rec.id;
    const res = await request(t.url, 'POST', '/en/shop/xml-import/from-url', { headers: apiHeaders(a.apiKey), json: { url, every_minutes: 15 } });
    await waitForImport(t, a.apiKey, res.body.data.import_id);
    const feeds = await request(t.url, 'GET', '/en/shop/xml-import/feeds', { headers: apiHeaders(a.apiKey) });
    feedId = feeds.body.data[0].id;
    const products = await request(t.url, 'GET', '/en/shop/products', { headers: apiHeaders(a.apiKey) });
    product = products.body.data.find((p: any) => p.xml_id === 'A1').id;
  });
  after(async () => {
    await t.close();
    await new Promise((resolve) => server.close(resolve));
  });

  const rows: Array<{ label: string; method: 'GET' | 'DELETE'; path: (id: number) => string; id: () => number; read: () => Promise<unknown> }> = [
    {
      label: 'GET shop/products/{id}',
      method: 'GET',
      path: (id) => `/en/shop/products/${id}`,
      id: () => product,
      read: async () => (await request(t.url, 'GET', `/en/shop/products/${product}`, { headers: apiHeaders(a.apiKey) })).body.data,
    },
    {
      label: 'GET shop/xml-import/{import_id}',
      method: 'GET',
      path: (id) => `/en/shop/xml-import/${id}`,
      id: () => importId,
      read: async () => (await request(t.url, 'GET', `/en/shop/xml-import/${importId}`, { headers: apiHeaders(a.apiKey) })).body.data,
    },
    {
      label: 'DELETE shop/xml-import/feeds/{id}',
      method: 'DELETE',
      path: (id) => `/en/shop/xml-import/feeds/${id}`,
      id: () => feedId,
      read: async () => (await request(t.url, 'GET', '/en/shop/xml-import/feeds', { headers: apiHeaders(a.apiKey) })).body.data,
    },
  ];

  for (const row of rows) {
    it(`${row.label}: B on A's is the same 404 as a missing id, and A's is unchanged`, async () => {
      const before = await row.read();
      const onA = await request(t.url, row.method, row.path(row.id()), { headers: apiHeaders(b.apiKey) });
      const onMissing = await request(t.url, row.method, row.path(2_000_000_000), { headers: apiHeaders(b.apiKey) });
      assert.equal(onA.status, 404);
      assert.equal(onA.body.code, 'RESOURCE_NOT_FOUND');
      assert.deepEqual(seen(onA), seen(onMissing));
      assert.deepEqual(await row.read(), before);
      const own = await request(t.url, row.method === 'DELETE' ? 'GET' : row.method, row.method === 'DELETE' ? '/en/shop/xml-import/feeds' : row.path(row.id()), {
        headers: apiHeaders(a.apiKey),
      });
      assert.equal(own.status, 200);
    });
  }

  it('lists, statistics and status show only the caller’s own', async () => {
    for (const path of ['/en/shop/products', '/en/shop/xml-import/history', '/en/shop/xml-import/feeds']) {
      const res = await request(t.url, 'GET', path, { headers: apiHeaders(b.apiKey) });
      assert.deepEqual([res.status, res.body.data, res.body.meta.total], [200, [], 0], path);
    }
    for (const path of ['/en/shop/categories', '/en/shop/products/categories']) {
      assert.deepEqual((await request(t.url, 'GET', path, { headers: apiHeaders(b.apiKey) })).body.data, [], path);
    }
    const status = (await request(t.url, 'GET', '/en/shop/products/sync-status', { headers: apiHeaders(b.apiKey) })).body.data;
    assert.deepEqual([status.total_products, status.last_sync], [0, null]);
    const stats = (await request(t.url, 'GET', '/en/shop/xml-import/stats', { headers: apiHeaders(b.apiKey) })).body.data;
    assert.deepEqual([stats.imports_total, stats.products_total, stats.last_import_at], [0, 0, null]);
    // B importing a product with A's key makes B's own product; A's stays.
    await importFeed(t, b.apiKey, '<products><product id="A1"><name>B copy</name></product></products>');
    const aProduct = await request(t.url, 'GET', `/en/shop/products/${product}`, { headers: apiHeaders(a.apiKey) });
    assert.equal(aProduct.body.data.name, 'A only');
    assert.equal((await request(t.url, 'GET', '/en/shop/products', { headers: apiHeaders(b.apiKey) })).body.data[0].name, 'B copy');
  });

  it('requires API credentials on every catalog and import route', async () => {
    for (const path of ['/en/shop/products', '/en/shop/categories', '/en/shop/products/sync-status', '/en/shop/xml-import/history', '/en/shop/xml-import/field-mappings']) {
      const res = await request(t.url, 'GET', path);
      assert.deepEqual([res.status, res.body.code], [401, 1004], path);
    }
  });
});
