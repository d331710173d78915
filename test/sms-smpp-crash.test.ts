// Issue 10, "kill -9 during SMPP dispatch": a real server process sends over SMPP to a real
// SMSC (the `smpp` package's server side, test/helpers/smsc.ts, in this process), is killed
// with SIGKILL while parts are on the wire and others wait, and restarts on the same data.
//
// 40 sends are accepted while the SMSC refuses binds (down for maintenance), so the dispatcher
// finds them all due at once when it binds (the old dispatcher marked a batch of 50 submitting
// and queued them behind the window). The SMSC receives submit_sm but holds every answer, so
// the window fills; the moment it holds SMPP_WINDOW unanswered parts — nothing more can
// leave — the server is killed. Then:
//   - the SMPP_WINDOW messages on the wire are in doubt: failed, refunded, never submitted again;
//   - every other message never left and is sent normally after the restart, once.
// Every accepted message reaches a final state and each text reaches the SMSC exactly once.
// Runs on the embedded store and, with DATABASE_URL, on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { openDatabase } from '../src/infra/db/index.js';
import { IN_DOUBT_ERROR } from '../src/modules/sms/dispatcher.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { processStore, startServerProcess, type ProcessStore } from './helpers/server-process.js';
import { createTestSmsc, waitFor, type TestSmsc } from './helpers/smsc.js';

const SENDS = 40;
const WINDOW = 5;
const PRICE = 0.029; // LT, the default price table
const FINAL = new Set(['delivered', 'failed', 'expired']);

describe('SMPP dispatch survives SIGKILL', () => {
  let shared: ProcessStore;
  let smsc: TestSmsc;

  before(async () => {
    shared = await processStore('loyalty-smpp-crash-');
    smsc = await createTestSmsc();
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
      SMPP_THROUGHPUT: '1000',
      SMS_DISPATCH_POLL_MS: '20',
      SMS_IN_DOUBT_AFTER_MS: '2000',
    });

  it('leaves only the parts on the wire in doubt, sends every other message once after the restart', async () => {
    smsc.holdResponses(true);
    smsc.refuseBinds(true);
    const first = await startServerProcess(env());
    shared.servers.push(first);
    assert.ok(first.apiKey, 'the demo seed printed API credentials');
    const key = first.apiKey;
    await waitFor(() => smsc.stats.bindFailures > 0, 10_000, 'the server tried to bind');

    const texts = Array.from({ length: SENDS }, (_, i) => `kill -9 test ${i}`);
    const sends = await Promise.all(
      texts.map((message, i) =>
        request(first.url, 'POST', '/en/sms/send', {
          headers: apiHeaders(key),
          json: { source: 'DemoShop', destination: `+3706110${String(i).padStart(4, '0')}`, message },
        }),
      ),
    );
    for (const res of sends) assert.equal(res.status, 200, res.text);
    const idByText = new Map(texts.map((text, i) => [text, sends[i]!.body.data.message_id as string]));
    assert.equal(smsc.submits.length, 0, 'nothing left while the SMSC was down');
    smsc.refuseBinds(false);

    // The window is full: SMPP_WINDOW parts at the SMSC, unanswered; nothing else can leave.
    await waitFor(() => smsc.outstanding === WINDOW, 30_000, 'a full window at the SMSC');
    await first.kill('SIGKILL');
    smsc.holdResponses(false);
    const onTheWire = smsc.submits.map((s) => s.text);
    assert.equal(onTheWire.length, WINDOW, `submitted before the kill: ${onTheWire.join(', ')}`);

    const second = await startServerProcess(env());
    shared.servers.push(second);
    // One request a round for every message's status: the partner's history.
    const login = /Partner:\s+(\S+) \/ (\S+)/.exec(first.stdout());
    assert.ok(login, 'the demo seed printed partner credentials');
    const signedIn = await request(second.url, 'POST', '/en/partners/auth/login', { json: { email: login[1], password: login[2] } });
    assert.equal(signedIn.status, 200, signedIn.text);
    const receipted = new Set<string>();
    let pending = [...texts];
    const deadline = Date.now() + 60_000;
    while (pending.length > 0 && Date.now() < deadline) {
      // The SMSC reports delivery of what it receives after the restart.
      for (const s of smsc.submits.filter((x) => x.sessionNo > 1 && !receipted.has(x.messageId))) {
        receipted.add(s.messageId);
        assert.equal(await smsc.deliverReceipt(s.messageId, 'DELIVRD'), 0);
      }
      const res = await request(second.url, 'GET', '/en/partners/sms/messages?per_page=100', { headers: bearer(signedIn.body.data.token) });
      assert.equal(res.status, 200, res.text);
      const final = new Set((res.body.data as Array<{ message_id: string; status: string }>).filter((m) => FINAL.has(m.status)).map((m) => m.message_id));
      pending = texts.filter((t) => !final.has(idByText.get(t)!));
      if (pending.length > 0) await new Promise((r) => setTimeout(r, 200));
    }
    assert.deepEqual(pending, [], 'not final after the restart');
    // As GET /sms/status reports them.
    const statuses = new Map<string, Record<string, any>>();
    for (const [text, id] of idByText) {
      const res = await request(second.url, 'GET', `/en/sms/status/${id}`, { headers: apiHeaders(key) });
      assert.equal(res.status, 200, res.text);
      statuses.set(text, res.body.data);
    }

    // Each text reached the SMSC exactly once: the ones on the wire before the kill never again.
    const submitted = new Map<string, number>();
    for (const s of smsc.submits) submitted.set(s.text, (submitted.get(s.text) ?? 0) + 1);
    assert.deepEqual(
      texts.filter((t) => submitted.get(t) !== 1).map((t) => `${t}: ${submitted.get(t) ?? 0}`),
      [],
      'texts not submitted exactly once',
    );
    for (const text of texts) {
      const s = statuses.get(text)!;
      if (onTheWire.includes(text)) {
        assert.equal(s.status, 'failed', `${text} was on the wire at the kill: ${JSON.stringify(s)}`);
        assert.equal(s.error_message, IN_DOUBT_ERROR);
      } else {
        assert.equal(s.status, 'delivered', `${text} never left before the kill: ${JSON.stringify(s)}`);
      }
    }
    assert.equal(await second.kill('SIGTERM'), 0);

    // The in-doubt messages, and only they, were refunded.
    const store = await openDatabase({ databaseUrl: shared.db?.url, databasePoolMax: 2, dataDir: shared.dataDir });
    try {
      const rows = async <T>(q: ReturnType<typeof sql>) => ((await store.db.execute(q)) as unknown as { rows: T[] }).rows;
      const refunds = await rows<{ message_id: string }>(sql`select message_id from sms_account_ledger where kind = 'refund'`);
      assert.deepEqual(refunds.map((r) => r.message_id).sort(), onTheWire.map((t) => idByText.get(t)!).sort());
      const [account] = await rows<{ balance: string }>(sql`select balance::text as balance from sms_accounts`);
      assert.equal(Number(account!.balance), Number((10 - (SENDS - WINDOW) * PRICE).toFixed(4)));
    } finally {
      await store.close();
    }
  });
});
