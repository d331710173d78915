// HTTP benchmark (`npm run bench:http`): requests/s of authenticated requests on the real
// Loyalty server against a bare Fastify 5 route, in the same run, with the same load
// (autocannon, 32 connections by default). Two authenticated requests, as users send them:
//   API key:  `POST /en/shop/validate-credentials` (X-API-Key + X-API-Secret), a till;
//   bearer:   `GET /en/partners/auth/me` (a partner's JWT), the console (one partner read).
// Rate limits are ON, as users run: every connection (a till, a console) has its own API key
// and its own partner token, so each is limited under its own key; the per-key limits are
// raised (RATE_LIMIT_{API,PARTNER}_PER_MINUTE/_PER_HOUR) so that the load is never refused —
// every request still takes its points from the limiter (in Redis when REDIS_URL is set).
//
// Each server runs in its own child process, so the load generator (this process) and the
// server under test each get a core of a 2-core machine. The servers are loaded one at a
// time, never together (the others are frozen with SIGSTOP meanwhile), each after a
// warm-up that is discarded. With BENCH_ROUNDS > 1 the targets take turns round after
// round, so that whatever else the machine is doing disturbs both alike.
//
// Settings (environment):
//   BENCH_DURATION=10       seconds measured per target (per round)
//   BENCH_WARMUP=3          seconds of discarded warm-up per target
//   BENCH_CONNECTIONS=32    concurrent connections
//   BENCH_ROUNDS=1          measure every target this many times, alternating
//   BENCH_LOG_LEVEL=info    Loyalty's LOG_LEVEL (default info, as users run it: one request log line
//                           per request, stdout to a file)
//   BENCH_ALSO_WARN=1       also measure a second Loyalty at LOG_LEVEL=warn (no request logs)
//   WEB_CONCURRENCY=N       Loyalty's worker processes (N > 1 needs DATABASE_URL and REDIS_URL)
//   BENCH_QUIET_WAIT=0      on a shared machine: before each measurement, wait up to this many
//                           seconds for the machine to be idle (< 10% of a core busy for 1 s)
//   BENCH_SKIP_BUILD=1      use the existing dist/ instead of running `npm run build`
//   BENCH_LOYALTY_ENTRY     the server script (default dist/server.js), e.g. a patched build
//   BENCH_LOYALTY_NODE_ARGS extra node flags for Loyalty, e.g. "--cpu-prof --cpu-prof-dir=prof"
//   BENCH_BARE_NODE_ARGS    the same for the bare Fastify server
//   DATABASE_URL            use PostgreSQL: a scratch database (BENCH_DATABASE, default
//                           loyalty_bench) is dropped, created, seeded, and dropped at the end.
//                           Without it, a fresh embedded PGlite in a temporary directory.
//   REDIS_URL               passed through to Loyalty when set (the rate limiter counts there).
//   BENCH_RATE_LIMITS=off   the old setting: RATE_LIMIT_DISABLED=true (no limiter at all)
//   BENCH_BEARER=0          measure the API-key request only
//
// Exits 1 if a single response is not 2xx, or on connection errors or timeouts.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon, { type Result } from 'autocannon';
import pg from 'pg';
import { RAISED_LIMITS } from './postgres.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const env = process.env;

function intSetting(name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min} (got "${raw}")`);
  return n;
}

const flag = (name: string) => ['1', 'true', 'yes', 'on'].includes((env[name] ?? '').toLowerCase());
const words = (name: string) => (env[name] ?? '').split(/\s+/).filter(Boolean);

const settings = {
  duration: intSetting('BENCH_DURATION', 10, 1),
  warmup: intSetting('BENCH_WARMUP', 3, 0),
  connections: intSetting('BENCH_CONNECTIONS', 32, 1),
  rounds: intSetting('BENCH_ROUNDS', 1, 1),
  logLevel: (env.BENCH_LOG_LEVEL?.trim() || 'info') as 'info' | 'warn',
  alsoWarn: flag('BENCH_ALSO_WARN'),
  webConcurrency: intSetting('WEB_CONCURRENCY', 1, 1),
  quietWait: intSetting('BENCH_QUIET_WAIT', 0, 0),
  skipBuild: flag('BENCH_SKIP_BUILD'),
  loyaltyEntry: env.BENCH_LOYALTY_ENTRY?.trim() || 'dist/server.js',
  loyaltyNodeArgs: words('BENCH_LOYALTY_NODE_ARGS'),
  bareNodeArgs: words('BENCH_BARE_NODE_ARGS'),
  databaseUrl: env.DATABASE_URL?.trim() || undefined,
  databaseName: env.BENCH_DATABASE?.trim() || 'loyalty_bench',
  redisUrl: env.REDIS_URL?.trim() || undefined,
  rateLimits: (env.BENCH_RATE_LIMITS ?? 'on').trim().toLowerCase() !== 'off',
  bearer: (env.BENCH_BEARER ?? '1').trim() !== '0',
};

const STARTUP_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 15_000;
const say = (line: string) => process.stdout.write(`${line}\n`);

// ---------------------------------------------------------------------------------------
// Child processes

interface Child {
  name: string;
  proc: ChildProcess;
  /** The child's stdout (banner, and request logs when enabled) goes to this file. */
  stdoutFile: string;
  stderr: () => string;
  exited: Promise<number | null>;
}

const children = new Set<Child>();

function startChild(name: string, args: string[], childEnv: NodeJS.ProcessEnv, stdoutFile: string): Child {
  // A file rather than a pipe: the child's log output must not cost this process (which
  // drives the load) any CPU.
  const out = openSync(stdoutFile, 'w');
  const proc = spawn(process.execPath, args, { cwd: ROOT, env: childEnv, stdio: ['ignore', out, 'pipe'] });
  closeSync(out);
  let stderr = '';
  proc.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-20_000);
  });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const child: Child = { name, proc, stdoutFile, stderr: () => stderr, exited };
  children.add(child);
  void exited.then(() => children.delete(child));
  return child;
}

function describeFailure(child: Child): string {
  const out = existsSync(child.stdoutFile) ? readFileSync(child.stdoutFile, 'utf8').slice(-4000) : '';
  return `--- ${child.name} stdout ---\n${out}\n--- ${child.name} stderr ---\n${child.stderr()}`;
}

/** Poll the child's stdout until `parse` recognises it, the child exits, or time runs out. */
async function waitFor<T>(child: Child, parse: (stdout: string) => T | undefined): Promise<T> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  let exitCode: number | null | undefined;
  void child.exited.then((code) => {
    exitCode = code;
  });
  for (;;) {
    const text = await readFile(child.stdoutFile, 'utf8').catch(() => '');
    const parsed = parse(text);
    if (parsed !== undefined) return parsed;
    if (exitCode !== undefined) throw new Error(`${child.name} exited (code ${exitCode}) before it was ready\n${describeFailure(child)}`);
    if (Date.now() > deadline) throw new Error(`${child.name} not ready after ${STARTUP_TIMEOUT_MS / 1000} s\n${describeFailure(child)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Freeze (SIGSTOP) or resume (SIGCONT) a server. The servers not under load are frozen
 * while another is measured: Loyalty's background workers poll the database a few times a
 * second, which would otherwise take CPU from the server being measured.
 */
function freeze(child: Child, frozen: boolean): void {
  if (process.platform === 'win32' || child.proc.exitCode !== null || child.proc.signalCode !== null) return;
  child.proc.kill(frozen ? 'SIGSTOP' : 'SIGCONT');
}

async function stopChild(child: Child): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) return;
  freeze(child, false);
  child.proc.kill('SIGTERM');
  const timer = setTimeout(() => child.proc.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await child.exited;
  clearTimeout(timer);
}

const stopAll = () => Promise.all([...children].map(stopChild)).then(() => undefined);

const listeningPort = (text: string): number | undefined => {
  const m = /is listening on https?:\/\/[^\s:/]+:(\d+)/.exec(text);
  return m ? Number(m[1]) : undefined;
};

// ---------------------------------------------------------------------------------------
// CPU accounting (Linux /proc; elsewhere the CPU columns read n/a)

const USER_HZ = 100; // clock ticks per second of /proc/*/stat, 100 on every mainstream Linux

/** CPU seconds (user + system, all threads) a process has used so far. */
function ownCpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks / USER_HZ : undefined;
  } catch {
    return undefined;
  }
}

/** The running children of a process (its cluster workers, with WEB_CONCURRENCY > 1). */
function childPids(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

/**
 * CPU seconds a server has used so far: the process and its running children (the workers of
 * a cluster supervisor, which alone uses next to nothing).
 */
function processCpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined || process.platform !== 'linux') return undefined;
  const own = ownCpuSeconds(pid);
  if (own === undefined) return undefined;
  return childPids(pid).reduce((sum, child) => sum + (ownCpuSeconds(child) ?? 0), own);
}

/** Busy CPU seconds of the whole machine (all cores) so far. */
function machineBusySeconds(): number | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    // cpu  user nice system idle iowait irq softirq steal …
    const v = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
    const busy = v[0]! + v[1]! + v[2]! + v[5]! + v[6]! + v[7]!;
    return Number.isFinite(busy) ? busy / USER_HZ : undefined;
  } catch {
    return undefined;
  }
}

/** Wait (up to BENCH_QUIET_WAIT seconds) until nothing else keeps the machine busy. */
async function waitForQuiet(label: string): Promise<void> {
  if (settings.quietWait === 0 || machineBusySeconds() === undefined) return;
  const deadline = Date.now() + settings.quietWait * 1000;
  let announced = false;
  for (;;) {
    const before = machineBusySeconds()!;
    await new Promise((r) => setTimeout(r, 1000));
    const busy = machineBusySeconds()! - before;
    if (busy < 0.1) return;
    if (Date.now() > deadline) {
      say(`  ${label}: the machine is still busy (${Math.round(busy * 100)}% of a core); measuring anyway`);
      return;
    }
    if (!announced) say(`  ${label}: waiting for the machine to be idle (${Math.round(busy * 100)}% of a core busy)…`);
    announced = true;
  }
}

// ---------------------------------------------------------------------------------------
// Targets and measurements

interface Sample {
  rps: number;
  p50: number;
  p95: number;
  p99: number;
  ok: number;
  wall: number;
  serverCpu: number | undefined;
  loadCpu: number;
  machineCpu: number | undefined;
}

interface Target {
  id: 'bare' | 'loyalty' | 'loyalty_warn' | 'loyalty_info' | 'loyalty_bearer';
  label: string;
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** Headers of connection n (its own API key or token); `headers` when absent. */
  perConnection?: Array<Record<string, string>>;
  child: Child;
  samples: Sample[];
}

function assertClean(label: string, phase: string, r: Result): void {
  if (r.non2xx === 0 && r.errors === 0 && r.timeouts === 0 && r['2xx'] > 0) return;
  const codes = Object.entries(r.statusCodeStats)
    .map(([code, s]) => `${code}×${s.count}`)
    .join(', ');
  throw new Error(
    `${label} (${phase}): ${r['2xx']} responses 2xx, ${r.non2xx} not 2xx [${codes}], ${r.errors} errors, ` +
      `${r.timeouts} timeouts — the measurement is invalid`,
  );
}

/** autocannon's client, as far as setupClient uses it. */
interface LoadClient {
  setHeaders(headers: Record<string, string>): void;
  on(event: 'response', listener: (status: number, bytes: number, ms: number) => void): void;
}

/**
 * The load of one run: connection n sends target's headers n. `latencies` collects every
 * response time in ms (autocannon's own percentiles have 1 ms steps and no p95).
 */
const loadOf = (t: Target, duration: number, latencies?: number[]) => {
  let n = 0;
  return {
    url: t.url,
    method: t.method,
    headers: t.headers,
    connections: settings.connections,
    pipelining: 1,
    timeout: 10,
    duration,
    setupClient: (client: LoadClient) => {
      const own = t.perConnection?.[n++ % t.perConnection.length];
      if (own) client.setHeaders(own);
      if (latencies) client.on('response', (_status, _bytes, ms) => latencies.push(ms));
    },
  };
};

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function warmUp(t: Target): Promise<void> {
  if (settings.warmup === 0) return;
  say(`  ${t.label}: warming up ${settings.warmup} s…`);
  assertClean(t.label, 'warm-up', await autocannon(loadOf(t, settings.warmup)));
}

/** Run `fn` with every other server frozen. */
async function alone<T>(t: Target, all: Target[], fn: () => Promise<T>): Promise<T> {
  // Targets served by one server (API key and bearer) share its process.
  const others = [...new Set(all.filter((o) => o.child !== t.child).map((o) => o.child))];
  for (const o of others) freeze(o, true);
  try {
    return await fn();
  } finally {
    for (const o of others) freeze(o, false);
  }
}

async function sample(t: Target, round: number): Promise<void> {
  await waitForQuiet(t.label);
  const of = settings.rounds > 1 ? ` (round ${round}/${settings.rounds})` : '';
  say(`  ${t.label}: measuring ${settings.duration} s at ${settings.connections} connections${of}…`);
  const server0 = processCpuSeconds(t.child.proc.pid);
  const machine0 = machineBusySeconds();
  const load0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const latencies: number[] = [];
  const r = await autocannon(loadOf(t, settings.duration, latencies));
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const server1 = processCpuSeconds(t.child.proc.pid);
  const machine1 = machineBusySeconds();
  const load = process.cpuUsage(load0);
  assertClean(t.label, `measured run${of}`, r);
  latencies.sort((a, b) => a - b);
  t.samples.push({
    rps: r.requests.mean,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
    ok: r['2xx'],
    wall,
    serverCpu: server0 !== undefined && server1 !== undefined ? server1 - server0 : undefined,
    loadCpu: (load.user + load.system) / 1e6,
    machineCpu: machine0 !== undefined && machine1 !== undefined ? machine1 - machine0 : undefined,
  });
}

/** One request by hand before loading: the exact answer, not only a status count. */
async function checkOnce(
  url: string,
  headers: Record<string, string>,
  check: (status: number, body: unknown) => string | undefined,
  method: 'GET' | 'POST' = 'POST',
) {
  const res = await fetch(url, { method, headers });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // the check reports it
  }
  const problem = check(res.status, body);
  if (problem) throw new Error(`${method} ${url} → ${res.status} ${text.slice(0, 500)}: ${problem}`);
}

// ---------------------------------------------------------------------------------------
// Servers

async function startBare(tmp: string): Promise<Target> {
  const childEnv: NodeJS.ProcessEnv = { ...env, NODE_ENV: 'production', PORT: '0' };
  const args = [...settings.bareNodeArgs, '--import', 'tsx', 'bench/bare-fastify.ts'];
  const child = startChild('bare Fastify', args, childEnv, path.join(tmp, 'bare.out'));
  const port = await waitFor(child, listeningPort);
  const url = `http://127.0.0.1:${port}/`;
  // The same request headers as the Loyalty requests, so both servers parse the same request.
  const headers = { 'x-api-key': 'lk_bench', 'x-api-secret': 'lsk_bench' };
  await checkOnce(url, headers, (status) => (status === 200 ? undefined : 'expected 200'));
  return { id: 'bare', label: 'bare Fastify POST /', url, method: 'POST', headers, child, samples: [] };
}

interface Credentials {
  key: string;
  secret: string;
  partnerEmail: string;
  partnerPassword: string;
}

function parseCredentials(text: string): Credentials | undefined {
  const key = /^\s*API key:\s+(\S+)/m.exec(text)?.[1];
  const secret = /^\s*API secret:\s+(\S+)/m.exec(text)?.[1];
  const partner = /^\s*Partner:\s+(\S+) \/ (\S+)/m.exec(text);
  return key && secret && partner ? { key, secret, partnerEmail: partner[1]!, partnerPassword: partner[2]! } : undefined;
}

async function call(base: string, method: string, url: string, headers: Record<string, string>, json?: unknown) {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: { ...headers, ...(json !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url} → ${res.status} ${text.slice(0, 500)}`);
  return (JSON.parse(text) as { data: Record<string, unknown> }).data;
}

/**
 * One API key and one partner token per connection, as many tills and consoles send: each is
 * rate-limited under its own key. Made once, on the first instance (the others share them on
 * PostgreSQL; on PGlite each instance has its own database and makes its own).
 */
async function clientCredentials(base: string, creds: Credentials, n: number) {
  const tokens: string[] = [];
  const keys: Array<{ key: string; secret: string }> = [];
  for (let i = 0; i < n; i++) {
    const signedIn = await call(base, 'POST', '/en/partners/auth/login', {}, { email: creds.partnerEmail, password: creds.partnerPassword });
    tokens.push(String(signedIn.token));
  }
  for (let i = 0; i < n; i++) {
    const made = await call(base, 'POST', '/en/partners/api-keys', { authorization: `Bearer ${tokens[0]}` }, { name: `bench till ${i + 1}` });
    keys.push({ key: String(made.key), secret: String(made.secret) });
  }
  return { tokens, keys };
}

interface Store {
  label: string;
  /** Environment of one Loyalty instance (embedded: each its own data directory). */
  envFor: (instance: string) => NodeJS.ProcessEnv;
  cleanup: () => Promise<void>;
}

async function prepareStore(tmp: string): Promise<Store> {
  if (!settings.databaseUrl) {
    return {
      label: `embedded PGlite (fresh, under ${tmp})`,
      envFor: (instance) => ({ LOYALTY_DATA_DIR: path.join(tmp, `data-${instance}`), LOYALTY_DEMO_SEED: 'true' }),
      cleanup: async () => undefined,
    };
  }
  const name = settings.databaseName;
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`BENCH_DATABASE must be a plain lower-case identifier (got "${name}")`);
  const base = new URL(settings.databaseUrl);
  if (decodeURIComponent(base.pathname.slice(1)) === name) {
    throw new Error(`DATABASE_URL must name another database than the scratch database "${name}" (that one is dropped)`);
  }
  const scratch = new URL(settings.databaseUrl);
  scratch.pathname = `/${name}`;
  const run = async (statement: string) => {
    const client = new pg.Client({ connectionString: settings.databaseUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await run(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await run(`CREATE DATABASE "${name}"`);
  return {
    label: `PostgreSQL, scratch database "${name}" on ${base.host}`,
    envFor: () => ({ DATABASE_URL: scratch.toString(), LOYALTY_DEMO_SEED: 'true' }),
    cleanup: () => run(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

async function startLoyalty(tmp: string, store: Store, logLevel: 'warn' | 'info', known: Credentials | undefined) {
  const childEnv: NodeJS.ProcessEnv = { ...env };
  for (const k of ['DATABASE_URL', 'LOYALTY_DATA_DIR', 'PUBLIC_BASE_URL', 'METRICS_ENABLED', 'REDIS_URL']) delete childEnv[k];
  Object.assign(childEnv, store.envFor(logLevel), {
    ...(settings.redisUrl ? { REDIS_URL: settings.redisUrl } : {}),
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: '0',
    ...(settings.rateLimits ? RAISED_LIMITS : { RATE_LIMIT_DISABLED: 'true' }),
    LOG_LEVEL: logLevel,
    WEB_CONCURRENCY: String(settings.webConcurrency),
  });
  const stdoutFile = path.join(tmp, `loyalty-${logLevel}.out`);
  const child = startChild(`Loyalty (LOG_LEVEL=${logLevel})`, [...settings.loyaltyNodeArgs, settings.loyaltyEntry], childEnv, stdoutFile);
  const { port, creds } = await waitFor(child, (text) => {
    const port = listeningPort(text);
    if (port === undefined) return undefined;
    // The banner is written in one piece: credentials missing from it will not come later
    // (PostgreSQL mode prints them only when it seeded an empty database).
    const creds = parseCredentials(text) ?? known;
    if (!creds) throw new Error(`Loyalty printed no demo API key/secret\n${describeFailure(child)}`);
    return { port, creds };
  });
  const base = `http://127.0.0.1:${port}`;
  const url = `${base}/en/shop/validate-credentials`;
  const headers = { 'x-api-key': creds.key, 'x-api-secret': creds.secret };
  await checkOnce(url, headers, (status, body) => {
    const b = body as { success?: unknown; data?: { valid?: unknown } } | undefined;
    return status === 200 && b?.success === true && b.data?.valid === true ? undefined : 'expected 200 with data.valid = true';
  });
  await checkOnce(url, { ...headers, 'x-api-secret': `${creds.secret}x` }, (status) =>
    status === 401 ? undefined : 'a wrong secret must be refused with 401',
  );
  const clients = await clientCredentials(base, creds, settings.connections);
  const apiHeadersOf = (k: { key: string; secret: string }) => ({ 'x-api-key': k.key, 'x-api-secret': k.secret });
  const main = logLevel === settings.logLevel;
  const target: Target = {
    id: main ? 'loyalty' : `loyalty_${logLevel}`,
    label: `Loyalty POST /en/shop/validate-credentials (API key), LOG_LEVEL=${logLevel}`,
    url,
    method: 'POST',
    headers,
    perConnection: clients.keys.map(apiHeadersOf),
    child,
    samples: [],
  };
  let bearer: Target | undefined;
  if (main && settings.bearer) {
    const meUrl = `${base}/en/partners/auth/me`;
    const bearerHeaders = clients.tokens.map((token) => ({ authorization: `Bearer ${token}` }));
    await checkOnce(meUrl, bearerHeaders[0]!, (status, body) => {
      const b = body as { success?: unknown; data?: { email?: unknown } } | undefined;
      return status === 200 && b?.success === true && b.data?.email === creds.partnerEmail ? undefined : 'expected 200 with the partner';
    }, 'GET');
    bearer = {
      id: 'loyalty_bearer',
      label: `Loyalty GET /en/partners/auth/me (bearer), LOG_LEVEL=${logLevel}`,
      url: meUrl,
      method: 'GET',
      headers: bearerHeaders[0]!,
      perConnection: bearerHeaders,
      child,
      samples: [],
    };
  }
  return { target, bearer, creds };
}

// ---------------------------------------------------------------------------------------
// Report

interface Summary {
  label: string;
  url: string;
  /** Mean of the per-second request counts (autocannon's Req/Sec average), averaged over rounds. */
  rps: number;
  /** Latency percentiles in ms, of every response of a round; the median over rounds. */
  p50: number;
  p95: number;
  p99: number;
  ok: number;
  /** Share of one core the server used while measured. */
  serverCpu: number | undefined;
  /** Server CPU time per request, µs: hardly depends on what else the machine does. */
  usPerRequest: number | undefined;
  /** Share of one core used by autocannon (this process). */
  loadCpu: number;
  /** Cores used by anything else while measured; much above 0.1 means a disturbed run. */
  otherCpu: number | undefined;
  perRound: number[];
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const allDefined = (xs: Array<number | undefined>): xs is number[] => xs.every((x) => x !== undefined);

function summarise(t: Target): Summary {
  const s = t.samples;
  const wall = sum(s.map((x) => x.wall));
  const ok = sum(s.map((x) => x.ok));
  const server = s.map((x) => x.serverCpu);
  const machine = s.map((x) => x.machineCpu);
  const load = sum(s.map((x) => x.loadCpu));
  const serverTotal = allDefined(server) ? sum(server) : undefined;
  const machineTotal = allDefined(machine) ? sum(machine) : undefined;
  return {
    label: t.label,
    url: t.url,
    rps: mean(s.map((x) => x.rps)),
    p50: median(s.map((x) => x.p50)),
    p95: median(s.map((x) => x.p95)),
    p99: median(s.map((x) => x.p99)),
    ok,
    serverCpu: serverTotal === undefined ? undefined : serverTotal / wall,
    usPerRequest: serverTotal === undefined ? undefined : (serverTotal * 1e6) / ok,
    loadCpu: load / wall,
    otherCpu: machineTotal === undefined || serverTotal === undefined ? undefined : Math.max(0, machineTotal - serverTotal - load) / wall,
    perRound: s.map((x) => x.rps),
  };
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const pct = (n: number | undefined) => (n === undefined ? 'n/a' : `${Math.round(n * 100)}%`);
const round = (n: number | undefined, digits: number) => (n === undefined ? null : Math.round(n * 10 ** digits) / 10 ** digits);

function table(rows: Summary[]): string {
  const head = ['target', 'req/s (mean)', 'p50 ms', 'p95 ms', 'p99 ms', '2xx', 'non-2xx', 'server CPU', 'CPU µs/req', 'autocannon CPU', 'other CPU'];
  const body = rows.map((r) => [
    r.label,
    fmt(r.rps),
    r.p50.toFixed(2),
    r.p95.toFixed(2),
    r.p99.toFixed(2),
    fmt(r.ok),
    '0',
    pct(r.serverCpu),
    r.usPerRequest === undefined ? 'n/a' : fmt(r.usPerRequest, 1),
    pct(r.loadCpu),
    pct(r.otherCpu),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

const jsonOf = (r: Summary) => ({
  url: r.url,
  rps: round(r.rps, 1),
  p50_ms: round(r.p50, 2),
  p95_ms: round(r.p95, 2),
  p99_ms: round(r.p99, 2),
  requests_2xx: r.ok,
  non2xx: 0,
  server_cpu: round(r.serverCpu, 2),
  server_us_per_request: round(r.usPerRequest, 1),
  load_cpu: round(r.loadCpu, 2),
  other_cpu: round(r.otherCpu, 2),
  ...(r.perRound.length > 1 ? { rps_per_round: r.perRound.map((x) => round(x, 0)) } : {}),
});

// ---------------------------------------------------------------------------------------

/** Stops the servers, drops the scratch database, removes the temporary directory; runs once. */
let cleanup: () => Promise<void> = stopAll;

async function main() {
  if (!settings.skipBuild) {
    say('Building (npm run build)…');
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const build = spawnSync(npm, ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('npm run build failed');
  }
  if (!existsSync(path.resolve(ROOT, settings.loyaltyEntry))) throw new Error(`${settings.loyaltyEntry} is missing: run \`npm run build\``);
  const fastifyVersion = (JSON.parse(readFileSync(path.join(ROOT, 'node_modules/fastify/package.json'), 'utf8')) as { version: string }).version;

  const tmp = await mkdtemp(path.join(os.tmpdir(), 'loyalty-bench-'));
  let store: Store | undefined;
  cleanup = async () => {
    cleanup = async () => undefined;
    await stopAll();
    if (store) await store.cleanup().catch((err: unknown) => process.stderr.write(`could not drop the scratch database: ${String(err)}\n`));
    await rm(tmp, { recursive: true, force: true });
  };
  try {
    store = await prepareStore(tmp);
    const cpus = os.availableParallelism();
    say('');
    say(`Loyalty HTTP benchmark: ${settings.connections} connections, ${settings.duration} s per target` +
      `${settings.rounds > 1 ? ` × ${settings.rounds} alternating rounds` : ''}, after ${settings.warmup} s of warm-up`);
    say(`  node ${process.version}, Fastify ${fastifyVersion}, ${cpus} CPU(s) (${os.cpus()[0]?.model ?? 'unknown model'})`);
    say(`  Loyalty: ${settings.loyaltyEntry}, ${store.label}, Redis ${settings.redisUrl ? 'on' : 'off'}, NODE_ENV=production, metrics on`);
    say(`  non-default settings: ${settings.rateLimits
      ? `rate limits ON, one API key and one partner token per connection, ${Object.entries(RAISED_LIMITS).map(([k, v]) => `${k}=${v}`).join(' ')}`
      : 'RATE_LIMIT_DISABLED=true'}` +
      `${settings.webConcurrency > 1 ? `, WEB_CONCURRENCY=${settings.webConcurrency} (server CPU columns count the supervisor only)` : ''}` +
      `${settings.logLevel !== 'info' ? `, LOG_LEVEL=${settings.logLevel}` : ''}`);
    say(`  Loyalty logs at LOG_LEVEL=${settings.logLevel} (stdout to a file)` +
      `${settings.alsoWarn ? '; a second instance runs at LOG_LEVEL=warn (no request logs)' : ''}`);
    say('  Each server is a child process; autocannon runs in this process; one server is loaded at a time, the others frozen.');
    if (cpus < 2) say('  warning: fewer than 2 CPUs: the load generator and the server share one core');
    say('');

    const bare = await startBare(tmp);
    const loyalty = await startLoyalty(tmp, store, settings.logLevel, undefined);
    const quiet = settings.alsoWarn && settings.logLevel !== 'warn' ? (await startLoyalty(tmp, store, 'warn', loyalty.creds)).target : undefined;
    const bearer = loyalty.bearer;
    const targets = [bare, loyalty.target, ...(bearer ? [bearer] : []), ...(quiet ? [quiet] : [])];

    for (const t of targets) await alone(t, targets, () => warmUp(t));
    for (let r = 1; r <= settings.rounds; r++) {
      // Alternate the order so that neither target always follows the other.
      for (const t of r % 2 ? targets : [...targets].reverse()) await alone(t, targets, () => sample(t, r));
    }
    await stopAll();

    const b = summarise(bare);
    const l = summarise(loyalty.target);
    const br = bearer ? summarise(bearer) : undefined;
    const i = quiet ? summarise(quiet) : undefined;
    const ratio = l.rps / b.rps;
    const ratioBearer = br ? br.rps / b.rps : undefined;
    const cpuRatio = b.usPerRequest !== undefined && l.usPerRequest !== undefined ? b.usPerRequest / l.usPerRequest : undefined;
    const ratioWarn = i ? i.rps / b.rps : undefined;
    const logBytes = statSync(loyalty.target.child.stdoutFile).size;

    say('');
    say(table(targets.map(summarise)));
    say('');
    say(`ratio Loyalty (API key)/bare, requests/s: ${ratio.toFixed(2)}   (aim: >= 0.50: ${ratio >= 0.5 ? 'met' : 'NOT met'})`);
    if (settings.rounds > 1) {
      say(`  per round: ${l.perRound.map((x, k) => (x / b.perRound[k]!).toFixed(2)).join(', ')}`);
    }
    if (br && ratioBearer !== undefined) {
      say(`ratio Loyalty (bearer, one partner read)/bare, requests/s: ${ratioBearer.toFixed(2)}   (aim: >= 0.50: ${ratioBearer >= 0.5 ? 'met' : 'NOT met'})`);
      if (settings.rounds > 1) say(`  per round: ${br.perRound.map((x, k) => (x / b.perRound[k]!).toFixed(2)).join(', ')}`);
      if (br.usPerRequest !== undefined && b.usPerRequest !== undefined) {
        say(`server CPU per request, bare/Loyalty bearer: ${(b.usPerRequest / br.usPerRequest).toFixed(2)}   (${fmt(b.usPerRequest, 1)} vs ${fmt(br.usPerRequest, 1)} µs)`);
      }
    }
    if (cpuRatio !== undefined) {
      say(`server CPU per request, bare/Loyalty: ${cpuRatio.toFixed(2)}   (${fmt(b.usPerRequest!, 1)} vs ${fmt(l.usPerRequest!, 1)} µs)`);
    }
    say(`request logs written at LOG_LEVEL=${settings.logLevel}: ${fmt(logBytes / 1e6, 1)} MB`);
    if (ratioWarn !== undefined) say(`ratio Loyalty/bare with LOG_LEVEL=warn: ${ratioWarn.toFixed(2)}`);
    const noisy = targets.map(summarise).filter((r) => (r.otherCpu ?? 0) > 0.15);
    if (noisy.length > 0) {
      say(`warning: other work kept ${noisy.map((r) => pct(r.otherCpu)).join(' / ')} of a core busy during ` +
        `${noisy.map((r) => r.label.replace(/ (POST|GET) .*/, '')).join(' / ')}: requests/s are disturbed ` +
        '(CPU µs/req much less so); prefer a quiet machine, BENCH_QUIET_WAIT or BENCH_ROUNDS');
    }
    if (b.loadCpu > 0.9) say('note: autocannon used about a full core during the bare run: that figure is partly load-generator bound');
    say('CPU columns: share of one core; "other" = everything but the server and autocannon (PostgreSQL and Redis count there).');
    say('');
    say(JSON.stringify({
      bench: 'http',
      connections: settings.connections,
      duration_s: settings.duration,
      warmup_s: settings.warmup,
      rounds: settings.rounds,
      node: process.version,
      fastify: fastifyVersion,
      cpus,
      store: settings.databaseUrl ? 'postgresql' : 'pglite',
      redis: settings.redisUrl !== undefined,
      log_level: settings.logLevel,
      rate_limits: settings.rateLimits,
      web_concurrency: settings.webConcurrency,
      log_bytes: logBytes,
      bare: jsonOf(b),
      loyalty: jsonOf(l),
      ...(br ? { loyalty_bearer: jsonOf(br) } : {}),
      ...(i ? { loyalty_warn: jsonOf(i) } : {}),
      ratio: round(ratio, 3),
      ...(ratioBearer !== undefined ? { ratio_bearer: round(ratioBearer, 3) } : {}),
      cpu_per_request_ratio: round(cpuRatio, 3),
      ...(ratioWarn !== undefined ? { ratio_warn: round(ratioWarn, 3) } : {}),
    }));
  } finally {
    await cleanup();
  }
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    process.stderr.write(`\n${signal}: stopping the servers…\n`);
    void cleanup().finally(() => process.exit(130));
  });
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`\nbench:http FAILED: ${err instanceof Error ? err.message : String(err)}\n`);
    void cleanup().finally(() => process.exit(1));
  },
);
