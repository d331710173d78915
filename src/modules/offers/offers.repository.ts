// SQL for offers. Every function takes the owning partner (or, for the customer-facing lists,
// the set of partners the caller may see): another partner's offer is simply not found.
import { and, asc, count, eq, getTableColumns, inArray, isNull, max, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../infra/db/index.js';
import { offers } from './offers.tables.js';

export type OfferRow = typeof offers.$inferSelect;
export type OfferColumns = Omit<typeof offers.$inferInsert, 'id' | 'partnerId' | 'claimsCount' | 'deletedAt' | 'createdAt' | 'updatedAt'>;

export interface OfferListFilter {
  isActive?: boolean;
  featured?: boolean;
  /** Offers that name this catalogue product: in product_ids, or import-sourced for it. */
  productId?: number;
}

/** What a till or an app may see: live offers (active, started, not ended) of these partners. */
export interface LiveOfferFilter {
  partnerIds: number[];
  featured?: boolean;
  shopId?: number;
  categoryId?: number;
}

const owned = (partnerId: number, id: number) => and(eq(offers.partnerId, partnerId), eq(offers.id, id), isNull(offers.deletedAt));
const at = (now: Date) => sql`${now.toISOString()}::timestamptz`;

/**
 * claims_count as clients see it. A limited offer counts its claims on its row (the
 * conditional UPDATE that enforces the limit); an unlimited one does not — a counter row every
 * claim updates would make all claims of a popular offer queue on one row lock held through
 * each commit (Sylius #18960) — so its claims are its coupons.
 */
// (Qualified by hand: drizzle leaves columns of a one-table query unqualified, and inside the
// subquery a bare "id" would be the coupon's.)
const claimsCount = sql<number>`(case when "offers"."max_claims" is null
  then (select count(*) from coupons c where c.offer_id = "offers"."id") else "offers"."claims_count" end)::int`.mapWith(Number);
const columns = { ...getTableColumns(offers), claimsCount };

/** Advisory locks (two-key form) of an offer's claims: shared by unlimited claims, exclusive for a partner setting a limit. */
const OFFER_LOCK_CLASS = 7_334_201;

export const offersRepository = {
  async insert(db: Executor, partnerId: number, fields: OfferColumns, now: Date): Promise<OfferRow> {
    const [row] = await db.insert(offers).values({ partnerId, ...fields, createdAt: now, updatedAt: now }).returning(columns);
    return row!;
  },

  async find(db: Executor, partnerId: number, id: number): Promise<OfferRow | undefined> {
    const [row] = await db.select(columns).from(offers).where(owned(partnerId, id));
    return row;
  },

  /**
   * An offer of any partner, for a claim (which checks the caller's scope itself); deleted ones
   * are not found. claims_count is the stored counter — what a limited offer's claim checks —
   * not the count of an unlimited offer's coupons, which a claim does not need and which
   * grows with every claim.
   */
  async findForClaim(db: Executor, id: number): Promise<OfferRow | undefined> {
    const [row] = await db.select().from(offers).where(and(eq(offers.id, id), isNull(offers.deletedAt)));
    return row;
  },

  async list(db: Executor, partnerId: number, filter: OfferListFilter, limit: number, offset: number) {
    const where = and(
      eq(offers.partnerId, partnerId),
      isNull(offers.deletedAt),
      filter.isActive === undefined ? undefined : eq(offers.isActive, filter.isActive),
      filter.featured === undefined ? undefined : eq(offers.featured, filter.featured),
      filter.productId === undefined
        ? undefined
        : sql`(${filter.productId}::int = any(${offers.productIds}) or ${offers.sourceProductId} = ${filter.productId}::int)`,
    );
    const rows = await db.select(columns).from(offers).where(where).orderBy(asc(offers.id)).limit(limit).offset(offset);
    const [total] = await db.select({ n: count() }).from(offers).where(where);
    return { rows, total: total?.n ?? 0 };
  },

  async listLive(db: Executor, filter: LiveOfferFilter, now: Date, limit: number, offset: number) {
    if (filter.partnerIds.length === 0) return { rows: [], total: 0 };
    const conditions: SQL[] = [
      inArray(offers.partnerId, filter.partnerIds),
      isNull(offers.deletedAt),
      eq(offers.isActive, true),
      sql`(${offers.startsAt} is null or ${offers.startsAt} <= ${at(now)})`,
      sql`(${offers.endsAt} is null or ${offers.endsAt} > ${at(now)})`,
    ];
    if (filter.featured !== undefined) conditions.push(eq(offers.featured, filter.featured));
    if (filter.shopId !== undefined) conditions.push(sql`(cardinality(${offers.shopIds}) = 0 or ${filter.shopId}::int = any(${offers.shopIds}))`);
    if (filter.categoryId !== undefined) conditions.push(sql`${filter.categoryId}::int = any(${offers.categoryIds})`);
    const where = and(...conditions);
    const rows = await db.select(columns).from(offers).where(where).orderBy(asc(offers.id)).limit(limit).offset(offset);
    const [total] = await db.select({ n: count() }).from(offers).where(where);
    return { rows, total: total?.n ?? 0 };
  },

  /**
   * A partial update. Setting a limit on an offer that had none first waits for the claims in
   * flight (they hold the offer's shared lock) and counts its coupons into claims_count, so that
   * the limit is exact from the first claim after it.
   */
  async update(db: Executor, partnerId: number, id: number, fields: Partial<OfferColumns>, now: Date, settingLimit: boolean): Promise<OfferRow | undefined> {
    if (settingLimit) await db.execute(sql`select pg_advisory_xact_lock(${OFFER_LOCK_CLASS}, ${id})`);
    const [row] = await db
      .update(offers)
      .set({
        ...fields,
        ...(settingLimit ? { claimsCount: sql`(select count(*) from coupons c where c.offer_id = ${id})::int` } : {}),
        updatedAt: now,
      })
      .where(owned(partnerId, id))
      .returning(columns);
    return row;
  },

  /**
   * An unlimited offer's claim holds the offer's shared advisory lock to its commit: claims do
   * not wait for each other, and a partner setting a limit waits for them (update above). The
   * caller reads the offer again afterwards: a limit set meanwhile applies.
   */
  async holdUnlimited(db: Executor, id: number): Promise<void> {
    await db.execute(sql`select pg_advisory_xact_lock_shared(${OFFER_LOCK_CLASS}, ${id})`);
  },

  async softDelete(db: Executor, partnerId: number, id: number, now: Date): Promise<boolean> {
    const rows = await db.update(offers).set({ deletedAt: now, isActive: false, updatedAt: now }).where(owned(partnerId, id)).returning({ id: offers.id });
    return rows.length > 0;
  },

  /**
   * Count one claim of a limited offer — unless it is sold out. The WHERE clause is the limit:
   * of N parallel claims of the last unit, the first to update holds the row lock until it
   * commits and the others then re-check `claims_count < max_claims` and update nothing.
   */
  async countClaim(db: Executor, id: number): Promise<boolean> {
    const rows = await db
      .update(offers)
      .set({ claimsCount: sql`${offers.claimsCount} + 1` })
      .where(and(eq(offers.id, id), sql`${offers.claimsCount} < ${offers.maxClaims}`))
      .returning({ id: offers.id });
    return rows.length > 0;
  },

  async syncStatus(db: Executor, partnerId: number, now: Date) {
    const live = sql`${offers.deletedAt} is null`;
    const [row] = await db
      .select({
        total: sql<number>`count(*) filter (where ${live})::int`,
        active: sql<number>`count(*) filter (where ${live} and ${offers.isActive}
          and (${offers.startsAt} is null or ${offers.startsAt} <= ${at(now)}) and (${offers.endsAt} is null or ${offers.endsAt} > ${at(now)}))::int`,
        expired: sql<number>`count(*) filter (where ${live} and ${offers.endsAt} <= ${at(now)})::int`,
        lastChange: max(offers.updatedAt),
      })
      .from(offers)
      .where(eq(offers.partnerId, partnerId));
    return { total: Number(row?.total ?? 0), active: Number(row?.active ?? 0), expired: Number(row?.expired ?? 0), lastChange: row?.lastChange ?? null };
  },
};
