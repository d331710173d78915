// Tenancy (DESIGN.md §2): another partner's objects are 404 — never visible, never
// changeable — on every partner endpoint that takes an id, and never in a list.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request, type Response } from './helpers/http.js';

interface Owned {
  id: number;
  /** The object as its owner sees it. */
  read(): Promise<unknown>;
}

interface Row {
  label: string;
  method: 'GET' | 'PUT' | 'DELETE';
  path: (id: number) => string;
  json?: unknown;
  /** Creates a fresh object of partner A for this row. */
  create(): Promise<Owned>;
}

/** What B sees, minus the request id: it must not tell an existing object from a missing one. */
const seen = (res: Response) => ({ status: res.status, body: { ...res.body, request_id: undefined } });

describe('tenancy between partners', () => {
  let t: TestApp;
  let a: PartnerFixture;
  let b: PartnerFixture;

  before(async () => {
    t = await startTestApp();
    a = await createPartner(t, 'Partner A');
    b = await createPartner(t, 'Partner B');
  });
  after(() => t.close());

  async function createShop(p: PartnerFixture, name: string) {
    const res = await request(t.url, 'POST', '/en/partners/shops', {
      headers: bearer(p.token),
      json: { name, address: 'Main st. 1', city: 'Vilnius', lat: 54.687157, lng: 25.279652 },
    });
    assert.equal(res.status, 201, res.text);
    return res.body.data as { id: number; partner_id: number };
  }

  async function createKey(p: PartnerFixture, name: string) {
    const res = await request(t.url, 'POST', '/en/partners/api-keys', { headers: bearer(p.token), json: { name } });
    assert.equal(res.status, 201, res.text);
    return res.body.data as { id: number; key: string; secret: string };
  }

  const ownShop = async (): Promise<Owned> => {
    const shop = await createShop(a, 'A shop');
    return {
      id: shop.id,
      read: async () => {
        const res = await request(t.url, 'GET', `/en/partners/shops/${shop.id}`, { headers: bearer(a.token) });
        return { status: res.status, data: res.body.data };
      },
    };
  };

  const ownKey = async (): Promise<Owned> => {
    const key = await createKey(a, 'A till');
    return {
      id: key.id,
      read: async () => {
        const list = await request(t.url, 'GET', '/en/partners/api-keys', { headers: bearer(a.token) });
        const works = await request(t.url, 'POST', '/en/shop/validate-credentials', { headers: apiHeaders(key) });
        return {
          listed: list.body.data.find((k: { id: number }) => k.id === key.id),
          validate: { status: works.status, partner: works.body.data?.partner },
        };
      },
    };
  };

  const rows: Row[] = [
    { label: 'GET shop', method: 'GET', path: (id) => `/en/partners/shops/${id}`, create: ownShop },
    {
      label: 'PUT shop',
      method: 'PUT',
      path: (id) => `/en/partners/shops/${id}`,
      json: { name: 'Taken over', address: null, city: 'Elsewhere', lat: 1.5, lng: 2.5 },
      create: ownShop,
    },
    { label: 'PUT shop (empty body)', method: 'PUT', path: (id) => `/en/partners/shops/${id}`, json: {}, create: ownShop },
    { label: 'DELETE shop', method: 'DELETE', path: (id) => `/en/partners/shops/${id}`, create: ownShop },
    { label: 'DELETE api key', method: 'DELETE', path: (id) => `/en/partners/api-keys/${id}`, create: ownKey },
  ];

  for (const row of rows) {
    it(`${row.label}: B gets 404 for A's object, which stays unchanged; A itself gets 200`, async () => {
      const target = await row.create();
      const before = await target.read();

      const res = await request(t.url, row.method, row.path(target.id), { headers: bearer(b.token), json: row.json });
      assert.equal(res.status, 404, res.text);
      assert.equal(res.body.success, false);
      assert.equal(res.body.code, 'RESOURCE_NOT_FOUND');
      assert.equal(res.body.data, undefined);
      assert.ok(Array.isArray(res.body.errors));
      assert.equal(res.body.errors[0].code, 'RESOURCE_NOT_FOUND');
      // No existence oracle: A's object looks exactly like an id that was never used.
      const missing = await request(t.url, row.method, row.path(2_000_000_000), { headers: bearer(b.token), json: row.json });
      assert.deepEqual(seen(res), seen(missing));

      assert.deepEqual(await target.read(), before, "A's object is unchanged");

      // Control: the same call by the owner succeeds, so B's 404 is about ownership.
      const own = await request(t.url, row.method, row.path(target.id), { headers: bearer(a.token), json: row.json });
      assert.equal(own.status, 200, own.text);
    });
  }

  it("B's lists never contain A's objects, and do contain B's own", async () => {
    const aShops = [await createShop(a, 'A list shop 1'), await createShop(a, 'A list shop 2')];
    const aKeys = [await createKey(a, 'A list key')];
    const bShop = await createShop(b, 'B list shop');
    const bKey = await createKey(b, 'B list key');

    const aShopIds = aShops.map((s) => s.id);
    const aKeyIds = [a.apiKey.id, ...aKeys.map((k) => k.id)];

    const lists: Array<{ label: string; path: string; headers: Record<string, string>; forbidden: number[]; own: number[] }> = [
      { label: 'partner shops', path: '/en/partners/shops?per_page=100', headers: bearer(b.token), forbidden: aShopIds, own: [bShop.id] },
      { label: 'partner api-keys', path: '/en/partners/api-keys?per_page=100', headers: bearer(b.token), forbidden: aKeyIds, own: [b.apiKey.id, bKey.id] },
      { label: 'shop/shops (API key)', path: '/en/shop/shops?per_page=100', headers: apiHeaders(b.apiKey), forbidden: aShopIds, own: [bShop.id] },
      { label: 'shop/shops (new API key)', path: '/en/shop/shops?per_page=100', headers: apiHeaders(bKey), forbidden: aShopIds, own: [bShop.id] },
    ];
    for (const { label, path, headers, forbidden, own } of lists) {
      const res = await request(t.url, 'GET', path, { headers });
      assert.equal(res.status, 200, `${label}: ${res.text}`);
      const ids = (res.body.data as Array<{ id: number }>).map((x) => x.id);
      for (const id of forbidden) assert.ok(!ids.includes(id), `${label} shows A's object ${id}`);
      for (const id of own) assert.ok(ids.includes(id), `${label} misses B's own object ${id}`);
      assert.equal(res.body.meta.total, ids.length, `${label}: the total counts only B's objects`);
      for (const item of res.body.data as Array<{ partner_id?: number }>) {
        if (item.partner_id !== undefined) assert.equal(item.partner_id, b.id, label);
      }
      assert.ok(!res.text.includes('A list'), `${label} mentions A's objects`);
    }

    // Control: A's own lists show A's objects.
    const aList = await request(t.url, 'GET', '/en/shop/shops?per_page=100', { headers: apiHeaders(a.apiKey) });
    const aIds = (aList.body.data as Array<{ id: number }>).map((x) => x.id);
    for (const id of aShopIds) assert.ok(aIds.includes(id));
    assert.ok(!aIds.includes(bShop.id));
  });

  it("A's API credentials act for A only: validate-credentials names A", async () => {
    for (const p of [a, b]) {
      const res = await request(t.url, 'POST', '/en/shop/validate-credentials', { headers: apiHeaders(p.apiKey) });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.data.partner, { id: p.id, name: p.name });
    }
    // One partner's key with another partner's secret is not a valid pair.
    const mixed = await request(t.url, 'POST', '/en/shop/validate-credentials', {
      headers: apiHeaders({ key: a.apiKey.key, secret: b.apiKey.secret }),
    });
    assert.equal(mixed.status, 401);
    assert.equal(mixed.body.code, 1001);
  });
});
