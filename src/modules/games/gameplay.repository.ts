// SQL of gameplay. Every change of a play is one conditional UPDATE (… WHERE status IN
// (allowed) AND expires_at > now): a second claim of the same reward finds the row already
// claimed. A session is found by its key AND its owner — the customer who plays it, or the
// partner whose game it is — so another owner's key is simply not found.
import { and, asc, count, desc, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../infra/db/index.js';
import { gameDailyPlays, gameSessions, type SessionStatus } from './gameplay.tables.js';
import { games, gamesRewards } from './games.tables.js';

export type SessionRow = typeof gameSessions.$inferSelect;
export type GameRow = typeof games.$inferSelect;
export type RewardRow = typeof gamesRewards.$inferSelect;

/** Who acts on a session: its customer (optionally narrowed to one partner) or the partner (API credentials). */
export type SessionOwner = { customerId: number; partnerId?: number } | { partnerId: number; customerId?: undefined };

const at = (now: Date) => sql`${now.toISOString()}::timestamptz`;

function ownerConditions(owner: SessionOwner): SQL[] {
  const out: SQL[] = [];
  if (owner.customerId !== undefined) out.push(eq(gameSessions.customerId, owner.customerId));
  if (owner.partnerId !== undefined) out.push(eq(gameSessions.partnerId, owner.partnerId));
  if (out.length === 0) throw new Error('session owner required');
  return out;
}

const live = (now: Date) =>
  and(eq(games.isActive, true), sql`(${games.startsAt} is null or ${games.startsAt} <= ${at(now)})`, sql`(${games.endsAt} is null or ${games.endsAt} > ${at(now)})`);

export const gameplayRepository = {
  /** A game of any partner (the caller checks its scope). */
  async findGame(db: Executor, id: number): Promise<GameRow | undefined> {
    const [row] = await db.select().from(games).where(eq(games.id, id));
    return row;
  },

  /** Live games (active, in their window) of these partners, ordered by id. */
  async liveGames(db: Executor, partnerIds: number[], now: Date, limit: number, offset: number) {
    if (partnerIds.length === 0) return { rows: [], total: 0 };
    const where = and(inArray(games.partnerId, partnerIds), live(now));
    const rows = await db.select().from(games).where(where).orderBy(asc(games.id)).limit(limit).offset(offset);
    const [total] = await db.select({ n: count() }).from(games).where(where);
    return { rows, total: total?.n ?? 0 };
  },

  /** The current (not retired) rewards of these games, in each game's order. */
  async currentRewards(db: Executor, gameIds: number[]): Promise<RewardRow[]> {
    if (gameIds.length === 0) return [];
    return db
      .select()
      .from(gamesRewards)
      .where(and(inArray(gamesRewards.gameId, gameIds), isNull(gamesRewards.retiredAt)))
      .orderBy(asc(gamesRewards.gameId), asc(gamesRewards.position));
  },

  async reward(db: Executor, id: number): Promise<RewardRow | undefined> {
    const [row] = await db.select().from(gamesRewards).where(eq(gamesRewards.id, id));
    return row;
  },

  /**
   * Count one play of the customer on the UTC day — unless the day's limit is reached. The
   * WHERE clause of the upsert is the limit: parallel starts queue on the (game, customer,
   * day) row and each re-checks `plays < limit` after the one before it commits.
   */
  async countPlay(db: Executor, gameId: number, customerId: number, day: string, limit: number): Promise<boolean> {
    const rows = await db
      .insert(gameDailyPlays)
      .values({ gameId, customerId, day, plays: 1 })
      .onConflictDoUpdate({
        target: [gameDailyPlays.gameId, gameDailyPlays.customerId, gameDailyPlays.day],
        set: { plays: sql`${gameDailyPlays.plays} + 1` },
        setWhere: sql`${gameDailyPlays.plays} < ${limit}`,
      })
      .returning({ plays: gameDailyPlays.plays });
    return rows.length > 0;
  },

  /** Plays of the customer today, per game. */
  async playsOn(db: Executor, customerId: number, gameIds: number[], day: string): Promise<Map<number, number>> {
    if (gameIds.length === 0) return new Map();
    const rows = await db
      .select({ gameId: gameDailyPlays.gameId, plays: gameDailyPlays.plays })
      .from(gameDailyPlays)
      .where(and(eq(gameDailyPlays.customerId, customerId), eq(gameDailyPlays.day, day), inArray(gameDailyPlays.gameId, gameIds)));
    return new Map(rows.map((r) => [r.gameId, r.plays]));
  },

  async insertSession(db: Executor, values: typeof gameSessions.$inferInsert): Promise<SessionRow> {
    const [row] = await db.insert(gameSessions).values(values).returning();
    return row!;
  },

  async findSession(db: Executor, owner: SessionOwner, key: string): Promise<SessionRow | undefined> {
    const [row] = await db
      .select()
      .from(gameSessions)
      .where(and(eq(gameSessions.sessionKey, key), ...ownerConditions(owner)));
    return row;
  },

  /** Move a live session from one of `from` on; undefined when it was not (any more) in one of them. */
  async transition(
    db: Executor,
    owner: SessionOwner,
    key: string,
    from: SessionStatus[],
    now: Date,
    set: Partial<typeof gameSessions.$inferInsert> & { progress?: number | SQL },
  ): Promise<SessionRow | undefined> {
    const [row] = await db
      .update(gameSessions)
      .set(set)
      .where(and(eq(gameSessions.sessionKey, key), ...ownerConditions(owner), inArray(gameSessions.status, from), sql`${gameSessions.expiresAt} > ${at(now)}`))
      .returning();
    return row;
  },

  async setOutcome(db: Executor, id: number, outcome: { transactionId?: number; couponId?: number }): Promise<void> {
    await db.update(gameSessions).set(outcome).where(eq(gameSessions.id, id));
  },

  async history(db: Executor, owner: { customerId: number; partnerId?: number }, limit: number, offset: number) {
    const where = and(...ownerConditions(owner));
    const rows = await db
      .select({ session: gameSessions, game: { id: games.id, name: games.name, type: games.type }, reward: gamesRewards })
      .from(gameSessions)
      .innerJoin(games, eq(games.id, gameSessions.gameId))
      .innerJoin(gamesRewards, eq(gamesRewards.id, gameSessions.rewardId))
      .where(where)
      .orderBy(desc(gameSessions.id))
      .limit(limit)
      .offset(offset);
    const [total] = await db.select({ n: count() }).from(gameSessions).where(where);
    return { rows, total: total?.n ?? 0 };
  },

  /** Mark up to `limit` live sessions past their 30 minutes expired (rows another node holds are skipped). */
  async expireDue(db: Executor, now: Date, limit: number): Promise<Array<{ sessionKey: string; progress: number }>> {
    const result = await db.execute(sql`
      update game_sessions set status = 'expired'
      where id in (
        select id from game_sessions
        where status in ('started', 'in_progress', 'finished') and expires_at <= ${at(now)}
        order by expires_at limit ${limit} for update skip locked)
      returning session_key, progress`);
    return (result as unknown as { rows: Array<{ session_key: string; progress: number }> }).rows.map((r) => ({
      sessionKey: r.session_key,
      progress: Number(r.progress),
    }));
  },
};
