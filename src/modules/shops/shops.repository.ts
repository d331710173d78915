// SQL for shops. Every function takes the owning partner: a shop of another partner
// is simply not found.
import { and, asc, count, eq, gte, inArray, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../infra/db/index.js';
import { coupons } from '../coupons/coupons.tables.js';
import { pointsTransactions } from '../points/points.tables.js';
import { shops } from './shops.tables.js';

export type ShopRow = typeof shops.$inferSelect;
export interface ShopFields {
  name: string;
  code: string | null;
  address: string | null;
  city: string | null;
  country: string | null;
  postalCode: string | null;
  phone: string | null;
  email: string | null;
  lat: string | null;
  lng: string | null;
  openingHours: string | null;
  isActive: boolean;
}

/** A bounding box in degrees; `lng` is absent when the box spans every meridian (near a pole). */
export interface GeoBox {
  latMin: number;
  latMax: number;
  /** One or two ranges (two when the box crosses the antimeridian). */
  lng?: Array<[number, number]>;
}

/** Per UTC day of the ledger at one shop. */
export interface LedgerDay {
  day: string;
  transactions: number;
  purchaseAmount: string;
  pointsAwarded: number;
  pointsDeducted: number;
}

const owned = (partnerId: number, id: number) => and(eq(shops.partnerId, partnerId), eq(shops.id, id));

/** Mean Earth radius (IUGG), km. */
export const EARTH_RADIUS_KM = 6371.0088;

const rowsOf = <T>(result: unknown): T[] => (result as { rows: T[] }).rows;

export const shopsRepository = {
  async insert(db: Executor, partnerId: number, fields: Partial<ShopFields> & { name: string }): Promise<ShopRow> {
    const [row] = await db.insert(shops).values({ partnerId, ...fields }).returning();
    return row!;
  },
  async insertMany(db: Executor, partnerId: number, rows: Array<Partial<ShopFields> & { name: string }>): Promise<void> {
    if (rows.length === 0) return;
    await db.insert(shops).values(rows.map((fields) => ({ partnerId, ...fields })));
  },
  async find(db: Executor, partnerId: number, id: number): Promise<ShopRow | undefined> {
    const [row] = await db.select().from(shops).where(owned(partnerId, id));
    return row;
  },
  /** Every shop of the partner (imports compare against them all). */
  async all(db: Executor, partnerId: number): Promise<ShopRow[]> {
    return db.select().from(shops).where(eq(shops.partnerId, partnerId)).orderBy(asc(shops.id));
  },
  async list(db: Executor, partnerId: number, limit: number, offset: number) {
    const rows = await db.select().from(shops).where(eq(shops.partnerId, partnerId)).orderBy(asc(shops.id)).limit(limit).offset(offset);
    const [total] = await db.select({ n: count() }).from(shops).where(eq(shops.partnerId, partnerId));
    return { rows, total: total?.n ?? 0 };
  },
  /** Shops after `afterId`, in id order: exports page through with this. */
  async page(db: Executor, partnerId: number, afterId: number, limit: number): Promise<ShopRow[]> {
    return db
      .select()
      .from(shops)
      .where(and(eq(shops.partnerId, partnerId), sql`${shops.id} > ${afterId}`))
      .orderBy(asc(shops.id))
      .limit(limit);
  },
  async update(db: Executor, partnerId: number, id: number, fields: Partial<ShopFields>): Promise<ShopRow | undefined> {
    const [row] = await db
      .update(shops)
      .set({ ...fields, updatedAt: new Date() })
      .where(owned(partnerId, id))
      .returning();
    return row;
  },
  /** Clears the codes of `ids` (an import that swaps codes between shops would otherwise trip the unique index midway). */
  async clearCodes(db: Executor, partnerId: number, ids: number[]): Promise<void> {
    if (ids.length === 0) return;
    await db
      .update(shops)
      .set({ code: null })
      .where(and(eq(shops.partnerId, partnerId), inArray(shops.id, ids)));
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

  /**
   * Active shops of `partnerIds` within `radiusKm` of a point, nearest first. The box is a
   * range on the (partner_id, lat, lng) index; the exact great-circle distance (haversine,
   * in float8) then filters and orders the few rows inside it.
   */
  async nearby(
    db: Executor,
    partnerIds: number[],
    point: { lat: number; lng: number },
    radiusKm: number,
    box: GeoBox,
    limit: number,
  ): Promise<Array<{ shop: ShopRow; distanceKm: number }>> {
    if (partnerIds.length === 0) return [];
    // Bounds widened by one unit of the column's scale, so that rounding never drops a shop on the edge.
    const lo = (v: number) => (Math.floor(v * 1e6) / 1e6 - 1e-6).toFixed(6);
    const hi = (v: number) => (Math.ceil(v * 1e6) / 1e6 + 1e-6).toFixed(6);
    const distance = sql<number>`(2 * ${EARTH_RADIUS_KM}::float8 * asin(least(1::float8, sqrt(
        power(sin(radians(${shops.lat}::float8 - ${point.lat}::float8) / 2), 2)
        + cos(radians(${point.lat}::float8)) * cos(radians(${shops.lat}::float8))
          * power(sin(radians(${shops.lng}::float8 - ${point.lng}::float8) / 2), 2)))))`;
    const conditions: SQL[] = [
      inArray(shops.partnerId, partnerIds),
      eq(shops.isActive, true),
      sql`${shops.lat} is not null`,
      sql`${shops.lng} is not null`,
      gte(shops.lat, lo(box.latMin)),
      lte(shops.lat, hi(box.latMax)),
    ];
    if (box.lng) {
      conditions.push(or(...box.lng.map(([min, max]) => and(gte(shops.lng, lo(min)), lte(shops.lng, hi(max)))))!);
    }
    const rows = await db
      .select({ shop: shops, distanceKm: distance.mapWith(Number) })
      .from(shops)
      .where(and(...conditions, sql`${distance} <= ${radiusKm}::float8`))
      .orderBy(distance, asc(shops.id))
      .limit(limit);
    return rows;
  },

  /**
   * The shop's ledger per UTC day in [from, to): counts, purchase amounts net of reversed and
   * returned purchases, points in and out. A reversal or a return counts against what it
   * undoes, on its own day: taking back an earning's points lowers points_awarded, giving back
   * a spend's points lowers points_deducted (docs/shops.md).
   */
  async ledgerByDay(db: Executor, partnerId: number, shopId: number, from: Date, to: Date): Promise<LedgerDay[]> {
    const t = pointsTransactions;
    const result = await db.execute(sql`
      select to_char((t.created_at at time zone 'UTC')::date, 'YYYY-MM-DD') as day,
             count(*)::int as transactions,
             coalesce(sum(case when t.type = 'purchase' then t.amount
                               when t.type in ('reversal', 'return') and o.type = 'purchase' then t.amount end), 0)::text as purchase_amount,
             coalesce(sum(case when o.points > 0 then t.points when o.points < 0 then 0 else greatest(t.points, 0) end), 0)::bigint::text as points_awarded,
             coalesce(sum(case when o.points < 0 then -t.points when o.points > 0 then 0 else greatest(-t.points, 0) end), 0)::bigint::text as points_deducted
      from ${t} t
      left join ${t} o on o.id = coalesce(t.reverses_id, t.returns_id)
      where t.partner_id = ${partnerId} and t.shop_id = ${shopId}
        and t.created_at >= ${from.toISOString()}::timestamptz and t.created_at < ${to.toISOString()}::timestamptz
      group by 1
      order by 1`);
    return rowsOf<{ day: string; transactions: number; purchase_amount: string; points_awarded: string; points_deducted: string }>(result).map((r) => ({
      day: r.day,
      transactions: Number(r.transactions),
      purchaseAmount: r.purchase_amount,
      pointsAwarded: Number(r.points_awarded),
      pointsDeducted: Number(r.points_deducted),
    }));
  },

  /** Distinct customers with a ledger entry at the shop in [from, to). */
  async uniqueCustomers(db: Executor, partnerId: number, shopId: number, from: Date, to: Date): Promise<number> {
    const t = pointsTransactions;
    const result = await db.execute(sql`
      select count(distinct customer_id)::int as n from ${t}
      where partner_id = ${partnerId} and shop_id = ${shopId}
        and created_at >= ${from.toISOString()}::timestamptz and created_at < ${to.toISOString()}::timestamptz`);
    return Number(rowsOf<{ n: number }>(result)[0]?.n ?? 0);
  },

  /**
   * Cards first seen at the shop in [from, to): cards whose earliest ledger entry made at any
   * shop of the partner was made at this one, inside the window. (A card itself records no
   * shop: it is joined in the app; its first till transaction is where it started being used.)
   */
  async newCards(db: Executor, partnerId: number, shopId: number, from: Date, to: Date): Promise<number> {
    const t = pointsTransactions;
    const result = await db.execute(sql`
      select count(*)::int as n from (
        select distinct on (card_id) card_id, shop_id, created_at
        from ${t}
        where partner_id = ${partnerId} and shop_id is not null
          and card_id in (select card_id from ${t} where partner_id = ${partnerId} and shop_id = ${shopId}
                            and created_at >= ${from.toISOString()}::timestamptz and created_at < ${to.toISOString()}::timestamptz)
        order by card_id, created_at, id
      ) first_seen
      where shop_id = ${shopId} and created_at >= ${from.toISOString()}::timestamptz and created_at < ${to.toISOString()}::timestamptz`);
    return Number(rowsOf<{ n: number }>(result)[0]?.n ?? 0);
  },

  /** Coupons redeemed at the shop per UTC day in [from, to) (a rolled-back redemption is no longer one). */
  async couponsRedeemedByDay(db: Executor, partnerId: number, shopId: number, from: Date, to: Date): Promise<Map<string, number>> {
    const result = await db.execute(sql`
      select to_char((used_at at time zone 'UTC')::date, 'YYYY-MM-DD') as day, count(*)::int as n
      from ${coupons}
      where partner_id = ${partnerId} and used_shop_id = ${shopId}
        and used_at >= ${from.toISOString()}::timestamptz and used_at < ${to.toISOString()}::timestamptz
      group by 1`);
    return new Map(rowsOf<{ day: string; n: number }>(result).map((r) => [r.day, Number(r.n)]));
  },
};
