// SMS accounts (DESIGN.md §4, §7): the admin lists accounts, tops up, overrides prices and
// approves or revokes sender names; the partner reads its own account and message history.
// Admin routes refuse partner and customer tokens (403) and anonymous calls (401).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { partners } from '../src/modules/partners/partners.tables.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createAdmin, createPartner, type AdminFixture, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request, type Response } from './helpers/http.js';
import { account, approveSender, createSmsPartner, ISO, messages, send, sendBody, topUp, UUID } from './helpers/sms.js';

const ACCOUNT_KEYS = ['balance', 'currency', 'partner_id', 'prices', 'senders', 'transliterate'];
const DEFAULT_PRICES = { LT: 0.029, LV: 0.039, EE: 0.039, PL: 0.029, '*': 0.06 };

let t: TestApp;
let admin: AdminFixture;

before(async () => {
  t = await startTestApp();
  admin = await createAdmin(t);
});
after(() => t.close());

const asAdmin = (method: string, path: string, json?: unknown) => request(t.url, method, path, { headers: bearer(admin.token), json });

/** Shape A outside /sms/*: 422, code 422, errors keyed by field. */
function assertValidation(res: Response, fields: string[], note = '') {
  assert.equal(res.status, 422, `${note} ${res.text}`);
  assert.equal(res.body.success, false);
  assert.equal(res.body.code, 422, `${note} ${res.text}`);
  assert.deepEqual(Object.keys(res.body.errors).sort(), [...fields].sort(), `${note} ${res.text}`);
}

function assertShapeB(res: Response, status: number, code: string, note = '') {
  assert.equal(res.status, status, `${note} ${res.text}`);
  assert.equal(res.body.success, false);
  assert.equal(res.body.code, code, `${note} ${res.text}`);
  assert.match(res.body.request_id, UUID);
  assert.ok(Array.isArray(res.body.errors) && res.body.errors.length === 1, `${note} Shape B`);
  assert.equal(res.body.errors[0].code, code);
}

describe('admin: GET /admin/partners/sms-accounts', () => {
  it('lists accounts with meta; an account has exactly the DESIGN.md §7 fields', async () => {
    const a = await createSmsPartner(t, admin, { senders: ['Alpha', 'Beta'], balance: '12.5' });
    const b = await createSmsPartner(t, admin, { senders: ['Gamma'], balance: '3' });
    const res = await asAdmin('GET', '/en/admin/partners/sms-accounts?per_page=100');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.success, true);
    assert.equal(res.body.code, 200);
    assert.ok(Array.isArray(res.body.data));
    assert.deepEqual(Object.keys(res.body.meta).sort(), ['current_page', 'last_page', 'per_page', 'total']);
    assert.equal(res.body.meta.total, res.body.data.length);
    const mine = res.body.data.find((x: { partner_id: number }) => x.partner_id === a.id);
    assert.deepEqual(Object.keys(mine).sort(), ACCOUNT_KEYS);
    assert.deepEqual(mine, {
      partner_id: a.id,
      balance: 12.5,
      currency: 'EUR',
      senders: ['Alpha', 'Beta'],
      prices: DEFAULT_PRICES,
      transliterate: false,
    });
    assert.deepEqual(res.body.data.find((x: { partner_id: number }) => x.partner_id === b.id).senders, ['Gamma']);
  });

  it('lists a partner an admin has just created, with the defaults, so it can be topped up', async () => {
    const created = await asAdmin('POST', '/en/admin/partners', { name: 'Fresh Bakery', email: `fresh-${Date.now()}@example.com`, password: 'fresh-password-1' });
    assert.equal(created.status, 201, created.text);
    const id = created.body.data.id as number;
    const list = async () => (await asAdmin('GET', '/en/admin/partners/sms-accounts?per_page=100')).body;
    const before = await list();
    assert.deepEqual(before.data.find((x: { partner_id: number }) => x.partner_id === id), {
      partner_id: id,
      balance: 0,
      currency: 'EUR',
      senders: [],
      prices: DEFAULT_PRICES,
      transliterate: false,
    });
    const partnerCount = (await t.app.context.database.db.$count(partners)) as number;
    assert.equal(before.meta.total, partnerCount, 'every partner is listed');
    assert.equal((await asAdmin('POST', `/en/admin/partners/sms-accounts/${id}/top-up`, { amount: 5 })).status, 200);
    assert.equal((await list()).data.find((x: { partner_id: number }) => x.partner_id === id).balance, 5);
  });

  it('paginates', async () => {
    for (let i = 0; i < 3; i++) await createSmsPartner(t, admin, { balance: '1' });
    const all = await asAdmin('GET', '/en/admin/partners/sms-accounts?per_page=100');
    const total = all.body.meta.total as number;
    assert.ok(total >= 3);
    const page = await asAdmin('GET', '/en/admin/partners/sms-accounts?per_page=2&page=2');
    assert.equal(page.status, 200);
    assert.deepEqual(page.body.meta, { current_page: 2, per_page: 2, total, last_page: Math.ceil(total / 2) });
    assert.deepEqual(
      page.body.data.map((x: { partner_id: number }) => x.partner_id),
      all.body.data.slice(2, 4).map((x: { partner_id: number }) => x.partner_id),
    );
    assertValidation(await asAdmin('GET', '/en/admin/partners/sms-accounts?per_page=101'), ['per_page']);
  });
});

describe('admin: top-up', () => {
  it('adds exact amounts given as a number or a string with up to 4 decimals', async () => {
    const p = await createPartner(t);
    const first = await topUp(t, admin, p.id, 0.1);
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.code, 200);
    assert.deepEqual(Object.keys(first.body.data).sort(), ACCOUNT_KEYS);
    assert.equal(first.body.data.partner_id, p.id);
    assert.equal(first.body.data.balance, 0.1);
    const second = await topUp(t, admin, p.id, 0.2);
    assert.equal(second.body.data.balance, 0.3, 'no binary float drift');
    const third = await topUp(t, admin, p.id, '1.0001');
    assert.equal(third.status, 200, third.text);
    assert.equal(third.body.data.balance, 1.3001);
    assert.equal((await topUp(t, admin, p.id, '25')).body.data.balance, 26.3001);
    assert.equal((await account(t, p)).balance, 26.3001);
  });

  it('refuses 0, negative, more than 4 decimals and non-numbers with 422 on amount, changing nothing', async () => {
    const p = await createSmsPartner(t, admin, { balance: '5' });
    for (const amount of [0, -1, '-1', '0', 1.00001, '1.00001', 'abc', '', '1e3', null, true]) {
      const res = await topUp(t, admin, p.id, amount as never);
      assertValidation(res, ['amount'], JSON.stringify(amount));
    }
    assertValidation(await asAdmin('POST', `/en/admin/partners/sms-accounts/${p.id}/top-up`, {}), ['amount']);
    assert.equal((await account(t, p)).balance, 5);
  });

  it('answers an unknown partner with 404', async () => {
    assertShapeB(await topUp(t, admin, 999_999, 5), 404, 'RESOURCE_NOT_FOUND');
  });
});

describe('admin: prices', () => {
  it('PUT {prices:{LT:0.05}} changes the price of the next send; {prices:{LT:null}} removes the override', async () => {
    const p = await createSmsPartner(t, admin, { balance: '10' });
    const set = await asAdmin('PUT', `/en/admin/partners/sms-accounts/${p.id}`, { prices: { LT: 0.05 } });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(Object.keys(set.body.data).sort(), ACCOUNT_KEYS);
    assert.deepEqual(set.body.data.prices, { ...DEFAULT_PRICES, LT: 0.05 });

    const dearer = await send(t, p, sendBody({ message: 'a'.repeat(161) }));
    assert.equal(dearer.status, 200, dearer.text);
    assert.deepEqual(dearer.body.data.cost, { amount: 0.1, currency: 'EUR', parts_charged: 2 });
    assert.equal((await account(t, p)).balance, 9.9);

    const cleared = await asAdmin('PUT', `/en/admin/partners/sms-accounts/${p.id}`, { prices: { LT: null } });
    assert.equal(cleared.status, 200, cleared.text);
    assert.deepEqual(cleared.body.data.prices, DEFAULT_PRICES);
    const normal = await send(t, p, sendBody());
    assert.deepEqual(normal.body.data.cost, { amount: 0.029, currency: 'EUR', parts_charged: 1 });
    assert.equal((await account(t, p)).balance, 9.871);
  });

  it('overrides only the account it is set on, and can set a new country and the * price', async () => {
    const p = await createSmsPartner(t, admin, { balance: '10' });
    const other = await createSmsPartner(t, admin, { balance: '10' });
    const set = await asAdmin('PUT', `/en/admin/partners/sms-accounts/${p.id}`, { prices: { DE: '0.0123', '*': 0.5 } });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.body.data.prices.DE, 0.0123);
    assert.equal(set.body.data.prices['*'], 0.5);
    assert.equal((await send(t, p, sendBody({ destination: '+4915123456789' }))).body.data.cost.amount, 0.0123);
    assert.equal((await send(t, p, sendBody({ destination: '+33612345678' }))).body.data.cost.amount, 0.5);
    assert.deepEqual((await account(t, other)).prices, DEFAULT_PRICES);
    assert.equal((await send(t, other, sendBody({ destination: '+4915123456789' }))).body.data.cost.amount, 0.06);
  });

  it('sets the transliteration default', async () => {
    const p = await createSmsPartner(t, admin, { balance: '1' });
    const res = await asAdmin('PUT', `/en/admin/partners/sms-accounts/${p.id}`, { transliterate: true });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.transliterate, true);
    assert.equal((await account(t, p)).transliterate, true);
  });

  it('refuses bad prices and country codes with 422; an unknown partner is 404', async () => {
    const p = await createSmsPartner(t, admin, { balance: '1' });
    const bad: Array<[unknown, string]> = [
      [{ LT: -1 }, 'prices.LT'],
      [{ LT: 0 }, 'prices.LT'],
      [{ LT: 'abc' }, 'prices.LT'],
      [{ LT: 0.00001 }, 'prices.LT'],
    ];
    for (const [prices, field] of bad) {
      const res = await asAdmin('PUT', `/en/admin/partners/sms-accounts/${p.id}`, { prices });
      assert.equal(res.status, 422, `${JSON.stringify(prices)}: ${res.text}`);
      assert.equal(res.body.code, 422);
      assert.ok(Object.keys(res.body.errors).some((k) => k.startsWith('prices')), `${field}: ${res.text}`);
    }
    for (const prices of [{ lt: 0.05 }, { LTU: 0.05 }]) {
      const res = await asAdmin('PUT', `/en/admin/partners/sms-accounts/${p.id}`, { prices });
      assert.equal(res.status, 422, `${JSON.stringify(prices)}: ${res.text}`);
    }
    assert.deepEqual((await account(t, p)).prices, DEFAULT_PRICES);
    assertShapeB(await asAdmin('PUT', '/en/admin/partners/sms-accounts/999999', { prices: { LT: 0.05 } }), 404, 'RESOURCE_NOT_FOUND');
  });
});

describe('admin: sender names', () => {
  it('approve → 201 with the account; again → 409 DUPLICATE_VALUE', async () => {
    const p = await createPartner(t);
    const res = await approveSender(t, admin, p.id, 'New Shop');
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.code, 201);
    assert.deepEqual(Object.keys(res.body.data).sort(), ACCOUNT_KEYS);
    assert.deepEqual(res.body.data.senders, ['New Shop']);
    const again = await approveSender(t, admin, p.id, 'New Shop');
    assertShapeB(again, 409, 'DUPLICATE_VALUE');
    assert.equal(again.body.errors[0].field, 'name');
    assert.deepEqual((await account(t, p)).senders, ['New Shop']);
  });

  it('refuses an invalid name with 422 on name, and an unknown partner with 404', async () => {
    const p = await createPartner(t);
    for (const name of ['', 'TwelveChars1', 'Shop!', 'Parduotuvė', '   ']) {
      assertValidation(await approveSender(t, admin, p.id, name), ['name'], JSON.stringify(name));
    }
    assert.deepEqual((await account(t, p)).senders, []);
    assertShapeB(await approveSender(t, admin, 999_999, 'Shop'), 404, 'RESOURCE_NOT_FOUND');
  });

  it('revoke → 200; the name is then refused with 2001; revoking it again or an unknown name is 404', async () => {
    const p = await createSmsPartner(t, admin, { senders: ['Keep', 'Drop Me'], balance: '1' });
    assert.equal((await send(t, p, sendBody({ source: 'Drop Me' }))).status, 200);

    const res = await asAdmin('DELETE', `/en/admin/partners/${p.id}/sms-senders/${encodeURIComponent('Drop Me')}`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.success, true);
    assert.equal(res.body.code, 200);
    assert.deepEqual((await account(t, p)).senders, ['Keep']);

    const refused = await send(t, p, sendBody({ source: 'Drop Me' }));
    assert.equal(refused.status, 422, refused.text);
    assert.equal(refused.body.code, 2001);
    assert.ok(refused.body.message.includes('Keep'), refused.body.message);
    assert.equal((await send(t, p, sendBody({ source: 'Keep' }))).status, 200);

    assertShapeB(await asAdmin('DELETE', `/en/admin/partners/${p.id}/sms-senders/${encodeURIComponent('Drop Me')}`), 404, 'RESOURCE_NOT_FOUND');
    assertShapeB(await asAdmin('DELETE', `/en/admin/partners/${p.id}/sms-senders/Nobody`), 404, 'RESOURCE_NOT_FOUND');
    assertShapeB(await asAdmin('DELETE', '/en/admin/partners/999999/sms-senders/Keep'), 404, 'RESOURCE_NOT_FOUND');
  });

  it('an approved name can be approved again after it was revoked', async () => {
    const p = await createSmsPartner(t, admin, { senders: ['Again'], balance: '1' });
    assert.equal((await asAdmin('DELETE', `/en/admin/partners/${p.id}/sms-senders/Again`)).status, 200);
    assert.equal((await approveSender(t, admin, p.id, 'Again')).status, 201);
    assert.equal((await send(t, p, sendBody({ source: 'Again' }))).status, 200);
  });
});

describe('admin routes refuse other callers', () => {
  let partner: PartnerFixture;
  let customerToken: string;

  before(async () => {
    partner = await createSmsPartner(t, admin, { senders: ['Mine'], balance: '2' });
    customerToken = (await t.app.context.tokens.sign({ kind: 'customer', subject: 1 })).token;
  });

  it('partner and customer tokens → 403 INSUFFICIENT_PERMISSIONS, no token → 401 MISSING_AUTHENTICATION; nothing changes', async () => {
    const routes: Array<[string, string, unknown]> = [
      ['GET', '/en/admin/partners/sms-accounts', undefined],
      ['POST', `/en/admin/partners/sms-accounts/${partner.id}/top-up`, { amount: 100 }],
      ['PUT', `/en/admin/partners/sms-accounts/${partner.id}`, { prices: { LT: 0.0001 } }],
      ['POST', `/en/admin/partners/${partner.id}/sms-senders`, { name: 'Intruder' }],
      ['DELETE', `/en/admin/partners/${partner.id}/sms-senders/Mine`, undefined],
    ];
    const callers: Array<[string, Record<string, string>, number, string]> = [
      ['partner token', bearer(partner.token), 403, 'INSUFFICIENT_PERMISSIONS'],
      ['customer token', bearer(customerToken), 403, 'INSUFFICIENT_PERMISSIONS'],
      ['no token', {}, 401, 'MISSING_AUTHENTICATION'],
      ['API credentials', apiHeaders(partner.apiKey), 401, 'MISSING_AUTHENTICATION'],
    ];
    const before = await account(t, partner);
    for (const [method, path, json] of routes) {
      for (const [caller, headers, status, code] of callers) {
        const res = await request(t.url, method, path, { headers, json });
        assert.equal(res.status, status, `${method} ${path} with ${caller}: ${res.text}`);
        assert.equal(res.body.code, code, `${method} ${path} with ${caller}`);
        assert.equal(res.body.data, undefined);
      }
    }
    assert.deepEqual(await account(t, partner), before);
  });
});

describe('partner: own account and messages', () => {
  it('GET /partners/sms-account shows the own account only', async () => {
    const a = await createSmsPartner(t, admin, { senders: ['A One'], balance: '7.25' });
    const b = await createSmsPartner(t, admin, { senders: ['B One', 'B Two'], balance: '1' });
    const res = await request(t.url, 'GET', '/en/partners/sms-account', { headers: bearer(a.token) });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.code, 200);
    assert.deepEqual(res.body.data, {
      partner_id: a.id,
      balance: 7.25,
      currency: 'EUR',
      senders: ['A One'],
      prices: DEFAULT_PRICES,
      transliterate: false,
    });
    assert.equal((await account(t, b)).partner_id, b.id);
    assert.deepEqual((await account(t, b)).senders, ['B One', 'B Two']);
  });

  it('a partner that never had an SMS account sees an empty one', async () => {
    const p = await createPartner(t);
    assert.deepEqual(await account(t, p), {
      partner_id: p.id,
      balance: 0,
      currency: 'EUR',
      senders: [],
      prices: DEFAULT_PRICES,
      transliterate: false,
    });
  });

  it('partner routes need a partner token', async () => {
    const p = await createSmsPartner(t, admin, { balance: '1' });
    for (const path of ['/en/partners/sms-account', '/en/partners/sms/messages']) {
      assert.equal((await request(t.url, 'GET', path)).status, 401, path);
      assert.equal((await request(t.url, 'GET', path, { headers: bearer(admin.token) })).status, 403, path);
      assert.equal((await request(t.url, 'GET', path, { headers: apiHeaders(p.apiKey) })).status, 401, path);
    }
    const put = await request(t.url, 'PUT', '/en/partners/sms-account', { headers: bearer(admin.token), json: { transliterate: true } });
    assert.equal(put.status, 403);
  });

  it('PUT /partners/sms-account changes only transliterate', async () => {
    const p = await createSmsPartner(t, admin, { balance: '1' });
    const res = await request(t.url, 'PUT', '/en/partners/sms-account', { headers: bearer(p.token), json: { transliterate: true } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.transliterate, true);
    assert.equal(res.body.data.balance, 1);
    const bad = await request(t.url, 'PUT', '/en/partners/sms-account', { headers: bearer(p.token), json: { transliterate: 'yes' } });
    assertValidation(bad, ['transliterate']);
    // A partner cannot give itself money or prices through this route.
    const sneaky = await request(t.url, 'PUT', '/en/partners/sms-account', {
      headers: bearer(p.token),
      json: { transliterate: false, balance: 1000, prices: { LT: 0.0001 } },
    });
    assert.equal((await account(t, p)).balance, 1, sneaky.text);
    assert.deepEqual((await account(t, p)).prices, DEFAULT_PRICES);
  });

  it('GET /partners/sms/messages lists own messages newest first, paginated with meta', async () => {
    const p = await createSmsPartner(t, admin, { balance: '1' });
    const ids: string[] = [];
    for (const text of ['first', 'second', 'third']) {
      const res = await send(t, p, sendBody({ message: text }));
      assert.equal(res.status, 200, res.text);
      ids.push(res.body.data.message_id);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const page1 = await messages(t, p, '?per_page=2');
    assert.deepEqual(page1.body.meta, { current_page: 1, per_page: 2, total: 3, last_page: 2 });
    assert.deepEqual(
      page1.body.data.map((m: { message_id: string }) => m.message_id),
      [ids[2], ids[1]],
    );
    const page2 = await messages(t, p, '?per_page=2&page=2');
    assert.deepEqual(page2.body.meta, { current_page: 2, per_page: 2, total: 3, last_page: 2 });
    assert.deepEqual(
      page2.body.data.map((m: { message_id: string }) => m.message_id),
      [ids[0]],
    );
    const item = page2.body.data[0];
    assert.deepEqual(Object.keys(item).sort(), [
      'cost',
      'created_at',
      'delivered_at',
      'destination',
      'encoding',
      'error_message',
      'expired_at',
      'failed_at',
      'message',
      'message_id',
      'parts',
      'refunded',
      'scheduled',
      'sent_at',
      'source',
      'status',
      'transliterated',
      'validity',
    ]);
    assert.equal(item.message, 'first');
    assert.equal(item.source, 'Shop');
    assert.equal(item.parts, 1);
    assert.equal(item.encoding, 'GSM-7');
    assert.deepEqual(item.cost, { amount: 0.029, currency: 'EUR' });
    assert.match(item.created_at, ISO);
    assert.ok(['queued', 'sent', 'delivered'].includes(item.status));
    const empty = await messages(t, p, '?per_page=2&page=3');
    assert.deepEqual(empty.body.data, []);
    const bad = await request(t.url, 'GET', '/en/partners/sms/messages?per_page=101', { headers: bearer(p.token) });
    assertValidation(bad, ['per_page']);
  });
});
