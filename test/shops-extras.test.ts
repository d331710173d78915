// Shops beyond the list (DESIGN.md §10) over real HTTP: the full shop record, the nearby
// search against an independent haversine, per-shop analytics against the ledger the same
// requests wrote, CSV/JSON import (all or nothing), export → import round trips, and the
// tenant matrix for every route that takes a shop id.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { couponAction, claimCoupon, createOffer } from './helpers/engagement.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { assertLedgerConsistent, award, createCustomer, createProgramme, deduct, joinProgramme, TestClock } from './helpers/loyalty.js';

const SHOP_KEYS = [
  'address',
  'city',
  'code',
  'country',
  'created_at',
  'email',
  'id',
  'is_active',
  'lat',
  'lng',
  'name',
  'opening_hours',
  'partner_id',
  'phone',
  'postal_code',
  'updated_at',
].sort();

/** Great-circle distance, km: the reference the service must agree with (written independently, R = 6371). */
function haversineKm(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const rad = Math.PI / 180;
  const a = Math.sin(((lat2 - lat1) * rad) / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lng2 - lng1) * rad) / 2) ** 2;
  return 2 * 6371 * Math.atan2(Math.sqrt(a), Math.sqrt(1 - a));
}

describe('shops beyond the list', () => {
  let t: TestApp;
  let a: PartnerFixture;
  let b: PartnerFixture;
  const clock = new TestClock(Date.parse('2026-03-01T10:00:00Z'));

  const createShop = async (p: PartnerFixture, body: Record<string, unknown>) => {
    const res = await request(t.url, 'POST', '/en/partners/shops', { headers: bearer(p.token), json: body });
    assert.equal(res.status, 201, res.text);
    return res.body.data;
  };
  const allShops = async (p: PartnerFixture) => {
    const res = await request(t.url, 'GET', '/en/partners/shops?per_page=100', { headers: bearer(p.token) });
    assert.equal(res.status, 200, res.text);
    return res.body.data as Array<Record<string, unknown>>;
  };
  const exportCsv = async (p: PartnerFixture) => {
    const res = await request(t.url, 'POST', '/en/shop/shops/export', { headers: apiHeaders(p.apiKey) });
    assert.equal(res.status, 200, res.text);
    assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
    return res.text;
  };
  const importCsv = (p: PartnerFixture, csv: string, headers: Record<string, string> = {}) =>
    request(t.url, 'POST', '/en/shop/shops/import', { headers: { ...apiHeaders(p.apiKey), 'content-type': 'text/csv', ...headers }, raw: csv });
  const importJson = (p: PartnerFixture, rows: unknown) => request(t.url, 'POST', '/en/shop/shops/import', { headers: apiHeaders(p.apiKey), json: rows });

  before(async () => {
    t = await startTestApp({}, undefined, { clock });
    a = await createPartner(t);
    b = await createPartner(t);
  });
  after(async () => {
    await assertLedgerConsistent(t);
    await t.close();
  });

  describe('the shop record', () => {
    it('is the full record on create, get, the partner list and the Shop list', async () => {
      const created = await createShop(a, {
        name: ' Record shop ',
        code: 'REC-1',
        address: 'Gedimino pr. 1',
        city: 'Vilnius',
        country: 'lt',
        postal_code: '01103',
        phone: '+37052123456',
        email: 'rec@example.com',
        lat: 54.687157,
        lng: 25.279652,
        opening_hours: 'Mo-Fr 09:00-18:00',
      });
      assert.deepEqual(Object.keys(created).sort(), SHOP_KEYS);
      assert.equal(created.name, 'Record shop');
      assert.equal(created.country, 'LT');
      assert.equal(created.is_active, true);
      assert.equal(created.lat, 54.687157);

      const minimal = await createShop(a, { name: 'Bare' });
      assert.deepEqual(Object.keys(minimal).sort(), SHOP_KEYS);
      for (const key of ['code', 'country', 'postal_code', 'phone', 'email', 'opening_hours', 'lat', 'lng']) assert.equal(minimal[key], null, key);

      const one = await request(t.url, 'GET', `/en/partners/shops/${created.id}`, { headers: bearer(a.token) });
      assert.deepEqual(one.body.data, created);
      const list = await request(t.url, 'GET', '/en/shop/shops', { headers: apiHeaders(a.apiKey) });
      assert.equal(list.status, 200);
      for (const shop of list.body.data) assert.deepEqual(Object.keys(shop).sort(), SHOP_KEYS);
    });

    it('keeps codes unique per partner (409), not across partners', async () => {
      const dup = await request(t.url, 'POST', '/en/partners/shops', { headers: bearer(a.token), json: { name: 'Dup', code: 'REC-1' } });
      assert.equal(dup.status, 409, dup.text);
      assert.equal(dup.body.code, 'DUPLICATE_VALUE');
      assert.equal(dup.body.errors[0].field, 'code');
      const other = await createShop(b, { name: 'B shop', code: 'REC-1' });
      assert.equal(other.code, 'REC-1');
      const bare = (await allShops(a)).find((s) => s.name === 'Bare')!;
      const put = await request(t.url, 'PUT', `/en/partners/shops/${bare.id}`, { headers: bearer(a.token), json: { code: 'REC-1' } });
      assert.equal(put.status, 409, put.text);
      const bad = await request(t.url, 'POST', '/en/partners/shops', { headers: bearer(a.token), json: { name: 'X', country: 'LTU', email: 'nope' } });
      assert.equal(bad.status, 422);
      assert.deepEqual(Object.keys(bad.body.errors).sort(), ['country', 'email']);
    });
  });

  describe('nearby', () => {
    // Around Vilnius Cathedral Square.
    const here = { lat: 54.6858, lng: 25.2877 };
    let near: Array<{ id: number; lat: number; lng: number }>;

    before(async () => {
      near = [];
      for (const [name, lat, lng] of [
        ['N1', 54.6872, 25.2797],
        ['N2', 54.7, 25.3],
        ['N3', 54.63, 25.2],
        ['N4', 54.72, 25.4],
      ] as const) {
        near.push(await createShop(a, { name, lat, lng }));
      }
      await createShop(a, { name: 'Inactive', lat: 54.686, lng: 25.288, is_active: false });
      await createShop(a, { name: 'Kaunas', lat: 54.8985, lng: 23.9036 }); // ~90 km
      await createShop(b, { name: 'B next door', lat: 54.6859, lng: 25.2878 });
    });

    it("orders the partner's active shops by great-circle distance, agreeing with haversine to 0.5 %", async () => {
      const res = await request(t.url, 'GET', `/en/shop/shops/nearby?lat=${here.lat}&lng=${here.lng}`, { headers: apiHeaders(a.apiKey) });
      assert.equal(res.status, 200, res.text);
      const shops = res.body.data as Array<{ id: number; name: string; lat: number; lng: number; distance_km: number }>;
      // ('Record shop', made above, stands by the square too.)
      assert.deepEqual(shops.map((s) => s.name).sort(), ['N1', 'N2', 'N3', 'N4', 'Record shop']);
      for (const s of shops) {
        assert.deepEqual(Object.keys(s).sort(), [...SHOP_KEYS, 'distance_km'].sort());
        const reference = haversineKm(here.lat, here.lng, s.lat, s.lng);
        assert.ok(Math.abs(s.distance_km - reference) / reference < 0.005, `${s.name}: ${s.distance_km} vs ${reference}`);
        assert.equal(s.distance_km, Math.round(s.distance_km * 1000) / 1000);
      }
      const distances = shops.map((s) => s.distance_km);
      assert.deepEqual(distances, [...distances].sort((x, y) => x - y));

      const wide = await request(t.url, 'GET', `/en/shop/shops/nearby?lat=${here.lat}&lng=${here.lng}&radius_km=100&limit=2`, { headers: apiHeaders(a.apiKey) });
      assert.equal(wide.status, 200);
      assert.deepEqual(wide.body.data.map((s: { name: string }) => s.name), shops.slice(0, 2).map((s) => s.name));
      const all = await request(t.url, 'GET', `/en/shop/shops/nearby?lat=${here.lat}&lng=${here.lng}&radius_km=100`, { headers: apiHeaders(a.apiKey) });
      assert.ok(all.body.data.some((s: { name: string }) => s.name === 'Kaunas'));
      const tight = await request(t.url, 'GET', `/en/shop/shops/nearby?lat=${here.lat}&lng=${here.lng}&radius_km=1`, { headers: apiHeaders(a.apiKey) });
      assert.deepEqual(tight.body.data.map((s: { name: string }) => s.name).sort(), ['N1', 'Record shop']);
    });

    it('refuses bad coordinates, radius and limit with 422 on the field', async () => {
      for (const [query, field] of [
        ['lat=91&lng=0', 'lat'],
        ['lat=abc&lng=0', 'lat'],
        ['lat=0&lng=-180.5', 'lng'],
        ['lat=0', 'lng'],
        ['lat=0&lng=0&radius_km=101', 'radius_km'],
        ['lat=0&lng=0&radius_km=0', 'radius_km'],
        ['lat=0&lng=0&limit=101', 'limit'],
        ['lat=0&lng=0&limit=0', 'limit'],
      ] as const) {
        const res = await request(t.url, 'GET', `/en/shop/shops/nearby?${query}`, { headers: apiHeaders(a.apiKey) });
        assert.equal(res.status, 422, `${query}: ${res.text}`);
        assert.deepEqual(Object.keys(res.body.errors), [field], query);
      }
      const noAuth = await request(t.url, 'GET', '/en/shop/shops/nearby?lat=0&lng=0');
      assert.equal(noAuth.status, 401);
    });

    it('finds shops across the antimeridian and around a pole', async () => {
      const p = await createPartner(t);
      await createShop(p, { name: 'East of 180', lat: 0, lng: 179.95 });
      await createShop(p, { name: 'West of 180', lat: 0, lng: -179.95 });
      await createShop(p, { name: 'Far', lat: 0, lng: 170 });
      const dateLine = await request(t.url, 'GET', '/en/shop/shops/nearby?lat=0&lng=179.99&radius_km=20', { headers: apiHeaders(p.apiKey) });
      assert.deepEqual(dateLine.body.data.map((s: { name: string }) => s.name), ['East of 180', 'West of 180']);
      for (const s of dateLine.body.data) assert.ok(Math.abs(s.distance_km - haversineKm(0, 179.99, s.lat, s.lng)) / s.distance_km < 0.005);

      const q = await createPartner(t);
      await createShop(q, { name: 'Pole A', lat: 89.95, lng: 0 });
      await createShop(q, { name: 'Pole B', lat: 89.95, lng: 180 });
      const pole = await request(t.url, 'GET', '/en/shop/shops/nearby?lat=89.99&lng=90&radius_km=20', { headers: apiHeaders(q.apiKey) });
      assert.equal(pole.status, 200);
      assert.deepEqual(pole.body.data.map((s: { name: string }) => s.name).sort(), ['Pole A', 'Pole B']);
      for (const s of pole.body.data) assert.ok(Math.abs(s.distance_km - haversineKm(89.99, 90, s.lat, s.lng)) / s.distance_km < 0.005);
    });

    it("shows a customer's token the shops of its partner only", async () => {
      const c = await createCustomer(t, a.id);
      const res = await request(t.url, 'GET', `/en/shop/shops/nearby?lat=${here.lat}&lng=${here.lng}`, { headers: bearer(c.token) });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.data.map((s: { name: string }) => s.name).sort(), ['N1', 'N2', 'N3', 'N4', 'Record shop']);
    });
  });

  describe('analytics', () => {
    let s1: number;
    let s2: number;

    it('agrees with the ledger written through the HTTP endpoints', async () => {
      const p = await createPartner(t);
      s1 = (await createShop(p, { name: 'S1' })).id;
      s2 = (await createShop(p, { name: 'S2' })).id;
      const programme = await createProgramme(t, p.id, { initialBonusPoints: 10, pointsPerCurrency: '1', currencyAmount: '1', pointsPerCurrencyRedemption: '100', currencyAmountRedemption: '1' });
      const c1 = await createCustomer(t);
      const c2 = await createCustomer(t);
      const card1 = await joinProgramme(t, c1, programme);
      const card2 = await joinProgramme(t, c2, programme);

      // Day 1 (2026-03-01): purchases at both shops.
      assert.equal((await award(t, p, { card_id: card1.id, shop_id: s1, amount: 10.5, receipt_number: 'A-1' })).status, 201);
      const bigSale = await award(t, p, { card_id: card2.id, shop_id: s1, amount: 20.25, receipt_number: 'A-2' });
      assert.equal(bigSale.status, 201, bigSale.text);
      assert.equal((await award(t, p, { card_id: card1.id, shop_id: s2, amount: 5, receipt_number: 'B-1' })).status, 201);
      // Day 2: a deduction and a redeemed coupon at S1; a purchase reversed.
      clock.advanceDays(1);
      const deducted = await deduct(t, p, { card_id: card1.id, shop_id: s1, points: 7 });
      assert.equal(deducted.status, 201, deducted.text);
      const toReverse = await award(t, p, { card_id: card2.id, shop_id: s1, amount: 3, receipt_number: 'A-3' });
      assert.equal(toReverse.status, 201);
      const reversed = await request(t.url, 'POST', `/en/shop/transactions/${toReverse.body.data.id}/reverse`, { headers: apiHeaders(p.apiKey), json: { reason: 'returned' } });
      // …and goods of day 1's sale come back (5.25 EUR, 5 points), and 3 of the deducted points.
      const returnOf = async (id: number, json: Record<string, unknown>) => {
        const res = await request(t.url, 'POST', `/en/shop/transactions/${id}/return`, { headers: apiHeaders(p.apiKey), json });
        assert.equal(res.status, 201, res.text);
        return res.body.data;
      };
      assert.equal((await returnOf(bigSale.body.data.id, { amount: 5.25 })).points, -5);
      assert.equal((await returnOf(deducted.body.data.id, { points: 3 })).points, 3);
      const offer = await createOffer(t, p, {});
      const coupon = await claimCoupon(t, c1, offer.id);
      assert.equal((await couponAction(t, p, coupon.id, 'redeem', { shop_id: s1 })).status, 200);
      // Day 3: outside the window asked for below.
      clock.advanceDays(1);
      assert.equal((await award(t, p, { card_id: card2.id, shop_id: s1, amount: 1, receipt_number: 'A-4' })).status, 201);

      // The expected figures, from the ledger as the API lists it.
      const ledger = await request(t.url, 'GET', '/en/shop/points?per_page=100', { headers: apiHeaders(p.apiKey) });
      assert.equal(ledger.status, 200);
      type Entry = { id: number; shop_id: number | null; type: string; points: number; amount: number | null; user_id: number; card_id: number; created_at: string; reverses_id: number | null; returns_id: number | null };
      const entries = (ledger.body.data as Entry[]).filter((e) => e.created_at < '2026-03-03');
      const byId = new Map(entries.map((e) => [e.id, e]));
      const at = (shop: number) => entries.filter((e) => e.shop_id === shop);
      // A reversal or return counts against what it undoes: an earning's points taken back
      // lower points_awarded, a spend's points given back lower points_deducted; refunded
      // purchase amounts lower purchase_amount.
      const undone = (e: Entry) => byId.get(e.reverses_id ?? e.returns_id ?? -1);
      const awarded = (e: Entry) => (undone(e) ? (undone(e)!.points > 0 ? e.points : 0) : Math.max(e.points, 0));
      const spent = (e: Entry) => (undone(e) ? (undone(e)!.points < 0 ? -e.points : 0) : Math.max(-e.points, 0));
      const expected = (rows: Entry[]) => ({
        transactions: rows.length,
        purchase_amount: Math.round(rows.reduce((sum, e) => sum + (e.type === 'purchase' || undone(e)?.type === 'purchase' ? (e.amount ?? 0) : 0), 0) * 10000) / 10000,
        points_awarded: rows.reduce((sum, e) => sum + awarded(e), 0),
        points_deducted: rows.reduce((sum, e) => sum + spent(e), 0),
      });
      assert.ok([200, 201].includes(reversed.status), reversed.text);
      assert.ok(entries.some((e) => e.type === 'reversal' && e.shop_id === s1), 'the reversal is at the shop');
      assert.equal(entries.filter((e) => e.type === 'return' && e.shop_id === s1).length, 2, 'the returns are at the shop');

      const res = await request(t.url, 'GET', `/en/shop/shops/${s1}/analytics?from=2026-03-01&to=2026-03-02`, { headers: apiHeaders(p.apiKey) });
      assert.equal(res.status, 200, res.text);
      const data = res.body.data;
      assert.deepEqual(Object.keys(data).sort(), ['by_day', 'coupons_redeemed', 'from', 'new_cards', 'points_awarded', 'points_deducted', 'purchase_amount', 'shop_id', 'to', 'transactions', 'unique_customers']);
      assert.equal(data.shop_id, s1);
      assert.equal(data.from, '2026-03-01');
      assert.equal(data.to, '2026-03-02');
      assert.deepEqual(
        { transactions: data.transactions, purchase_amount: data.purchase_amount, points_awarded: data.points_awarded, points_deducted: data.points_deducted },
        expected(at(s1)),
      );
      // By hand: purchases 10.5 + 20.25 + 3, less 3 reversed and 5.25 returned; points 10 + 20
      // + 3 earned, less 3 reversed and 5 returned; 7 deducted, less 3 given back.
      assert.deepEqual([data.transactions, data.purchase_amount, data.points_awarded, data.points_deducted], [7, 25.5, 25, 4]);
      assert.equal(data.unique_customers, new Set(at(s1).map((e) => e.user_id)).size);
      assert.equal(data.new_cards, 2); // both cards' first till entry was at S1
      assert.equal(data.coupons_redeemed, 1);
      assert.deepEqual(data.by_day.map((d: { day: string }) => d.day), ['2026-03-01', '2026-03-02']);
      for (const d of data.by_day) {
        const { day, coupons_redeemed, ...rest } = d;
        assert.deepEqual(rest, expected(at(s1).filter((e) => e.created_at.startsWith(day))), day);
        assert.equal(coupons_redeemed, day === '2026-03-02' ? 1 : 0);
      }
      assert.equal(data.transactions, data.by_day.reduce((n: number, d: { transactions: number }) => n + d.transactions, 0));

      const other = await request(t.url, 'GET', `/en/shop/shops/${s2}/analytics?from=2026-03-01&to=2026-03-02`, { headers: apiHeaders(p.apiKey) });
      assert.equal(other.body.data.transactions, 1);
      assert.equal(other.body.data.purchase_amount, 5);
      assert.equal(other.body.data.new_cards, 0); // card 1 started at S1
      assert.equal(other.body.data.coupons_redeemed, 0);

      // Default window: the last 30 days ending today (the clock is on 2026-03-03).
      const dflt = await request(t.url, 'GET', `/en/shop/shops/${s1}/analytics`, { headers: apiHeaders(p.apiKey) });
      assert.equal(dflt.status, 200);
      assert.equal(dflt.body.data.to, '2026-03-03');
      assert.equal(dflt.body.data.from, '2026-02-02');
      assert.equal(dflt.body.data.by_day.length, 30);
      assert.equal(dflt.body.data.transactions, at(s1).length + 1);

      // B's key on the shop: 404, and nothing about it leaks.
      const foreign = await request(t.url, 'GET', `/en/shop/shops/${s1}/analytics`, { headers: apiHeaders(b.apiKey) });
      assert.equal(foreign.status, 404);
      assert.equal(foreign.body.code, 'RESOURCE_NOT_FOUND');
    });

    it('refuses bad, inverted and too long windows with 422', async () => {
      const shop = (await allShops(a))[0]!.id;
      for (const [query, field] of [
        ['from=2026-13-01', 'from'],
        ['to=yesterday', 'to'],
        ['from=2026-03-05&to=2026-03-01', 'from'],
        ['from=2025-01-01&to=2026-03-01', 'from'],
      ] as const) {
        const res = await request(t.url, 'GET', `/en/shop/shops/${shop}/analytics?${query}`, { headers: apiHeaders(a.apiKey) });
        assert.equal(res.status, 422, `${query}: ${res.text}`);
        assert.deepEqual(Object.keys(res.body.errors), [field], query);
      }
      const ok366 = await request(t.url, 'GET', `/en/shop/shops/${shop}/analytics?from=2025-03-01&to=2026-03-01`, { headers: apiHeaders(a.apiKey) });
      assert.equal(ok366.status, 200, ok366.text);
      assert.equal(ok366.body.data.by_day.length, 366);
      assert.equal((await request(t.url, 'GET', '/en/shop/shops/999999/analytics', { headers: apiHeaders(a.apiKey) })).status, 404);
    });
  });

  describe('import and export', () => {
    let p: PartnerFixture;
    before(async () => {
      p = await createPartner(t);
    });

    it('creates from a JSON array, then updates by id and by code from CSV', async () => {
      const first = await importJson(p, [
        { name: 'Alpha', code: 'A-1', city: 'Vilnius', lat: 54.68, lng: 25.28 },
        { name: 'Beta', country: 'lv' },
      ]);
      assert.equal(first.status, 200, first.text);
      assert.deepEqual(first.body.data, { created: 2, updated: 0, errors: [] });
      const [alpha, beta] = await allShops(p);
      assert.equal(alpha!.code, 'A-1');
      assert.equal(beta!.country, 'LV');

      const csv = ['id,code,name,city,is_active', `${beta!.id},,Beta renamed,Riga,false`, ',A-1,Alpha renamed,,', ',G-1,Gamma,Kaunas,'].join('\r\n');
      const second = await importCsv(p, csv);
      assert.equal(second.status, 200, second.text);
      assert.deepEqual(second.body.data, { created: 1, updated: 2, errors: [] });
      const after = await allShops(p);
      assert.equal(after.length, 3);
      const byId = new Map(after.map((s) => [s.id, s]));
      assert.deepEqual([byId.get(beta!.id)!.name, byId.get(beta!.id)!.city, byId.get(beta!.id)!.is_active, byId.get(beta!.id)!.country], ['Beta renamed', 'Riga', false, 'LV']);
      assert.deepEqual([byId.get(alpha!.id)!.name, byId.get(alpha!.id)!.city, byId.get(alpha!.id)!.lat], ['Alpha renamed', null, 54.68]);
      const gamma = after.find((s) => s.code === 'G-1')!;
      assert.equal(gamma.name, 'Gamma');
      assert.equal(gamma.is_active, true);
    });

    it('lets two shops swap codes in one import, and refuses a code another shop keeps', async () => {
      const q = await createPartner(t);
      const one = await createShop(q, { name: 'One', code: 'X' });
      const two = await createShop(q, { name: 'Two', code: 'Y' });
      await createShop(q, { name: 'Three', code: 'Z' });
      const swap = await importJson(q, [{ id: one.id, code: 'Y' }, { id: two.id, code: 'X' }]);
      assert.equal(swap.status, 200, swap.text);
      assert.deepEqual(swap.body.data, { created: 0, updated: 2, errors: [] });
      const codes = new Map((await allShops(q)).map((s) => [s.name, s.code]));
      assert.deepEqual([codes.get('One'), codes.get('Two'), codes.get('Three')], ['Y', 'X', 'Z']);
      const clash = await importJson(q, [{ id: one.id, code: 'Z' }]);
      assert.equal(clash.status, 422, clash.text);
      assert.deepEqual(clash.body.errors.map((e: { row: number; field: string }) => [e.row, e.field]), [[1, 'code']]);
    });

    it('takes the CSV as multipart field "file"', async () => {
      const form = new FormData();
      form.append('file', new Blob(['name,code\r\nDelta,D-1\r\n'], { type: 'text/csv' }), 'shops.csv');
      const res = await fetch(`${t.url}/en/shop/shops/import`, { method: 'POST', headers: apiHeaders(p.apiKey), body: form });
      const body = (await res.json()) as { data: unknown };
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.deepEqual(body.data, { created: 1, updated: 0, errors: [] });
      assert.ok((await allShops(p)).some((s) => s.code === 'D-1'));
    });

    it('writes nothing when any row is bad, and reports every bad row', async () => {
      const before = await exportCsv(p);
      const shops = await allShops(p);
      const csv = [
        'id,code,name,lat,lng,email',
        `${shops[0]!.id},,Fine update,,,`,
        ',,,,,', // create without a name
        ',N-1,New,91,25,', // lat out of range
        ',N-2,New 2,54,25,not-an-email',
        '999999,,Ghost,,,', // not a shop of the partner
        ',N-3,Half,54,,', // lat without lng
        ',D-1,Delta again,,,', // fine: updates Delta by code
        `,G-1,Gamma twice,,,`,
        `,G-1,Gamma thrice,,,`, // the same shop twice
      ].join('\r\n');
      const res = await importCsv(p, csv);
      assert.equal(res.status, 422, res.text);
      assert.equal(res.body.success, false);
      assert.deepEqual(
        res.body.errors.map((e: { row: number; field: string }) => [e.row, e.field]),
        [
          [2, 'name'],
          [3, 'lat'],
          [4, 'email'],
          [5, 'id'],
          [6, 'lng'],
          [9, 'code'],
        ],
      );
      for (const e of res.body.errors) assert.equal(typeof e.message, 'string');
      assert.deepEqual(res.body.data.errors, res.body.errors);
      assert.equal(await exportCsv(p), before, 'nothing was written');

      const header = await importCsv(p, 'name,colour\r\nX,red\r\n');
      assert.equal(header.status, 422, header.text);
      assert.deepEqual(header.body.errors.map((e: { row: number; field: string }) => [e.row, e.field]), [[0, 'colour']]);
      const ragged = await importCsv(p, 'name,code\r\nX\r\n');
      assert.equal(ragged.status, 422, ragged.text);
      assert.equal(ragged.body.errors[0].field, 'file');
      const notArray = await importJson(p, { name: 'X' });
      assert.equal(notArray.status, 422, notArray.text);
      const taken = await importJson(p, [{ name: 'Twin 1', code: 'T-1' }, { name: 'Twin 2', code: 'T-1' }]);
      assert.equal(taken.status, 422, taken.text);
      assert.deepEqual(taken.body.errors.map((e: { row: number; field: string }) => [e.row, e.field]), [[1, 'code'], [2, 'code']]);
      const tooMany = await importJson(p, Array.from({ length: 5001 }, (_, i) => ({ name: `S${i}` })));
      assert.equal(tooMany.status, 422, tooMany.text);
      assert.equal(tooMany.body.errors[0].field, 'rows');
      assert.equal(await exportCsv(p), before, 'still nothing written');
    });

    it('answers other content types with 400, and the rest of the app keeps refusing CSV', async () => {
      const plain = await request(t.url, 'POST', '/en/shop/shops/import', { headers: { ...apiHeaders(p.apiKey), 'content-type': 'text/plain' }, raw: 'name\r\nX' });
      assert.equal(plain.status, 400, plain.text);
      const elsewhere = await request(t.url, 'POST', '/en/partners/shops', { headers: { ...bearer(p.token), 'content-type': 'text/csv' }, raw: 'name\r\nX' });
      assert.equal(elsewhere.status, 400, elsewhere.text);
      const big = await importCsv(p, `name\r\n${'x'.repeat(2 * 1024 * 1024)}\r\n`);
      assert.equal(big.status, 400);
    });

    it('round-trips: an export imports back as 0 created, N updated, nothing changed — formula cells included', async () => {
      await createShop(p, { name: '=HYPERLINK("http://evil","x")', address: "'+already quoted", phone: '+37060000000', opening_hours: '@daily', code: '-5' });
      const exported = await exportCsv(p);
      const lines = exported.trim().split('\r\n');
      assert.equal(lines[0], 'id,name,code,address,city,country,postal_code,phone,email,lat,lng,opening_hours,is_active,created_at,updated_at');
      const risky = lines.find((l) => l.includes('HYPERLINK'))!;
      assert.match(risky, /^\d+,"'=HYPERLINK\(""http:\/\/evil"",""x""\)",'-5,''\+already quoted,,,,'\+37060000000,,,,'@daily,true,/);
      const count = lines.length - 1;
      const again = await importCsv(p, exported);
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(again.body.data, { created: 0, updated: count, errors: [] });
      assert.equal(await exportCsv(p), exported, 'byte for byte, updated_at included');
      const stored = (await allShops(p)).find((s) => String(s.name).includes('HYPERLINK'))!;
      assert.equal(stored.name, '=HYPERLINK("http://evil","x")');
      assert.equal(stored.address, "'+already quoted");
    });

    it('replays a retried import with the same Idempotency-Key instead of creating twice', async () => {
      const q = await createPartner(t);
      const csv = 'name,code\r\nOnce,O-1\r\n';
      const first = await importCsv(q, csv, { 'idempotency-key': 'shops-import-1' });
      assert.equal(first.status, 200, first.text);
      const retry = await importCsv(q, csv, { 'idempotency-key': 'shops-import-1' });
      assert.equal(retry.status, 200);
      assert.equal(retry.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(retry.body.data, { created: 1, updated: 0, errors: [] });
      assert.equal((await allShops(q)).length, 1);
      const other = await importCsv(q, 'name,code\r\nTwice,O-2\r\n', { 'idempotency-key': 'shops-import-1' });
      assert.equal(other.status, 422);
      assert.equal(other.body.code, 'INVALID_VALUE');
    });

    it("never lets one partner's import touch another partner's shops", async () => {
      const aShop = (await allShops(a))[0]!;
      const beforeA = await exportCsv(a);
      const res = await importCsv(b, `id,name\r\n${aShop.id},Hijacked\r\n`);
      assert.equal(res.status, 422, res.text);
      assert.deepEqual(res.body.errors.map((e: { row: number; field: string }) => [e.row, e.field]), [[1, 'id']]);
      // A code A uses is, for B, just a new code.
      const viaCode = await importJson(b, [{ code: aShop.code ?? 'REC-1', name: 'B own' }]);
      assert.equal(viaCode.status, 200, viaCode.text);
      assert.equal(await exportCsv(a), beforeA, "A's shops unchanged");
      assert.ok(!(await exportCsv(b)).includes(`\r\n${aShop.id},`), "B's export holds none of A's shops");
    });
  });
});
