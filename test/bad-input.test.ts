// Input no client should send, answered as a client can use it: a 4xx with the error
// envelope, `request_id` and `X-Request-Id` — never a 500, never Fastify's raw error body.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createAdmin, createPartner, type AdminFixture, type PartnerFixture } from './helpers/fixtures.js';
import { claimCoupon, couponAction, createOffer } from './helpers/engagement.js';
import { apiHeaders, bearer, request, type Response } from './helpers/http.js';
import { award, createCustomer, createProgramme, createShop, joinProgramme } from './helpers/loyalty.js';

function assertEnvelope(res: Response, status: number, code: number | string) {
  assert.equal(res.status, status, res.text);
  assert.equal(res.body?.success, false, res.text);
  assert.equal(res.body.code, code, res.text);
  assert.equal(typeof res.body.message, 'string');
  assert.ok(res.body.request_id, res.text);
  assert.equal(res.headers.get('x-request-id'), res.body.request_id);
}

describe('bad input', () => {
  let t: TestApp;
  let partner: PartnerFixture;
  let admin: AdminFixture;

  before(async () => {
    t = await startTestApp();
    partner = await createPartner(t);
    admin = await createAdmin(t);
  });
  after(() => t.close());

  describe('JSON nested too deep', () => {
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);

    it('is a 400 before any validator walks it, on known and unknown routes', async () => {
      for (const path of ['/en/sms/send', '/en/shop/transactions/create', '/en/no/such/route', '/lt/partners/shops']) {
        const auth = path.includes('/partners/') ? bearer(partner.token) : apiHeaders(partner.apiKey);
        const res = await request(t.url, 'POST', path, {
          headers: { ...auth, 'content-type': 'application/json' },
          raw: `{"a":${deep(10_000)}}`,
        });
        assertEnvelope(res, 400, 400);
        assert.match(res.body.message, path.startsWith('/lt') ? /32/ : /nested deeper than 32 levels/);
      }
    });

    it('counts brackets inside strings as text, and lets a shallow body through to validation', async () => {
      const res = await request(t.url, 'POST', '/en/partners/shops', {
        headers: bearer(partner.token),
        json: { name: '['.repeat(200), address: { a: { b: { c: 1 } } } },
      });
      assert.equal(res.status, 422, res.text);
      assert.deepEqual(Object.keys(res.body.errors), ['address']);
    });
  });

  describe('path parameters', () => {
    it('answers %00 in a path parameter with 404, not a database error', async () => {
      const sms = await request(t.url, 'GET', '/en/sms/status/%00', { headers: apiHeaders(partner.apiKey) });
      assertEnvelope(sms, 404, 'RESOURCE_NOT_FOUND');
      const sender = await request(t.url, 'DELETE', `/en/admin/partners/${partner.id}/sms-senders/%00`, { headers: bearer(admin.token) });
      assertEnvelope(sender, 404, 'RESOURCE_NOT_FOUND');
      const mid = await request(t.url, 'GET', '/en/sms/status/ab%00cd', { headers: apiHeaders(partner.apiKey) });
      assertEnvelope(mid, 404, 'RESOURCE_NOT_FOUND');
    });

    it('answers an undecodable path (%FF, a lone surrogate) with the 400 envelope', async () => {
      for (const path of ['/en/sms/status/%FF', '/en/sms/status/%ED%A0%80', '/lt/shop/loyalty-cards/%C0']) {
        const res = await request(t.url, 'GET', path, { headers: apiHeaders(partner.apiKey) });
        assertEnvelope(res, 400, 400);
        if (path.startsWith('/lt')) assert.match(res.body.message, /URL/);
      }
    });

    it('answers an over-long path parameter with the 404 envelope', async () => {
      const res = await request(t.url, 'GET', `/en/sms/status/${'x'.repeat(3000)}`, { headers: apiHeaders(partner.apiKey) });
      assertEnvelope(res, 404, 'RESOURCE_NOT_FOUND');
    });
  });

  it('answers headers over 16 KiB (a huge URL) with the 431 envelope and a request id', async () => {
    const res = await request(t.url, 'GET', `/en/shop/loyalty-cards?card_number=${'9'.repeat(20_000)}`, { headers: apiHeaders(partner.apiKey) });
    assertEnvelope(res, 431, 431);
  });

  describe('decimals sent as text', () => {
    // Quantities and EUR amounts come as a number or, for exactness, as decimal text; the
    // number form is capped at 10^9, and the text form must be too (it used to take up to
    // 9,999,999,999.999). Each case is a 422 on exactly that field and writes nothing.
    let shop: number;
    let card: number;
    let holder: Awaited<ReturnType<typeof createCustomer>>;
    before(async () => {
      shop = await createShop(t, partner.id);
      holder = await createCustomer(t);
      // 1 point per 1,000 EUR, so that the largest amount stays within one operation's points.
      card = (await joinProgramme(t, holder, await createProgramme(t, partner.id, { pointsPerCurrency: '1', currencyAmount: '1000' }))).id;
    });
    const line = (fields: Record<string, unknown>) => ({ items: [{ line_id: 'a', quantity: 1, amount: 1, ...fields }] });
    const over: Array<[Record<string, unknown>, string]> = [
      [line({ quantity: '9999999999.999' }), 'items.0.quantity'],
      [line({ quantity: '1000000000.001' }), 'items.0.quantity'],
      [line({ quantity: 1_000_000_000.001 }), 'items.0.quantity'],
      [line({ amount: '9999999999.9999' }), 'items.0.amount'],
      [line({ amount: '1000000000.0001' }), 'items.0.amount'],
      [{ amount: '9999999999.9999' }, 'amount'],
      [{ amount: '1000000000.0001' }, 'amount'],
      [{ amount: 1_000_000_000.0001 }, 'amount'],
    ];
    const transactions = async () =>
      (await request(t.url, 'GET', `/en/partners/transactions?card_id=${card}`, { headers: bearer(partner.token) })).body.meta.total;

    it('are refused above 1,000,000,000 in awards and previews, like numbers', async () => {
      for (const path of ['/en/shop/transactions/create', '/en/shop/transactions/preview']) {
        for (const [body, field] of over) {
          const res = await request(t.url, 'POST', path, { headers: apiHeaders(partner.apiKey), json: { card_id: card, shop_id: shop, ...body } });
          assertEnvelope(res, 422, 422);
          assert.deepEqual(Object.keys(res.body.errors), [field], `${path} ${JSON.stringify(body)}: ${res.text}`);
        }
      }
      assert.equal(await transactions(), 0);
    });

    it('are taken up to 1,000,000,000 exactly', async () => {
      const res = await award(t, partner, { card_id: card, shop_id: shop, items: [{ quantity: '1000000000.000', amount: '1000000000' }] });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.data.amount, 1_000_000_000);
      assert.equal(res.body.data.items[0].quantity, 1_000_000_000);
      const plain = await award(t, partner, { card_id: card, shop_id: shop, amount: '999999999.9999' });
      assert.equal(plain.status, 201, plain.text);
    });

    it('are refused above 1,000,000,000 in returns', async () => {
      const sale = await award(t, partner, { card_id: card, shop_id: shop, items: [{ line_id: 'a', quantity: 2, amount: 10 }] });
      assert.equal(sale.status, 201, sale.text);
      const plain = await award(t, partner, { card_id: card, shop_id: shop, amount: 10 });
      const before = await transactions();
      for (const [id, body, field] of [
        [sale.body.data.id, { items: [{ line_id: 'a', quantity: '9999999999.999' }] }, 'items.0.quantity'],
        [plain.body.data.id, { amount: '9999999999.9999' }, 'amount'],
      ] as const) {
        const res = await request(t.url, 'POST', `/en/shop/transactions/${id}/return`, { headers: apiHeaders(partner.apiKey), json: body });
        assertEnvelope(res, 422, 422);
        assert.deepEqual(Object.keys(res.body.errors), [field], res.text);
      }
      assert.equal(await transactions(), before);
    });

    it('are refused above 1,000,000,000 as the amount of a coupon redemption', async () => {
      const coupon = await claimCoupon(t, holder, (await createOffer(t, partner, {})).id);
      for (const amount of ['9999999999.9999', '1000000000.0001', 1_000_000_000.0001]) {
        const res = await couponAction(t, partner, coupon.id, 'redeem', { shop_id: shop, amount });
        assertEnvelope(res, 422, 422);
        assert.deepEqual(Object.keys(res.body.errors), ['amount'], res.text);
      }
      const ok = await couponAction(t, partner, coupon.id, 'redeem', { shop_id: shop, amount: '1000000000.0000' });
      assert.equal(ok.status, 200, ok.text);
    });
  });

  describe('content types', () => {
    it('refuses JSON sent as text/plain, and other non-JSON types, with 400', async () => {
      for (const type of ['text/plain', 'text/plain; charset=utf-8', 'application/xml', 'application/x-www-form-urlencoded']) {
        const res = await request(t.url, 'POST', '/en/sms/send', {
          headers: { ...apiHeaders(partner.apiKey), 'content-type': type },
          raw: JSON.stringify({ source: 'Shop', destination: '+37060000001', message: 'hi' }),
        });
        assertEnvelope(res, 400, 400);
        assert.match(res.body.message, /Unsupported content type/);
      }
    });

    it('reads an empty body as no body whatever its content type', async () => {
      for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
        const res = await request(t.url, 'POST', '/en/shop/validate-credentials', {
          headers: { ...apiHeaders(partner.apiKey), 'content-type': type },
          raw: '',
        });
        assert.equal(res.status, 200, `${type}: ${res.text}`);
      }
    });
  });
});
