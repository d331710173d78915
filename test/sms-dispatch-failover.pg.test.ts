// Issue 10, "a database blip", for SMS dispatch: two dispatchers (two apps on one PostgreSQL
// database, each with its own SMPP session to the test SMSC) dispatch 400 messages while every
// connection to their database is terminated again and again (a failover, a restarted
// pooler). No unhandled rejection or uncaught error; no part submitted twice; every message
// sent — or, where a commit's answer was lost with its connection, failed as in doubt and
// never sent twice — and dispatch goes on afterwards. PostgreSQL only.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { IN_DOUBT_ERROR } from '../src/modules/sms/dispatcher.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { createAdmin, type PartnerFixture } from './helpers/fixtures.js';
import { createSmsPartner, send } from './helpers/sms.js';
import { createTestSmsc, waitFor, type TestSmsc } from './helpers/smsc.js';

describe('SMS dispatch while PostgreSQL drops every connection', () => {
  let db: TestDatabase;
  let smsc: TestSmsc;
  let a: TestApp;
  let b: TestApp;
  let partner: PartnerFixture;

  before(async () => {
    db = await createTestDatabase();
    smsc = await createTestSmsc();
    const env = {
      SMS_CARRIER: 'smpp',
      SMPP_URL: smsc.url(),
      SMPP_WINDOW: '50',
      SMPP_THROUGHPUT: '10000',
      SMS_DISPATCH_POLL_MS: '10',
      SMS_IN_DOUBT_AFTER_MS: '1000',
    };
    a = await startTestApp(env, db, { workers: false });
    b = await startTestApp(env, db, { workers: false });
    const admin = await createAdmin(a);
    partner = await createSmsPartner(a, admin, { balance: '100' });
  });
  after(async () => {
    await a?.app.context.workers.smsDispatcher.stop();
    await b?.app.context.workers.smsDispatcher.stop();
    await a?.close();
    await b?.close();
    await smsc?.close();
    await db?.drop();
  });

  async function count(query: ReturnType<typeof sql>): Promise<number> {
    const res = (await db.database.db.execute(query)) as unknown as { rows: Array<{ n: number }> };
    return Number(res.rows[0]!.n);
  }

  it('survives the store dropping every connection mid-dispatch: nothing twice, nothing stuck, and it goes on', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    const dbName = new URL(db.url!).pathname.slice(1);
    const terminate = () =>
      admin.query('select count(pg_terminate_backend(pid)) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [dbName]);
    /** The test's own reads share the apps' pool: a read cut off is tried again. */
    const retrying = async <T>(fn: () => Promise<T>): Promise<T> => {
      for (let i = 0; ; i++) {
        try {
          return await fn();
        } catch (err) {
          if (i >= 20) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    };
    try {
      const submitsBefore = smsc.submits.length;
      const ids: string[] = [];
      for (let i = 0; i < 400; i += 20) {
        const batch = await Promise.all(
          Array.from({ length: 20 }, (_, j) =>
            send(a, partner, { source: 'Shop', destination: `+3706140${String(i + j).padStart(4, '0')}`, message: `#${i + j} storm` }),
          ),
        );
        for (const res of batch) {
          assert.equal(res.status, 200, res.text);
          ids.push(res.body.data.message_id);
        }
      }
      await Promise.all([a.app.context.workers.smsDispatcher.start(), b.app.context.workers.smsDispatcher.start()]);
      let cuts = 0;
      for (let i = 0; i < 10; i++) {
        await new Promise((r) => setTimeout(r, 100));
        cuts += Number((await terminate()).rows[0].count);
      }
      assert.ok(cuts > 0, 'connections were cut');

      const deadline = Date.now() + 60_000;
      let queued = ids.length;
      while (queued > 0 && Date.now() < deadline) {
        queued = await retrying(() => count(sql`select count(*)::int as n from sms_messages where status = 'queued'`));
        if (queued > 0) await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(queued, 0, 'every message left the queue');

      const states = await retrying(async () => {
        const res = (await db.database.db.execute(
          sql`select destination, status, error_message from sms_messages where id in ${ids}`,
        )) as unknown as { rows: Array<{ destination: string; status: string; error_message: string | null }> };
        return res.rows;
      });
      const submitted = new Map<string, number>();
      for (const s of smsc.submits.slice(submitsBefore)) submitted.set(`+${s.destination}`, (submitted.get(`+${s.destination}`) ?? 0) + 1);
      for (const m of states) {
        const n = submitted.get(m.destination) ?? 0;
        if (m.status === 'sent') {
          assert.equal(n, 1, `${m.destination} sent, submitted ${n} times`);
        } else {
          // The store cut the connection around a commit: the hand-over may have been recorded
          // without the dispatcher knowing. In doubt: failed, never sent twice.
          assert.equal(m.status, 'failed', `${m.destination}: ${m.status}`);
          assert.equal(m.error_message, IN_DOUBT_ERROR);
          assert.ok(n <= 1, `${m.destination} submitted ${n} times`);
        }
      }
      const inDoubt = states.filter((m) => m.status !== 'sent').length;
      assert.ok(inDoubt <= 2 * 50 * 10, `${inDoubt} in doubt`);

      // And dispatch goes on.
      const after = await send(a, partner, { source: 'Shop', destination: '+37061419999', message: 'after the storm' });
      assert.equal(after.status, 200, after.text);
      await waitFor(() => smsc.submits.some((s) => s.text === 'after the storm'), 20_000, 'a send after the storm handed over');
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await admin.end();
    }
  });
});
