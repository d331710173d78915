// SQL for partner card programmes. Every function takes the owning partner: another
// partner's card is simply not found. A soft-deleted card is invisible to everything here
// except `findIncludingDeleted`, which modules holding points in a programme need.
import { and, asc, count, eq, exists, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../../infra/db/index.js';
import { partnerCards, partnerCardShops } from './partner-cards.tables.js';

export type CardRow = typeof partnerCards.$inferSelect;
export type CardColumns = Omit<typeof partnerCards.$inferInsert, 'id' | 'partnerId' | 'createdAt' | 'updatedAt' | 'deletedAt'>;

export interface CardListFilter {
  isActive?: boolean;
  shopId?: number;
}

const owned = (partnerId: number, id: number) => and(eq(partnerCards.partnerId, partnerId), eq(partnerCards.id, id));
const live = (partnerId: number, id: number) => and(owned(partnerId, id), isNull(partnerCards.deletedAt));

/** The columns of a list item: never the designs, which can carry megabytes of images. */
const listColumns = {
  id: partnerCards.id,
  title: partnerCards.title,
  isActive: partnerCards.isActive,
  defaultCouponValidityDays: partnerCards.defaultCouponValidityDays,
  createdAt: partnerCards.createdAt,
  updatedAt: partnerCards.updatedAt,
};
export type CardListRow = { [K in keyof typeof listColumns]: CardRow[K] };

export const partnerCardsRepository = {
  async insert(db: Executor, partnerId: number, fields: CardColumns): Promise<CardRow> {
    const [row] = await db.insert(partnerCards).values({ partnerId, ...fields }).returning();
    return row!;
  },

  /** A live card; `forUpdate` locks its row until the transaction ends. */
  async find(db: Executor, partnerId: number, id: number, opts: { forUpdate?: boolean } = {}): Promise<CardRow | undefined> {
    const query = db.select().from(partnerCards).where(live(partnerId, id));
    const [row] = opts.forUpdate ? await query.for('update') : await query;
    return row;
  },

  async findIncludingDeleted(db: Executor, partnerId: number, id: number): Promise<CardRow | undefined> {
    const [row] = await db.select().from(partnerCards).where(owned(partnerId, id));
    return row;
  },

  async list(db: Executor, partnerId: number, filter: CardListFilter, limit: number, offset: number) {
    const where = and(
      eq(partnerCards.partnerId, partnerId),
      isNull(partnerCards.deletedAt),
      filter.isActive === undefined ? undefined : eq(partnerCards.isActive, filter.isActive),
      filter.shopId === undefined
        ? undefined
        : exists(
            db
              .select({ one: sql`1` })
              .from(partnerCardShops)
              .where(and(eq(partnerCardShops.cardId, partnerCards.id), eq(partnerCardShops.shopId, filter.shopId))),
          ),
    );
    const rows = await db.select(listColumns).from(partnerCards).where(where).orderBy(asc(partnerCards.id)).limit(limit).offset(offset);
    const [total] = await db.select({ n: count() }).from(partnerCards).where(where);
    return { rows: rows as CardListRow[], total: total?.n ?? 0 };
  },

  async update(db: Executor, partnerId: number, id: number, fields: Partial<CardColumns>): Promise<CardRow | undefined> {
    const [row] = await db
      .update(partnerCards)
      .set({ ...fields, updatedAt: new Date() })
      .where(live(partnerId, id))
      .returning();
    return row;
  },

  /** Soft delete: the card becomes inactive and invisible; rows referring to it stay valid. */
  async softDelete(db: Executor, partnerId: number, id: number): Promise<boolean> {
    const now = new Date();
    const rows = await db
      .update(partnerCards)
      .set({ deletedAt: now, isActive: false, updatedAt: now })
      .where(live(partnerId, id))
      .returning({ id: partnerCards.id });
    return rows.length > 0;
  },

  /** The shops a card is valid in, ascending. */
  async shopIds(db: Executor, partnerId: number, cardId: number): Promise<number[]> {
    const rows = await db
      .select({ shopId: partnerCardShops.shopId })
      .from(partnerCardShops)
      .innerJoin(partnerCards, eq(partnerCards.id, partnerCardShops.cardId))
      .where(and(owned(partnerId, cardId)))
      .orderBy(asc(partnerCardShops.shopId));
    return rows.map((r) => r.shopId);
  },

  /** Replace a card's shops; the caller has checked that the card and the shops are the partner's. */
  async replaceShops(db: Executor, partnerId: number, cardId: number, shopIds: number[]): Promise<void> {
    const card = await partnerCardsRepository.findIncludingDeleted(db, partnerId, cardId);
    if (!card) return;
    await db.delete(partnerCardShops).where(eq(partnerCardShops.cardId, cardId));
    if (shopIds.length > 0) await db.insert(partnerCardShops).values(shopIds.map((shopId) => ({ cardId, shopId })));
  },
};
