// Issue 30 item 8, "a delivery receipt can land on the wrong message": an SMSC stand-in
// written here on the server side of the npm `smpp` package that
//   - answers deliver_sm BEFORE submit_sm_resp (the receipt first, the id after);
//   - hands out the ids a test tells it — reused ids, and ids whose other spelling (hex ↔
//     decimal) is another message's id;
//   - names the handset in a receipt or not (TLV receipts without source_addr).
// Every message must end as its own receipt says, no other message move, and a message failed
// by an early receipt be charged only for the parts the SMSC had. Runs on the store the suite
// runs on (PostgreSQL with DATABASE_URL, else embedded).
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { eq, sql } from 'drizzle-orm';
import smpp from 'smpp';
import { smsAccounts, smsCarrierReceipts } from '../src/modules/sms/sms.tables.js';
import { startTestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, request } from './helpers/http.js';

interface Submit {
  id: string;
  destination: string;
  text: string;
}

/** What the SMSC does with the next submit_sm to a destination. */
interface Rule {
  /** The id to give it (default: the next of a counter). */
  ids?: string[];
  /** Send this receipt for it before its submit_sm_resp, then answer after `respondAfterMs`. */
  receiptFirst?: { stat: string; id?: (id: string) => string; handset?: boolean };
  respondAfterMs?: number;
  /** Do not answer until `release(destination)`. */
  hold?: boolean;
}

async function startSmsc() {
  let counter = 9000;
  const submits: Submit[] = [];
  const rules = new Map<string, Rule>();
  const held = new Map<string, Array<() => void>>();
  const sessions = new Set<smpp.Session>();
  const sendReceipt = (session: smpp.Session, id: string, stat: string, handset?: string) =>
    new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no deliver_sm_resp')), 10_000);
      const text = `id:${id} sub:001 dlvrd:000 submit date:2612020400 done date:2612020401 stat:${stat} err:000 text:secret 4711`;
      session.send(
        new smpp.PDU('deliver_sm', {
          esm_class: 0x04,
          data_coding: 0,
          // A national number (trunk 0) as TON national, else international.
          ...(handset ? { source_addr_ton: handset.startsWith('0') ? 2 : 1, source_addr_npi: 1, source_addr: handset } : {}),
          short_message: Buffer.from(text, 'latin1'),
        }),
        (resp) => {
          clearTimeout(timer);
          resolve(resp.command_status);
        },
      );
    });
  const server = smpp.createServer((session) => {
    sessions.add(session);
    session.on('error', () => session.destroy());
    session.on('close', () => sessions.delete(session));
    session.on('bind_transceiver', (pdu: smpp.PDU) => session.send(pdu.response({ system_id: 'EARLY' })));
    session.on('enquire_link', (pdu: smpp.PDU) => session.send(pdu.response()));
    session.on('unbind', (pdu: smpp.PDU) => session.send(pdu.response(), () => session.close()));
    session.on('submit_sm', (pdu: smpp.PDU) => {
      const destination = String(pdu.destination_addr);
      const rule = rules.get(destination) ?? {};
      const id = rule.ids?.shift() ?? String(counter++);
      const sm = pdu.short_message as { message?: unknown };
      const text = typeof sm?.message === 'string' ? sm.message : Buffer.isBuffer(sm?.message) ? sm.message.toString('latin1') : '';
      submits.push({ id, destination, text });
      const respond = () => {
        if (!session.socket.destroyed) session.send(pdu.response({ message_id: id }));
      };
      void (async () => {
        if (rule.receiptFirst) {
          const r = rule.receiptFirst;
          // The receipt is written and acknowledged before the submit response leaves.
          await sendReceipt(session, r.id ? r.id(id) : id, r.stat, r.handset === false ? undefined : destination);
        }
        if (rule.hold) held.set(destination, [...(held.get(destination) ?? []), respond]);
        else if (rule.respondAfterMs) setTimeout(respond, rule.respondAfterMs);
        else respond();
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    submits,
    rules,
    get sessions() {
      return sessions.size;
    },
    /** Answers the held submit_sm of a destination. */
    release(destination: string) {
      for (const respond of held.get(destination.replace('+', '')) ?? []) respond();
      held.delete(destination.replace('+', ''));
    },
    /** A receipt as the SMSC writes it; `handset` digits in source_addr (international), or none. */
    receipt(id: string, stat: string, handset?: string): Promise<number> {
      const session = [...sessions].at(-1);
      if (!session) throw new Error('no session');
      return sendReceipt(session, id, stat, handset);
    },
    async close() {
      for (const s of sessions) s.socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
type Smsc = Awaited<ReturnType<typeof startSmsc>>;

async function until<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function harness(env: Record<string, string>) {
  const smsc = await startSmsc();
  const log: Array<Record<string, unknown>> = [];
  const t = await startTestApp(
    {
      SMS_CARRIER: 'smpp',
      SMPP_URL: `smpp://loyalty:secret@127.0.0.1:${smsc.port}`,
      SMS_DISPATCH_POLL_MS: '50',
      SMPP_RESPONSE_TIMEOUT_MS: '5000',
      LOG_LEVEL: 'warn',
      ...env,
    },
    undefined,
    { logStream: { write: (line: string) => void log.push(JSON.parse(line) as Record<string, unknown>) } },
  );
  const partner = await createPartner(t);
  await t.app.context.database.db.transaction((tx) =>
    t.app.context.services.smsAccounts.open(tx, partner.id, { balance: '5.0000', senders: ['Shop'] }),
  );
  await until('the service bound', () => smsc.sessions > 0);
  const send = async (destination: string, message: string) => {
    const res = await request(t.url, 'POST', '/en/sms/send', { headers: apiHeaders(partner.apiKey), json: { source: 'Shop', destination, message } });
    assert.equal(res.status, 200, res.text);
    return res.body.data.message_id as string;
  };
  const status = async (id: string) => (await request(t.url, 'GET', `/en/sms/status/${id}`, { headers: apiHeaders(partner.apiKey) })).body.data;
  const waitStatus = (id: string, want: string) =>
    until(`${id} ${want}`, async () => {
      const s = await status(id);
      return s.status === want ? s : undefined;
    });
  const submitsOf = (destination: string, n: number) =>
    until(`${n} submit_sm to ${destination}`, () => {
      const mine = smsc.submits.filter((s) => s.destination === destination.replace('+', ''));
      return mine.length >= n ? mine : undefined;
    });
  const receiptRow = async (id: string) =>
    (await t.app.context.database.db.select().from(smsCarrierReceipts).where(eq(smsCarrierReceipts.carrierMessageId, id)))[0];
  const balance = async () =>
    (await t.app.context.database.db.select({ b: smsAccounts.balance }).from(smsAccounts).where(eq(smsAccounts.partnerId, partner.id)))[0]!.b;
  return { smsc, t, partner: partner as PartnerFixture, log, send, status, waitStatus, submitsOf, receiptRow, balance };
}
type Harness = Awaited<ReturnType<typeof harness>>;

describe('SMPP receipts that come early, with reused ids and ids spelt another way (SMPP_RECEIPT_ID_FORMAT=same)', () => {
  let h: Harness;
  let smsc: Smsc;
  before(async () => {
    h = await harness({ SMPP_WINDOW: '3' });
    smsc = h.smsc;
  });
  after(async () => {
    await h.t.close();
    await smsc.close();
  });

  it('applies a receipt that comes before its submit_sm_resp to its own part, not to the message whose id is its hex spelling', async () => {
    // "272" read as decimal and written in hex is "110": another message's id.
    smsc.rules.set('37061300001', { ids: ['110'] });
    const other = await h.send('+37061300001', 'the message whose id is 110');
    await h.waitStatus(other, 'sent');
    // The receipt for 272 names no handset (nothing but the id to go by) and comes 400 ms
    // before the id itself.
    smsc.rules.set('37061300002', { ids: ['272'], receiptFirst: { stat: 'UNDELIV', handset: false }, respondAfterMs: 400 });
    const own = await h.send('+37061300002', 'the message whose id is 272');
    const failed = await h.waitStatus(own, 'failed');
    assert.match(failed.error_message, /UNDELIV/);
    assert.equal((await h.status(other)).status, 'sent', 'the message with id 110 did not move');
    assert.equal((await h.receiptRow('272'))?.outcome, 'applied');
    // Its own receipt still finds it.
    assert.equal(await smsc.receipt('110', 'DELIVRD', '37061300001'), 0);
    await h.waitStatus(other, 'delivered');
  });

  it('never tries a receipt id for a part it never recorded under another spelling; after the wait it is kept unapplied and logged without its text', async () => {
    smsc.rules.set('37061300003', { ids: ['4096'] });
    const bystander = await h.send('+37061300003', 'id 4096, which hex 1000 reads as');
    await h.waitStatus(bystander, 'sent');
    // A receipt for a part we have no id for (in doubt, or not ours) — "1000", hex for 4096.
    assert.equal(await smsc.receipt('1000', 'UNDELIV'), 0);
    await sleep(600);
    assert.equal((await h.status(bystander)).status, 'sent');
    assert.equal((await h.receiptRow('1000'))?.outcome, null, 'it waits for its part');
    // Ten minutes later it is given up: kept, unapplied, logged.
    await h.t.app.context.database.db
      .update(smsCarrierReceipts)
      .set({ receivedAt: sql`received_at - interval '11 minutes'` })
      .where(eq(smsCarrierReceipts.carrierMessageId, '1000'));
    const row = await until('the receipt given up', async () => {
      const r = await h.receiptRow('1000');
      return r?.outcome === 'unapplied' ? r : undefined;
    });
    assert.match(row.note ?? '', /no part/);
    const line = await until('the log line', () => h.log.find((l) => l.msg === 'sms receipt matches no part; kept unapplied' && l.carrier_message_id === '1000'));
    assert.equal(line.state, 'failed');
    assert.doesNotMatch(JSON.stringify(h.log), /secret 4711/);
    assert.equal((await h.status(bystander)).status, 'sent', 'the message with id 4096 did not move');
  });

  it('with an id the SMSC reuses, applies a receipt that comes before the new part is recorded to the new part, never to the older message', async () => {
    smsc.rules.set('37061300004', { ids: ['500'] });
    const older = await h.send('+37061300004', 'older message, id 500');
    await h.waitStatus(older, 'sent');
    // The SMSC restarted and numbers again: the same id for a new message to the same handset;
    // its receipt comes 400 ms before the id.
    smsc.rules.set('37061300004', { ids: ['500'], receiptFirst: { stat: 'UNDELIV' }, respondAfterMs: 400 });
    const newer = await h.send('+37061300004', 'newer message, id 500 again');
    const failed = await h.waitStatus(newer, 'failed');
    assert.match(failed.error_message, /UNDELIV/);
    assert.equal((await h.status(older)).status, 'sent', 'the older message did not move');
  });

  it('applies a receipt to the part submitted before it, not to one submitted after it with the reused id', async () => {
    smsc.rules.set('37061300005', { ids: ['600'] });
    const older = await h.send('+37061300005', 'older message, id 600');
    await h.waitStatus(older, 'sent');
    // A part is on its way (its answer held): receipts that come meanwhile wait for it.
    smsc.rules.set('37061300006', { hold: true });
    const slow = await h.send('+37061300006', 'answer held');
    await h.submitsOf('+37061300006', 1);
    // The older message's receipt comes; then a new message to the same handset gets id 600.
    assert.equal(await smsc.receipt('600', 'DELIVRD', '37061300005'), 0);
    smsc.rules.set('37061300005', { ids: ['600'] });
    const newer = await h.send('+37061300005', 'newer message, id 600 again');
    await h.waitStatus(newer, 'sent');
    smsc.release('+37061300006');
    await h.waitStatus(slow, 'sent');
    await h.waitStatus(older, 'delivered');
    assert.equal((await h.status(newer)).status, 'sent', 'the newer message waits for its own receipt');
  });

  it('applies a receipt that names a handset only to a part sent to that number', async () => {
    smsc.rules.set('37061300007', { ids: ['700'] });
    const a = await h.send('+37061300007', 'to 7, id 700');
    await h.waitStatus(a, 'sent');
    // A receipt for id 700 of another handset (a part we never recorded): not this one's.
    assert.equal(await smsc.receipt('700', 'UNDELIV', '37061300008'), 0);
    await sleep(600);
    assert.equal((await h.status(a)).status, 'sent');
    assert.equal((await h.receiptRow('700'))?.outcome, null);
    // Its own, with the number in national form, does.
    assert.equal(await smsc.receipt('700', 'DELIVRD', '061300007'), 0);
    await h.waitStatus(a, 'delivered');
    assert.equal((await h.receiptRow('700'))?.outcome, 'applied');
  });

  it('keeps a receipt for a part already final unapplied', async () => {
    smsc.rules.set('37061300009', { ids: ['900'] });
    const m = await h.send('+37061300009', 'delivered once');
    await h.waitStatus(m, 'sent');
    assert.equal(await smsc.receipt('900', 'DELIVRD', '37061300009'), 0);
    await h.waitStatus(m, 'delivered');
    assert.equal(await smsc.receipt('900', 'UNDELIV', '37061300009'), 0);
    const row = await until('the second receipt settled', async () => {
      const r = await h.receiptRow('900');
      return r?.outcome === 'unapplied' ? r : undefined;
    });
    assert.match(row.note ?? '', /already delivered/);
    assert.equal((await h.status(m)).status, 'delivered');
  });
});

describe('SMPP receipts with SMPP_RECEIPT_ID_FORMAT=decimal, and an early failure of a 3-part message', () => {
  let h: Harness;
  let smsc: Smsc;
  before(async () => {
    // One part at a time, so parts 2 and 3 of a message wait for part 1's answer.
    h = await harness({ SMPP_WINDOW: '1', SMPP_RECEIPT_ID_FORMAT: 'decimal' });
    smsc = h.smsc;
  });
  after(async () => {
    await h.t.close();
    await smsc.close();
  });

  it('looks a decimal receipt id up as hex, and never under the id as given', async () => {
    smsc.rules.set('37061400001', { ids: ['0000010E'] }); // 270
    const hexOwner = await h.send('+37061400001', 'hex id 10E');
    await h.waitStatus(hexOwner, 'sent');
    smsc.rules.set('37061400002', { ids: ['270'] });
    const literal = await h.send('+37061400002', 'hex id 270 (624)');
    await h.waitStatus(literal, 'sent');
    // "270": the decimal spelling of hex 10E — the first message, not the one whose id is "270".
    assert.equal(await smsc.receipt('270', 'DELIVRD'), 0);
    await h.waitStatus(hexOwner, 'delivered');
    assert.equal((await h.status(literal)).status, 'sent');
    assert.equal(await smsc.receipt('624', 'DELIVRD'), 0);
    await h.waitStatus(literal, 'delivered');
  });

  it('charges a 3-part message failed by an early receipt for part 1 only for that part; parts 2 and 3 are never sent', async () => {
    // The SMSC fails part 1 (its receipt id in decimal) before it answers its submit_sm.
    smsc.rules.set('37061400003', { receiptFirst: { stat: 'UNDELIV', id: (hex) => String(parseInt(hex, 16)) }, respondAfterMs: 300 });
    const before = await h.balance();
    const id = await h.send('+37061400003', 'x'.repeat(400)); // 3 parts of 153
    const ledger = await h.t.app.context.database.db.execute(sql`select amount::text as amount from sms_account_ledger where message_id = ${id} and kind = 'charge'`);
    assert.equal((ledger as unknown as { rows: Array<{ amount: string }> }).rows[0]?.amount.replace(/^-/, ''), '0.0870', 'three LT parts charged at the send');
    const failed = await h.waitStatus(id, 'failed');
    assert.match(failed.error_message, /UNDELIV/);
    await sleep(800);
    assert.equal(smsc.submits.filter((s) => s.destination === '37061400003').length, 1, 'parts 2 and 3 were never written');
    assert.equal(Math.round((Number(before) - Number(await h.balance())) * 10_000), 290, 'charged for the one part the SMSC had');
  });
});
