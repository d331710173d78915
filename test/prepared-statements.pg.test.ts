// executePrepared on PostgreSQL: a text is prepared once per connection, and a process
// prepares at most 200 distinct texts (the rest run unprepared), so a connection's
// prepared statements stay bounded.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { executePrepared, openDatabase, type Database } from '../src/infra/db/index.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

describe('executePrepared on PostgreSQL', () => {
  let t: TestDatabase;
  let database: Database;

  before(async () => {
    t = await createTestDatabase();
    // One connection, so that pg_prepared_statements shows all this pool prepared.
    database = await openDatabase({ databaseUrl: t.url!, databasePoolMax: 1, dataDir: '' });
  });
  after(async () => {
    await database.close();
    await t.drop();
  });

  const prepared = async () => {
    const result = await database.db.execute(sql`select name from pg_prepared_statements where name like 'loyalty_%'`);
    return (result as unknown as { rows: unknown[] }).rows.length;
  };

  it('prepares a text once per connection', async () => {
    assert.equal(await prepared(), 0);
    for (let i = 0; i < 5; i++) {
      assert.deepEqual(await executePrepared(database.db, sql`select ${i}::int * 2 as twice`), [{ twice: i * 2 }]);
    }
    assert.equal(await prepared(), 1, 'five calls of one text, one prepared statement');
  });

  it('prepares at most 200 distinct texts in a process and still runs the rest', async () => {
    for (let i = 0; i < 250; i++) {
      const rows = await executePrepared<{ n: number }>(database.db, sql`select ${sql.raw(String(i))}::int + ${1}::int as n`);
      assert.deepEqual(rows, [{ n: i + 1 }]);
    }
    assert.equal(await prepared(), 200);
  });
});
