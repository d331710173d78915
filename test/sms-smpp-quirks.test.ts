// Issue 20, "real SMSCs broke the SMPP client": an SMSC stand-in written here on the server
// side of the npm `smpp` package (the client is the same package, so this one behaves as the
// independent simulators that found the bugs did, not as test/helpers/smsc.ts):
//   - it numbers message ids in decimal from 0 and starts from 0 again when it restarts;
//   - it can copy data_coding 0x08 into an ASCII receipt;
//   - it can hang: the process stopped, the TCP connection open, nothing answered;
//   - it answers ACCEPTD.
// Each message must end as the carrier said, none be written twice (submit_sm texts counted
// here), and an old message with a reused id must never be touched.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { eq, sql } from 'drizzle-orm';
import smpp from 'smpp';
import { IN_DOUBT_ERROR } from '../src/modules/sms/dispatcher.js';
import { smsMessages } from '../src/modules/sms/sms.tables.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, request } from './helpers/http.js';

interface Submit {
  id: string;
  /** Received while the SMSC was hung (never answered). */
  duringHang: boolean;
  destination: string;
  text: string;
  validity: unknown;
}

/** An SMSC on `port` (0: any); ids in decimal from 0. `submits`: every submit_sm, across restarts. */
async function startSmsc(port = 0, submits: Submit[] = []) {
  let nextId = 0;
  let hung = false;
  const sessions = new Set<smpp.Session>();
  const server = smpp.createServer((session) => {
    sessions.add(session);
    session.on('error', () => session.destroy());
    session.on('close', () => sessions.delete(session));
    // A hung SMSC answers nothing (the socket stays open). It still reads, so that every
    // submit_sm the client wrote is counted.
    session.on('bind_transceiver', (pdu: smpp.PDU) => {
      if (!hung) session.send(pdu.response({ system_id: 'QUIRKS' }));
    });
    session.on('enquire_link', (pdu: smpp.PDU) => {
      if (!hung) session.send(pdu.response());
    });
    session.on('unbind', (pdu: smpp.PDU) => session.send(pdu.response(), () => session.close()));
    session.on('submit_sm', (pdu: smpp.PDU) => {
      const sm = pdu.short_message as { message?: unknown };
      const text = typeof sm?.message === 'string' ? sm.message : Buffer.isBuffer(sm?.message) ? sm.message.toString('latin1') : '';
      submits.push({ id: String(nextId), duringHang: hung, destination: String(pdu.destination_addr), text, validity: pdu.validity_period });
      const id = String(nextId++);
      if (!hung) session.send(pdu.response({ message_id: id }));
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = () => [...sessions].at(-1);
  return {
    port: (server.address() as AddressInfo).port,
    submits,
    get sessions() {
      return sessions.size;
    },
    /** A receipt as the SMSC writes it, ASCII text; `dataCoding` 8 as some copy it from the submit. */
    receipt(id: string, stat: string, dataCoding = 0): Promise<number> {
      const session = bound();
      if (!session) throw new Error('no session');
      const text = `id:${id} sub:001 dlvrd:001 submit date:2611270300 done date:2611270301 stat:${stat} err:000 text:secret 4711`;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no deliver_sm_resp')), 10_000);
        session.send(
          new smpp.PDU('deliver_sm', { esm_class: 0x04, data_coding: dataCoding, short_message: Buffer.from(text, 'latin1') }),
          (resp) => {
            clearTimeout(timer);
            resolve(resp.command_status);
          },
        );
      });
    },
    /** Stop (or resume) answering anything, as a stopped process with its sockets open. */
    hang(on: boolean) {
      hung = on;
    },
    async close() {
      for (const s of sessions) s.socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
type Smsc = Awaited<ReturnType<typeof startSmsc>>;

const WINDOW = 3;

async function until<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('SMPP against SMSC quirks', () => {
  let smsc: Smsc;
  let t: TestApp;
  let partner: PartnerFixture;

  before(async () => {
    smsc = await startSmsc();
    t = await startTestApp({
      SMS_CARRIER: 'smpp',
      SMPP_URL: `smpp://loyalty:secret@127.0.0.1:${smsc.port}`,
      SMS_DISPATCH_POLL_MS: '50',
      SMS_DEFAULT_VALIDITY_MINUTES: '1',
      SMPP_WINDOW: String(WINDOW),
      SMPP_RESPONSE_TIMEOUT_MS: '500',
    });
    partner = await createPartner(t);
    await t.app.context.database.db.transaction((tx) =>
      t.app.context.services.smsAccounts.open(tx, partner.id, { balance: '5.0000', senders: ['Shop'] }),
    );
    await until('the service bound', () => smsc.sessions > 0);
  });
  after(async () => {
    await t.close();
    await smsc.close();
  });

  const send = async (destination: string, message: string) => {
    const res = await request(t.url, 'POST', '/en/sms/send', {
      headers: apiHeaders(partner.apiKey),
      json: { source: 'Shop', destination, message },
    });
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
      return mine.length === n ? mine : undefined;
    });
  const assertEachTextOnce = () => {
    const counts = new Map<string, number>();
    for (const s of smsc.submits) counts.set(s.text, (counts.get(s.text) ?? 0) + 1);
    assert.deepEqual([...counts].filter(([, n]) => n !== 1), [], 'a text written twice');
  };

  it('reads a data_coding 8 receipt with ASCII text, and takes ACCEPTD as delivered', async () => {
    const a = await send('+37061200001', 'ucs2 receipt');
    const [sa] = await submitsOf('+37061200001', 1);
    await waitStatus(a, 'sent');
    assert.equal(await smsc.receipt(sa!.id, 'DELIVRD', 8), 0);
    await waitStatus(a, 'delivered');

    const b = await send('+37061200002', 'read on the subscriber behalf');
    const [sb] = await submitsOf('+37061200002', 1);
    await waitStatus(b, 'sent');
    assert.equal(await smsc.receipt(sb!.id, 'ACCEPTD'), 0);
    const done = await waitStatus(b, 'delivered');
    assert.ok(done.delivered_at);
    assertEachTextOnce();
  });

  it('expires a message sent without a validity once the default one has passed, its validity still null', async () => {
    const id = await send('+37061200003', 'no receipt ever');
    const [s] = await submitsOf('+37061200003', 1);
    // The SMSC is told the default validity (1 minute here), as an absolute time.
    assert.ok(s!.validity instanceof Date, String(s!.validity));
    const ahead = (s!.validity as Date).getTime() - Date.now();
    assert.ok(ahead > 30_000 && ahead <= 61_000, String(ahead));
    const sent = await waitStatus(id, 'sent');
    assert.equal(sent.validity, null);
    // The clock moved on: it was sent two minutes ago.
    await t.app.context.database.db
      .update(smsMessages)
      .set({ sentAt: sql`sent_at - interval '2 minutes'` })
      .where(eq(smsMessages.id, id));
    const expired = await waitStatus(id, 'expired');
    assert.equal(expired.validity, null);
  });

  it('applies a receipt to the most recent part with its id when the SMSC restarts and reuses ids; an older message is never touched', async () => {
    // Before the restart: ids go on from where the tests above left them.
    const old = await send('+37061200010', 'before the restart, never receipted');
    const [so] = await submitsOf('+37061200010', 1);
    await waitStatus(old, 'sent');

    // The SMSC restarts (same port) and numbers from 0 again.
    const port = smsc.port;
    const before = smsc.submits.length;
    await smsc.close();
    smsc = await startSmsc(port, smsc.submits);
    await until('the service bound again', () => smsc.sessions > 0, 20_000);
    assert.equal(smsc.submits.length, before);

    // Two parts (ids 0, 1), one more (2), then the single part that gets the old message's id (3).
    assert.equal(so!.id, '3');
    const fresh = await send('+37061200011', 'x'.repeat(200));
    const parts = await submitsOf('+37061200011', 2);
    await send('+37061200013', 'after the restart, first');
    await submitsOf('+37061200013', 1);
    const single = await send('+37061200012', 'after the restart');
    const [ss] = await submitsOf('+37061200012', 1);
    assert.equal(ss!.id, so!.id, 'the old id is reused');
    // Every hand-over recorded: the reused ids failed nothing.
    await waitStatus(fresh, 'sent');
    await waitStatus(single, 'sent');

    for (const p of parts) assert.equal(await smsc.receipt(p.id, 'DELIVRD'), 0);
    assert.equal(await smsc.receipt(ss!.id, 'UNDELIV'), 0);
    await waitStatus(fresh, 'delivered');
    const failed = await waitStatus(single, 'failed');
    assert.match(failed.error_message, /UNDELIV/);
    // The message before the restart whose id came back is still waiting for its own receipt.
    assert.equal((await status(old)).status, 'sent');
    assertEachTextOnce();
  });

  it('writes at most SMPP_WINDOW parts to an SMSC that hangs, leaves them in doubt, and sends the rest once it answers', async () => {
    smsc.hang(true);
    const texts = Array.from({ length: 8 }, (_, i) => `during the hang ${i}`);
    const ids = new Map<string, string>();
    for (const [i, text] of texts.entries()) ids.set(text, await send(`+3706130000${i}`, text));
    await until('a full window at the hung SMSC', () => smsc.submits.filter((s) => s.duringHang).length >= WINDOW);
    // Several response timeouts and reconnect attempts later, still nothing more written.
    await new Promise((r) => setTimeout(r, 2500));
    const hungWrites = smsc.submits.filter((s) => s.duringHang);
    assert.equal(hungWrites.length, WINDOW, hungWrites.map((s) => s.text).join(', '));
    // Those are in doubt: failed, refunded, never written again.
    for (const w of hungWrites) {
      const failed = await waitStatus(ids.get(w.text)!, 'failed');
      assert.ok(String(failed.error_message).startsWith(IN_DOUBT_ERROR), failed.error_message);
    }

    smsc.hang(false);
    const rest = texts.filter((t) => !hungWrites.some((w) => w.text === t));
    for (const text of rest) {
      const [s] = await until(`${text} written after the hang`, () => {
        const mine = smsc.submits.filter((x) => x.text === text && !x.duringHang);
        return mine.length > 0 ? mine : undefined;
      }, 40_000);
      await waitStatus(ids.get(text)!, 'sent');
      assert.equal(await smsc.receipt(s!.id, 'DELIVRD'), 0);
      await waitStatus(ids.get(text)!, 'delivered');
    }
    assertEachTextOnce();
  });
});
