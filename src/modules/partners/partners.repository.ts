import { count, desc, eq, sql } from 'drizzle-orm';
import type { Executor } from '../../infra/db/index.js';
import { partners } from './partners.tables.js';

export type PartnerRow = typeof partners.$inferSelect;

export const partnersRepository = {
  async insert(db: Executor, values: { name: string; email: string; passwordHash: string }): Promise<PartnerRow> {
    const [row] = await db.insert(partners).values(values).returning();
    return row!;
  },
  async findById(db: Executor, id: number): Promise<PartnerRow | undefined> {
    const [row] = await db.select().from(partners).where(eq(partners.id, id));
    return row;
  },
  async findByEmail(db: Executor, email: string): Promise<PartnerRow | undefined> {
    const [row] = await db.select().from(partners).where(eq(partners.email, email));
    return row;
  },
  async setPasswordHash(db: Executor, id: number, passwordHash: string): Promise<PartnerRow | undefined> {
    const [row] = await db.update(partners).set({ passwordHash, updatedAt: sql`now()` }).where(eq(partners.id, id)).returning();
    return row;
  },
  async count(db: Executor): Promise<number> {
    const [row] = await db.select({ n: count() }).from(partners);
    return row?.n ?? 0;
  },
  async list(db: Executor, limit: number, offset: number): Promise<{ rows: PartnerRow[]; total: number }> {
    const rows = await db.select().from(partners).orderBy(desc(partners.id)).limit(limit).offset(offset);
    const [total] = await db.select({ n: count() }).from(partners);
    return { rows, total: total?.n ?? 0 };
  },
};
