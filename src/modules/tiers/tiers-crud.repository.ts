// SQL of the tier CRUD and of the card views' tier lookup. Beside tiers.repository.ts (the
// ledger's and the background jobs' SQL) so that the two can change independently. Every
// CRUD function takes the owning partner and the programme: another partner's tier, or a
// tier of another programme, is simply not found.
import { and, asc, count, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../../infra/db/index.js';
import { partnerCards } from '../partner-cards/partner-cards.tables.js';
import type { TierBasis, TierWindow } from './tier-rules.js';
import type { TierRow } from './tiers.repository.js';
import { tiers } from './tiers.tables.js';

export type TierColumns = Pick<typeof tiers.$inferInsert, 'name' | 'threshold' | 'earnMultiplier' | 'benefits' | 'color'>;

/** What a card view needs of a programme: its basis, window and tiers (lowest threshold first). */
export interface ProgrammeTiers {
  basis: TierBasis;
  window: TierWindow;
  tiers: Array<Pick<TierRow, 'id' | 'name' | 'threshold' | 'color'>>;
}

const inProgramme = (partnerId: number, partnerCardId: number, id: number) =>
  and(eq(tiers.partnerId, partnerId), eq(tiers.partnerCardId, partnerCardId), eq(tiers.id, id));

export const tiersCrudRepository = {
  /**
   * The partner's live programme, its row locked until the transaction ends: tier changes of
   * one programme queue here, so that the count under the quota is exact.
   */
  async lockProgramme(db: Executor, partnerId: number, partnerCardId: number): Promise<boolean> {
    const rows = await db
      .select({ id: partnerCards.id })
      .from(partnerCards)
      .where(and(eq(partnerCards.id, partnerCardId), eq(partnerCards.partnerId, partnerId), isNull(partnerCards.deletedAt)))
      .for('update');
    return rows.length > 0;
  },

  /** Which of `ids` are tiers of the partner's programme (a campaign's tier_ids, DESIGN.md §12). */
  async idsInProgramme(db: Executor, partnerId: number, partnerCardId: number, ids: readonly number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const rows = await db
      .select({ id: tiers.id })
      .from(tiers)
      .where(and(eq(tiers.partnerId, partnerId), eq(tiers.partnerCardId, partnerCardId), inArray(tiers.id, [...ids])));
    return rows.map((r) => r.id);
  },

  async programmeExists(db: Executor, partnerId: number, partnerCardId: number): Promise<boolean> {
    const rows = await db
      .select({ id: partnerCards.id })
      .from(partnerCards)
      .where(and(eq(partnerCards.id, partnerCardId), eq(partnerCards.partnerId, partnerId), isNull(partnerCards.deletedAt)));
    return rows.length > 0;
  },

  async list(db: Executor, partnerId: number, partnerCardId: number): Promise<TierRow[]> {
    return db
      .select()
      .from(tiers)
      .where(and(eq(tiers.partnerId, partnerId), eq(tiers.partnerCardId, partnerCardId)))
      .orderBy(asc(tiers.threshold));
  },

  async count(db: Executor, partnerCardId: number): Promise<number> {
    const [row] = await db.select({ n: count() }).from(tiers).where(eq(tiers.partnerCardId, partnerCardId));
    return row?.n ?? 0;
  },

  async find(db: Executor, partnerId: number, partnerCardId: number, id: number): Promise<TierRow | undefined> {
    const [row] = await db.select().from(tiers).where(inProgramme(partnerId, partnerCardId, id));
    return row;
  },

  /** undefined: the threshold is taken in the programme (the unique index decides, also under a race). */
  async insert(db: Executor, partnerId: number, partnerCardId: number, fields: TierColumns, now: Date): Promise<TierRow | undefined> {
    const [row] = await db
      .insert(tiers)
      .values({ partnerId, partnerCardId, ...fields, createdAt: now, updatedAt: now })
      .onConflictDoNothing({ target: [tiers.partnerCardId, tiers.threshold] })
      .returning();
    return row;
  },

  /** Throws a unique violation when the new threshold is taken (the caller maps it). */
  async update(db: Executor, partnerId: number, partnerCardId: number, id: number, fields: Partial<TierColumns>, now: Date): Promise<TierRow | undefined> {
    const [row] = await db
      .update(tiers)
      .set({ ...fields, updatedAt: now })
      .where(inProgramme(partnerId, partnerCardId, id))
      .returning();
    return row;
  },

  async delete(db: Executor, partnerId: number, partnerCardId: number, id: number): Promise<boolean> {
    const rows = await db.delete(tiers).where(inProgramme(partnerId, partnerCardId, id)).returning({ id: tiers.id });
    return rows.length > 0;
  },

  /** The basis, window and tiers of programmes, in one statement (a card view's lookup). */
  async forViews(db: Executor, partnerCardIds: number[]): Promise<Map<number, ProgrammeTiers>> {
    const out = new Map<number, ProgrammeTiers>();
    if (partnerCardIds.length === 0) return out;
    const rows = await db
      .select({
        programme: partnerCards.id,
        basis: partnerCards.tierBasis,
        window: partnerCards.tierWindow,
        id: tiers.id,
        name: tiers.name,
        threshold: tiers.threshold,
        color: tiers.color,
      })
      .from(partnerCards)
      .leftJoin(tiers, eq(tiers.partnerCardId, partnerCards.id))
      .where(inArray(partnerCards.id, partnerCardIds))
      .orderBy(asc(partnerCards.id), sql`${tiers.threshold} asc nulls first`);
    for (const r of rows) {
      let p = out.get(r.programme);
      if (!p) out.set(r.programme, (p = { basis: r.basis, window: r.window, tiers: [] }));
      if (r.id !== null) p.tiers.push({ id: r.id, name: r.name!, threshold: r.threshold!, color: r.color });
    }
    return out;
  },

  /** The partner's live programmes that have tiers, with their tiers (lowest threshold first): the Overview's ladders. */
  async ladders(db: Executor, partnerId: number): Promise<Array<{ id: number; title: { en: string; lt: string }; tiers: Array<Pick<TierRow, 'id' | 'name' | 'color'>> }>> {
    const rows = await db
      .select({ programme: partnerCards.id, title: partnerCards.title, id: tiers.id, name: tiers.name, color: tiers.color })
      .from(partnerCards)
      .innerJoin(tiers, eq(tiers.partnerCardId, partnerCards.id))
      .where(and(eq(partnerCards.partnerId, partnerId), isNull(partnerCards.deletedAt)))
      .orderBy(asc(partnerCards.id), asc(tiers.threshold));
    const out: Array<{ id: number; title: { en: string; lt: string }; tiers: Array<Pick<TierRow, 'id' | 'name' | 'color'>> }> = [];
    for (const r of rows) {
      let p = out.at(-1);
      if (p?.id !== r.programme) out.push((p = { id: r.programme, title: r.title, tiers: [] }));
      p.tiers.push({ id: r.id, name: r.name, color: r.color });
    }
    return out;
  },
};
