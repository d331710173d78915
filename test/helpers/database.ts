// A fresh database for each test file: in-memory PGlite by default, or — when
// DATABASE_URL is set — a new PostgreSQL database cloned from a migrated template
// (created once per migration set, under an advisory lock, as test files run in parallel).
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { MIGRATIONS_DIR, openDatabase, openMemoryDatabase, type Database } from '../../src/infra/db/index.js';

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

export async function createTestDatabase(adminUrl: string | undefined = process.env.DATABASE_URL): Promise<TestDatabase> {
  if (!adminUrl) {
    const database = await openMemoryDatabase();
    return { database, url: undefined, drop: () => database.close() };
  }
  const template = await ensureTemplate(adminUrl);
  const name = `loyalty_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database "${name}" template "${template}"`);
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
