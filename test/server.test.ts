// The new-user path (issue "Done when"): start the real server process on a fresh embedded
// data directory, copy the printed credentials and curl, and get the documented answers.
// Then: graceful SIGTERM with a request in flight, a restart on the same data, the data-dir
// lock against a second process, and a clear exit on bad configuration.
// Always embedded: DATABASE_URL and REDIS_URL are removed from the child's environment.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Env } from './helpers/app.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { migratedDataDir } from './helpers/server-process.js';
import { nodeEntry } from './helpers/entry.js';

const START_TIMEOUT_MS = 180_000;

interface Server {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exit: Promise<number | null>;
}

const started: ChildProcess[] = [];

function newUserEnv(overrides: Env = {}): Env {
  const env: Env = { ...process.env };
  // What a fresh clone has: none of the service's settings, only the ones this test needs.
  for (const name of Object.keys(env)) {
    if (/^(DATABASE_|REDIS_|LOYALTY_|RATE_LIMIT_|JWT_|APP_TEST_PHONES|PUBLIC_BASE_URL|LOG_LEVEL|METRICS_|NODE_ENV|PORT|HOST)/.test(name)) {
      delete env[name];
    }
  }
  return { ...env, PORT: '0', HOST: '127.0.0.1', ...overrides };
}

function spawnServer(env: Env): Server {
  const child = spawn(process.execPath, nodeEntry('src/server.ts'), { env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exit };
}

/** Resolves with the first match of `re` on stdout; fails if the process exits first or time runs out. */
function waitForOutput(server: Server, re: RegExp, timeoutMs = START_TIMEOUT_MS): Promise<RegExpMatchArray> {
  return waitFor(server, (out) => re.exec(out) ?? undefined, String(re), timeoutMs);
}

/** Resolves when `test(stdout)` returns a value; fails if the process exits first or time runs out. */
function waitFor<T>(server: Server, test: (stdout: string) => T | undefined, what: string, timeoutMs = START_TIMEOUT_MS): Promise<T> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const found = test(server.stdout());
      if (found === undefined) return false;
      cleanup();
      resolve(found);
      return true;
    };
    const onExit = (code: number | null) => {
      if (check()) return;
      cleanup();
      reject(new Error(`server exited (${code}) before printing ${what}\nstdout:\n${server.stdout()}\nstderr:\n${server.stderr()}`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`timed out waiting for ${what}\nstdout:\n${server.stdout()}\nstderr:\n${server.stderr()}`));
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      server.child.stdout!.off('data', check);
      server.child.off('exit', onExit);
    };
    server.child.stdout!.on('data', check);
    server.child.on('exit', onExit);
    check();
  });
}

function exitWithin(server: Server, ms: number): Promise<number | null> {
  return Promise.race([
    server.exit,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no exit within ${ms} ms\n${server.stderr()}`)), ms).unref()),
  ]);
}

interface Banner {
  baseUrl: string;
  curlUrl: string;
  curlKey: string;
  curlSecret: string;
  key: string;
  secret: string;
  partnerEmail: string;
  partnerPassword: string;
}

/** Wait for the start banner and read what a new user would copy from it. */
async function banner(server: Server): Promise<Banner> {
  // The banner ends with the curl's secret header; wait for all of it.
  await waitForOutput(server, /-H "X-API-Secret: \S+"\n/);
  const text = server.stdout();
  const get = (re: RegExp) => {
    const m = re.exec(text);
    assert.ok(m, `banner has ${re}:\n${text}`);
    return m[1]!;
  };
  return {
    baseUrl: get(/is listening on (http:\/\/localhost:\d+)\n/),
    curlUrl: get(/curl -X POST (\S+) \\\n/),
    curlKey: get(/-H "X-API-Key: (\S+)"/),
    curlSecret: get(/-H "X-API-Secret: (\S+)"/),
    key: get(/API key: +(\S+)/),
    secret: get(/API secret: +(\S+)/),
    partnerEmail: get(/Partner: +(\S+) \//),
    partnerPassword: get(/Partner: +\S+ \/ (\S+)/),
  };
}

/** Fetch from the URL the banner printed (localhost) with the server bound to 127.0.0.1. */
const viaIpv4 = (url: string) => url.replace('//localhost:', '//127.0.0.1:');

describe('server process (new-user path, embedded)', () => {
  let dataDir: string;
  let first: Server;
  let b: Banner;

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'loyalty-server-'));
  });
  after(async () => {
    for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  it('refuses bad configuration with exit 1 and a message naming the variable', async () => {
    const cases: Array<[Env, RegExp]> = [
      [{ PORT: 'abc' }, /PORT/],
      [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
      [{ LOYALTY_ADMIN_EMAIL: 'ops@example.com' }, /LOYALTY_ADMIN_PASSWORD/],
    ];
    await Promise.all(
      cases.map(async ([overrides, re]) => {
        const s = spawnServer(newUserEnv({ LOYALTY_DATA_DIR: dataDir, ...overrides }));
        const code = await exitWithin(s, START_TIMEOUT_MS);
        assert.equal(code, 1, JSON.stringify(overrides));
        assert.match(s.stderr(), re);
        assert.match(s.stderr(), /Invalid configuration/);
        assert.doesNotMatch(s.stdout(), /is listening/);
      }),
    );
    // Nothing was started or locked.
    assert.equal(existsSync(path.join(dataDir, 'loyalty.pid')), false);
  });

  it('starts on a fresh data directory and prints the URL, docs and demo credentials', async () => {
    // At debug level the server also logs each request as it arrives, which the SIGTERM test
    // below waits for; everything else is what a new user sees.
    first = spawnServer(newUserEnv({ LOYALTY_DATA_DIR: dataDir, LOG_LEVEL: 'debug' }));
    b = await banner(first);
    assert.match(first.stdout(), /API docs: +http:\/\/localhost:\d+\/docs/);
    assert.match(first.stdout(), /Dashboard: +http:\/\/localhost:\d+\/dashboard\/ /);
    assert.equal(b.curlUrl, `${b.baseUrl}/en/shop/validate-credentials`);
    assert.equal(b.curlKey, b.key);
    assert.equal(b.curlSecret, b.secret);
    assert.match(first.stdout(), /Test customer: \+\d+ \(OTP code \d{6}\)/);
    assert.match(first.stdout(), /Coupon: +[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4} \(id \d+\), held by \+\d+/);
    // The credentials are kept beside the data for the next start, readable by the owner only.
    const file = path.join(dataDir, 'demo-credentials.json');
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    assert.equal(JSON.parse(await readFile(file, 'utf8')).api_key.key, b.key);
    // The data directory is locked by this process.
    assert.equal((await readFile(path.join(dataDir, 'loyalty.pid'), 'utf8')).trim(), String(first.child.pid));
  });

  it('the printed curl answers 200; wrong secret 1001; no headers 1004', async () => {
    const url = viaIpv4(b.curlUrl);
    const ok = await request(url, 'POST', '', { headers: { 'x-api-key': b.curlKey, 'x-api-secret': b.curlSecret } });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.data.valid, true);
    assert.equal(ok.body.data.partner.name, 'Demo Shop');

    const wrong = await request(url, 'POST', '', { headers: { 'x-api-key': b.curlKey, 'x-api-secret': `${b.curlSecret}x` } });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.code, 1001);

    const none = await request(url, 'POST', '');
    assert.equal(none.status, 401);
    assert.equal(none.body.code, 1004);
  });

  it('request logs carry the route pattern, never the path, the query string or the secret', async () => {
    const base = viaIpv4(b.baseUrl);
    await request(base, 'GET', '/en/shop/loyalty-cards/info?card_number=9123456789012345', { headers: apiHeaders(b) });
    // One `request completed` line per request: method, route, status and time together.
    const completed = (out: string) =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{') && l.endsWith('}'))
        .map((l) => JSON.parse(l) as { msg: string; request_id: string; req?: { method: string; route: string }; res?: { statusCode: number }; responseTime?: number })
        .filter((l) => l.msg === 'request completed' && l.req?.route === '/:locale/shop/loyalty-cards/info');
    const [line] = await waitFor(first, (out) => (completed(out).length > 0 ? completed(out) : undefined), 'the request log');
    assert.equal(line!.req!.method, 'GET');
    assert.equal(line!.res!.statusCode, 404);
    assert.equal(typeof line!.responseTime, 'number');
    // The log lines (JSON); the banner before them prints the demo credentials on purpose.
    const logLines = first.stdout().split('\n').filter((l) => l.startsWith('{'));
    assert.equal(logLines.filter((l) => l.includes(line!.request_id) && l.includes('"request completed"')).length, 1);
    assert.ok(!logLines.some((l) => l.includes('/en/shop/loyalty-cards/info')), 'no path in the log');
    assert.ok(!logLines.some((l) => l.includes('9123456789012345')), 'no query string in the log');
    assert.ok(!logLines.some((l) => l.includes(b.curlSecret)), 'the API secret is not logged');
  });

  it('/de/... is 404 and /lt/ and /en/ messages differ', async () => {
    const base = viaIpv4(b.baseUrl);
    const de = await request(base, 'POST', '/de/shop/validate-credentials', { headers: apiHeaders(b) });
    assert.equal(de.status, 404);
    assert.equal(de.body.success, false);
    const en = await request(base, 'POST', '/en/shop/validate-credentials', { headers: apiHeaders(b) });
    const lt = await request(base, 'POST', '/lt/shop/validate-credentials', { headers: apiHeaders(b) });
    assert.equal(lt.status, 200);
    assert.notEqual(en.body.message, lt.body.message);
    const enErr = await request(base, 'POST', '/en/shop/validate-credentials');
    const ltErr = await request(base, 'POST', '/lt/shop/validate-credentials');
    assert.notEqual(enErr.body.message, ltErr.body.message);
  });

  it('a second server on the same data directory exits 1 naming the directory', async () => {
    const second = spawnServer(newUserEnv({ LOYALTY_DATA_DIR: dataDir }));
    assert.equal(await exitWithin(second, START_TIMEOUT_MS), 1);
    assert.ok(second.stderr().includes(dataDir), second.stderr());
    assert.match(second.stderr(), /in use by process/);
    // The first server is unharmed and still owns the lock.
    const ok = await request(viaIpv4(b.baseUrl), 'GET', '/healthz');
    assert.equal(ok.status, 200);
    assert.equal((await readFile(path.join(dataDir, 'loyalty.pid'), 'utf8')).trim(), String(first.child.pid));
  });

  it('SIGTERM finishes the request in flight, closes the store and exits 0', async () => {
    const base = viaIpv4(b.baseUrl);
    const login = await request(base, 'POST', '/en/partners/auth/login', { json: { email: b.partnerEmail, password: b.partnerPassword } });
    assert.equal(login.status, 200, login.text);
    const token: string = login.body.data.token;

    // A request whose body is still arriving when the signal comes: its handler writes to
    // the database only after the server has begun shutting down.
    const body = JSON.stringify({ name: 'Opened during shutdown' });
    const requestsLogged = (out: string) => out.split('"incoming request"').length - 1;
    const requestsSoFar = requestsLogged(first.stdout());
    const inFlight = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(`${base}/en/partners/shops`, {
        method: 'POST',
        headers: { ...bearer(token), 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      });
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.write(body.slice(0, 5));
      // The server has the request once it logs it; then the signal, then the rest of the body.
      waitFor(first, (out) => (requestsLogged(out) > requestsSoFar ? true : undefined), 'the request log')
        .then(() => {
          first.child.kill('SIGTERM');
          return waitForOutput(first, /shutting down/);
        })
        .then(() => req.end(body.slice(5)), reject);
    });

    const res = await inFlight;
    assert.equal(res.status, 201, res.text);
    assert.equal(JSON.parse(res.text).data.name, 'Opened during shutdown');
    assert.equal(await exitWithin(first, 15_000), 0);
    // Its request log line is there too (logs are written asynchronously).
    if (!first.child.stdout!.readableEnded) await once(first.child.stdout!, 'end');
    assert.match(first.stdout(), /"route":"\/:locale\/partners\/shops"[^\n]*"statusCode":201[^\n]*"msg":"request completed"/);
    assert.equal(existsSync(path.join(dataDir, 'loyalty.pid')), false, 'the pid file is removed');
    assert.doesNotMatch(first.stderr(), /Error|failed/i);
  });

  it('a taken port is exit 1 with the reason, and the data directory is released', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const port = (blocker.address() as AddressInfo).port;
      const s = spawnServer(newUserEnv({ LOYALTY_DATA_DIR: dataDir, PORT: String(port) }));
      assert.equal(await exitWithin(s, START_TIMEOUT_MS), 1);
      assert.match(s.stderr(), /EADDRINUSE/);
      assert.equal(existsSync(path.join(dataDir, 'loyalty.pid')), false);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('a restart on the same data prints the same API key, which still works, and keeps the data', async () => {
    const again = spawnServer(newUserEnv({ LOYALTY_DATA_DIR: dataDir }));
    const b2 = await banner(again);
    assert.equal(b2.key, b.key);
    assert.equal(b2.secret, b.secret);
    const base = viaIpv4(b2.baseUrl);
    const ok = await request(base, 'POST', '/en/shop/validate-credentials', { headers: apiHeaders(b2) });
    assert.equal(ok.status, 200);
    // The shop written during the previous shutdown was committed.
    const shops = await request(base, 'GET', '/en/shop/shops', { headers: apiHeaders(b2) });
    assert.deepEqual(shops.body.data.map((s: { name: string }) => s.name).sort(), ['Demo Shop Vilnius', 'Opened during shutdown']);

    again.child.kill('SIGTERM');
    assert.equal(await exitWithin(again, 15_000), 0);
    assert.equal(existsSync(path.join(dataDir, 'loyalty.pid')), false);
  });
});

describe('server process with NODE_ENV=production (embedded)', () => {
  // One migrated, empty store for both starts (the first start on a fresh directory is the
  // new-user path's, above): which secrets are reported as generated depends on the
  // configuration only, and the second start sets them all.
  let dataDir: string;
  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'loyalty-prod-'));
    await migratedDataDir(dataDir);
  });
  after(async () => {
    for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  it('seeds no demo data, accepts no test phone, and warns about every generated secret', async () => {
    const s = spawnServer(newUserEnv({ LOYALTY_DATA_DIR: dataDir, NODE_ENV: 'production' }));
    await waitForOutput(s, /Store: .*\n\n/);
    const base = /is listening on (http:\/\/localhost:\d+)\n/.exec(s.stdout())![1];
    assert.doesNotMatch(s.stdout(), /Demo data|API key:|Test customer/);
    const warning = s
      .stdout()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: number; msg: string; generated?: string[] })
      .find((l) => l.generated);
    assert.ok(warning, s.stdout());
    assert.equal(warning.level, 40);
    assert.deepEqual(warning.generated, ['JWT_SECRET', 'REALTIME_APP_KEY/REALTIME_APP_SECRET']);
    // The development test phone is an ordinary number here: its "fixed code" is no code.
    const url = viaIpv4(base!);
    assert.equal((await request(url, 'POST', '/en/app/auth/otp/request', { json: { phone: '+37060000000' } })).status, 200);
    const verify = await request(url, 'POST', '/en/app/auth/otp/verify', { json: { phone: '+37060000000', code: '123456' } });
    assert.equal(verify.status, 401, verify.text);
    s.child.kill('SIGTERM');
    assert.equal(await exitWithin(s, 15_000), 0);
  });

  it('is quiet about secrets that are set explicitly', async () => {
    const s = spawnServer(
      newUserEnv({
        LOYALTY_DATA_DIR: dataDir,
        NODE_ENV: 'production',
        JWT_SECRET: 'j'.repeat(40),
        REALTIME_APP_ID: '1234',
        REALTIME_APP_KEY: 'key-prod',
        REALTIME_APP_SECRET: 's'.repeat(32),
      }),
    );
    await waitForOutput(s, /Store: .*\n\n/);
    assert.doesNotMatch(s.stdout(), /generated secrets/);
    s.child.kill('SIGTERM');
    assert.equal(await exitWithin(s, 15_000), 0);
  });
});
