// A fresh database for each test file: in-memory PGlite by default (loaded from a migrated
// template dump, see pgliteTemplate), or — when
// DATABASE_URL is set — a new PostgreSQL database cloned from a migrated template
// (created once per migration set, under an advisory lock, as test files run in parallel).
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { dumpMemoryDatabase, MIGRATIONS_DIR, openDatabase, openMemoryDatabase, type Database } from '../../src/infra/db/index.js';

export interface TestDatabase {
  database: Database;
  /** Connection URL of the PostgreSQL database (undefined on PGlite). */
  url: string | undefined;
  drop(): Promise<void>;
}

function migrationsHash(): string {
  const h = createHash('sha256');
  for (const f of readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql')).sort()) {
    h.update(f).update(readFileSync(path.join(MIGRATIONS_DIR, f)));
  }
  return h.digest('hex').slice(0, 12);
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function ensureTemplate(adminUrl: string): Promise<string> {
  const name = `loyalty_tpl_${migrationsHash()}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query('select pg_advisory_lock(hashtext($1))', [name]);
    const exists = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (exists.rowCount === 0) {
      await admin.query(`create database "${name}"`);
      const db = await openDatabase({ databaseUrl: withDatabase(adminUrl, name), databasePoolMax: 2, dataDir: '' });
      try {
        await db.migrate();
      } finally {
        await db.close();
      }
    }
    await admin.query('select pg_advisory_unlock(hashtext($1))', [name]);
  } finally {
    await admin.end();
  }
  return name;
}

/**
 * A migrated PGlite data directory, kept as a tar in the system temp dir per migration set
 * and PGlite version: a fresh PGlite spends seconds in initdb, loading the dump well under
 * one, and each test file is its own process. The first process to need it writes it
 * (atomically, by rename); concurrent first writers produce the same content.
 */
export async function pgliteTemplate(): Promise<Blob> {
  let version = 'unknown';
  try {
    version = (JSON.parse(readFileSync('node_modules/@electric-sql/pglite/package.json', 'utf8')) as { version: string }).version;
  } catch {
    // Not run from the repository root: the hash still tells migration sets apart.
  }
  const file = path.join(tmpdir(), `loyalty-pglite-tpl-${migrationsHash()}-${version}.tar`);
  try {
    return new Blob([await readFile(file)]);
  } catch {
    // Not made yet.
  }
  const database = await openMemoryDatabase();
  try {
    await database.migrate();
    const dump = await dumpMemoryDatabase(database);
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(tmp, Buffer.from(await dump.arrayBuffer()));
    await rename(tmp, file);
    return dump;
  } finally {
    await database.close();
  }
}

export async function createTestDatabase(adminUrl: string | undefined = process.env.DATABASE_URL): Promise<TestDatabase> {
  if (!adminUrl) {
    const database = await openMemoryDatabase({ loadDataDir: await pgliteTemplate() });
    return { database, url: undefined, drop: () => database.close() };
  }
  const template = await ensureTemplate(adminUrl);
  const name = `loyalty_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database "${name}" template "${template}"`);
    // A test database need not wait for its WAL to reach the disk at each commit: a node killed
    // by a test loses nothing committed (only a crash of PostgreSQL itself could), and the
    // suite spent much of its time in those flushes on a 2-core machine.
    await admin.query(`alter database "${name}" set synchronous_commit = off`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(adminUrl, name);
  const database = await openDatabase({ databaseUrl: url, databasePoolMax: 10, dataDir: '' });
  return {
    database,
    url,
    drop: async () => {
      await database.close().catch(() => undefined);
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`drop database if exists "${name}" with (force)`).finally(() => c.end());
    },
  };
}
