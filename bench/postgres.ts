// Shared by the PostgreSQL benchmarks: scratch databases and the same-run reference,
// pgbench's built-in TPC-B-like transaction on the same server.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { childEnv, startServerProcess } from '../test/helpers/server-process.js';

export const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export const urlFor = (name: string) => {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  return u.toString();
};

export async function recreate(name: string) {
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  await c.query(`drop database if exists "${name}" with (force)`);
  await c.query(`create database "${name}"`);
  await c.end();
}

export async function drop(name: string) {
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  await c.query(`drop database if exists "${name}" with (force)`);
  await c.end();
}

/**
 * `pgbench -i -s {scale}` into `database`, then its TPC-B-like run: transactions per second.
 * At scale 1 every transaction updates the one branch row (a hot-row workload); the default
 * scale, the number of clients, leaves no artificial contention. Run it on an idle server.
 */
export function pgbenchTps(database: string, clients: number, seconds: number, scale = clients): number {
  const u = new URL(urlFor(database));
  const args = ['-h', u.hostname, '-p', u.port || '5432', '-U', decodeURIComponent(u.username || 'postgres')];
  const init = spawnSync('pgbench', [...args, '-i', '-q', '-s', String(scale), database], { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`pgbench -i failed: ${init.stderr}`);
  const run = spawnSync('pgbench', [...args, '-c', String(clients), '-j', '2', '-T', String(seconds), database], {
    encoding: 'utf8',
  });
  const m = /tps = ([\d.]+) \((?:without initial connection time|excluding connections establishing)\)/.exec(run.stdout);
  if (!m) throw new Error(`could not read pgbench's tps:\n${run.stdout}\n${run.stderr}`);
  return Number(m[1]);
}

/**
 * Rate limits on, as users run, each per-key ceiling raised so that a bench's load is never
 * refused: every request still pays the limiter's bookkeeping (Redis with REDIS_URL).
 */
export const RAISED_LIMITS = {
  RATE_LIMIT_DISABLED: 'false',
  RATE_LIMIT_API_PER_MINUTE: '1000000',
  RATE_LIMIT_API_PER_HOUR: '10000000',
  RATE_LIMIT_PARTNER_PER_MINUTE: '1000000',
  RATE_LIMIT_PARTNER_PER_HOUR: '10000000',
  // The bench signs in once per connection, from one address.
  RATE_LIMIT_IP_PER_MINUTE: '1000',
};

/**
 * One API key per till (`n` of them) for the demo partner the bench server printed, made over
 * HTTP as a partner would: each till is rate-limited under its own key.
 */
export async function tillKeys(baseUrl: string, serverStdout: string, n: number): Promise<Array<{ key: string; secret: string }>> {
  const partner = /^\s*Partner:\s+(\S+) \/ (\S+)/m.exec(serverStdout);
  if (!partner) throw new Error('the demo seed printed no partner sign-in');
  const post = async (url: string, headers: Record<string, string>, json: unknown) => {
    const res = await fetch(`${baseUrl}${url}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(json) });
    const text = await res.text();
    if (!res.ok) throw new Error(`POST ${url} → ${res.status} ${text.slice(0, 300)}`);
    return (JSON.parse(text) as { data: Record<string, unknown> }).data;
  };
  const { token } = await post('/en/partners/auth/login', {}, { email: partner[1], password: partner[2] });
  const keys: Array<{ key: string; secret: string }> = [];
  for (let i = 0; i < n; i++) {
    const made = await post('/en/partners/api-keys', { authorization: `Bearer ${String(token)}` }, { name: `bench till ${i + 1}` });
    keys.push({ key: String(made.key), secret: String(made.secret) });
  }
  return keys;
}

/** Settings every PostgreSQL bench server runs with; the ones users would not set are listed by `settingsLine`. */
const BASE_ENV = {
  LOYALTY_DEMO_SEED: 'true',
  RATE_LIMIT_DISABLED: 'true',
  NODE_ENV: 'production',
};

/** The non-default settings of a bench server, to print beside its figures. */
export function settingsLine(env: Record<string, string> = {}): string {
  const shown = { RATE_LIMIT_DISABLED: 'true', LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info', ...benchEnv(), ...env };
  return Object.entries(shown)
    .filter(([k, v]) => !(k === 'LOG_LEVEL' && v === 'info'))
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
}

/** Settings passed through from the bench's own environment (WEB_CONCURRENCY, DATABASE_POOL_MAX, REDIS_URL presence). */
function benchEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of ['WEB_CONCURRENCY', 'DATABASE_POOL_MAX']) if (process.env[k]) out[k] = process.env[k]!;
  return out;
}

/**
 * A scratch database and the real server on it (demo data seeded, limits off, NODE_ENV=production,
 * LOG_LEVEL=info unless BENCH_LOG_LEVEL says otherwise, Redis when REDIS_URL is set), plus a
 * client on the same database; `done()` stops and drops everything, the pgbench one too.
 * The server's log lines are read and discarded, as a terminal or a log shipper would.
 */
export async function startBenchServer(name: string, env: Record<string, string> = {}) {
  const db = `loyalty_bench_${name}`;
  await recreate(db);
  await recreate(PGBENCH_DB);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `loyalty-bench-${name}-`));
  const server = await startServerProcess(
    childEnv({
      DATABASE_URL: urlFor(db),
      LOYALTY_DATA_DIR: dataDir,
      ...BASE_ENV,
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
      ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
      ...benchEnv(),
      ...env,
    }),
    undefined,
    // e.g. "--cpu-prof --cpu-prof-dir=prof" (the profile is written when the server stops).
    (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean),
  );
  // Keep reading the logs (a full pipe would stall the server) without keeping them.
  server.child.stdout!.removeAllListeners('data');
  server.child.stdout!.resume();
  if (!server.apiKey) throw new Error('the demo seed printed no API key');
  const client = new pg.Client({ connectionString: urlFor(db) });
  await client.connect();
  return {
    server,
    apiKey: server.apiKey,
    db: client,
    url: urlFor(db),
    done: async () => {
      await client.end();
      await server.kill('SIGTERM');
      await drop(db);
      await drop(PGBENCH_DB);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The reference database for pgbenchTps. */
export const PGBENCH_DB = 'loyalty_bench_pgbench';
