// One relational store, two drivers: PGlite (embedded, in-process) by default and
// PostgreSQL when DATABASE_URL is set. Both speak the same SQL and run the same
// migrations, so everything above this file is written once against Drizzle's pg-core.
import { createHash } from 'node:crypto';
import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { sql, type SQL } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { PgDialect, type PgDatabase, type PgQueryResultHKT, type PgTransaction } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import pg from 'pg';
import type { Config } from '../../config.js';

// No relational schema is registered: queries name their tables (each module owns its own),
// so this layer knows none of them.
type NoSchema = Record<string, never>;
export type Db = PgDatabase<PgQueryResultHKT, NoSchema>;
export type Tx = PgTransaction<PgQueryResultHKT, NoSchema, ExtractTablesWithRelations<NoSchema>>;
/** Repositories take `tx ?? db`: either runs the same queries. */
export type Executor = Db | Tx;

/** Postgres array literals of values that need no quoting, for `${…}::int[]` and the like. */
export const intArray = (values: readonly number[]) => `{${values.map((v) => Math.trunc(v)).join(',')}}`;
export const boolArray = (values: ReadonlyArray<boolean | null>) => `{${values.map((v) => (v === null ? 'NULL' : v ? 't' : 'f')).join(',')}}`;
/** YYYY-MM-DD days. */
export const dateArray = (values: readonly string[]) => {
  if (!values.every((d) => /^\d{4}-\d{2}-\d{2}$/.test(d))) throw new Error('not a day');
  return `{${values.join(',')}}`;
};

/**
 * Run `query` as a server-side prepared statement (PostgreSQL): parsed and planned once per
 * pooled connection instead of on every call. A hot statement's planning can cost more than
 * its execution — the award's CTE runs 2.8× faster on the server prepared than parsed each
 * time (pgbench -M prepared vs -M extended, docs/benchmarks.md). PGlite runs it as usual.
 *
 * For statements whose text does not vary with their values (a fixed set of parameters):
 * every distinct text stays prepared on each connection for its life. The name is a digest
 * of the text, so two texts never share one; past PREPARED_MAX distinct texts in a process
 * the rest run unprepared, which bounds what a connection can hold.
 */
export async function executePrepared<Row>(exec: Executor, query: SQL): Promise<Row[]> {
  const compiled = dialect.sqlToQuery(query);
  const session = exec._.session as unknown as {
    prepareQuery(q: typeof compiled, fields: undefined, name: string | undefined, arrayMode: boolean): { execute(): Promise<unknown> };
  };
  const result = (await session.prepareQuery(compiled, undefined, statementName(compiled.sql), false).execute()) as { rows: Row[] };
  return result.rows;
}

const dialect = new PgDialect();
const PREPARED_MAX = 200;
const statementNames = new Map<string, string>();

function statementName(text: string): string | undefined {
  let name = statementNames.get(text);
  if (name === undefined && statementNames.size < PREPARED_MAX) {
    name = `loyalty_${createHash('sha256').update(text).digest('base64url').slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return name;
}

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

export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'databasePoolMax' | 'dataDir'>,
  log: DatabaseLog = silentLog,
): Promise<Database> {
  if (config.databaseUrl) return openPostgres(config.databaseUrl, config.databasePoolMax, log);
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
  const db = drizzlePglite({ client }) as unknown as Db;
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

/** Where the store reports connection trouble (the process logger; silent when not given). */
export interface DatabaseLog {
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
}

const silentLog: DatabaseLog = { warn: () => undefined, info: () => undefined };

/** What a connection error may show in a log line: no connection string, no query text. */
const errorSummary = (err: unknown) => ({
  message: err instanceof Error ? err.message : String(err),
  code: pgErrorCode(err) ?? (err as { code?: unknown } | undefined)?.code,
});

/**
 * The one LISTEN connection of a node, shared by every channel. PostgreSQL forgets a
 * session's LISTENs when the connection drops (a failover, a restarted pooler,
 * pg_terminate_backend), and notifications sent meanwhile are lost: on loss every
 * subscriber hears `onStatus(false)` (their caches are stale from now on), the connection
 * is re-opened with capped exponential backoff, every channel is LISTENed again, and only
 * then `onStatus(true)`.
 */
class PgListener {
  private readonly channels = new Map<string, Array<{ onPayload: (p: string) => void; onStatus: (up: boolean) => void }>>();
  private client: pg.Client | undefined;
  private up = false;
  private closed = false;
  private attempt = 0;
  private retry: NodeJS.Timeout | undefined;
  private connecting: Promise<void> | undefined;

  constructor(
    private readonly url: string,
    private readonly log: DatabaseLog,
  ) {}

  async add(channel: string, onPayload: (p: string) => void, onStatus: (up: boolean) => void): Promise<void> {
    const subscribers = this.channels.get(channel) ?? [];
    const isNew = subscribers.length === 0;
    subscribers.push({ onPayload, onStatus });
    this.channels.set(channel, subscribers);
    if (this.up && this.client) {
      if (isNew) await this.client.query(`LISTEN ${quoteChannel(channel)}`).catch((err: unknown) => this.lost(this.client!, err));
      onStatus(this.up);
      return;
    }
    onStatus(false);
    // The first subscriber opens the connection; a failure is retried in the background.
    if (!this.connecting && !this.retry) await this.connect();
    else await this.connecting;
  }

  private connect(): Promise<void> {
    this.retry = undefined;
    this.connecting = this.open().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async open(): Promise<void> {
    if (this.closed) return;
    const c = new pg.Client({ connectionString: this.url, keepAlive: true, connectionTimeoutMillis: 10_000 });
    this.client = c;
    c.on('notification', (msg) => {
      for (const s of this.channels.get(msg.channel) ?? []) s.onPayload(msg.payload ?? '');
    });
    c.on('error', (err) => this.lost(c, err));
    c.on('end', () => this.lost(c, new Error('connection ended')));
    try {
      await c.connect();
      for (const channel of this.channels.keys()) await c.query(`LISTEN ${quoteChannel(channel)}`);
    } catch (err) {
      this.lost(c, err);
      return;
    }
    if (this.client !== c || this.closed) return;
    if (this.attempt > 0) this.log.info({ channels: [...this.channels.keys()] }, 'database notifications restored');
    this.attempt = 0;
    this.up = true;
    for (const subs of this.channels.values()) for (const s of subs) s.onStatus(true);
  }

  /** The connection `c` failed (once per connection: later events of a dropped one are ignored). */
  private lost(c: pg.Client, err: unknown): void {
    if (this.client !== c) return;
    this.client = undefined;
    c.end().catch(() => undefined);
    if (this.up) {
      this.up = false;
      for (const subs of this.channels.values()) for (const s of subs) s.onStatus(false);
    }
    if (this.closed) return;
    const delay = Math.min(10_000, 250 * 2 ** this.attempt) * (0.75 + Math.random() * 0.5);
    this.attempt++;
    this.log.warn({ err: errorSummary(err), retry_in_ms: Math.round(delay) }, 'database notification connection lost; reconnecting');
    this.retry = setTimeout(() => void this.connect(), delay);
    this.retry.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    await this.connecting;
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }
}

/**
 * drizzle-orm's node-postgres `transaction()` runs `BEGIN` before the try/finally that releases
 * its pooled client (drizzle-orm#6023, #6241 — open in 0.45): a `BEGIN` on a connection that
 * died while idle, or was terminated right after checkout, leaks the client for good, and a
 * few failovers exhaust the pool (every transaction then waits forever). Here a client whose
 * `BEGIN` fails is released with the error, so the pool destroys it; drizzle then rethrows.
 */
function releaseClientsWhoseBeginFails(pool: pg.Pool): void {
  const guarded = new WeakSet<pg.PoolClient>();
  const guard = (client: pg.PoolClient): pg.PoolClient => {
    if (guarded.has(client)) return client;
    guarded.add(client);
    const query = client.query as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = function (this: pg.PoolClient, ...args: unknown[]) {
      const result = query.apply(this, args);
      const config = args[0] as string | { text?: unknown } | undefined;
      const text = typeof config === 'string' ? config : config?.text;
      if (typeof text === 'string' && /^\s*begin\b/i.test(text) && result instanceof Promise) {
        return result.catch((err: unknown) => {
          client.release(err instanceof Error ? err : new Error(String(err)));
          throw err;
        });
      }
      return result;
    };
    return client;
  };
  const connect = pool.connect.bind(pool) as (cb?: unknown) => unknown;
  // pg-pool calls connect(callback) itself for pool.query(); only drizzle's promise form needs the guard.
  (pool as { connect: unknown }).connect = (callback?: unknown) =>
    callback ? connect(callback) : (connect() as Promise<pg.PoolClient>).then(guard);
}

const quoteChannel = (channel: string) => `"${channel.replace(/"/g, '')}"`;

function openPostgres(url: string, max: number, log: DatabaseLog): Database {
  const pool = new pg.Pool({ connectionString: url, max, idleTimeoutMillis: 30_000, connectionTimeoutMillis: 10_000, keepAlive: true });
  // A connection can drop at any moment (failover, restarted pooler, pg_terminate_backend).
  // An idle one is removed by the pool; one checked out — inside a transaction, between its
  // statements — emits 'error' on its Client, which without a listener crashes the process.
  // The statement in flight fails (the request gets its 5xx envelope), the client is dropped
  // at release, and the next checkout connects afresh.
  pool.on('connect', (client) => {
    client.on('error', (err) => log.warn({ err: errorSummary(err) }, 'database connection lost'));
  });
  pool.on('error', () => undefined); // an idle client's loss: logged by the listener above
  releaseClientsWhoseBeginFails(pool);
  const db = drizzlePg({ client: pool }) as unknown as Db;
  const listener = new PgListener(url, log);

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
    listen: (channel, onPayload, onStatus) => listener.add(channel, onPayload, onStatus),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: async () => {
      await listener.close();
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

// The database is gone or refusing work for now, not the query wrong: connection exceptions
// (08xxx), an administrator's or crash shutdown (57P01..57P03), too many connections, and the
// driver's own words for a dropped or unobtainable connection.
const UNAVAILABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const UNAVAILABLE_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|not queryable|Connection ended unexpectedly|the database system is (starting up|shutting down|in recovery mode)/i;

/** True when a failure means "the database is unavailable right now" (answer 503, retry later). */
export function isDatabaseUnavailable(err: unknown): boolean {
  let e: unknown = err;
  for (let i = 0; i < 4 && e && typeof e === 'object'; i++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300')) return true;
    if (typeof code === 'string' && UNAVAILABLE_NODE_CODES.has(code)) return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
