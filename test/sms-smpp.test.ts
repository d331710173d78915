// Issue 3, "SMPP round trip": send → submit_sm seen by a real SMSC (the npm `smpp` package's
// server side, started here) → its deliver_sm receipt → status `delivered` → a signed receipt
// POSTed to a receiver started here, which verifies the signature with the partner's secret.
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { smsMessageParts } from '../src/modules/sms/sms.tables.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { createTestSmsc, waitFor, type TestSmsc } from './helpers/smsc.js';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

function verify(secret: string, header: string, body: string): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!m) return false;
  const expected = createHmac('sha256', secret).update(`${m[1]}.${body}`).digest();
  return timingSafeEqual(expected, Buffer.from(m[2]!, 'hex')) && Math.abs(Date.now() / 1000 - Number(m[1])) < 300;
}

describe('SMS over SMPP, end to end', () => {
  let smsc: TestSmsc;
  let t: TestApp;
  let partner: PartnerFixture;
  let receiver: http.Server;
  let receiverUrl: string;
  const received: Received[] = [];

  before(async () => {
    smsc = await createTestSmsc({});
    receiver = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (d: string) => (body += d));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/receipts`;
    t = await startTestApp({
      SMS_CARRIER: 'smpp',
      SMPP_URL: smsc.url(),
      SMS_DISPATCH_POLL_MS: '50',
      // The receiver listens on loopback, which deliveries refuse unless allowed.
      ALLOW_PRIVATE_URLS: 'true',
    });
    partner = await createPartner(t);
    await t.app.context.database.db.transaction((tx) =>
      t.app.context.services.smsAccounts.open(tx, partner.id, { balance: '5.0000', senders: ['Shop'] }),
    );
    await waitFor(() => smsc.openSessions > 0, 10_000, 'the service bound to the SMSC');
  });
  after(async () => {
    await t.close();
    await smsc.close();
    await new Promise((r) => receiver.close(r));
  });

  const status = async (id: string) =>
    (await request(t.url, 'GET', `/en/sms/status/${id}`, { headers: apiHeaders(partner.apiKey) })).body.data;

  /** Waits until the part the SMSC knows as `carrierMessageId` has `state` in the store. */
  async function partState(carrierMessageId: string, state: string) {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const [part] = await t.app.context.database.db
        .select({ state: smsMessageParts.state })
        .from(smsMessageParts)
        .where(eq(smsMessageParts.carrierMessageId, carrierMessageId));
      if (part?.state === state) return;
      if (Date.now() > deadline) throw new Error(`part ${carrierMessageId} is ${part?.state}, not ${state}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async function waitStatus(id: string, want: string) {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const s = await status(id);
      if (s.status === want) return s;
      if (Date.now() > deadline) throw new Error(`${id} is ${s.status}, not ${want}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('delivers, and posts signed receipts the receiver can verify', async () => {
    const { body: secretBody } = await request(t.url, 'GET', '/en/partners/webhook-secret', { headers: bearer(partner.token) });
    const secret: string = secretBody.data.secret;
    const sent = await request(t.url, 'POST', '/en/sms/send', {
      headers: apiHeaders(partner.apiKey),
      json: { source: 'Shop', destination: '+37061234567', message: 'Your code is 1234 €', receipt: true, receiptURL: receiverUrl },
    });
    assert.equal(sent.status, 200, sent.text);
    const id: string = sent.body.data.message_id;

    const submit = await waitFor(() => smsc.submits.find((s) => s.destination === '37061234567'), 10_000, 'submit_sm');
    assert.equal(submit.source, 'Shop');
    assert.equal(submit.dataCoding, 0, 'GSM 03.38, never Latin-1');
    assert.equal(submit.text, 'Your code is 1234 €');
    assert.equal(submit.registeredDelivery, 1);
    await waitStatus(id, 'sent');

    // The SMSC reports delivery (a decimal receipt id is looked up only with
    // SMPP_RECEIPT_ID_FORMAT=decimal: test/sms-smpp-receipts.test.ts).
    assert.equal(await smsc.deliverReceipt(submit.messageId, 'DELIVRD'), 0);
    const done = await waitStatus(id, 'delivered');
    assert.ok(done.delivered_at);

    const receipts = await waitFor(
      () => {
        const mine = received.filter((r) => JSON.parse(r.body).message_id === id);
        return mine.some((r) => JSON.parse(r.body).status === 'delivered') ? mine : undefined;
      },
      10_000,
      'the delivered receipt',
    );
    assert.deepEqual(
      receipts.map((r) => JSON.parse(r.body).status),
      ['sent', 'delivered'],
    );
    for (const r of receipts) {
      assert.equal(r.headers['content-type'], 'application/json');
      assert.ok(verify(secret, String(r.headers['x-loyalty-signature']), r.body), 'signature verifies with the webhook secret');
      assert.ok(!verify(`${secret}x`, String(r.headers['x-loyalty-signature']), r.body), 'and not with another secret');
      assert.match(String(r.headers['x-loyalty-event-id']), /^[0-9a-f-]{36}$/);
    }
    assert.notEqual(receipts[0]!.headers['x-loyalty-event-id'], receipts[1]!.headers['x-loyalty-event-id']);
    const payload = JSON.parse(receipts[1]!.body);
    assert.deepEqual(Object.keys(payload).sort(), [
      'cost',
      'delivered_at',
      'destination',
      'error_message',
      'failed_at',
      'message_id',
      'sent_at',
      'source',
      'status',
    ]);
    assert.deepEqual(payload.cost, { amount: 0.029, currency: 'EUR' });
  });

  it('delivers a multi-part message only when every part is delivered; a failed part fails it', async () => {
    const text = 'x'.repeat(200); // 2 GSM-7 parts
    const one = await request(t.url, 'POST', '/en/sms/send', {
      headers: apiHeaders(partner.apiKey),
      json: { source: 'Shop', destination: '+37061234568', message: text },
    });
    assert.equal(one.body.data.parts, 2);
    const parts = await waitFor(() => {
      const p = smsc.submits.filter((s) => s.destination === '37061234568');
      return p.length === 2 ? p : undefined;
    }, 10_000, 'two submit_sm');
    assert.equal(parts[0]!.esmClass & 0x40, 0x40, 'UDH indicator set');
    await waitStatus(one.body.data.message_id, 'sent');
    assert.equal(await smsc.deliverReceipt(parts[0]!.messageId, 'DELIVRD'), 0);
    // The receipt is applied to its part (and the message settled in the same transaction).
    await partState(parts[0]!.messageId, 'delivered');
    assert.equal((await status(one.body.data.message_id)).status, 'sent', 'one part delivered is not enough');
    await smsc.deliverReceipt(parts[1]!.messageId, 'DELIVRD', { viaTlv: true });
    await waitStatus(one.body.data.message_id, 'delivered');

    const two = await request(t.url, 'POST', '/en/sms/send', {
      headers: apiHeaders(partner.apiKey),
      json: { source: 'Shop', destination: '+37061234569', message: text },
    });
    const parts2 = await waitFor(() => {
      const p = smsc.submits.filter((s) => s.destination === '37061234569');
      return p.length === 2 ? p : undefined;
    }, 10_000, 'two submit_sm');
    await waitStatus(two.body.data.message_id, 'sent');
    await smsc.deliverReceipt(parts2[0]!.messageId, 'DELIVRD');
    await smsc.deliverReceipt(parts2[1]!.messageId, 'UNDELIV', { err: '034' });
    const failed = await waitStatus(two.body.data.message_id, 'failed');
    assert.match(failed.error_message, /UNDELIV/);
  });

  it('refunds a message the SMSC refuses on submit, and fails it without a retry', async () => {
    const before = (await request(t.url, 'GET', '/en/partners/sms-account', { headers: bearer(partner.token) })).body.data.balance;
    smsc.failDestination('37061234570', 0x0b); // ESME_RINVDSTADR
    const res = await request(t.url, 'POST', '/en/sms/send', {
      headers: apiHeaders(partner.apiKey),
      json: { source: 'Shop', destination: '+37061234570', message: 'refused' },
    });
    const failed = await waitStatus(res.body.data.message_id, 'failed');
    assert.match(failed.error_message, /0x0000000B/i);
    const afterBalance = (await request(t.url, 'GET', '/en/partners/sms-account', { headers: bearer(partner.token) })).body.data.balance;
    assert.equal(afterBalance, before, 'the charge is refunded');
    assert.equal(smsc.submits.filter((s) => s.destination === '37061234570').length, 0, 'a refused submit is not recorded as accepted');
  });
});
