import { eq } from 'drizzle-orm';
import type { Db } from './db/index.js';
import { systemSettings } from './db/infra.tables.js';

/**
 * A value generated once and then shared by every node on the database: the first
 * node to insert wins, the others read what it wrote.
 */
export async function loadOrCreateSetting(db: Db, key: string, generate: () => string): Promise<string> {
  await db.insert(systemSettings).values({ key, value: generate() }).onConflictDoNothing();
  const [row] = await db.select().from(systemSettings).where(eq(systemSettings.key, key));
  return row!.value;
}
