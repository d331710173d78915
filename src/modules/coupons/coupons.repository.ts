// SQL for coupons. Every change of state is ONE statement: a conditional UPDATE whose WHERE
// clause is the rule, the history row of the change, and the coupon as it was — so a till's
// verify or redeem is one round trip, and of N parallel redeems exactly one finds the row
// still redeemable (the others wait on the row lock, re-check the WHERE clause against the
// winner's commit, and change nothing). Reads take the owner (partner or customer) in every
// signature.
//
// Two tables of other modules are read here, only to show the coupon's holder: `customers`
// (name, e-mail) in lists, and — in the verify statement, the till's hot path like the points
// award (points.repository.ts) — the card, its programme's rules and the partner's game count.
import { createHash } from 'node:crypto';
import { and, asc, count, desc, eq, gte, lt, sql, type SQL } from 'drizzle-orm';
import type { CardTierColumns } from '../tiers/tiers.service.js';
import type { Executor } from '../../infra/db/index.js';
import { customers } from '../customers/customers.tables.js';
import { couponEvents, coupons, type CouponEventType, type CouponStatus } from './coupons.tables.js';

export type CouponRow = typeof coupons.$inferSelect;
export type CouponEventRow = typeof couponEvents.$inferSelect;
export type NewCoupon = Omit<typeof coupons.$inferInsert, 'id' | 'code' | 'status' | 'pendingShopId' | 'pendingUntil' | 'usedAt' | 'usedShopId' | 'createdAt' | 'updatedAt'>;

export interface Holder {
  name: string | null;
  email: string | null;
}
export type CouponWithHolder = CouponRow & { holder: Holder };

/** Who may see a coupon: the partner (API, partner JWT) or the customer (customer JWT, optionally narrowed to one partner). */
export interface CouponScope {
  partnerId?: number;
  customerId?: number;
}

export type StatusFilter = Exclude<CouponStatus, 'pending'> | 'pending' | 'all';

export interface CouponFilter {
  status: StatusFilter;
  /** Coupons valid at this shop (the offer lists it, or lists none). */
  validAtShopId?: number;
  /** Coupons redeemed at this shop. */
  usedShopId?: number;
  customerId?: number;
  cardId?: number;
  offerId?: number;
  gameId?: number;
  code?: string;
  /** created_at ≥ from, < to. */
  from?: Date;
  to?: Date;
}

interface Rows<T> {
  rows: T[];
}
const rowsOf = <T>(result: unknown): T[] => (result as Rows<T>).rows;
const ts = (d: Date) => d.toISOString();
const dateOf = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string));

/**
 * Run a statement as a named prepared statement: PostgreSQL then plans it once per connection
 * instead of on every call (planning the verify statement, with its joins and subqueries,
 * costs about as much as running it). The name is the digest of the text, so one text is one
 * statement on every connection. PGlite ignores the name. (Drizzle's `execute` has no name
 * parameter; this is the same call with one.)
 */
function executeNamed(db: Executor, query: SQL): Promise<unknown> {
  const d = db as unknown as {
    dialect: { sqlToQuery(q: SQL): { sql: string; params: unknown[] } };
    session: { prepareQuery(q: { sql: string; params: unknown[] }, fields: undefined, name: string, arrayMode: boolean): { execute(): Promise<unknown> } };
  };
  const built = d.dialect.sqlToQuery(query);
  const name = `coupons_${createHash('sha1').update(built.sql).digest('hex').slice(0, 20)}`;
  return d.session.prepareQuery(built, undefined, name, false).execute();
}

/** A coupon row as `to_json(coupons)` writes it → the row drizzle would read. */
function rowFromJson(j: Record<string, unknown>): CouponRow {
  return {
    id: Number(j.id),
    partnerId: Number(j.partner_id),
    customerId: Number(j.customer_id),
    cardId: Number(j.card_id),
    code: String(j.code),
    status: j.status as CouponStatus,
    offerId: j.offer_id === null ? null : Number(j.offer_id),
    gameId: j.game_id === null ? null : Number(j.game_id),
    terms: (j.terms ?? null) as CouponRow['terms'],
    game: (j.game ?? null) as CouponRow['game'],
    shopIds: (j.shop_ids as number[]) ?? [],
    productIds: (j.product_ids as number[]) ?? [],
    categoryIds: (j.category_ids as number[]) ?? [],
    expiresAt: dateOf(j.expires_at),
    pendingShopId: j.pending_shop_id === null ? null : Number(j.pending_shop_id),
    pendingUntil: dateOf(j.pending_until),
    usedAt: dateOf(j.used_at),
    usedShopId: j.used_shop_id === null ? null : Number(j.used_shop_id),
    createdAt: dateOf(j.created_at)!,
    updatedAt: dateOf(j.updated_at)!,
  };
}

/** Redeemable (or reservable) at `shop` now: live, valid at the shop, and free or reserved by that shop (or its reservation lapsed). */
const usableAt = (shopId: number, now: string) => sql`(expires_at is null or expires_at > ${now}::timestamptz)
  and (cardinality(shop_ids) = 0 or ${shopId}::int = any(shop_ids))
  and (status = 'active' or (status = 'pending' and (pending_shop_id = ${shopId}::int or pending_until <= ${now}::timestamptz)))`;

export interface Transition {
  set: SQL;
  where: SQL;
  event: CouponEventType;
  receiptNumber?: string | null;
  amount?: string | null;
  reason?: string | null;
}

export interface TransitionResult {
  /** The coupon as it was before the statement. */
  before: CouponRow;
  holder: Holder;
  shopOk: boolean;
  changed: boolean;
}

/** The SQL condition of a status filter, with the derived states (expiry, lapsed reservation) worked out at `now`. */
function statusCondition(status: StatusFilter, now: Date): SQL | undefined {
  const at = ts(now);
  const live = sql`(${coupons.expiresAt} is null or ${coupons.expiresAt} > ${at}::timestamptz)`;
  switch (status) {
    case 'all':
      return undefined;
    case 'active':
      return sql`${coupons.status} in ('active', 'pending') and ${live}`;
    case 'pending':
      return sql`${coupons.status} = 'pending' and ${coupons.pendingUntil} > ${at}::timestamptz and ${live}`;
    case 'used':
      return sql`${coupons.status} = 'used'`;
    case 'expired':
      return sql`(${coupons.status} = 'expired' or (${coupons.status} in ('active', 'pending') and not ${live}))`;
  }
}

function conditions(scope: CouponScope, f: CouponFilter, now: Date): SQL[] {
  const out: SQL[] = [];
  if (scope.partnerId !== undefined) out.push(eq(coupons.partnerId, scope.partnerId));
  if (scope.customerId !== undefined) out.push(eq(coupons.customerId, scope.customerId));
  // A scope always narrows: a caller without one must never see everything by accident.
  if (out.length === 0) throw new Error('coupon scope required');
  const status = statusCondition(f.status, now);
  if (status) out.push(status);
  if (f.validAtShopId !== undefined) out.push(sql`(cardinality(${coupons.shopIds}) = 0 or ${f.validAtShopId}::int = any(${coupons.shopIds}))`);
  if (f.usedShopId !== undefined) out.push(eq(coupons.usedShopId, f.usedShopId));
  if (f.customerId !== undefined) out.push(eq(coupons.customerId, f.customerId));
  if (f.cardId !== undefined) out.push(eq(coupons.cardId, f.cardId));
  if (f.offerId !== undefined) out.push(eq(coupons.offerId, f.offerId));
  if (f.gameId !== undefined) out.push(eq(coupons.gameId, f.gameId));
  if (f.code !== undefined) out.push(eq(coupons.code, f.code));
  if (f.from !== undefined) out.push(gte(coupons.createdAt, f.from));
  if (f.to !== undefined) out.push(lt(coupons.createdAt, f.to));
  return out;
}

const withHolder = { coupon: coupons, name: customers.name, email: customers.email };
const joined = (r: { coupon: CouponRow; name: string | null; email: string | null }): CouponWithHolder => ({ ...r.coupon, holder: { name: r.name, email: r.email } });

export const couponsRepository = {
  /**
   * Issue: the coupon, its `issued` history row and its holder, in one statement; undefined
   * when the code is taken (the caller draws another).
   */
  async issue(db: Executor, v: NewCoupon & { code: string; createdAt: Date }): Promise<CouponWithHolder | undefined> {
    const at = ts(v.createdAt);
    const ids = (list: number[] | undefined) => `{${(list ?? []).map((n) => Math.trunc(n)).join(',')}}`;
    const result = await db.execute(sql`
      with c as (
        insert into coupons (partner_id, customer_id, card_id, code, offer_id, game_id, terms, game,
                             shop_ids, product_ids, category_ids, expires_at, created_at, updated_at)
        values (${v.partnerId}, ${v.customerId}, ${v.cardId}, ${v.code}, ${v.offerId ?? null}, ${v.gameId ?? null},
                ${v.terms ? JSON.stringify(v.terms) : null}::jsonb, ${v.game ? JSON.stringify(v.game) : null}::jsonb,
                ${ids(v.shopIds)}::int[], ${ids(v.productIds)}::int[], ${ids(v.categoryIds)}::int[],
                ${v.expiresAt ? ts(v.expiresAt) : null}::timestamptz, ${at}::timestamptz, ${at}::timestamptz)
        on conflict (code) do nothing
        returning *
      ), ev as (
        insert into coupon_events (coupon_id, event, created_at) select id, 'issued', ${at}::timestamptz from c
      )
      select to_json(c) as coupon, cu.name as holder_name, cu.email as holder_email from c join customers cu on cu.id = c.customer_id`);
    const [row] = rowsOf<{ coupon: Record<string, unknown>; holder_name: string | null; holder_email: string | null }>(result);
    return row && { ...rowFromJson(row.coupon), holder: { name: row.holder_name, email: row.holder_email } };
  },

  async find(db: Executor, scope: CouponScope, id: number): Promise<CouponWithHolder | undefined> {
    const [row] = await db
      .select(withHolder)
      .from(coupons)
      .innerJoin(customers, eq(customers.id, coupons.customerId))
      .where(and(eq(coupons.id, id), ...conditions(scope, { status: 'all' }, new Date(0))));
    return row && joined(row);
  },

  async list(db: Executor, scope: CouponScope, filter: CouponFilter, now: Date, limit: number, offset: number) {
    const where = and(...conditions(scope, filter, now));
    const rows = await db
      .select(withHolder)
      .from(coupons)
      .innerJoin(customers, eq(customers.id, coupons.customerId))
      .where(where)
      .orderBy(desc(coupons.id))
      .limit(limit)
      .offset(offset);
    const [total] = await db.select({ n: count() }).from(coupons).where(where);
    return { rows: rows.map(joined), total: total?.n ?? 0 };
  },

  /** Keyset pages for streaming exports (oldest first). */
  async listAfter(db: Executor, scope: CouponScope, filter: CouponFilter, now: Date, afterId: number, limit: number): Promise<CouponWithHolder[]> {
    const rows = await db
      .select(withHolder)
      .from(coupons)
      .innerJoin(customers, eq(customers.id, coupons.customerId))
      .where(and(...conditions(scope, filter, now), sql`${coupons.id} > ${afterId}`))
      .orderBy(asc(coupons.id))
      .limit(limit);
    return rows.map(joined);
  },

  async events(db: Executor, couponId: number): Promise<CouponEventRow[]> {
    return db.select().from(couponEvents).where(eq(couponEvents.couponId, couponId)).orderBy(asc(couponEvents.id));
  },

  /** How many coupons of an offer the customer holds (any state): the per-customer claim limit. */
  async countOfOffer(db: Executor, offerId: number, customerId: number): Promise<number> {
    const [row] = await db
      .select({ n: count() })
      .from(coupons)
      .where(and(eq(coupons.offerId, offerId), eq(coupons.customerId, customerId)));
    return row?.n ?? 0;
  },

  /**
   * One state change of the partner's coupon `id` as one statement: `t.where` decides, `t.set`
   * changes, a history row records it; `shopId` must be one of the partner's shops. Returns
   * the coupon as it was (to explain a refusal) and whether it changed; undefined when the
   * partner has no such coupon.
   */
  async transition(db: Executor, partnerId: number, id: number, shopId: number, now: Date, t: Transition): Promise<TransitionResult | undefined> {
    const at = ts(now);
    const result = await executeNamed(db, sql`
      with c as (
        select * from coupons where id = ${id} and partner_id = ${partnerId}
      ), s as (
        select exists (select 1 from shops where id = ${shopId} and partner_id = ${partnerId}) as ok
      ), upd as (
        update coupons set ${t.set}, updated_at = ${at}::timestamptz
        where id = (select id from c) and (select ok from s) and ${t.where}
        returning id
      ), ev as (
        insert into coupon_events (coupon_id, event, shop_id, receipt_number, amount, reason, created_at)
        select id, ${t.event}, ${shopId}, ${t.receiptNumber ?? null}, ${t.amount ?? null}::numeric, ${t.reason ?? null}, ${at}::timestamptz from upd
      )
      select to_json(c) as coupon, s.ok as shop_ok, (upd.id is not null) as changed, cu.name as holder_name, cu.email as holder_email
      from c cross join s left join upd on true join customers cu on cu.id = c.customer_id`);
    const [row] = rowsOf<{ coupon: Record<string, unknown>; shop_ok: boolean; changed: boolean; holder_name: string | null; holder_email: string | null }>(result);
    if (!row) return undefined;
    return { before: rowFromJson(row.coupon), holder: { name: row.holder_name, email: row.holder_email }, shopOk: row.shop_ok, changed: row.changed };
  },

  /**
   * The till's verify as ONE statement: find the partner's coupon by code, reserve it for
   * `shopId` until `until` when the rules allow, record the reservation, and read what the
   * till shows with it — the holder, the card (its balance after any points past their
   * expiry), the programme's rules, the partner's live games and the holder's live coupons.
   */
  async reserveByCode(db: Executor, partnerId: number, code: string, shopId: number, now: Date, until: Date): Promise<ReserveResult | undefined> {
    const at = ts(now);
    const result = await executeNamed(db, sql`
      with c as (
        select * from coupons where code = ${code} and partner_id = ${partnerId}
      ), s as (
        select exists (select 1 from shops where id = ${shopId} and partner_id = ${partnerId}) as ok
      ), upd as (
        update coupons set status = 'pending', pending_shop_id = ${shopId}, pending_until = ${ts(until)}::timestamptz, updated_at = ${at}::timestamptz
        where id = (select id from c) and (select ok from s) and ${usableAt(shopId, at)}
        returning id
      ), ev as (
        insert into coupon_events (coupon_id, event, shop_id, created_at) select id, 'verified', ${shopId}, ${at}::timestamptz from upd
      )
      select to_json(c) as coupon, s.ok as shop_ok, (upd.id is not null) as changed,
             cu.name as holder_name, cu.email as holder_email, cu.phone as holder_phone,
             lc.card_number, lc.partner_card_id, lc.tier_id, lc.tier_value::text as tier_value, lc.tier_keep_until,
             (lc.points_balance - case when lc.next_expiry_at <= ${at}::timestamptz then (
                select coalesce(sum(l.remaining), 0) from points_lots l
                where l.card_id = lc.id and l.remaining > 0 and l.expires_at <= ${at}::timestamptz) else 0 end)::int as points_balance,
             pc.points_enabled, pc.points_redemption_enabled,
             pc.points_per_currency::text as points_per_currency, pc.currency_amount::text as currency_amount,
             pc.points_per_currency_redemption::text as points_per_currency_redemption,
             pc.currency_amount_redemption::text as currency_amount_redemption,
             (select count(*) from games g where g.partner_id = ${partnerId} and g.is_active
                and (g.starts_at is null or g.starts_at <= ${at}::timestamptz)
                and (g.ends_at is null or g.ends_at > ${at}::timestamptz))::int as games_count,
             (select count(*) from coupons o where o.customer_id = c.customer_id and o.partner_id = ${partnerId}
                and o.status in ('active', 'pending') and (o.expires_at is null or o.expires_at > ${at}::timestamptz))::int as coupons_count
      from c cross join s left join upd on true
      join customers cu on cu.id = c.customer_id
      join loyalty_cards lc on lc.id = c.card_id
      join partner_cards pc on pc.id = lc.partner_card_id`);
    const [row] = rowsOf<ReserveRow>(result);
    if (!row) return undefined;
    return {
      before: rowFromJson(row.coupon),
      shopOk: row.shop_ok,
      changed: row.changed,
      holder: { name: row.holder_name, email: row.holder_email, phone: row.holder_phone },
      card: {
        cardNumber: row.card_number,
        pointsBalance: Number(row.points_balance),
        // The card's tier state, for the tier view (raw rows: ids and timestamps by hand).
        partnerCardId: Number(row.partner_card_id),
        tierId: row.tier_id === null ? null : Number(row.tier_id),
        tierValue: row.tier_value,
        tierKeepUntil: row.tier_keep_until === null ? null : new Date(row.tier_keep_until),
      },
      programme: {
        pointsEnabled: row.points_enabled,
        pointsRedemptionEnabled: row.points_redemption_enabled,
        pointsPerCurrency: row.points_per_currency,
        currencyAmount: row.currency_amount,
        pointsPerCurrencyRedemption: row.points_per_currency_redemption,
        currencyAmountRedemption: row.currency_amount_redemption,
      },
      gamesCount: Number(row.games_count),
      couponsCount: Number(row.coupons_count),
    };
  },

  usableAt,
};

interface ReserveRow {
  coupon: Record<string, unknown>;
  shop_ok: boolean;
  changed: boolean;
  holder_name: string | null;
  holder_email: string | null;
  holder_phone: string;
  card_number: string;
  partner_card_id: number;
  tier_id: number | null;
  tier_value: string;
  tier_keep_until: string | Date | null;
  points_balance: number;
  points_enabled: boolean;
  points_redemption_enabled: boolean;
  points_per_currency: string;
  currency_amount: string;
  points_per_currency_redemption: string;
  currency_amount_redemption: string;
  games_count: number;
  coupons_count: number;
}

export interface ReserveResult {
  before: CouponRow;
  shopOk: boolean;
  changed: boolean;
  holder: Holder & { phone: string };
  card: { cardNumber: string; pointsBalance: number } & CardTierColumns;
  programme: {
    pointsEnabled: boolean;
    pointsRedemptionEnabled: boolean;
    pointsPerCurrency: string;
    currencyAmount: string;
    pointsPerCurrencyRedemption: string;
    currencyAmountRedemption: string;
  };
  gamesCount: number;
  couponsCount: number;
}
