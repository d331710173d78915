// The envelope and error shapes of DESIGN.md §3, as a client sees them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, request } from './helpers/http.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('envelope and errors', () => {
  let t: TestApp;
  let partner: PartnerFixture;

  before(async () => {
    t = await startTestApp({ BODY_LIMIT: '2048' });
    partner = await createPartner(t);
  });
  after(() => t.close());

  it('wraps success in {success, code, message, data, request_id} with a matching X-Request-Id', async () => {
    const res = await request(t.url, 'POST', '/en/shop/validate-credentials', { headers: apiHeaders(partner.apiKey) });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['code', 'data', 'message', 'request_id', 'success']);
    assert.equal(res.body.success, true);
    assert.equal(res.body.code, 200);
    assert.deepEqual(res.body.data, { valid: true, partner: { id: partner.id, name: partner.name } });
    assert.match(res.body.request_id, UUID);
    assert.equal(res.headers.get('x-request-id'), res.body.request_id);
  });

  it('accepts validate-credentials with no body, an empty JSON body and {}', async () => {
    for (const opts of [{}, { raw: '', headers: { 'content-type': 'application/json' } }, { json: {} }]) {
      const res = await request(t.url, 'POST', '/en/shop/validate-credentials', {
        ...opts,
        headers: { ...apiHeaders(partner.apiKey), ...(opts as { headers?: Record<string, string> }).headers },
      });
      assert.equal(res.status, 200, JSON.stringify(opts));
    }
  });

  it('answers messages in the locale of the path', async () => {
    const en = await request(t.url, 'POST', '/en/shop/validate-credentials');
    const lt = await request(t.url, 'POST', '/lt/shop/validate-credentials');
    assert.equal(en.status, 401);
    assert.equal(lt.status, 401);
    assert.equal(en.body.code, 1004);
    assert.equal(lt.body.code, 1004);
    assert.notEqual(en.body.message, lt.body.message);
    assert.match(en.body.message, /API key and secret are required/);
  });

  it('gives 404 for any other locale, with the error envelope', async () => {
    for (const path of ['/de/shop/health', '/EN/shop/health', '/xx/shop/validate-credentials']) {
      const res = await request(t.url, 'GET', path, { headers: apiHeaders(partner.apiKey) });
      assert.equal(res.status, 404, path);
      assert.equal(res.body.success, false);
      assert.equal(res.body.code, 404);
      assert.equal(typeof res.body.message, 'string');
      assert.match(res.body.request_id, UUID);
      assert.equal(res.headers.get('x-request-id'), res.body.request_id);
    }
  });

  it('gives a 404 envelope for unknown routes, in the locale when the prefix is valid', async () => {
    const en = await request(t.url, 'GET', '/en/no/such/route');
    const lt = await request(t.url, 'GET', '/lt/no/such/route');
    assert.equal(en.status, 404);
    assert.deepEqual(Object.keys(en.body).sort(), ['code', 'message', 'request_id', 'success']);
    assert.equal(en.body.code, 404);
    assert.notEqual(en.body.message, lt.body.message);
  });

  it('answers malformed JSON with 400 and changes nothing', async () => {
    const res = await request(t.url, 'POST', '/en/partners/shops', {
      headers: { authorization: `Bearer ${partner.token}`, 'content-type': 'application/json' },
      raw: '{"name": "x",',
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.success, false);
    assert.equal(res.body.code, 400);
    assert.match(res.body.request_id, UUID);
    const list = await request(t.url, 'GET', '/en/partners/shops', { headers: { authorization: `Bearer ${partner.token}` } });
    assert.equal(list.body.meta.total, 0);
  });

  it('answers a body over the limit with 400', async () => {
    const res = await request(t.url, 'POST', '/en/partners/shops', {
      headers: { authorization: `Bearer ${partner.token}` },
      json: { name: 'x'.repeat(4096) },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 400);
    assert.match(res.body.message, /2048/);
  });

  it('answers an unsupported content type with 400', async () => {
    const res = await request(t.url, 'POST', '/en/partners/shops', {
      headers: { authorization: `Bearer ${partner.token}`, 'content-type': 'text/csv' },
      raw: 'name\nx',
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 400);
  });

  it('reports validation failures as Shape A: 422, code 422, errors keyed by field', async () => {
    const res = await request(t.url, 'POST', '/en/partners/shops', {
      headers: { authorization: `Bearer ${partner.token}` },
      json: { name: '', lat: 'north', lng: 500 },
    });
    assert.equal(res.status, 422);
    assert.equal(res.body.success, false);
    assert.equal(res.body.code, 422);
    assert.deepEqual(Object.keys(res.body.errors).sort(), ['lat', 'lng', 'name']);
    for (const messages of Object.values(res.body.errors)) {
      assert.ok(Array.isArray(messages) && messages.length > 0 && messages.every((m) => typeof m === 'string'));
    }
  });

  it('reports a missing required field under its name', async () => {
    const res = await request(t.url, 'POST', '/en/partners/shops', {
      headers: { authorization: `Bearer ${partner.token}` },
      json: {},
    });
    assert.equal(res.status, 422);
    assert.deepEqual(Object.keys(res.body.errors), ['name']);
    const lt = await request(t.url, 'POST', '/lt/partners/shops', {
      headers: { authorization: `Bearer ${partner.token}` },
      json: {},
    });
    assert.notEqual(lt.body.errors.name[0], res.body.errors.name[0]);
  });

  it('reports a missing resource as Shape B RESOURCE_NOT_FOUND', async () => {
    const res = await request(t.url, 'GET', '/en/partners/shops/999999', { headers: { authorization: `Bearer ${partner.token}` } });
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'RESOURCE_NOT_FOUND');
    assert.ok(Array.isArray(res.body.errors));
    assert.deepEqual(Object.keys(res.body.errors[0]).sort(), ['code', 'field', 'message']);
    assert.equal(res.body.errors[0].code, 'RESOURCE_NOT_FOUND');
  });

  it('treats a non-numeric path id as a missing resource', async () => {
    const res = await request(t.url, 'GET', '/en/partners/shops/abc', { headers: { authorization: `Bearer ${partner.token}` } });
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'RESOURCE_NOT_FOUND');
  });
});

describe('unexpected failures', () => {
  it('answer 500 with the envelope and request_id, without internals', async () => {
    const t = await startTestApp();
    try {
      const partner = await createPartner(t);
      // The store going away mid-flight is the unexpected failure a client can meet.
      await t.db.database.close();
      const res = await request(t.url, 'GET', '/en/partners/shops', { headers: { authorization: `Bearer ${partner.token}` } });
      assert.equal(res.status, 500);
      assert.deepEqual(Object.keys(res.body).sort(), ['code', 'message', 'request_id', 'success']);
      assert.equal(res.body.code, 500);
      assert.equal(res.headers.get('x-request-id'), res.body.request_id);
      assert.doesNotMatch(res.text, /stack|at \w+ \(|select |pglite|postgres/i);
    } finally {
      await t.app.fastify.close();
      await t.db.drop().catch(() => undefined);
    }
  });
});

describe('names', () => {
  it('refuses a name of only white space with 422 on the field', async () => {
    const t = await startTestApp();
    try {
      const partner = await createPartner(t);
      for (const [path, body] of [
        ['/en/partners/shops', { name: '   ' }],
        ['/en/partners/api-keys', { name: '\t' }],
      ] as const) {
        const res = await request(t.url, 'POST', path, { headers: { authorization: `Bearer ${partner.token}` }, json: body });
        assert.equal(res.status, 422, path);
        assert.deepEqual(res.body.errors, { name: ['May not be blank'] });
      }
      const tooLong = await request(t.url, 'POST', '/en/partners/shops', {
        headers: { authorization: `Bearer ${partner.token}` },
        json: { name: 'x'.repeat(256) },
      });
      assert.deepEqual(tooLong.body.errors, { name: ['May not be longer than 255 characters'] });
    } finally {
      await t.close();
    }
  });
});
