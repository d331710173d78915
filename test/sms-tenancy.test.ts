// Tenancy of the SMS interface (DESIGN.md §2, issue 3 "Done when"): partner B cannot read A's
// message status, A's consent records or A's account and history, and one partner's approved
// sender names do not let the other send. What B sees of A's objects is exactly what it sees of
// objects that do not exist.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createAdmin, type AdminFixture, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, request, type Response } from './helpers/http.js';
import { account, approveSender, createSmsPartner, messages, send, sendBody, status } from './helpers/sms.js';

/** What a caller sees, minus the request id. */
const seen = (res: Response) => ({ status: res.status, body: { ...res.body, request_id: undefined } });

let t: TestApp;
let admin: AdminFixture;
let a: PartnerFixture;
let b: PartnerFixture;

before(async () => {
  t = await startTestApp();
  admin = await createAdmin(t);
  a = await createSmsPartner(t, admin, { name: 'Partner A', senders: ['A Shop'], balance: '5' });
  b = await createSmsPartner(t, admin, { name: 'Partner B', senders: ['B Shop'], balance: '3' });
});
after(() => t.close());

const consentOf = (p: PartnerFixture, phone: string) =>
  request(t.url, 'GET', `/en/sms/consent/${encodeURIComponent(phone)}`, { headers: apiHeaders(p.apiKey) });

describe('SMS tenancy between partners', () => {
  it("B gets 404 for A's message status, exactly as for an id that does not exist", async () => {
    const sent = await send(t, a, sendBody({ source: 'A Shop', message: 'For A only' }));
    assert.equal(sent.status, 200, sent.text);
    const id = sent.body.data.message_id as string;
    assert.equal((await status(t, a.apiKey, id)).status, 200);

    const other = await status(t, b.apiKey, id);
    assert.equal(other.status, 404, other.text);
    assert.equal(other.body.success, false);
    assert.ok(!other.text.includes('For A only'));
    assert.ok(!other.text.includes('A Shop'));
    const missing = await status(t, b.apiKey, `${id.slice(0, -2)}zz`);
    assert.deepEqual(seen(other), seen(missing));
  });

  it("B gets 404 for a phone whose consent only A recorded; B's own record is separate", async () => {
    const phone = '+37061300001';
    const recorded = await request(t.url, 'POST', '/en/sms/consent', {
      headers: apiHeaders(a.apiKey),
      json: { phone_number: phone, consent_given: true, consent_source: 'website_form', client_ip: '203.0.113.1' },
    });
    assert.equal(recorded.status, 200, recorded.text);
    assert.equal((await consentOf(a, phone)).status, 200);

    const other = await consentOf(b, phone);
    assert.equal(other.status, 404, other.text);
    assert.deepEqual(seen(other), seen(await consentOf(b, '+37061300999')));

    // B revokes for its own customers: A's record is untouched.
    const revoked = await request(t.url, 'POST', '/en/sms/consent', {
      headers: apiHeaders(b.apiKey),
      json: { phone_number: phone, consent_given: false },
    });
    assert.equal(revoked.status, 200, revoked.text);
    assert.equal((await consentOf(b, phone)).body.data.consent_given, false);
    const mine = await consentOf(a, phone);
    assert.equal(mine.body.data.consent_given, true);
    assert.equal(mine.body.data.consent_source, 'website_form');
  });

  it("consent registered with A's send is not visible to B", async () => {
    const phone = '+37061300002';
    const sent = await send(t, a, sendBody({ source: 'A Shop', destination: phone, marketing_consent: true }));
    assert.equal(sent.status, 200, sent.text);
    assert.equal((await consentOf(a, phone)).status, 200);
    assert.equal((await consentOf(b, phone)).status, 404);
  });

  it("B's account and message history never show A's", async () => {
    const fromA = await send(t, a, sendBody({ source: 'A Shop', message: 'A history' }));
    const fromB = await send(t, b, sendBody({ source: 'B Shop', message: 'B history' }));
    assert.equal(fromA.status, 200);
    assert.equal(fromB.status, 200);

    const accountB = await account(t, b);
    assert.equal(accountB.partner_id, b.id);
    assert.deepEqual(accountB.senders, ['B Shop']);
    const accountA = await account(t, a);
    assert.equal(accountA.partner_id, a.id);
    assert.notEqual(accountA.balance, accountB.balance);

    const listB = await messages(t, b, '?per_page=100');
    const idsB = listB.body.data.map((m: { message_id: string }) => m.message_id);
    assert.ok(idsB.includes(fromB.body.data.message_id));
    assert.ok(!idsB.includes(fromA.body.data.message_id));
    assert.ok(listB.body.data.every((m: { source: string }) => m.source === 'B Shop'));
    assert.equal(listB.body.meta.total, listB.body.data.length);
    assert.ok(!listB.text.includes('A history'));

    const listA = await messages(t, a, '?per_page=100');
    assert.ok(!listA.body.data.some((m: { message_id: string }) => m.message_id === fromB.body.data.message_id));
  });

  it("one partner's approved senders do not let the other send", async () => {
    const beforeA = await account(t, a);
    const beforeB = await account(t, b);
    const aAsB = await send(t, a, sendBody({ source: 'B Shop' }));
    assert.equal(aAsB.status, 422, aAsB.text);
    assert.equal(aAsB.body.code, 2001);
    assert.ok(aAsB.body.message.includes('A Shop'), aAsB.body.message);
    assert.ok(!aAsB.body.message.includes('B Shop'), "B's sender names are not shown to A");

    const bAsA = await send(t, b, sendBody({ source: 'A Shop' }));
    assert.equal(bAsA.status, 422, bAsA.text);
    assert.equal(bAsA.body.code, 2001);
    assert.ok(bAsA.body.message.includes('B Shop'), bAsA.body.message);
    assert.ok(!bAsA.body.message.includes('A Shop'), "A's sender names are not shown to B");

    assert.deepEqual(await account(t, a), beforeA);
    assert.deepEqual(await account(t, b), beforeB);
  });

  it('the same sender name approved for both partners is approved for each separately', async () => {
    assert.equal((await approveSender(t, admin, a.id, 'Common')).status, 201);
    assert.equal((await send(t, b, sendBody({ source: 'Common' }))).body.code, 2001);
    assert.equal((await approveSender(t, admin, b.id, 'Common')).status, 201);
    assert.equal((await send(t, b, sendBody({ source: 'Common' }))).status, 200);
    // Revoking it for B leaves A's approval.
    assert.equal((await request(t.url, 'DELETE', `/en/admin/partners/${b.id}/sms-senders/Common`, { headers: { authorization: `Bearer ${admin.token}` } })).status, 200);
    assert.equal((await send(t, b, sendBody({ source: 'Common' }))).body.code, 2001);
    assert.equal((await send(t, a, sendBody({ source: 'Common' }))).status, 200);
  });

  it("each partner's sends are charged to its own balance", async () => {
    const beforeA = await account(t, a);
    const beforeB = await account(t, b);
    assert.equal((await send(t, b, sendBody({ source: 'B Shop', message: 'x'.repeat(300) }))).status, 200);
    assert.equal((await account(t, a)).balance, beforeA.balance);
    assert.equal(Math.round(beforeB.balance * 10_000) - Math.round((await account(t, b)).balance * 10_000), 2 * 290);
  });

  it('Idempotency-Key values are per partner', async () => {
    const key = `shared-${process.pid}-${Date.now()}`;
    const fromA = await send(t, a, sendBody({ source: 'A Shop', message: 'Same key' }), { headers: { 'idempotency-key': key } });
    const fromB = await send(t, b, sendBody({ source: 'B Shop', message: 'Same key' }), { headers: { 'idempotency-key': key } });
    assert.equal(fromA.status, 200, fromA.text);
    assert.equal(fromB.status, 200, fromB.text);
    assert.equal(fromB.headers.get('idempotent-replayed'), null);
    assert.notEqual(fromA.body.data.message_id, fromB.body.data.message_id);
    assert.equal((await status(t, b.apiKey, fromA.body.data.message_id)).status, 404);
  });
});
