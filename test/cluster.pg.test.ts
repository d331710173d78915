// WEB_CONCURRENCY=2: a supervisor and two workers sharing the port, on PostgreSQL + Redis
// (the configuration refuses it without them). What a client and an operator see: one
// banner, every worker answering with the same tokens and keys, a revoked key refused by
// every worker at once, a killed worker replaced, SIGTERM ending all of them cleanly.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { childEnv, startServerProcess, type ServerProcess } from './helpers/server-process.js';

const REDIS_URL = process.env.REDIS_URL;

/** A request on a connection of its own: the cluster hands each new connection to the next worker. */
function freshConnection(url: string, method: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The same with a JSON body, answering the status and the parsed reply. */
function freshJsonRequest(url: string, method: string, headers: Record<string, string>, json: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: { ...headers, 'content-type': 'application/json' }, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(json));
  });
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until<T>(what: string, timeoutMs: number, probe: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const startedPids = (out: string) => [...out.matchAll(/"worker_pid":(\d+)[^\n]*"msg":"worker started"/g)].map((m) => Number(m[1]));

describe('WEB_CONCURRENCY=2 (PostgreSQL + Redis)', () => {
  let db: TestDatabase;
  let server: ServerProcess;

  before(async () => {
    assert.ok(REDIS_URL, 'this test needs REDIS_URL as well as DATABASE_URL');
    db = await createTestDatabase();
    server = await startServerProcess(
      // The SMS dispatcher polls once a minute: only a wake gets a message out sooner.
      childEnv({ DATABASE_URL: db.url, REDIS_URL, WEB_CONCURRENCY: '2', LOYALTY_DEMO_SEED: 'true', RATE_LIMIT_DISABLED: 'true', SMS_DISPATCH_POLL_MS: '60000' }),
      120_000,
    );
  });
  after(async () => {
    if (server) {
      for (const pid of startedPids(server.stdout())) if (alive(pid)) process.kill(pid, 'SIGKILL');
      await server.kill('SIGKILL');
    }
    await db?.drop();
  });

  it('prints one banner naming both workers, and both workers start', async () => {
    const out = server.stdout();
    assert.equal(out.split('is listening on').length - 1, 1, out);
    assert.match(out, /Processes: +2 workers \(WEB_CONCURRENCY\)/);
    const pids = startedPids(out);
    assert.equal(new Set(pids).size, 2, out);
    assert.ok(!pids.includes(server.child.pid!));
  });

  it('every worker accepts the same token and key, and refuses a revoked key at once', async () => {
    const out = server.stdout();
    const email = /Partner:\s+(\S+) \/ (\S+)/.exec(out)!;
    const login = await request(server.url, 'POST', '/en/partners/auth/login', { json: { email: email[1], password: email[2] } });
    assert.equal(login.status, 200, login.text);
    const token: string = login.body.data.token;
    const issued = await request(server.url, 'POST', '/en/partners/api-keys', { headers: bearer(token), json: { name: 'Till on two workers' } });
    assert.equal(issued.status, 201, issued.text);
    const key = issued.body.data as { id: number; key: string; secret: string };

    // Eight new connections reach both workers in turn; each one knows the key and the token.
    const validate = () => freshConnection(`${server.url}/en/shop/validate-credentials`, 'POST', apiHeaders(key));
    const listKeys = () => freshConnection(`${server.url}/en/partners/api-keys`, 'GET', bearer(token));
    for (let i = 0; i < 8; i++) {
      assert.equal(await validate(), 200);
      assert.equal(await listKeys(), 200);
    }

    const revoked = await request(server.url, 'DELETE', `/en/partners/api-keys/${key.id}`, { headers: bearer(token) });
    assert.ok(revoked.status === 200 || revoked.status === 204, revoked.text);
    // Both workers had the key cached; the revoke reaches the other one through PostgreSQL.
    await until('every worker refuses the revoked key', 10_000, async () => {
      const statuses = await Promise.all(Array.from({ length: 8 }, validate));
      return statuses.every((s) => s === 401) ? true : undefined;
    });
  });

  it('replaces a worker that dies, and keeps answering meanwhile', async () => {
    const [victim] = startedPids(server.stdout());
    process.kill(victim!, 'SIGKILL');
    const replacement = await until('a replacement worker', 60_000, () => {
      const out = server.stdout();
      if (!/"msg":"worker died; starting another"/.test(out)) return undefined;
      return startedPids(out).find((pid) => pid !== victim && !startedPids(out).slice(0, 2).includes(pid));
    });
    assert.ok(alive(replacement));
    for (let i = 0; i < 6; i++) {
      assert.equal(await freshConnection(`${server.url}/healthz`, 'GET', {}), 200);
    }
  });

  it('SMS sent through either worker are handed to the carrier at once, by the one worker that runs the jobs', async () => {
    // The first worker ran the jobs and was killed above: its replacement runs them now.
    const out = server.stdout();
    const key = { key: /API key:\s+(\S+)/.exec(out)![1]!, secret: /API secret:\s+(\S+)/.exec(out)![1]! };
    // One at a time, each on a new connection (they reach both workers in turn), and each
    // handed over before the next is sent: none is taken along by a later send's wake.
    for (let i = 0; i < 4; i++) {
      const res = await freshJsonRequest(`${server.url}/en/sms/send`, 'POST', apiHeaders(key), {
        source: 'DemoShop',
        destination: `+3706120000${i}`,
        message: `two workers ${i}`,
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const id: string = res.body.data.message_id;
      await until(`message ${i} handed to the carrier`, 5_000, async () => {
        const status = await request(server.url, 'GET', `/en/sms/status/${id}`, { headers: apiHeaders(key) });
        return ['sent', 'delivered'].includes(status.body.data.status) ? true : undefined;
      });
    }
  });

  it('SIGTERM stops the workers and the supervisor, exit 0', async () => {
    const pids = startedPids(server.stdout()).filter(alive);
    assert.equal(pids.length, 2);
    assert.equal(await server.kill('SIGTERM'), 0, server.stderr());
    await until('the workers exit', 10_000, () => (pids.some(alive) ? undefined : true));
  });
});
