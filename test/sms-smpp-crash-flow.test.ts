// The SMPP kill -9 test of issue 20 (beside test/sms-smpp-crash.test.ts, which holds every answer): a
// real server process, the SMSC of test/helpers/smsc.ts, SIGKILL mid-flow, a restart on the same data.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { IN_DOUBT_ERROR } from '../src/modules/sms/dispatcher.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { processStore, startServerProcess, type ProcessStore } from './helpers/server-process.js';
import { createTestSmsc, waitFor, type TestSmsc } from './helpers/smsc.js';

const SENDS = 40;
const WINDOW = 5;
const FINAL = new Set(['delivered', 'failed', 'expired']);
// Issue 20, item 5: a part was recorded as handed over up to 50 ms ahead of its send slot, so a
// kill in those milliseconds left in doubt (failed, refunded) messages that never reached the
// SMSC. Here the SMSC answers every submit_sm after 200 ms and the throughput (16/s) spaces the parts
// 62.5 ms apart; the server is killed 0.95 s after the first submit_sm, mid-flow. After the
// restart every message is final within 60 s, each text reached the SMSC exactly once, and a
// message is in doubt only if its text was written to the SMSC before the kill.
describe('SMPP dispatch survives SIGKILL mid-flow', () => {
  let shared: ProcessStore;
  let smsc: TestSmsc;

  before(async () => {
    shared = await processStore('loyalty-smpp-crash-flow-');
    smsc = await createTestSmsc({ responseDelayMs: 200 });
  });
  after(async () => {
    await shared?.close();
    await smsc.close();
  });

  const env = () =>
    shared.env({
      SMS_CARRIER: 'smpp',
      SMPP_URL: smsc.url(),
      SMPP_WINDOW: String(WINDOW),
      SMPP_THROUGHPUT: '16',
      SMS_DISPATCH_POLL_MS: '20',
      SMS_IN_DOUBT_AFTER_MS: '2000',
    });

  it('puts in doubt only messages whose text was written before the kill; every other is sent once', async () => {
    smsc.refuseBinds(true);
    const first = await startServerProcess(env());
    shared.servers.push(first);
    const key = first.apiKey;
    assert.ok(key, 'the demo seed printed API credentials');
    await waitFor(() => smsc.stats.bindFailures > 0, 10_000, 'the server tried to bind');
    const texts = Array.from({ length: SENDS }, (_, i) => `mid-flow kill ${i}`);
    const sends = await Promise.all(
      texts.map((message, i) =>
        request(first.url, 'POST', '/en/sms/send', {
          headers: apiHeaders(key),
          json: { source: 'DemoShop', destination: `+3706120${String(i).padStart(4, '0')}`, message },
        }),
      ),
    );
    for (const res of sends) assert.equal(res.status, 200, res.text);
    const idByText = new Map(texts.map((text, i) => [text, sends[i]!.body.data.message_id as string]));
    smsc.refuseBinds(false);
    await waitFor(() => smsc.submits.length > 0, 30_000, 'the first submit_sm');
    await new Promise((r) => setTimeout(r, 950));
    await first.kill('SIGKILL');
    // What the killed process wrote is still in the SMSC's socket when its exit is seen (CI
    // failed on this once: a text read after the exit event was counted as never sent). The
    // stream ends after its last byte, so once the SMSC has seen the close it has read it all.
    await waitFor(() => smsc.openSessions === 0, 10_000, 'the SMSC saw the killed session close');
    const beforeKill = new Set(smsc.submits.map((s) => s.text));
    assert.ok(beforeKill.size > WINDOW && beforeKill.size < SENDS, `written before the kill: ${beforeKill.size}`);

    const second = await startServerProcess(env());
    shared.servers.push(second);
    const restartedAt = Date.now();
    const login = /Partner:\s+(\S+) \/ (\S+)/.exec(first.stdout());
    assert.ok(login, 'the demo seed printed partner credentials');
    const signedIn = await request(second.url, 'POST', '/en/partners/auth/login', { json: { email: login[1], password: login[2] } });
    assert.equal(signedIn.status, 200, signedIn.text);
    const receipted = new Set<string>();
    let pending = [...texts];
    while (pending.length > 0 && Date.now() - restartedAt < 60_000) {
      // The SMSC reports delivery of everything it accepted, before the kill or after.
      for (const s of smsc.submits.filter((x) => !receipted.has(x.messageId))) {
        if (smsc.stats.binds < 2 || !smsc.openSessions) break;
        receipted.add(s.messageId);
        await smsc.deliverReceipt(s.messageId, 'DELIVRD').catch(() => receipted.delete(s.messageId));
      }
      const res = await request(second.url, 'GET', '/en/partners/sms/messages?per_page=100', { headers: bearer(signedIn.body.data.token) });
      assert.equal(res.status, 200, res.text);
      const final = new Set((res.body.data as Array<{ message_id: string; status: string }>).filter((m) => FINAL.has(m.status)).map((m) => m.message_id));
      pending = texts.filter((t) => !final.has(idByText.get(t)!));
      if (pending.length > 0) await new Promise((r) => setTimeout(r, 200));
    }
    assert.deepEqual(pending, [], 'not final within 60 s of the restart');

    const submitted = new Map<string, number>();
    for (const s of smsc.submits) submitted.set(s.text, (submitted.get(s.text) ?? 0) + 1);
    assert.deepEqual(
      texts.filter((t) => submitted.get(t) !== 1).map((t) => `${t}: ${submitted.get(t) ?? 0}`),
      [],
      'texts not submitted exactly once',
    );
    let inDoubt = 0;
    for (const [text, id] of idByText) {
      const res = await request(second.url, 'GET', `/en/sms/status/${id}`, { headers: apiHeaders(key) });
      const s = res.body.data as { status: string; error_message: string | null };
      if (s.status === 'failed') {
        inDoubt++;
        assert.equal(s.error_message, IN_DOUBT_ERROR);
        assert.ok(beforeKill.has(text), `${text} is in doubt but never reached the SMSC before the kill`);
      } else {
        assert.equal(s.status, 'delivered', `${text}: ${JSON.stringify(s)}`);
      }
    }
    assert.ok(inDoubt <= WINDOW, `${inDoubt} in doubt`);
    assert.equal(await second.kill('SIGTERM'), 0);
  });
});
