// The partner's own data (partner JWT): its record, its customers (holders of its cards) and
// its transactions with filters and CSV — and nothing of another partner's.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createAdmin, createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { bearer, request } from './helpers/http.js';
import { award, createCustomer, createProgramme, createShop, deduct, joinProgramme, TestClock, type CustomerFixture } from './helpers/loyalty.js';

describe('partner data', () => {
  let t: TestApp;
  let a: PartnerFixture;
  let b: PartnerFixture;
  let ona: CustomerFixture;
  let jonas: CustomerFixture;
  let shared: CustomerFixture;
  let shop1: number;
  let shop2: number;
  const clock = new TestClock(Date.parse('2026-05-10T12:00:00Z'));

  before(async () => {
    t = await startTestApp({}, undefined, { clock });
    a = await createPartner(t, 'A');
    b = await createPartner(t, 'B');
    shop1 = await createShop(t, a.id, 'One');
    shop2 = await createShop(t, a.id, 'Two');
    const progA = await createProgramme(t, a.id);
    const progB = await createProgramme(t, b.id);
    [ona, jonas, shared] = [await createCustomer(t), await createCustomer(t), await createCustomer(t)];
    const { customers } = t.app.context.services;
    await customers.updateProfile(ona.id, { name: 'Ona Onaitė', email: 'ona@example.com' });
    await customers.updateProfile(jonas.id, { name: 'Jonas Jonaitis' });
    const cOna = await joinProgramme(t, ona, progA);
    const cJonas = await joinProgramme(t, jonas, progA);
    const cShared = await joinProgramme(t, shared, progA);
    await joinProgramme(t, shared, progB);
    await award(t, a, { card_id: cOna.id, shop_id: shop1, amount: 10 }); // May 10
    clock.advanceDays(1);
    await award(t, a, { card_id: cJonas.id, shop_id: shop2, amount: 20 }); // May 11
    await deduct(t, a, { card_id: cJonas.id, shop_id: shop2, points: 5 });
    clock.advanceDays(1);
    await award(t, a, { card_id: cShared.id, shop_id: shop1, amount: 30 }); // May 12
  });
  after(() => t.close());

  it('GET /partners/{id} shows the partner its own record and 404 for any other id', async () => {
    const own = await request(t.url, 'GET', `/en/partners/${a.id}`, { headers: bearer(a.token) });
    assert.equal(own.status, 200);
    assert.equal(own.body.data.id, a.id);
    assert.equal(own.body.data.name, 'A');
    assert.equal(own.body.data.password_hash, undefined);
    for (const id of [b.id, 999999, 'abc']) {
      const res = await request(t.url, 'GET', `/en/partners/${id}`, { headers: bearer(a.token) });
      assert.equal(res.status, 404, String(id));
      assert.equal(res.body.code, 'RESOURCE_NOT_FOUND');
    }
    assert.equal((await request(t.url, 'GET', `/en/partners/${a.id}`)).status, 401);
    const admin = await createAdmin(t);
    assert.equal((await request(t.url, 'GET', `/en/partners/${a.id}`, { headers: bearer(admin.token) })).status, 403);
  });

  it("lists the customers holding the partner's cards, with only its cards, searchable and paginated", async () => {
    const all = await request(t.url, 'GET', '/en/partners/customers', { headers: bearer(a.token) });
    assert.equal(all.status, 200, all.text);
    assert.deepEqual(all.body.data.map((c: { id: number }) => c.id), [shared.id, jonas.id, ona.id]);
    const sharedRow = all.body.data[0];
    assert.equal(sharedRow.cards.length, 1, "only A's card of a customer who also holds B's");
    assert.equal(sharedRow.points_balance, 30);
    assert.deepEqual(Object.keys(sharedRow).sort(), ['cards', 'created_at', 'email', 'id', 'name', 'phone', 'points_balance', 'points_debt']);

    const byName = await request(t.url, 'GET', `/en/partners/customers?search=${encodeURIComponent('Onaitė')}`, { headers: bearer(a.token) });
    assert.deepEqual(byName.body.data.map((c: { id: number }) => c.id), [ona.id]);
    const byPhone = await request(t.url, 'GET', `/en/partners/customers?search=${encodeURIComponent(jonas.phone.slice(-6))}`, { headers: bearer(a.token) });
    assert.deepEqual(byPhone.body.data.map((c: { id: number }) => c.id), [jonas.id]);
    const wildcard = await request(t.url, 'GET', '/en/partners/customers?search=%25', { headers: bearer(a.token) });
    assert.deepEqual(wildcard.body.data, [], '% is a literal character, not a wildcard');

    const page = await request(t.url, 'GET', '/en/partners/customers?per_page=2&page=2', { headers: bearer(a.token) });
    assert.deepEqual(page.body.meta, { current_page: 2, per_page: 2, total: 3, last_page: 2 });
    assert.deepEqual(page.body.data.map((c: { id: number }) => c.id), [ona.id]);

    const ofB = await request(t.url, 'GET', '/en/partners/customers', { headers: bearer(b.token) });
    assert.deepEqual(ofB.body.data.map((c: { id: number }) => c.id), [shared.id]);
  });

  it("lists and exports the partner's transactions with date, shop, card and type filters", async () => {
    const get = (q: string, p = a) => request(t.url, 'GET', `/en/partners/transactions${q}`, { headers: bearer(p.token) });
    const all = await get('');
    assert.equal(all.status, 200, all.text);
    assert.equal(all.body.meta.total, 4);
    assert.deepEqual((await get('?from=2026-05-11&to=2026-05-11')).body.data.map((x: { type: string }) => x.type), ['deduct', 'purchase']);
    assert.equal((await get(`?shop_id=${shop1}`)).body.meta.total, 2);
    assert.equal((await get('?type=deduct')).body.meta.total, 1);
    assert.equal((await get(`?user_id=${ona.id}`)).body.meta.total, 1);
    const badRange = await get('?from=2026-05-12&to=2026-05-10');
    assert.equal(badRange.status, 422);
    assert.ok('to' in badRange.body.errors);
    assert.equal((await get('?type=gift')).status, 422);
    assert.equal((await get('', b)).body.meta.total, 0, "B sees none of A's transactions");

    const csv = await fetch(`${t.url}/en/partners/transactions/export?shop_id=${shop1}`, { headers: bearer(a.token) });
    assert.equal(csv.status, 200);
    assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
    assert.match(csv.headers.get('content-disposition') ?? '', /attachment/);
    const lines = (await csv.text()).trim().split('\r\n');
    assert.equal(lines.length, 3);
    assert.ok(lines.slice(1).every((l) => l.split(',')[8] === String(shop1)));
  });
});
