// Administrator endpoints as a whole: a security matrix over every admin route the router
// knows (partner and customer tokens → 403, no token → 401), and the platform statistics of
// GET /admin/partners/stats over a seeded data set (docs/decisions.md "Admin statistics").
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { smsAccountLedger, smsMessages } from '../src/schema.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createAdmin, createPartner, type AdminFixture, type PartnerFixture } from './helpers/fixtures.js';
import { bearer, request } from './helpers/http.js';
import { addTransaction, createCard, purchase, reversePurchase } from './helpers/ledger.js';

let t: TestApp;
let admin: AdminFixture;
let p1: PartnerFixture;
let p2: PartnerFixture;
let p3: PartnerFixture;
let customerToken: string;

const at = (iso: string) => new Date(iso);
const db = () => t.app.context.database.db;

before(async () => {
  t = await startTestApp();
  admin = await createAdmin(t);
  p1 = await createPartner(t, 'Stats One');
  p2 = await createPartner(t, 'Stats Two');
  p3 = await createPartner(t, 'Stats Three');
  customerToken = (await t.app.context.tokens.sign({ kind: 'customer', subject: 1 })).token;
});
after(() => t.close());

/** [method, OpenAPI-style path] of every route in the router (as in openapi.test.ts). */
function routerRoutes(): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const stack: string[] = [];
  for (const line of t.app.fastify.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^((?:│ {3}| {4})*)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    stack.length = m[1]!.length / 4;
    stack.push(m[2]!);
    const path = stack.join('').replace(/:(\w+)/g, '{$1}');
    for (const method of m[3]?.split(', ') ?? []) if (method !== 'HEAD') out.push([method, path]);
  }
  return out;
}

describe('security matrix: every admin endpoint', () => {
  const concrete = (path: string) =>
    path
      .replace('{locale}', 'en')
      .replace(/\{(id|partner_id)\}/g, String(p1.id))
      .replace(/\{(messageId|attachmentId)\}/g, '1')
      .replace('{name}', 'Shop');

  const adminRoutes = () => routerRoutes().filter(([, p]) => p.startsWith('/{locale}/admin/') && p !== '/{locale}/admin/auth/login');

  it('covers the admin routes of every module', () => {
    const keys = adminRoutes().map(([m, p]) => `${m} ${p}`);
    for (const expected of [
      'POST /{locale}/admin/partners',
      'GET /{locale}/admin/partners',
      'GET /{locale}/admin/partners/{id}',
      'GET /{locale}/admin/partners/stats',
      'GET /{locale}/admin/partners/sms-accounts',
      'POST /{locale}/admin/partners/sms-accounts/{partner_id}/top-up',
      'PUT /{locale}/admin/partners/sms-accounts/{partner_id}',
      'POST /{locale}/admin/partners/{id}/sms-senders',
      'DELETE /{locale}/admin/partners/{id}/sms-senders/{name}',
      'GET /{locale}/admin/partners/{id}/commission/rates',
      'PUT /{locale}/admin/partners/{id}/commission/rates',
      'POST /{locale}/admin/partners/{id}/commission/lock',
      'POST /{locale}/admin/partners/{id}/commission/unlock',
      'GET /{locale}/admin/partners/{id}/commission/lock-status',
      'POST /{locale}/admin/partners/{id}/commission/force-sync',
      'GET /{locale}/admin/partners/{id}/commission',
      'GET /{locale}/admin/partners/{id}/commission/periods',
      'GET /{locale}/admin/partners/{id}/messages',
      'POST /{locale}/admin/partners/{id}/messages',
      'GET /{locale}/admin/partners/{id}/messages/{messageId}/attachment/{attachmentId}',
      'POST /{locale}/admin/partners/{id}/send-email',
      'GET /{locale}/admin/partners/{id}/emails',
    ]) {
      assert.ok(keys.includes(expected), `${expected} is not routed; routed: ${keys.join(', ')}`);
    }
  });

  it('refuses partner and customer tokens with 403 INSUFFICIENT_PERMISSIONS and anonymous calls with 401, changing nothing', async () => {
    const routes = adminRoutes();
    assert.ok(routes.length >= 22, String(routes.length));
    const callers: Array<[string, Record<string, string>, number, string]> = [
      ['partner token', bearer(p1.token), 403, 'INSUFFICIENT_PERMISSIONS'],
      ['customer token', bearer(customerToken), 403, 'INSUFFICIENT_PERMISSIONS'],
      ['API credentials', { 'x-api-key': p1.apiKey.key, 'x-api-secret': p1.apiKey.secret }, 401, 'MISSING_AUTHENTICATION'],
      ['no token', {}, 401, 'MISSING_AUTHENTICATION'],
    ];
    for (const [method, path] of routes) {
      const url = concrete(path);
      const json = method === 'GET' || method === 'DELETE' ? undefined : { body: 'x', subject: 'x', period: '2024-01', rate_percent: 1, amount: 5, name: 'X', email: 'x@example.com', password: 'long-enough-1' };
      for (const [who, headers, status, code] of callers) {
        const res = await request(t.url, method, url, { headers, json });
        assert.equal(res.status, status, `${who}: ${method} ${url} → ${res.text}`);
        assert.equal(res.body.code, code, `${who}: ${method} ${url}`);
        assert.equal(res.body.success, false);
      }
    }
    // Nothing was created or changed by the refused calls.
    const asAdmin = (p: string) => request(t.url, 'GET', p, { headers: bearer(admin.token) });
    assert.deepEqual((await asAdmin(`/en/admin/partners/${p1.id}/commission/rates`)).body.data, { current: null, history: [] });
    assert.deepEqual((await asAdmin(`/en/admin/partners/${p1.id}/commission/lock-status`)).body.data.locked_periods, []);
    assert.equal((await asAdmin(`/en/admin/partners/${p1.id}/messages`)).body.meta.total, 0);
    assert.equal((await asAdmin(`/en/admin/partners/${p1.id}/emails`)).body.meta.total, 0);
    assert.equal((await asAdmin('/en/admin/partners')).body.meta.total, 3);
  });

  it('refuses admin and customer tokens on the partner side of messages (403), anonymous calls with 401', async () => {
    for (const [method, path] of [
      ['GET', '/en/partners/messages'],
      ['POST', '/en/partners/messages'],
      ['GET', '/en/partners/messages/1/attachment/1'],
    ] as const) {
      for (const [headers, status] of [
        [bearer(admin.token), 403],
        [bearer(customerToken), 403],
        [{}, 401],
      ] as const) {
        const res = await request(t.url, method, path, { headers, json: method === 'POST' ? { body: 'x' } : undefined });
        assert.equal(res.status, status, `${method} ${path}: ${res.text}`);
      }
    }
  });
});

describe('GET /admin/partners/stats', () => {
  const stats = (query = '') => request(t.url, 'GET', `/en/admin/partners/stats${query}`, { headers: bearer(admin.token) });

  before(async () => {
    // Partners: one created in June 2024, one just before it, one on its last instant (suspended).
    await db().execute(sql`update partners set created_at = '2024-06-10T00:00:00Z' where id = ${p1.id}`);
    await db().execute(sql`update partners set created_at = '2024-05-31T23:59:59.999Z' where id = ${p2.id}`);
    await db().execute(sql`update partners set created_at = '2024-06-30T23:59:59.999Z', status = 'suspended' where id = ${p3.id}`);

    // Customers and cards: C1 new in June with a P1 card; C2 older, P2 card in February and a P1
    // card in June; C3 after June with a P2 card.
    const c1p1 = await createCard(t, p1.id, at('2024-06-05T08:00:00Z'));
    const c2p2 = await createCard(t, p2.id, at('2024-02-01T00:00:00Z'));
    await db().execute(sql`update customers set created_at = '2024-01-01T00:00:00Z' where id = ${c2p2.customerId}`);
    const c2p1 = await createCard(t, p1.id, at('2024-06-15T00:00:00Z'), c2p2.customerId);
    await createCard(t, p2.id, at('2024-07-01T00:00:00Z'));

    // The ledger, June 2024 unless said otherwise.
    await purchase(t, c1p1, '100.5000', at('2024-06-05T09:00:00Z'), 100);
    const p20 = await purchase(t, c1p1, '20.0000', at('2024-06-10T09:00:00Z'), 20);
    await addTransaction(t, c1p1, { type: 'bonus', points: 50, at: at('2024-06-05T08:00:01Z') });
    await addTransaction(t, c1p1, { type: 'adjust', points: 5, at: at('2024-06-11T00:00:00Z') });
    await addTransaction(t, c1p1, { type: 'adjust', points: -3, at: at('2024-06-12T00:00:00Z') });
    await addTransaction(t, c1p1, { type: 'deduct', points: -30, amount: '3.0000', at: at('2024-06-20T00:00:00Z') });
    await addTransaction(t, c1p1, { type: 'expire', points: -7, at: at('2024-06-30T23:59:59.999Z') });
    await reversePurchase(t, c1p1, p20, '20.0000', at('2024-06-25T00:00:00Z'), 20);
    await purchase(t, c2p1, '9.9900', at('2024-07-01T00:00:00Z'), 9);
    await purchase(t, c2p1, '5.0001', at('2024-05-31T23:59:59.999Z'), 5);
    const p40 = await purchase(t, c2p2, '40.0000', at('2024-06-15T00:00:00Z'), 40);
    const d10 = await addTransaction(t, c2p2, { type: 'deduct', points: -10, amount: '1.0000', at: at('2024-06-16T00:00:00Z') });
    // Returns: a quarter of the 40 purchase's goods, and 4 of the 10 deducted points; one of the
    // 20 purchase after June, which June does not see.
    await addTransaction(t, c2p2, { type: 'return', points: -10, amount: '-10.0000', at: at('2024-06-17T00:00:00Z'), returnsId: p40 });
    await addTransaction(t, c2p2, { type: 'return', points: 4, amount: '-0.4000', at: at('2024-06-18T00:00:00Z'), returnsId: d10 });
    await addTransaction(t, c2p2, { type: 'return', points: -5, amount: '-5.0000', at: at('2024-07-01T00:00:00Z'), returnsId: p40 });

    // SMS: sent = handed to the carrier in the range; the platform's own messages do not count.
    const sms = (id: string, partnerId: number | null, parts: number, sentAt: string | null, createdAt = '2024-06-01T00:00:00Z') => ({
      id,
      partnerId,
      source: 'Shop',
      destination: '+37061234567',
      country: 'LT',
      body: 'x',
      encoding: 'GSM-7' as const,
      parts,
      pricePerPart: '0.0290',
      cost: (0.029 * parts).toFixed(4),
      status: sentAt ? ('sent' as const) : ('queued' as const),
      carrier: 'simulator',
      createdAt: at(createdAt),
      sentAt: sentAt ? at(sentAt) : null,
    });
    await db()
      .insert(smsMessages)
      .values([
        sms('m1', p1.id, 2, '2024-06-03T00:00:00Z'),
        sms('m2', p1.id, 1, '2024-06-30T23:00:00Z'),
        sms('m3', p1.id, 4, null),
        sms('m4', p1.id, 1, '2024-07-02T00:00:00Z'),
        sms('m5', p2.id, 3, '2024-06-10T00:00:00Z'),
        sms('m6', null, 1, '2024-06-10T00:00:00Z'),
      ]);
    const entry = (partnerId: number, kind: 'top_up' | 'charge' | 'refund', amount: string, createdAt: string, messageId: string | null) => ({
      partnerId,
      kind,
      amount,
      balanceAfter: '1.0000',
      messageId,
      createdAt: at(createdAt),
    });
    await db()
      .insert(smsAccountLedger)
      .values([
        entry(p1.id, 'top_up', '10.0000', '2024-06-01T00:00:00Z', null),
        entry(p1.id, 'charge', '-0.0580', '2024-06-03T00:00:00Z', 'm1'),
        entry(p1.id, 'charge', '-0.0290', '2024-06-30T23:00:00Z', 'm2'),
        entry(p1.id, 'charge', '-0.1160', '2024-06-01T00:00:00Z', 'm3'),
        entry(p1.id, 'refund', '0.1160', '2024-06-30T23:30:00Z', 'm3'),
        entry(p1.id, 'charge', '-0.0290', '2024-07-02T00:00:00Z', 'm4'),
        entry(p2.id, 'charge', '-0.0870', '2024-06-10T00:00:00Z', 'm5'),
      ]);
  });

  it('counts and sums the seeded June 2024 platform-wide', async () => {
    const res = await stats('?from=2024-06-01&to=2024-06-30');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.code, 200);
    assert.deepEqual(res.body.data, {
      from: '2024-06-01',
      to: '2024-06-30',
      partner_id: null,
      partners: { total: 3, active: 2, new: 2 },
      customers: { total: 3, new: 1 },
      cards: { total: 4, new: 2 },
      transactions: { count: 12, by_type: { purchase: 3, deduct: 2, adjust: 2, bonus: 1, expire: 1, reversal: 1, redeem: 0, game: 0, return: 2 } },
      // Net of refunds: issued 100 + 20 + 50 + 5 + 40, less 20 reversed and 10 returned;
      // redeemed 30 + 10, less 4 given back; expired 7.
      points: { issued: 185, redeemed: 36, expired: 7 },
      // 100.5 + 20 + 40, less 20 reversed and 10 returned.
      purchase_amount: 130.5,
      reversed_purchase_amount: 20,
      returned_purchase_amount: 10,
      // charged 0.058 + 0.029 + 0.116 + 0.087, refunded 0.116
      sms: { sent: 3, parts: 6, revenue: 0.174 },
    });
  });

  it('narrows every figure to one partner with partner_id', async () => {
    const res = await stats(`?from=2024-06-01&to=2024-06-30&partner_id=${p1.id}`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data, {
      from: '2024-06-01',
      to: '2024-06-30',
      partner_id: p1.id,
      partners: { total: 1, active: 1, new: 1 },
      // C1 and C2 hold P1 cards, both first issued in June.
      customers: { total: 2, new: 2 },
      cards: { total: 2, new: 2 },
      transactions: { count: 8, by_type: { purchase: 2, deduct: 1, adjust: 2, bonus: 1, expire: 1, reversal: 1, redeem: 0, game: 0, return: 0 } },
      points: { issued: 155, redeemed: 30, expired: 7 },
      purchase_amount: 100.5,
      reversed_purchase_amount: 20,
      returned_purchase_amount: 0,
      sms: { sent: 2, parts: 3, revenue: 0.087 },
    });
    const two = await stats(`?from=2024-06-01&to=2024-06-30&partner_id=${p2.id}`);
    assert.deepEqual(two.body.data.customers, { total: 2, new: 0 });
    assert.deepEqual(two.body.data.partners, { total: 1, active: 1, new: 0 });
    // P2's June: the 40 purchase less a quarter returned; 10 deducted less 4 given back.
    assert.deepEqual([two.body.data.points, two.body.data.purchase_amount, two.body.data.returned_purchase_amount], [{ issued: 30, redeemed: 6, expired: 0 }, 30, 10]);
    // July sees the other return alone: a month of refunds without sales is negative.
    const july = await stats(`?from=2024-07-01&to=2024-07-01&partner_id=${p2.id}`);
    assert.deepEqual([july.body.data.points.issued, july.body.data.purchase_amount, july.body.data.returned_purchase_amount], [-5, -5, 5]);
  });

  it('takes whole UTC days: a one-day range sees only that day', async () => {
    const res = await stats(`?from=2024-06-30&to=2024-06-30&partner_id=${p1.id}`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data.transactions.by_type, { purchase: 0, deduct: 0, adjust: 0, bonus: 0, expire: 1, reversal: 0, redeem: 0, game: 0, return: 0 });
    assert.deepEqual(res.body.data.sms, { sent: 1, parts: 1, revenue: -0.087 });
  });

  it('defaults to the last 30 days through today', async () => {
    const res = await stats();
    assert.equal(res.status, 200, res.text);
    const today = new Date().toISOString().slice(0, 10);
    const from = new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10);
    assert.equal(res.body.data.to, today);
    assert.equal(res.body.data.from, from);
    assert.equal(res.body.data.transactions.count, 0);
    assert.equal(res.body.data.partners.total, 3);
  });

  it('refuses from after to, more than 366 days and malformed values (422), and an unknown partner (404)', async () => {
    const shapeA = async (query: string, fields: string[]) => {
      const res = await stats(query);
      assert.equal(res.status, 422, `${query}: ${res.text}`);
      assert.equal(res.body.code, 422);
      assert.deepEqual(Object.keys(res.body.errors).sort(), fields, query);
    };
    await shapeA('?from=2024-06-02&to=2024-06-01', ['from']);
    await shapeA('?from=2024-01-01&to=2025-01-01', ['to']);
    await shapeA('?from=2024-02-30', ['from']);
    await shapeA('?to=yesterday', ['to']);
    await shapeA('?from=0000-01-01&to=0000-01-02', ['from', 'to']);
    await shapeA('?from=2999-12-31&to=3000-01-01', ['to']);
    await shapeA('?partner_id=abc', ['partner_id']);
    assert.equal((await stats('?from=2024-01-01&to=2024-12-31')).status, 200, '366 days (a leap year) are allowed');
    const missing = await stats('?partner_id=2000000000');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'RESOURCE_NOT_FOUND');
    assert.equal(missing.body.errors[0].field, 'partner_id');
  });

  it('is a static route: /admin/partners/stats, /sms-accounts and /{id} each reach their own handler', async () => {
    const one = await request(t.url, 'GET', `/en/admin/partners/${p1.id}`, { headers: bearer(admin.token) });
    assert.equal(one.status, 200);
    assert.equal(one.body.data.id, p1.id);
    const accounts = await request(t.url, 'GET', '/en/admin/partners/sms-accounts', { headers: bearer(admin.token) });
    assert.equal(accounts.status, 200);
    assert.ok(Array.isArray(accounts.body.data));
    const s = await request(t.url, 'GET', '/lt/admin/partners/stats', { headers: bearer(admin.token) });
    assert.equal(s.status, 200);
    assert.equal(s.body.message, 'Statistika');
    assert.ok('partners' in s.body.data);
  });
});
