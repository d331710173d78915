// Issue 3, "crash test": a server process is killed (SIGKILL) while messages are queued and
// being dispatched; after a restart on the same store every accepted message reaches a final
// state, and the carrier (the built-in simulator, whose hand-over is a row written in the
// dispatch transaction) was handed each message exactly once. Runs on the embedded store and,
// with DATABASE_URL, on PostgreSQL.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { openDatabase } from '../src/infra/db/index.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { apiHeaders, request } from './helpers/http.js';
import { childEnv, startServerProcess, type ServerProcess } from './helpers/server-process.js';

const FINAL = new Set(['delivered', 'failed', 'expired']);

describe('SMS dispatch survives SIGKILL', () => {
  let dataDir: string;
  let db: TestDatabase | undefined;
  const servers: ServerProcess[] = [];

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'loyalty-crash-'));
    if (process.env.DATABASE_URL) db = await createTestDatabase();
    // The test reads the store itself at the end; its own pool must not hold the database.
    await db?.database.close();
  });
  after(async () => {
    for (const s of servers) await s.kill('SIGKILL');
    if (db) await db.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const env = () =>
    childEnv({
      LOYALTY_DATA_DIR: dataDir,
      ...(db ? { DATABASE_URL: db.url } : {}),
      LOYALTY_DEMO_SEED: 'true',
      RATE_LIMIT_DISABLED: 'true',
      SMS_SIMULATOR_DELAY_MS: '300',
      SMS_DISPATCH_POLL_MS: '20',
    });

  it('delivers every accepted message once after a kill mid-dispatch', async () => {
    const first = await startServerProcess(env());
    servers.push(first);
    assert.ok(first.apiKey, 'the demo seed printed API credentials');
    const key = first.apiKey;

    // 100 sends in flight; the process is killed as soon as half of them were acknowledged,
    // so some messages are queued, some being handed over, some sent, some delivered.
    const accepted: string[] = [];
    let killed: Promise<unknown> | undefined;
    await Promise.allSettled(
      Array.from({ length: 100 }, async (_, i) => {
        const res = await request(first.url, 'POST', '/en/sms/send', {
          headers: apiHeaders(key),
          json: { source: 'DemoShop', destination: `+37061${String(100 + i).padStart(6, '0')}`, message: `crash test ${i}` },
        });
        assert.equal(res.status, 200, res.text);
        accepted.push(res.body.data.message_id);
        if (accepted.length === 50) killed ??= first.kill('SIGKILL');
      }),
    );
    await killed;
    assert.ok(accepted.length >= 50, `accepted ${accepted.length}`);

    const second = await startServerProcess(env());
    servers.push(second);
    const deadline = Date.now() + 30_000;
    const pending = new Set(accepted);
    while (pending.size > 0 && Date.now() < deadline) {
      for (const id of [...pending]) {
        const res = await request(second.url, 'GET', `/en/sms/status/${id}`, { headers: apiHeaders(key) });
        assert.equal(res.status, 200, `${id}: ${res.text}`);
        if (FINAL.has(res.body.data.status)) {
          assert.equal(res.body.data.status, 'delivered', `${id}: ${res.text}`);
          pending.delete(id);
        }
      }
      if (pending.size > 0) await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(pending.size, 0, `not final after restart: ${[...pending].join(', ')}`);
    assert.equal(await second.kill('SIGTERM'), 0);

    // Read the store directly: every message (acknowledged or not) was handed over at most
    // once, each accepted one exactly once, charged once, and sent once.
    const store = await openDatabase({ databaseUrl: db?.url, databasePoolMax: 2, dataDir });
    try {
      const rows = async <T>(q: ReturnType<typeof sql>) => ((await store.db.execute(q)) as unknown as { rows: T[] }).rows;
      const handed = await rows<{ message_id: string; n: number }>(
        sql`select m.id as message_id, count(s.message_id)::int as n from sms_messages m left join sms_simulator_submissions s on s.message_id = m.id group by m.id`,
      );
      const byId = new Map(handed.map((r) => [r.message_id, r.n]));
      for (const id of accepted) assert.equal(byId.get(id), 1, `${id} handed to the carrier ${byId.get(id)} times`);
      for (const [id, n] of byId) assert.ok(n <= 1, `${id} handed over ${n} times`);
      const sentEvents = await rows<{ n: number }>(
        sql`select count(*)::int as n from sms_status_events where status = 'sent' group by message_id having count(*) > 1`,
      );
      assert.equal(sentEvents.length, 0, 'a message became sent twice');
      const charges = await rows<{ n: number }>(
        sql`select count(*)::int as n from sms_account_ledger where kind = 'charge' group by message_id having count(*) > 1`,
      );
      assert.equal(charges.length, 0, 'a message was charged twice');
      const [balance] = await rows<{ ok: boolean }>(
        sql`select a.balance = 10 - (select count(*) from sms_messages) * 0.029 as ok from sms_accounts a`,
      );
      assert.equal(balance?.ok, true, 'the balance is 10 EUR less exactly one charge per stored message');
    } finally {
      await store.close();
    }
  });
});
