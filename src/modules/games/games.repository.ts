// SQL for games and their rewards. Every function takes the owning partner: another
// partner's game is simply not found, and so are its rewards.
import { and, asc, count, eq, inArray, isNull } from 'drizzle-orm';
import type { Executor } from '../../infra/db/index.js';
import { games, gamesRewards } from './games.tables.js';

export type GameRow = typeof games.$inferSelect;
export type GameColumns = Omit<typeof games.$inferInsert, 'id' | 'partnerId' | 'createdAt' | 'updatedAt'>;
export type RewardRow = typeof gamesRewards.$inferSelect;
export type RewardColumns = Pick<typeof gamesRewards.$inferInsert, 'label' | 'probability' | 'rewardType' | 'points' | 'coupon'>;

const owned = (partnerId: number, id: number) => and(eq(games.partnerId, partnerId), eq(games.id, id));

export const gamesRepository = {
  async insert(db: Executor, partnerId: number, fields: GameColumns): Promise<GameRow> {
    const [row] = await db.insert(games).values({ partnerId, ...fields }).returning();
    return row!;
  },

  async find(db: Executor, partnerId: number, id: number, opts: { forUpdate?: boolean } = {}): Promise<GameRow | undefined> {
    const query = db.select().from(games).where(owned(partnerId, id));
    const [row] = opts.forUpdate ? await query.for('update') : await query;
    return row;
  },

  async list(db: Executor, partnerId: number, filter: { isActive?: boolean }, limit: number, offset: number) {
    const where = and(eq(games.partnerId, partnerId), filter.isActive === undefined ? undefined : eq(games.isActive, filter.isActive));
    const rows = await db.select().from(games).where(where).orderBy(asc(games.id)).limit(limit).offset(offset);
    const [total] = await db.select({ n: count() }).from(games).where(where);
    return { rows, total: total?.n ?? 0 };
  },

  async update(db: Executor, partnerId: number, id: number, fields: Partial<GameColumns>): Promise<GameRow | undefined> {
    const [row] = await db
      .update(games)
      .set({ ...fields, updatedAt: new Date() })
      .where(owned(partnerId, id))
      .returning();
    return row;
  },

  /** The current (not retired) rewards of the partner's games, in each game's order. */
  async rewards(db: Executor, partnerId: number, gameIds: number[]): Promise<RewardRow[]> {
    if (gameIds.length === 0) return [];
    const rows = await db
      .select({ reward: gamesRewards })
      .from(gamesRewards)
      .innerJoin(games, eq(games.id, gamesRewards.gameId))
      .where(and(eq(games.partnerId, partnerId), inArray(gamesRewards.gameId, gameIds), isNull(gamesRewards.retiredAt)))
      .orderBy(asc(gamesRewards.gameId), asc(gamesRewards.position));
    return rows.map((r) => r.reward);
  },

  /**
   * Retire the game's current rewards and insert `rewards` in their place. Retired rows are
   * kept so that plays which drew them keep their link. The caller holds the game's row lock.
   */
  async replaceRewards(db: Executor, partnerId: number, gameId: number, rewards: RewardColumns[]): Promise<void> {
    const game = await gamesRepository.find(db, partnerId, gameId);
    if (!game) return;
    await db
      .update(gamesRewards)
      .set({ retiredAt: new Date() })
      .where(and(eq(gamesRewards.gameId, gameId), isNull(gamesRewards.retiredAt)));
    await db.insert(gamesRewards).values(rewards.map((r, position) => ({ ...r, gameId, position })));
  },
};
