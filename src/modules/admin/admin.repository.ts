import { count, eq } from 'drizzle-orm';
import type { Executor } from '../../infra/db/index.js';
import { admins } from './admin.tables.js';

export type AdminRow = typeof admins.$inferSelect;

export const adminRepository = {
  async insert(db: Executor, values: { email: string; name: string; passwordHash: string }): Promise<AdminRow | undefined> {
    const [row] = await db.insert(admins).values(values).onConflictDoNothing().returning();
    return row;
  },
  async findByEmail(db: Executor, email: string): Promise<AdminRow | undefined> {
    const [row] = await db.select().from(admins).where(eq(admins.email, email));
    return row;
  },
  async findById(db: Executor, id: number): Promise<AdminRow | undefined> {
    const [row] = await db.select().from(admins).where(eq(admins.id, id));
    return row;
  },
  async setPasswordHash(db: Executor, id: number, passwordHash: string): Promise<AdminRow | undefined> {
    const [row] = await db.update(admins).set({ passwordHash }).where(eq(admins.id, id)).returning();
    return row;
  },
  async count(db: Executor): Promise<number> {
    const [row] = await db.select({ n: count() }).from(admins);
    return row?.n ?? 0;
  },
};
