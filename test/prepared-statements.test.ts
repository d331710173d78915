// executePrepared gives the rows of an ordinary execute on both stores (what it prepares on
// PostgreSQL: prepared-statements.pg.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { executePrepared, type Database } from '../src/infra/db/index.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

describe('executePrepared', () => {
  let t: TestDatabase;
  let database: Database;

  before(async () => {
    t = await createTestDatabase();
    database = t.database;
  });
  after(() => t.drop());

  it('answers the rows of the statement, with its values, outside and inside a transaction', async () => {
    const query = (n: number) => sql`select ${n}::int + 1 as next, ${`card ${n}`}::text as label`;
    assert.deepEqual(await executePrepared(database.db, query(1)), [{ next: 2, label: 'card 1' }]);
    assert.deepEqual(await executePrepared(database.db, query(41)), [{ next: 42, label: 'card 41' }]);
    const inTx = await database.db.transaction((tx) => executePrepared(tx, query(7)));
    assert.deepEqual(inTx, [{ next: 8, label: 'card 7' }]);
  });

  it('runs any number of distinct texts', async () => {
    for (let i = 0; i < 250; i++) {
      const rows = await executePrepared<{ n: number }>(database.db, sql`select ${sql.raw(String(i))}::int + ${1}::int as n`);
      assert.deepEqual(rows, [{ n: i + 1 }]);
    }
  });
});
