// SQL for the campaigns CRUD. Every function takes the owning partner: another partner's
// campaign is simply not found. Soft-deleted campaigns are not found either (their rows stay
// for the transactions that earned points from them, see campaigns.tables.ts).
import { and, asc, count, eq, getTableColumns, isNull, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../infra/db/index.js';
import { campaignStatusSql, type CampaignStatus } from './campaign-status.js';
import { campaignLimitShards, campaigns, campaignTotalsSql } from './campaigns.tables.js';

export type CampaignRow = typeof campaigns.$inferSelect;
export type CampaignColumns = Omit<typeof campaigns.$inferInsert, 'id' | 'partnerId' | 'usesCount' | 'pointsAwarded' | 'deletedAt' | 'createdAt' | 'updatedAt'>;

export interface CampaignListFilter {
  partnerCardId?: number;
  isActive?: boolean;
  status?: CampaignStatus;
}

/** Class of the per-programme advisory lock campaign creates and updates take (any constant unused elsewhere). */
const CAMPAIGN_QUOTA_LOCK_CLASS = 7_334_203;

const owned = (partnerId: number, id: number) => and(eq(campaigns.partnerId, partnerId), eq(campaigns.id, id), isNull(campaigns.deletedAt));

// The counters a campaign shows are its row's plus its shards' (campaigns.tables.ts).
const totals = campaignTotalsSql('campaigns');
const withTotals = { ...getTableColumns(campaigns), usesCount: sql<number>`${totals.uses}`.mapWith(Number), pointsAwarded: sql<number>`${totals.points}`.mapWith(Number) };

export const campaignsRepository = {
  async insert(db: Executor, partnerId: number, fields: CampaignColumns, now: Date): Promise<CampaignRow> {
    const [row] = await db.insert(campaigns).values({ partnerId, ...fields, createdAt: now, updatedAt: now }).returning();
    return row!;
  },

  /**
   * `lock`: for an update that checks the body against the stored row (a concurrent PUT waits,
   * then sees this one's result). FOR NO KEY UPDATE, as the award's slow path takes it: an
   * award's counter rows check their foreign key with KEY SHARE on this row, which FOR UPDATE
   * would block while the award holds a limit shard this update waits for — a cycle.
   */
  async find(db: Executor, partnerId: number, id: number, opts: { lock?: boolean } = {}): Promise<CampaignRow | undefined> {
    const query = db.select(withTotals).from(campaigns).where(owned(partnerId, id));
    const [row] = opts.lock ? await query.for('no key update') : await query;
    return row;
  },

  async list(db: Executor, partnerId: number, filter: CampaignListFilter, now: Date, limit: number, offset: number) {
    const conditions: Array<SQL | undefined> = [
      eq(campaigns.partnerId, partnerId),
      isNull(campaigns.deletedAt),
      filter.partnerCardId === undefined ? undefined : eq(campaigns.partnerCardId, filter.partnerCardId),
      filter.isActive === undefined ? undefined : eq(campaigns.isActive, filter.isActive),
      filter.status === undefined ? undefined : sql`${campaignStatusSql(now)} = ${filter.status}`,
    ];
    const where = and(...conditions);
    const rows = await db.select(withTotals).from(campaigns).where(where).orderBy(asc(campaigns.id)).limit(limit).offset(offset);
    const [total] = await db.select({ n: count() }).from(campaigns).where(where);
    return { rows, total: total?.n ?? 0 };
  },

  /**
   * Holds the programme's campaign quota until the transaction ends: creates and updates that
   * could add a campaign that has not ended queue here, so that the count below is exact. An
   * advisory lock, not the partner_cards row: awards and card sign-ups read that row.
   */
  async lockQuota(db: Executor, partnerCardId: number): Promise<void> {
    await db.execute(sql`select pg_advisory_xact_lock(${CAMPAIGN_QUOTA_LOCK_CLASS}::int, ${partnerCardId}::int)`);
  },

  /** The programme's campaigns that have not ended at `now` (paused and exhausted ones too; deleted ones not), `except` one. */
  async countNotEnded(db: Executor, partnerCardId: number, now: Date, except?: number): Promise<number> {
    const [row] = await db
      .select({ n: count() })
      .from(campaigns)
      .where(
        and(
          eq(campaigns.partnerCardId, partnerCardId),
          isNull(campaigns.deletedAt),
          sql`(${campaigns.endsAt} is null or ${campaigns.endsAt} > ${now.toISOString()}::timestamptz)`,
          except === undefined ? undefined : sql`${campaigns.id} <> ${except}`,
        ),
      );
    return Number(row?.n ?? 0);
  },

  /** A partial update; never touches the counters, which only awards and returns move. */
  async update(db: Executor, partnerId: number, id: number, fields: Partial<CampaignColumns>, now: Date): Promise<CampaignRow | undefined> {
    const [row] = await db
      .update(campaigns)
      .set({ ...fields, updatedAt: now })
      .where(owned(partnerId, id))
      .returning({ id: campaigns.id });
    return row && this.find(db, partnerId, id);
  },

  /**
   * A change of `limit_uses` or `points_budget`: the limit shards go (in the update's
   * transaction, under the campaign row's lock; deleting them waits for every award that took
   * from one). The next award finds none and spreads what the new limits leave, exactly.
   */
  async clearLimitShards(db: Executor, id: number): Promise<void> {
    await db.delete(campaignLimitShards).where(eq(campaignLimitShards.campaignId, id));
  },

  /** Also inactive, so that a reader which forgets deleted_at still skips it. */
  async softDelete(db: Executor, partnerId: number, id: number, now: Date): Promise<boolean> {
    const rows = await db.update(campaigns).set({ deletedAt: now, isActive: false, updatedAt: now }).where(owned(partnerId, id)).returning({ id: campaigns.id });
    return rows.length > 0;
  },
};
