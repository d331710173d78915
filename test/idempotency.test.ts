// Idempotency-Key (DESIGN.md §3, §7) on POST /{locale}/partners/shops and
// POST /{locale}/admin/partners: a retry replays the first response, a reused key with
// another body is 422 INVALID_VALUE, a key still in flight is 409 CONCURRENT_LIMIT_EXCEEDED.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createAdmin, createPartner, type AdminFixture, type PartnerFixture } from './helpers/fixtures.js';
import { bearer, request, type Response } from './helpers/http.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: TestApp;
let keyCounter = 0;
/** A key unique to this run, so that tests never meet each other's keys. */
const newKey = (label: string) => `${label}-${process.pid}-${Date.now()}-${++keyCounter}`;

before(async () => {
  t = await startTestApp();
});
after(() => t.close());

function createShop(partner: PartnerFixture, body: unknown, key?: string): Promise<Response> {
  return request(t.url, 'POST', '/en/partners/shops', {
    headers: { ...bearer(partner.token), ...(key !== undefined ? { 'idempotency-key': key } : {}) },
    json: body,
  });
}

/** What a later GET shows for the shop the original response created: the same shop. */
async function assertStored(partner: PartnerFixture, original: Response) {
  const res = await request(t.url, 'GET', `/en/partners/shops/${original.body.data.id}`, { headers: bearer(partner.token) });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body.data, original.body.data);
}

async function shopsOf(partner: PartnerFixture): Promise<Array<{ id: number; name: string; partner_id: number }>> {
  const res = await request(t.url, 'GET', '/en/partners/shops?per_page=100', { headers: bearer(partner.token) });
  assert.equal(res.status, 200);
  assert.equal(res.body.meta.total, res.body.data.length);
  return res.body.data;
}

/** The first response of a key: 201, a fresh request_id, no replay header. */
function assertOriginal(res: Response) {
  assert.equal(res.status, 201, res.text);
  assert.equal(res.headers.get('idempotent-replayed'), null);
  assert.match(res.body.request_id, UUID);
  assert.equal(res.headers.get('x-request-id'), res.body.request_id);
}

/** A replay of `first`: same status and body, only request_id (and X-Request-Id) new. */
function assertReplayOf(res: Response, first: Response) {
  assert.equal(res.status, first.status, res.text);
  assert.equal(res.headers.get('idempotent-replayed'), 'true');
  assert.match(res.body.request_id, UUID);
  assert.equal(res.headers.get('x-request-id'), res.body.request_id);
  assert.notEqual(res.body.request_id, first.body.request_id);
  const { request_id: _a, ...replayed } = res.body;
  const { request_id: _b, ...original } = first.body;
  assert.deepEqual(replayed, original);
}

function assertShapeB(res: Response, status: number, code: string) {
  assert.equal(res.status, status, res.text);
  assert.equal(res.body.success, false);
  assert.equal(res.body.code, code);
  assert.match(res.body.request_id, UUID);
  assert.ok(Array.isArray(res.body.errors), 'errors is Shape B (an array)');
  assert.equal(res.body.errors.length, 1);
  assert.equal(res.body.errors[0].field, 'Idempotency-Key');
  assert.equal(typeof res.body.errors[0].message, 'string');
  assert.equal(typeof res.body.errors[0].code, 'string');
}

describe('Idempotency-Key on POST /{locale}/partners/shops', () => {
  it('replays the first response for the same key and body; one shop exists', async () => {
    const partner = await createPartner(t);
    const key = newKey('same');
    const body = { name: 'Vilnius centre', address: 'Gedimino pr. 1', city: 'Vilnius', lat: 54.687157, lng: 25.279652 };
    const first = await createShop(partner, body, key);
    assertOriginal(first);
    assert.equal(first.body.data.name, 'Vilnius centre');
    assert.equal(first.body.data.partner_id, partner.id);

    const second = await createShop(partner, body, key);
    assertReplayOf(second, first);

    const shops = await shopsOf(partner);
    assert.equal(shops.length, 1);
    assert.equal(shops[0]!.id, first.body.data.id);
  });

  it('treats the body canonically: other key order is still a replay', async () => {
    const partner = await createPartner(t);
    const key = newKey('order');
    const first = await createShop(partner, { name: 'Kaunas', city: 'Kaunas', address: 'Laisvės al. 2' }, key);
    assertOriginal(first);
    const second = await createShop(partner, { address: 'Laisvės al. 2', city: 'Kaunas', name: 'Kaunas' }, key);
    assertReplayOf(second, first);
    assert.equal((await shopsOf(partner)).length, 1);
  });

  it('treats the same request in another locale as the same request: a replay', async () => {
    const partner = await createPartner(t);
    const key = newKey('locale');
    const first = await createShop(partner, { name: 'Šiauliai' }, key);
    assertOriginal(first);
    const res = await request(t.url, 'POST', '/lt/partners/shops', {
      headers: { ...bearer(partner.token), 'idempotency-key': key },
      json: { name: 'Šiauliai' },
    });
    assertReplayOf(res, first);
    assert.equal((await shopsOf(partner)).length, 1);
  });

  it('stores no plain digest of the request body (bodies can carry passwords)', async () => {
    const partner = await createPartner(t);
    const key = newKey('digest');
    const body = { name: 'Panevėžys' };
    assertOriginal(await createShop(partner, body, key));
    const rows = await t.app.context.database.db.execute(sql`select request_hash from idempotency_keys where key = ${key}`);
    const stored = (rows as unknown as { rows: Array<{ request_hash: string }> }).rows[0]!.request_hash;
    // Not the plain digest of the canonical request, with or without the locale.
    for (const params of [{ locale: 'en' }, {}]) {
      const plain = createHash('sha256').update(JSON.stringify(['POST', '/:locale/partners/shops', params, body])).digest('hex');
      assert.notEqual(stored, plain);
    }
    assert.match(stored, /^[0-9a-f]{64}$/);
  });

  it('answers the same key with another body with 422 INVALID_VALUE and creates nothing', async () => {
    const partner = await createPartner(t);
    const key = newKey('other-body');
    const first = await createShop(partner, { name: 'Klaipėda' }, key);
    assertOriginal(first);
    for (const body of [{ name: 'Šiauliai' }, { name: 'Klaipėda', city: 'Klaipėda' }]) {
      const res = await createShop(partner, body, key);
      assertShapeB(res, 422, 'INVALID_VALUE');
      assert.equal(res.headers.get('idempotent-replayed'), null);
    }
    const shops = await shopsOf(partner);
    assert.deepEqual(
      shops.map((s) => s.name),
      ['Klaipėda'],
    );
    // The original body still replays afterwards.
    assertReplayOf(await createShop(partner, { name: 'Klaipėda' }, key), first);
  });

  it('creates exactly one shop from 10 parallel requests with the same key', async () => {
    const partner = await createPartner(t);
    const key = newKey('parallel');
    const body = { name: 'Parallel shop', city: 'Panevėžys' };
    const responses = await Promise.all(Array.from({ length: 10 }, () => createShop(partner, body, key)));

    const shops = await shopsOf(partner);
    assert.equal(shops.length, 1, 'exactly one shop created');
    const created = responses.filter((r) => r.status === 201);
    assert.ok(created.length >= 1, 'at least one 201');
    // The request that created the shop answers as the original; any other 201 is its replay.
    const originals = created.filter((r) => r.headers.get('idempotent-replayed') === null);
    assert.equal(originals.length, 1, 'exactly one original response');
    const original = originals[0]!;
    assert.equal(original.body.data.id, shops[0]!.id);
    await assertStored(partner, original);
    for (const r of created) if (r !== original) assertReplayOf(r, original);
    for (const r of responses.filter((x) => x.status !== 201)) {
      assertShapeB(r, 409, 'CONCURRENT_LIMIT_EXCEEDED');
      assert.equal(r.body.errors[0].code, 'CONCURRENT_LIMIT_EXCEEDED');
    }
    // Once the dust settles the key replays.
    assertReplayOf(await createShop(partner, body, key), original);
  });

  it('creates exactly one shop when the parallel requests reach two nodes on one database', async () => {
    // A second node: its own process-local state, the same database and token key.
    const node2 = await startTestApp({ JWT_SECRET: t.config.jwtSecret }, t.db);
    try {
      const partner = await createPartner(t);
      const key = newKey('two-nodes');
      const body = { name: 'Two nodes' };
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          request(i % 2 === 0 ? t.url : node2.url, 'POST', '/en/partners/shops', {
            headers: { ...bearer(partner.token), 'idempotency-key': key },
            json: body,
          }),
        ),
      );
      const shops = await shopsOf(partner);
      assert.equal(shops.length, 1, 'exactly one shop created');
      const originals = responses.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') === null);
      assert.equal(originals.length, 1, 'exactly one original response');
      assert.equal(originals[0]!.body.data.id, shops[0]!.id);
      await assertStored(partner, originals[0]!);
      for (const r of responses) {
        if (r === originals[0]) continue;
        if (r.status === 201) assertReplayOf(r, originals[0]!);
        else assertShapeB(r, 409, 'CONCURRENT_LIMIT_EXCEEDED');
      }
    } finally {
      await node2.close();
    }
  });

  it("scopes keys to the partner: B using A's key value creates its own shop", async () => {
    const a = await createPartner(t);
    const b = await createPartner(t);
    const key = newKey('scoped');
    const body = { name: 'Same name' };
    const fromA = await createShop(a, body, key);
    assertOriginal(fromA);
    const fromB = await createShop(b, body, key);
    assertOriginal(fromB);
    assert.notEqual(fromB.body.data.id, fromA.body.data.id);
    assert.equal(fromB.body.data.partner_id, b.id);
    assert.equal((await shopsOf(a)).length, 1);
    assert.equal((await shopsOf(b)).length, 1);
    // And each partner's key replays its own response.
    assertReplayOf(await createShop(b, body, key), fromB);
    assertReplayOf(await createShop(a, body, key), fromA);
  });

  it('does not burn the key on a rejected request: the corrected one succeeds', async () => {
    const partner = await createPartner(t);
    const key = newKey('invalid-first');
    const bad = await createShop(partner, { name: '' }, key);
    assert.equal(bad.status, 422);
    assert.equal(bad.body.code, 422);
    assert.ok(bad.body.errors.name);
    // A business check inside the handler (coordinates come as a pair) is not stored either.
    const half = await createShop(partner, { name: 'Half', lat: 54.9 }, key);
    assert.equal(half.status, 422);
    assert.ok(half.body.errors.lng);
    assert.equal((await shopsOf(partner)).length, 0);

    const good = await createShop(partner, { name: 'Corrected' }, key);
    assertOriginal(good);
    assert.equal(good.body.data.name, 'Corrected');
    assertReplayOf(await createShop(partner, { name: 'Corrected' }, key), good);
    assert.equal((await shopsOf(partner)).length, 1);
  });

  it('rejects an invalid key with 422 INVALID_VALUE and creates nothing', async () => {
    const partner = await createPartner(t);
    for (const key of ['k'.repeat(300), 'k'.repeat(256), 'has space', 'tab\there', 'clé']) {
      const res = await createShop(partner, { name: 'Never created' }, key);
      assertShapeB(res, 422, 'INVALID_VALUE');
    }
    assert.equal((await shopsOf(partner)).length, 0);
    // 255 printable ASCII characters is the longest valid key.
    const longest = `${newKey('max')}-`.padEnd(255, 'x');
    assertOriginal(await createShop(partner, { name: 'Longest key' }, longest));
    assert.equal((await shopsOf(partner)).length, 1);
  });

  it('without the header, two identical POSTs create two shops', async () => {
    const partner = await createPartner(t);
    const body = { name: 'Twice' };
    const first = await createShop(partner, body);
    const second = await createShop(partner, body);
    assertOriginal(first);
    assertOriginal(second);
    assert.notEqual(first.body.data.id, second.body.data.id);
    assert.equal((await shopsOf(partner)).length, 2);
  });

  it('forgets a key once it has expired (24 h): the request runs again', async () => {
    const partner = await createPartner(t);
    const key = newKey('expired');
    const body = { name: 'Yesterday' };
    const first = await createShop(partner, body, key);
    assertOriginal(first);
    await t.db.database.db.execute(
      sql`update idempotency_keys set expires_at = now() - interval '1 minute' where scope = ${`partner:${partner.id}`} and key = ${key}`,
    );
    const again = await createShop(partner, body, key);
    assertOriginal(again);
    assert.notEqual(again.body.data.id, first.body.data.id);
    // The key now stands for the new request.
    assertReplayOf(await createShop(partner, body, key), again);
    assert.equal((await shopsOf(partner)).length, 2);
  });
});

describe('Idempotency-Key on POST /{locale}/admin/partners', () => {
  let admin: AdminFixture;
  const createPartnerHttp = (body: unknown, key: string) =>
    request(t.url, 'POST', '/en/admin/partners', { headers: { ...bearer(admin.token), 'idempotency-key': key }, json: body });
  const partnerCount = async () => {
    const res = await request(t.url, 'GET', '/en/admin/partners?per_page=1', { headers: bearer(admin.token) });
    assert.equal(res.status, 200);
    return res.body.meta.total as number;
  };

  before(async () => {
    admin = await createAdmin(t);
  });

  it('replays the first response and creates one partner', async () => {
    const before = await partnerCount();
    const key = newKey('admin');
    const body = { name: 'Idempotent UAB', email: `idem-${keyCounter}-${process.pid}@example.com`, password: 'a-long-password-1' };
    const first = await createPartnerHttp(body, key);
    assertOriginal(first);
    assert.equal(first.body.data.email, body.email);
    const second = await createPartnerHttp({ password: body.password, email: body.email, name: body.name }, key);
    assertReplayOf(second, first);
    assert.equal(await partnerCount(), before + 1);

    const other = await createPartnerHttp({ ...body, name: 'Another UAB' }, key);
    assertShapeB(other, 422, 'INVALID_VALUE');
    assert.equal(await partnerCount(), before + 1);
  });

  it('does not store a failed effect: after a duplicate e-mail (409) the corrected request succeeds', async () => {
    const existing = await createPartner(t);
    const before = await partnerCount();
    const key = newKey('admin-dup');
    const dup = await createPartnerHttp({ name: 'Dup UAB', email: existing.email, password: 'a-long-password-2' }, key);
    assert.equal(dup.status, 409, dup.text);
    assert.equal(dup.body.code, 'DUPLICATE_VALUE');
    assert.equal(await partnerCount(), before);

    const fixed = await createPartnerHttp({ name: 'Dup UAB', email: `fixed-${keyCounter}-${process.pid}@example.com`, password: 'a-long-password-2' }, key);
    assertOriginal(fixed);
    assert.equal(await partnerCount(), before + 1);
  });

  it("keeps an admin's keys apart from a partner's keys of the same value", async () => {
    const partner = await createPartner(t);
    const key = newKey('cross');
    const shop = await createShop(partner, { name: 'Partner shop' }, key);
    assertOriginal(shop);
    const created = await createPartnerHttp({ name: 'Cross UAB', email: `cross-${keyCounter}-${process.pid}@example.com`, password: 'a-long-password-3' }, key);
    assertOriginal(created);
  });
});
