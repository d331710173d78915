// One relational store, two drivers: PGlite (embedded, in-process) by default and
// PostgreSQL when DATABASE_URL is set. Both speak the same SQL and run the same
// migrations, so everything above this file is written once against Drizzle's pg-core.
import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import pg from 'pg';
import type { Config } from '../../config.js';
import * as schema from './schema.js';

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
/** Repositories take `tx ?? db`: either runs the same queries. */
export type Executor = Db | Tx;

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations', import.meta.url));

// Any constant works; it only has to be the same on every node.
const MIGRATION_LOCK_KEY = 7_334_201_001;

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

export interface Database {
  readonly kind: 'postgres' | 'pglite';
  readonly db: Db;
  migrate(): Promise<void>;
  ping(): Promise<void>;
  /**
   * LISTEN on a channel; notifications arrive when the NOTIFY-ing transaction commits.
   * `onStatus(false)` means notifications may be missed until `onStatus(true)` again.
   */
  listen(channel: string, onPayload: (payload: string) => void, onStatus: (listening: boolean) => void): Promise<void>;
  poolStats(): PoolStats | undefined;
  close(): Promise<void>;
}

export async function openDatabase(config: Pick<Config, 'databaseUrl' | 'databasePoolMax' | 'dataDir'>): Promise<Database> {
  if (config.databaseUrl) return openPostgres(config.databaseUrl, config.databasePoolMax);
  const dir = path.join(config.dataDir, 'pgdata');
  await mkdir(dir, { recursive: true });
  const releaseLock = await lockDataDir(config.dataDir);
  try {
    return await openPglite(new PGlite(dir), releaseLock);
  } catch (err) {
    await releaseLock();
    throw err;
  }
}

/**
 * PGlite is one process's database: a second process opening the same directory would
 * corrupt it. A pid file makes that a clear error instead (a stale file is taken over).
 */
async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const file = path.join(dataDir, 'loyalty.pid');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(file, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => unlink(file).catch(() => undefined);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number((await readFile(file, 'utf8').catch(() => '')).trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new Error(
          `the data directory ${dataDir} is in use by process ${pid}; stop it first, or use DATABASE_URL to share a PostgreSQL database`,
        );
      }
      await unlink(file).catch(() => undefined);
    }
  }
  throw new Error(`could not lock the data directory ${dataDir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * In-memory PGlite, for tests and one-off tools. `loadDataDir` starts it from a dump
 * (`dumpMemoryDatabase`) instead of a fresh initdb, which takes seconds.
 */
export function openMemoryDatabase(opts: { loadDataDir?: Blob } = {}): Promise<Database> {
  return openPglite(new PGlite(opts.loadDataDir ? { loadDataDir: opts.loadDataDir } : {}), async () => undefined);
}

/** The data directory of an in-memory PGlite database as an uncompressed tar (see openMemoryDatabase). */
export async function dumpMemoryDatabase(database: Database): Promise<Blob> {
  if (database.kind !== 'pglite') throw new Error('only a PGlite database can be dumped');
  return ((database.db as unknown as { $client: PGlite }).$client).dumpDataDir('none');
}

async function openPglite(client: PGlite, releaseLock: () => Promise<void>): Promise<Database> {
  await client.waitReady;
  const db = drizzlePglite({ client, schema }) as unknown as Db;
  const unsubscribers: Array<() => Promise<void>> = [];
  return {
    kind: 'pglite',
    db,
    // One process owns a PGlite directory, so no cross-process lock is needed.
    migrate: () => migratePglite(db as never, { migrationsFolder: MIGRATIONS_DIR }),
    ping: async () => {
      await client.query('select 1');
    },
    listen: async (channel, onPayload, onStatus) => {
      unsubscribers.push(await client.listen(channel, onPayload));
      onStatus(true);
    },
    poolStats: () => undefined,
    close: async () => {
      for (const u of unsubscribers) await u().catch(() => undefined);
      await client.close();
      await releaseLock();
    },
  };
}

function openPostgres(url: string, max: number): Database {
  const pool = new pg.Pool({ connectionString: url, max, idleTimeoutMillis: 30_000 });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  const db = drizzlePg({ client: pool, schema }) as unknown as Db;
  const listeners: Array<{ stop: () => Promise<void> }> = [];
  let closed = false;

  async function startListener(channel: string, onPayload: (p: string) => void, onStatus: (up: boolean) => void) {
    let client: pg.Client | undefined;
    let retry: NodeJS.Timeout | undefined;
    const connect = async (): Promise<void> => {
      if (closed) return;
      const c = new pg.Client({ connectionString: url });
      c.on('notification', (msg) => {
        if (msg.channel === channel) onPayload(msg.payload ?? '');
      });
      c.on('error', () => {
        // Notifications may be missed while the connection is down: callers stop relying
        // on them until we are listening again.
        onStatus(false);
        client = undefined;
        c.end().catch(() => undefined);
        if (!closed) retry = setTimeout(() => void connect().catch(() => undefined), 1000);
      });
      try {
        await c.connect();
        await c.query(`LISTEN "${channel.replace(/"/g, '')}"`);
        client = c;
        onStatus(true);
      } catch {
        c.end().catch(() => undefined);
        onStatus(false);
        if (!closed) retry = setTimeout(() => void connect().catch(() => undefined), 1000);
      }
    };
    await connect();
    listeners.push({
      stop: async () => {
        if (retry) clearTimeout(retry);
        await client?.end().catch(() => undefined);
      },
    });
  }

  return {
    kind: 'postgres',
    db,
    migrate: async () => {
      // Several nodes may start at once; the advisory lock lets exactly one migrate
      // while the others wait and then find nothing to do.
      const lockClient = await pool.connect();
      try {
        await lockClient.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
        await migratePg(db as never, { migrationsFolder: MIGRATIONS_DIR });
      } finally {
        await lockClient.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
        lockClient.release();
      }
    },
    ping: async () => {
      await db.execute(sql`select 1`);
    },
    listen: startListener,
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: async () => {
      closed = true;
      for (const l of listeners) await l.stop();
      await pool.end();
    },
  };
}

/** PostgreSQL error code of a failed query, looking through Drizzle's wrapper. */
export function pgErrorCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let i = 0; i < 3 && e && typeof e === 'object'; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

export const isUniqueViolation = (err: unknown): boolean => pgErrorCode(err) === '23505';
