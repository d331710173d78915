// The real server as a child process (its transpiled JavaScript, or the source under tsx:
// test/helpers/entry.ts), for tests that need a process boundary: kill -9, restarts, several nodes.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { Env } from './app.js';
import { createTestDatabase, pgliteTemplate, type TestDatabase } from './database.js';
import { nodeEntry } from './entry.js';


export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Demo API credentials, when the banner printed them. */
  apiKey?: { key: string; secret: string };
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Start the server and resolve once it printed its banner ("is listening on …"); `nodeArgs` go to node (e.g. --cpu-prof). */
export async function startServerProcess(env: Env, timeoutMs = 180_000, nodeArgs: readonly string[] = []): Promise<ServerProcess> {
  const child = spawn(process.execPath, nodeEntry('src/server.ts', nodeArgs), {
    env: env as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const started = Date.now();
  for (;;) {
    const listening = /is listening on (http:\/\/\S+)/.exec(out);
    // The banner is complete once its trailing blank line is out: a blank line at the end of
    // the output or before a log line (its inner blank lines precede "Demo data" and "Try it").
    if (listening && /\n\s*\n(?=$|\{)/.test(out.slice(listening.index))) {
      const key = /API key:\s+(\S+)/.exec(out)?.[1];
      const secret = /API secret:\s+(\S+)/.exec(out)?.[1];
      return {
        child,
        url: listening[1]!.replace('localhost', '127.0.0.1'),
        ...(key && secret ? { apiKey: { key, secret } } : {}),
        stdout: () => out,
        stderr: () => err,
        exited,
        kill: (signal = 'SIGTERM') => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          return exited;
        },
      };
    }
    if (child.exitCode !== null || Date.now() - started > timeoutMs) {
      child.kill('SIGKILL');
      throw new Error(`server did not start\nstdout:\n${out}\nstderr:\n${err}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** An environment with none of the developer's service settings, plus `overrides`. */
export function childEnv(overrides: Env): Env {
  const env: Env = { ...process.env };
  for (const name of Object.keys(env)) {
    if (/^(DATABASE_|REDIS_|LOYALTY_|RATE_LIMIT_|JWT_|SMS_|SMPP_|APP_TEST_PHONES|PUBLIC_BASE_URL|LOG_LEVEL|PORT|HOST|ALLOW_PRIVATE_URLS)/.test(name)) {
      delete env[name];
    }
  }
  return { ...env, NODE_ENV: 'test', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...overrides };
}

/**
 * Fill an empty data directory with a migrated, empty embedded store (the test template), as
 * if a server had started there once: for process tests of anything but the first start,
 * whose first server then skips initdb and the migrations (seconds of CPU each). The first
 * start itself is test/server.test.ts's and test/cli.test.ts's.
 */
export async function migratedDataDir(dataDir: string): Promise<void> {
  // src/infra/db's layout: the cluster in <data dir>/pgdata.
  const pg = new PGlite(path.join(dataDir, 'pgdata'), { loadDataDir: await pgliteTemplate() });
  await pg.close();
}

/**
 * The store that a test's server processes share across kills and restarts: a data folder and,
 * when DATABASE_URL is set, a scratch PostgreSQL database (its own pool closed: the test reads
 * the store with a pool of its own at the end, which must not be held up).
 */
export interface ProcessStore {
  dataDir: string;
  db: TestDatabase | undefined;
  /** Servers started on it, killed by close(). */
  servers: ServerProcess[];
  /** A child environment on this store (demo seed on, limits off), plus `overrides`. */
  env(overrides: Env): Env;
  /** Kills the servers still running and removes the store. */
  close(): Promise<void>;
}

export async function processStore(prefix: string): Promise<ProcessStore> {
  const dataDir = await mkdtemp(path.join(tmpdir(), prefix));
  const db = process.env.DATABASE_URL ? await createTestDatabase() : undefined;
  await db?.database.close();
  if (!db) await migratedDataDir(dataDir);
  const servers: ServerProcess[] = [];
  return {
    dataDir,
    db,
    servers,
    env: (overrides) =>
      childEnv({
        LOYALTY_DATA_DIR: dataDir,
        ...(db ? { DATABASE_URL: db.url } : {}),
        LOYALTY_DEMO_SEED: 'true',
        RATE_LIMIT_DISABLED: 'true',
        ...overrides,
      }),
    async close() {
      for (const s of servers) await s.kill('SIGKILL');
      if (db) await db.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
