// SQL for shops. Every function takes the owning partner: a shop of another partner
// is simply not found.
import { and, asc, count, eq, inArray } from 'drizzle-orm';
import type { Executor } from '../../infra/db/index.js';
import { shops } from './shops.tables.js';

export type ShopRow = typeof shops.$inferSelect;
export interface ShopFields {
  name: string;
  address: string | null;
  city: string | null;
  lat: string | null;
  lng: string | null;
}

const owned = (partnerId: number, id: number) => and(eq(shops.partnerId, partnerId), eq(shops.id, id));

export const shopsRepository = {
  async insert(db: Executor, partnerId: number, fields: ShopFields): Promise<ShopRow> {
    const [row] = await db.insert(shops).values({ partnerId, ...fields }).returning();
    return row!;
  },
  async find(db: Executor, partnerId: number, id: number): Promise<ShopRow | undefined> {
    const [row] = await db.select().from(shops).where(owned(partnerId, id));
    return row;
  },
  async list(db: Executor, partnerId: number, limit: number, offset: number) {
    const rows = await db.select().from(shops).where(eq(shops.partnerId, partnerId)).orderBy(asc(shops.id)).limit(limit).offset(offset);
    const [total] = await db.select({ n: count() }).from(shops).where(eq(shops.partnerId, partnerId));
    return { rows, total: total?.n ?? 0 };
  },
  async update(db: Executor, partnerId: number, id: number, fields: Partial<ShopFields>): Promise<ShopRow | undefined> {
    const [row] = await db
      .update(shops)
      .set({ ...fields, updatedAt: new Date() })
      .where(owned(partnerId, id))
      .returning();
    return row;
  },
  async delete(db: Executor, partnerId: number, id: number): Promise<boolean> {
    const rows = await db.delete(shops).where(owned(partnerId, id)).returning({ id: shops.id });
    return rows.length > 0;
  },
  /** Which of `ids` belong to the partner. */
  async ownedIds(db: Executor, partnerId: number, ids: number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const rows = await db.select({ id: shops.id }).from(shops).where(and(eq(shops.partnerId, partnerId), inArray(shops.id, ids)));
    return rows.map((r) => r.id);
  },
};
