// Issue 10, "SMS exactly once across nodes": two dispatchers — two apps on one PostgreSQL
// database, each with its own SMPP session to the same SMSC (the `smpp` package's server
// side, test/helpers/smsc.ts) — start together on a queue of 300 due messages of one to
// three parts. Each part reaches the SMSC exactly once, and both dispatchers did part of the
// work. The guard is the claim's FOR UPDATE SKIP LOCKED: without it both nodes take the same
// rows and submit them twice. PostgreSQL only (PGlite runs one transaction at a time).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { createAdmin, type PartnerFixture } from './helpers/fixtures.js';
import { createSmsPartner, send } from './helpers/sms.js';
import { createTestSmsc, waitFor, type TestSmsc } from './helpers/smsc.js';

const MESSAGES = 300;

describe('two SMS dispatchers on one PostgreSQL', () => {
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
    };
    // Workers off: the queue fills first, then both dispatchers start at once.
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

  it('submits every part exactly once, the work shared between them', async () => {
    const bodies = Array.from({ length: MESSAGES }, (_, i) => ({
      source: 'Shop',
      destination: `+3706120${String(i).padStart(4, '0')}`,
      // One, two or three parts.
      message: `#${i} ${'two dispatchers '.repeat([1, 12, 20][i % 3]!)}`.trim(),
    }));
    const ids: string[] = [];
    let parts = 0;
    for (let i = 0; i < bodies.length; i += 20) {
      const batch = await Promise.all(bodies.slice(i, i + 20).map((body) => send(a, partner, body)));
      for (const res of batch) {
        assert.equal(res.status, 200, res.text);
        ids.push(res.body.data.message_id);
        parts += res.body.data.parts as number;
      }
    }
    assert.ok(parts > MESSAGES * 1.5, `a mix of multi-part messages (${parts} parts)`);

    await Promise.all([a.app.context.workers.smsDispatcher.start(), b.app.context.workers.smsDispatcher.start()]);
    await waitFor(() => smsc.openSessions === 2, 10_000, 'both dispatchers bound');
    const deadline = Date.now() + 60_000;
    let sent = 0;
    while (Date.now() < deadline) {
      sent = await count(sql`select count(*)::int as n from sms_messages where status <> 'queued'`);
      if (sent === MESSAGES) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(sent, MESSAGES, 'every message left the queue');
    assert.equal(await count(sql`select count(*)::int as n from sms_messages where status <> 'sent'`), 0, 'and was sent');

    // Every part once at the SMSC: one submit_sm per (destination, part number).
    const seen = new Map<string, number>();
    for (const s of smsc.submits) {
      const key = `${s.destination}#${s.udh ? s.udh[s.udh.length - 1] : 1}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    const twice = [...seen].filter(([, n]) => n > 1).map(([k, n]) => `${k} × ${n}`);
    assert.deepEqual(twice, [], 'parts submitted more than once');
    assert.equal(smsc.submits.length, parts, 'every part submitted');
    assert.equal(smsc.stats.submitSm, parts, 'and nothing else');
    assert.equal(
      await count(sql`select count(*)::int as n from sms_handovers where outcome = 'accepted'`),
      parts,
      'one accepted hand-over per part',
    );

    // Both nodes took part: the exactly-once above held under a real race.
    const bySession = new Map<number, number>();
    for (const s of smsc.submits) bySession.set(s.sessionNo, (bySession.get(s.sessionNo) ?? 0) + 1);
    assert.equal(bySession.size, 2, `submits per session: ${JSON.stringify([...bySession])}`);
    for (const [session, n] of bySession) assert.ok(n >= parts / 10, `session ${session} sent ${n} of ${parts} parts`);
  });
});
