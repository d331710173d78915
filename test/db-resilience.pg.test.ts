// The database going away under the service: every connection terminated (a failover, a
// restarted pooler) and the server unreachable. The process must stay up, report itself
// not ready while the database is gone, recover on its own, and lose or double nothing
// it acknowledged. PostgreSQL only: PGlite runs in-process and cannot be cut off.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { openDatabase } from '../src/infra/db/index.js';
import { apiKeys } from '../src/modules/api-keys/api-keys.tables.js';
import { eq } from 'drizzle-orm';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { createPartner } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { childEnv, startServerProcess, type ServerProcess } from './helpers/server-process.js';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.js';

const TEST_PHONE = '+37060000077';
const TEST_CODE = '246810';

async function terminateBackends(adminUrl: string, database: string): Promise<number> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    const r = await c.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [database]);
    return r.rowCount ?? 0;
  } finally {
    await c.end();
  }
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('every backend terminated, repeatedly, under award load', () => {
  let db: TestDatabase;
  let server: ServerProcess;
  let dbName: string;

  before(async () => {
    db = await createTestDatabase();
    dbName = new URL(db.url!).pathname.slice(1);
    server = await startServerProcess(
      childEnv({
        DATABASE_URL: db.url,
        LOYALTY_DEMO_SEED: 'true',
        // The demo seed gives the first test phone a card; this test signs a second one in.
        APP_TEST_PHONES: `+37060000000:123456,${TEST_PHONE}:${TEST_CODE}`,
        RATE_LIMIT_DISABLED: 'true',
        JWT_SECRET: randomBytes(32).toString('hex'),
        LOG_LEVEL: 'warn',
      }),
    );
  });
  after(async () => {
    await server?.kill('SIGKILL');
    await db?.drop();
  });

  it('stays alive, recovers within 10 s and keeps exactly the acknowledged awards', async () => {
    const out = server.stdout();
    const shopId = Number(/Shop:\s+#(\d+)/.exec(out)![1]);
    const programmeId = Number(/partner card programme #(\d+)/.exec(out)![1]);
    const api = apiHeaders(server.apiKey!);
    await request(server.url, 'POST', '/en/app/auth/otp/request', { json: { phone: TEST_PHONE } });
    const login = await request(server.url, 'POST', '/en/app/auth/otp/verify', { json: { phone: TEST_PHONE, code: TEST_CODE } });
    assert.equal(login.status, 200, login.text);
    const joined = await request(server.url, 'POST', '/en/shop/loyalty-cards', {
      headers: bearer(login.body.data.token),
      json: { partner_card_id: programmeId },
    });
    assert.equal(joined.status, 201, joined.text);
    const card = joined.body.data as { id: number; points_balance: number };

    let stop = false;
    let failures = 0;
    const acknowledged = new Map<string, number>();
    // Each award carries an Idempotency-Key and is retried with it until acknowledged: an
    // award whose answer was lost with its connection is then neither lost nor doubled.
    const client = async (n: number) => {
      for (let i = 0; !stop; i++) {
        const key = `blip-${n}-${i}`;
        for (;;) {
          const res = await request(server.url, 'POST', '/en/shop/transactions/create', {
            headers: { ...api, 'idempotency-key': key },
            json: { card_id: card.id, shop_id: shopId, amount: 10 + n },
          }).catch(() => undefined);
          if (res?.status === 201) {
            acknowledged.set(key, res.body.data.points);
            break;
          }
          failures++;
          // A dropped connection is 503 (retry), a retry racing its own first attempt 409.
          assert.ok(!res || res.status === 503 || res.status === 409, `an award may fail with 503 or 409 only: ${res?.status} ${res?.text}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    };
    const clients = Array.from({ length: 8 }, (_, n) => client(n));

    let terminated = 0;
    for (let round = 0; round < 8; round++) {
      await new Promise((r) => setTimeout(r, 300));
      terminated += await terminateBackends(db.url!, dbName);
      assert.equal(server.child.exitCode, null, `the process died:\n${server.stderr()}`);
    }
    const lastBlip = Date.now();
    assert.ok(terminated > 0);

    // Recovery: an award and readiness within 10 s of the last termination.
    await until('readyz 200', 10_000, async () => ((await request(server.url, 'GET', '/readyz')).status === 200 ? true : undefined));
    const countAtRecovery = acknowledged.size;
    await until('a new award acknowledged', 10_000 - (Date.now() - lastBlip), async () => (acknowledged.size > countAtRecovery ? true : undefined));
    stop = true;
    await Promise.all(clients);

    assert.equal(server.child.exitCode, null, `the process died:\n${server.stderr()}`);
    assert.ok(failures > 0, 'the terminations reached the service');
    const expected = card.points_balance + [...acknowledged.values()].reduce((a, b) => a + b, 0);
    const balance = await request(server.url, 'GET', `/en/shop/points/card/${card.id}/balance`, { headers: api });
    assert.equal(balance.status, 200, balance.text);
    assert.equal(balance.body.data.points_balance, expected);
  });
});

describe('the database unreachable, then back', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let t: TestApp;

  before(async () => {
    db = await createTestDatabase();
    const target = new URL(db.url!);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const viaProxy = new URL(db.url!);
    viaProxy.port = String(proxy.port);
    const database = await openDatabase({ databaseUrl: viaProxy.toString(), databasePoolMax: 4, dataDir: '' });
    t = await startTestApp({ DATABASE_URL: viaProxy.toString() }, { database, url: viaProxy.toString(), drop: () => database.close() });
  });
  after(async () => {
    await t?.close();
    await proxy?.close();
    await db?.drop();
  });

  it('answers /readyz 503 while the database is gone and 200 again after; a key revoked meanwhile is refused', async () => {
    const partner = await createPartner(t);
    const api = apiHeaders(partner.apiKey);
    assert.equal((await request(t.url, 'POST', '/en/shop/validate-credentials', { headers: api })).status, 200);
    assert.equal((await request(t.url, 'GET', '/readyz')).status, 200);

    await proxy.cut();
    const down = await until('readyz 503', 10_000, async () => {
      const r = await request(t.url, 'GET', '/readyz');
      return r.status === 503 ? r : undefined;
    });
    assert.equal(down.headers.get('x-request-id') !== null, true);
    const during = await request(t.url, 'POST', '/en/shop/validate-credentials', { headers: api });
    assert.equal(during.status, 503, during.text);
    assert.equal(during.headers.get('retry-after'), '1');
    assert.equal(during.body.success, false);
    assert.equal(during.body.request_id, during.headers.get('x-request-id'));

    // Revoked while this node cannot hear the NOTIFY (straight to PostgreSQL, not through the relay).
    const direct = await openDatabase({ databaseUrl: db.url!, databasePoolMax: 1, dataDir: '' });
    try {
      await direct.db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.key, partner.apiKey.key));
    } finally {
      await direct.close();
    }

    await proxy.restore();
    await until('readyz 200', 10_000, async () => ((await request(t.url, 'GET', '/readyz')).status === 200 ? true : undefined));
    const afterwards = await request(t.url, 'POST', '/en/shop/validate-credentials', { headers: api });
    assert.equal(afterwards.status, 401, afterwards.text);
    assert.equal(afterwards.body.code, 1001);
  });
});
