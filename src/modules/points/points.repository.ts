// SQL of the points ledger. Every value-moving function runs inside the caller's
// transaction after `lockCard` took the card row lock, so the balance it read is the
// balance it writes from. One ledger entry (transaction row, its lot, its draws, the
// lots' remaining and the card's balance) is written by ONE statement: a failure leaves
// nothing half-written, and the till waits for one round trip instead of five.
import { and, asc, count, desc, eq, gte, inArray, lt, sql, type SQL } from 'drizzle-orm';
import { executePrepared, intArray, type Executor } from '../../infra/db/index.js';
import { loyaltyCards } from '../loyalty-cards/loyalty-cards.tables.js';
// The one place outside the partner-cards module that reads its table: the programme's
// rules are joined to the card lock so that an award stays one round trip at the till.
import { partnerCards } from '../partner-cards/partner-cards.tables.js';
import { shops } from '../shops/shops.tables.js';
import type { CardTierState, TierDef, TierSettings } from '../tiers/tier-rules.js';
import { tierDef, tierColumns, type TierRow } from '../tiers/tiers.repository.js';
import { textToUnits } from '../tiers/tier-rules.js';
import { pointsLots, pointsTransactions, type PointsTransactionType } from './points.tables.js';

export type TransactionRow = typeof pointsTransactions.$inferSelect;

export interface LockedCard {
  id: number;
  partnerId: number;
  customerId: number;
  partnerCardId: number;
  pointsBalance: number;
  pointsDebt: number;
  nextExpiryAt: Date | null;
  shopOk: boolean;
  /** The card's tier state (DESIGN.md §13), moved with every earning, return and reversal. */
  tier: CardTierState;
  /** The programme's tier settings and tiers (lowest threshold first; none = no tiers). */
  tierSettings: TierSettings;
  tiers: TierDef[];
  programme: {
    isActive: boolean;
    pointsEnabled: boolean;
    pointsPerCurrency: string;
    currencyAmount: string;
    roundPointsUp: boolean;
    minPointsPerPurchase: number;
    maxPointsPerPurchase: number | null;
    pointsPerVisit: number;
    pointsExpirationDays: number | null;
    pointsRedemptionEnabled: boolean;
    pointsPerCurrencyRedemption: string;
    currencyAmountRedemption: string;
    minPointsForRedemption: number;
    maxPointsPerRedemption: number | null;
  };
}

export interface Draw {
  lotId: number;
  /** Taken from the lot; negative restores. */
  points: number;
}

export interface Entry {
  partnerId: number;
  cardId: number;
  customerId: number;
  shopId: number | null;
  type: PointsTransactionType;
  points: number;
  amount: string | null;
  balanceAfter: number;
  receiptNumber: string | null;
  reason: string | null;
  reversesId: number | null;
  /** A `return` entry's purchase or deduction. */
  returnsId?: number | null;
  createdAt: Date;
  /**
   * The card's tier state after this entry (DESIGN.md §13: the qualifying value and the tier
   * move with the entry), written by the same statement; left out when the entry moves neither.
   */
  tier?: CardTierState;
  /** The lot this entry earns (credits only). */
  lot?: { points: number; expiresAt: Date | null };
  /**
   * The card's points debt (DESIGN.md §12) this entry changes, as its debt entry: > 0 a return
   * the balance could not cover; < 0 points coming in paying debt off — an earning's drawn from
   * its own new lot, a spend's return or reversal's never restored into the lots it drew from.
   */
  debt?: number;
  draws?: Draw[];
  /**
   * The card's next expiry afterwards: given, or recomputed from the open lots leaving out
   * those this entry empties (`exhausted`) and adding the expiry of lots it refills (`extra`).
   */
  nextExpiry: { set: Date | null } | { recompute: { exhausted: number[]; extra: Date | null } };
}

interface Rows<T> {
  rows: T[];
}
const rowsOf = <T>(result: unknown): T[] => (result as Rows<T>).rows;
const ts = (d: Date | null) => (d === null ? null : d.toISOString());

/** A locked card's row as lockCard reads it (numerics as text: exact decimals). */
interface CardRow {
  id: number;
  partner_id: number;
  customer_id: number;
  partner_card_id: number;
  points_balance: number;
  points_debt: number;
  next_ms: number | null;
  shop_ok: boolean;
  is_active: boolean;
  points_enabled: boolean;
  ppc: string;
  ca: string;
  round_points_up: boolean;
  min_points_per_purchase: number;
  max_points_per_purchase: number | null;
  points_per_visit: number;
  points_expiration_days: number | null;
  points_redemption_enabled: boolean;
  ppcr: string;
  car: string;
  min_points_for_redemption: number;
  max_points_per_redemption: number | null;
  tier_id: number | null;
  tier_value: string;
  tier_value_until_ms: number | null;
  tier_reached_at_ms: number | null;
  tier_keep_until_ms: number | null;
  tier_basis: TierSettings['basis'];
  tier_window: TierSettings['window'];
  tier_downgrade: TierSettings['downgrade'];
  tier_time_zone: string;
  tiers: Array<Pick<TierRow, 'id' | 'threshold' | 'name' | 'color'> & { earn_multiplier: string }> | null;
}

const programmeColumns = {
  // A deleted programme earns nothing, like an inactive one.
  isActive: sql<boolean>`(${partnerCards.isActive} and ${partnerCards.deletedAt} is null)`,
  pointsEnabled: partnerCards.pointsEnabled,
  pointsPerCurrency: partnerCards.pointsPerCurrency,
  currencyAmount: partnerCards.currencyAmount,
  roundPointsUp: partnerCards.roundPointsUp,
  minPointsPerPurchase: partnerCards.minPointsPerPurchase,
  maxPointsPerPurchase: partnerCards.maxPointsPerPurchase,
  pointsPerVisit: partnerCards.pointsPerVisit,
  pointsExpirationDays: partnerCards.pointsExpirationDays,
  pointsRedemptionEnabled: partnerCards.pointsRedemptionEnabled,
  pointsPerCurrencyRedemption: partnerCards.pointsPerCurrencyRedemption,
  currencyAmountRedemption: partnerCards.currencyAmountRedemption,
  minPointsForRedemption: partnerCards.minPointsForRedemption,
  maxPointsPerRedemption: partnerCards.maxPointsPerRedemption,
};

export const pointsRepository = {
  /**
   * Lock a card (of the partner, when given) FOR UPDATE — or only read it (`lock` false: a
   * preview, which writes nothing) — with its programme's rules and whether `shopId` is one of
   * the partner's shops: one prepared round trip, on every value-moving operation.
   * `tiersIfDueAt`: an operation that moves no qualifying value (a deduction, a redeem, an
   * adjustment, an expiry) reads the programme's tiers only when tier work is due at that
   * time (tier-ledger.ts `refreshTier`); `tiers` is empty otherwise.
   */
  async lockCard(
    db: Executor,
    where: { partnerId?: number; cardId: number },
    shopId: number | null,
    lock = true,
    tiersIfDueAt?: Date,
  ): Promise<LockedCard | undefined> {
    const due = tiersIfDueAt === undefined ? null : tiersIfDueAt.toISOString();
    const query = sql`
      select c.id, c.partner_id, c.customer_id, c.partner_card_id, c.points_balance, c.points_debt,
             (extract(epoch from c.next_expiry_at) * 1000)::float8 as next_ms,
             (${shopId}::int is null or exists (select 1 from shops s where s.id = ${shopId}::int and s.partner_id = c.partner_id)) as shop_ok,
             (pc.is_active and pc.deleted_at is null) as is_active, pc.points_enabled, pc.points_per_currency::text as ppc,
             pc.currency_amount::text as ca, pc.round_points_up, pc.min_points_per_purchase, pc.max_points_per_purchase,
             pc.points_per_visit, pc.points_expiration_days, pc.points_redemption_enabled,
             pc.points_per_currency_redemption::text as ppcr, pc.currency_amount_redemption::text as car,
             pc.min_points_for_redemption, pc.max_points_per_redemption,
             c.tier_id, c.tier_value::text as tier_value, (extract(epoch from c.tier_value_until) * 1000)::float8 as tier_value_until_ms,
             (extract(epoch from c.tier_reached_at) * 1000)::float8 as tier_reached_at_ms, (extract(epoch from c.tier_keep_until) * 1000)::float8 as tier_keep_until_ms,
             pc.tier_basis, pc.tier_window, pc.tier_downgrade, pc.tier_time_zone,
             case when ${due}::timestamptz is null or c.tier_value_until <= ${due}::timestamptz or c.tier_keep_until <= ${due}::timestamptz then
               (select json_agg(json_build_object('id', t.id, 'threshold', t.threshold, 'name', t.name, 'color', t.color, 'earn_multiplier', t.earn_multiplier::text) order by t.threshold)
                  from tiers t where t.partner_card_id = c.partner_card_id) end as tiers
      from loyalty_cards c join partner_cards pc on pc.id = c.partner_card_id
      where c.id = ${where.cardId} and (${where.partnerId ?? null}::int is null or c.partner_id = ${where.partnerId ?? null}::int)`;
    const [r] = await executePrepared<CardRow>(db, lock ? sql`${query} for update of c` : query);
    if (!r) return undefined;
    const n = (v: number | null) => (v === null ? null : Number(v));
    const at = (ms: number | null) => (ms === null ? null : new Date(Number(ms)));
    return {
      id: Number(r.id),
      partnerId: Number(r.partner_id),
      customerId: Number(r.customer_id),
      partnerCardId: Number(r.partner_card_id),
      pointsBalance: Number(r.points_balance),
      pointsDebt: Number(r.points_debt),
      nextExpiryAt: r.next_ms === null ? null : new Date(Number(r.next_ms)),
      shopOk: r.shop_ok,
      tier: {
        tierId: n(r.tier_id),
        valueUnits: textToUnits(r.tier_value),
        valueUntil: at(r.tier_value_until_ms),
        reachedAt: at(r.tier_reached_at_ms),
        keepUntil: at(r.tier_keep_until_ms),
      },
      tierSettings: { basis: r.tier_basis, window: r.tier_window, downgrade: r.tier_downgrade, timeZone: r.tier_time_zone },
      tiers: (r.tiers ?? []).map((t) => tierDef({ id: Number(t.id), threshold: Number(t.threshold), name: t.name, color: t.color, earnMultiplier: t.earn_multiplier })),
      programme: {
        isActive: r.is_active,
        pointsEnabled: r.points_enabled,
        pointsPerCurrency: r.ppc,
        currencyAmount: r.ca,
        roundPointsUp: r.round_points_up,
        minPointsPerPurchase: Number(r.min_points_per_purchase),
        maxPointsPerPurchase: n(r.max_points_per_purchase),
        pointsPerVisit: Number(r.points_per_visit),
        pointsExpirationDays: n(r.points_expiration_days),
        pointsRedemptionEnabled: r.points_redemption_enabled,
        pointsPerCurrencyRedemption: r.ppcr,
        currencyAmountRedemption: r.car,
        minPointsForRedemption: Number(r.min_points_for_redemption),
        maxPointsPerRedemption: n(r.max_points_per_redemption),
      },
    };
  },

  /** A programme of the partner with its rules, and whether `shopId` is one of the partner's shops (a preview without a card). */
  async programme(db: Executor, partnerId: number, partnerCardId: number, shopId: number): Promise<{ programme: LockedCard['programme']; shopOk: boolean } | undefined> {
    const [row] = await db
      .select({
        programme: programmeColumns,
        shopOk: sql<boolean>`exists (select 1 from ${shops} where ${shops.id} = ${shopId} and ${shops.partnerId} = ${partnerId})`,
      })
      .from(partnerCards)
      .where(and(eq(partnerCards.id, partnerCardId), eq(partnerCards.partnerId, partnerId), sql`${partnerCards.deletedAt} is null`));
    return row;
  },

  /** Write one ledger entry; undefined when its receipt number was already used at the shop. */
  async write(db: Executor, e: Entry): Promise<{ id: number; nextExpiryAt: Date | null } | undefined> {
    const draws = e.draws ?? [];
    const lotIds = intArray(draws.map((d) => d.lotId));
    const drawPoints = intArray(draws.map((d) => d.points));
    const now = e.createdAt.toISOString();
    const debt = e.debt ?? 0;
    const paid = debt < 0 ? -debt : 0;
    const next: SQL =
      'set' in e.nextExpiry
        ? sql`${ts(e.nextExpiry.set)}::timestamptz`
        : sql`least(
            (select min(expires_at) from points_lots
              where card_id = ${e.cardId} and remaining > 0 and id <> all(${intArray(e.nextExpiry.recompute.exhausted)}::int[])),
            ${ts(e.nextExpiry.recompute.extra)}::timestamptz)`;
    const result = await db.execute(sql`
      with t as (
        insert into points_transactions
          (partner_id, card_id, customer_id, shop_id, type, points, amount, balance_after, receipt_number, reason, reverses_id, returns_id, created_at)
        values (${e.partnerId}, ${e.cardId}, ${e.customerId}, ${e.shopId}, ${e.type}, ${e.points}, ${e.amount}::numeric,
                ${e.balanceAfter}, ${e.receiptNumber}, ${e.reason}, ${e.reversesId}, ${e.returnsId ?? null}, ${now}::timestamptz)
        on conflict do nothing
        returning id
      ), new_lot as (
        insert into points_lots (card_id, transaction_id, points, remaining, expires_at, created_at)
        select ${e.cardId}, t.id, ${e.lot?.points ?? 0}::int, ${(e.lot?.points ?? 0) - paid}::int, ${ts(e.lot?.expiresAt ?? null)}::timestamptz, ${now}::timestamptz
        from t where ${e.lot !== undefined}::boolean
        returning id
      ), paid as (
        insert into points_lot_draws (transaction_id, lot_id, points) select t.id, new_lot.id, ${paid}::int from t, new_lot where ${paid}::int > 0
      ), debt as (
        insert into points_debt_entries (transaction_id, card_id, points) select t.id, ${e.cardId}, ${debt}::int from t where ${debt}::int <> 0
      ), d as (
        select * from unnest(${lotIds}::int[], ${drawPoints}::int[]) as d(lot_id, points)
      ), new_draws as (
        insert into points_lot_draws (transaction_id, lot_id, points) select t.id, d.lot_id, d.points from t, d
      ), lots as (
        update points_lots set remaining = points_lots.remaining - d.points
        from d where points_lots.id = d.lot_id and exists (select 1 from t)
      ), card as (
        update loyalty_cards set points_balance = ${e.balanceAfter}, points_debt = points_debt + ${debt}::int, next_expiry_at = ${next}, updated_at = ${now}::timestamptz
               ${e.tier ? tierColumns(e.tier) : sql``}
        where id = ${e.cardId} and exists (select 1 from t)
        returning (extract(epoch from next_expiry_at) * 1000)::float8 as next_ms
      )
      select t.id, card.next_ms from t left join card on true`);
    const [row] = rowsOf<{ id: number; next_ms: number | null }>(result);
    if (!row) return undefined;
    return { id: Number(row.id), nextExpiryAt: row.next_ms === null ? null : new Date(Number(row.next_ms)) };
  },

  /** Refresh a card's next expiry without a ledger entry (its due lots were already empty). */
  async refreshNextExpiry(db: Executor, cardId: number): Promise<Date | null> {
    const result = await db.execute(sql`
      update loyalty_cards set next_expiry_at = (select min(expires_at) from points_lots where card_id = ${cardId} and remaining > 0)
      where id = ${cardId}
      returning (extract(epoch from next_expiry_at) * 1000)::float8 as next_ms`);
    const ms = rowsOf<{ next_ms: number | null }>(result)[0]?.next_ms ?? null;
    return ms === null ? null : new Date(Number(ms));
  },

  /** Open lots in spending order (first to expire first, never-expiring last, then oldest), just enough to cover `points`. */
  async lotsToSpend(db: Executor, cardId: number, points: number, excludeLotId: number | null = null): Promise<Array<{ id: number; remaining: number }>> {
    const result = await db.execute(sql`
      select id, remaining from (
        select id, remaining, expires_at,
               sum(remaining) over (order by expires_at asc nulls last, id) - remaining as before
        from points_lots
        where card_id = ${cardId} and remaining > 0 and id <> ${excludeLotId ?? 0}
      ) x
      where before < ${points}
      order by expires_at asc nulls last, id`);
    return rowsOf<{ id: number; remaining: number }>(result).map((r) => ({ id: Number(r.id), remaining: Number(r.remaining) }));
  },

  async dueLots(db: Executor, cardId: number, now: Date): Promise<Array<{ id: number; remaining: number }>> {
    const rows = await db
      .select({ id: pointsLots.id, remaining: pointsLots.remaining })
      .from(pointsLots)
      .where(and(eq(pointsLots.cardId, cardId), sql`${pointsLots.remaining} > 0`, sql`${pointsLots.expiresAt} <= ${now.toISOString()}::timestamptz`))
      .orderBy(asc(pointsLots.expiresAt), asc(pointsLots.id));
    return rows;
  },

  async lotOf(db: Executor, transactionId: number) {
    const [row] = await db.select().from(pointsLots).where(eq(pointsLots.transactionId, transactionId));
    return row;
  },

  /** Points of a lot that expired (drawn by `expire` entries). */
  async expiredFromLot(db: Executor, lotId: number): Promise<number> {
    const result = await db.execute(sql`
      select coalesce(sum(d.points), 0)::int as n from points_lot_draws d
      join points_transactions t on t.id = d.transaction_id
      where d.lot_id = ${lotId} and t.type = 'expire'`);
    return Number(rowsOf<{ n: number }>(result)[0]?.n ?? 0);
  },

  /** Points of the card's debt that an earning paid off (its debt entry, negated; 0 if none). */
  async debtPaidBy(db: Executor, transactionId: number): Promise<number> {
    const result = await db.execute(sql`select coalesce(-sum(points), 0)::int as paid from points_debt_entries where transaction_id = ${transactionId} and points < 0`);
    return Number(rowsOf<{ paid: number }>(result)[0]?.paid ?? 0);
  },

  /** Whether any of these lots was earned by a transaction that has since been reversed. */
  async anyEarningReversed(db: Executor, lotIds: number[]): Promise<boolean> {
    if (lotIds.length === 0) return false;
    const result = await db.execute(sql`
      select exists (
        select 1 from points_lots l join points_transactions r on r.reverses_id = l.transaction_id
        where l.id = any(${intArray(lotIds)}::int[])
      ) as reversed`);
    return rowsOf<{ reversed: boolean }>(result)[0]?.reversed === true;
  },

  async isReversed(db: Executor, transactionId: number): Promise<boolean> {
    const [row] = await db.select({ id: pointsTransactions.id }).from(pointsTransactions).where(eq(pointsTransactions.reversesId, transactionId));
    return row !== undefined;
  },

  async findTransaction(db: Executor, scope: TransactionScope, id: number): Promise<TransactionRow | undefined> {
    const [row] = await db
      .select()
      .from(pointsTransactions)
      .where(and(eq(pointsTransactions.id, id), ...scopeConditions(scope)));
    return row;
  },

  /** The return entries of a purchase or deduction, oldest first. */
  async returnsOf(db: Executor, transactionId: number): Promise<TransactionRow[]> {
    return db.select().from(pointsTransactions).where(eq(pointsTransactions.returnsId, transactionId)).orderBy(asc(pointsTransactions.id));
  },

  async listTransactions(db: Executor, scope: TransactionScope, filter: TransactionFilter, limit: number, offset: number) {
    const where = and(...scopeConditions(scope), ...filterConditions(filter));
    const rows = await db
      .select()
      .from(pointsTransactions)
      .where(where)
      .orderBy(desc(pointsTransactions.id))
      .limit(limit)
      .offset(offset);
    const [total] = await db.select({ n: count() }).from(pointsTransactions).where(where);
    return { rows, total: total?.n ?? 0 };
  },

  /** Keyset pages for streaming exports (oldest first). */
  async transactionsAfter(db: Executor, scope: TransactionScope, filter: TransactionFilter, afterId: number, limit: number) {
    return db
      .select()
      .from(pointsTransactions)
      .where(and(...scopeConditions(scope), ...filterConditions(filter), sql`${pointsTransactions.id} > ${afterId}`))
      .orderBy(asc(pointsTransactions.id))
      .limit(limit);
  },

  async summary(db: Executor, scope: TransactionScope, filter: TransactionFilter) {
    const p = pointsTransactions;
    const [row] = await db
      .select({
        transactions: count(),
        earned: sql<string>`coalesce(sum(${p.points}) filter (where ${p.points} > 0 and ${p.type} <> 'reversal'), 0)`,
        spent: sql<string>`coalesce(-sum(${p.points}) filter (where ${p.points} < 0 and ${p.type} in ('deduct', 'adjust', 'redeem')), 0)`,
        expired: sql<string>`coalesce(-sum(${p.points}) filter (where ${p.type} = 'expire'), 0)`,
        reversed: sql<string>`coalesce(sum(${p.points}) filter (where ${p.type} = 'reversal'), 0)`,
        purchases: sql<string>`count(*) filter (where ${p.type} = 'purchase')`,
        // Net of refunds: a purchase's reversal, and each return of its goods, carries minus its amount.
        // (The outer columns stay outside the subquery: drizzle may render them unqualified.)
        purchaseAmount: sql<string>`coalesce(sum(${p.amount}) filter (where ${p.type} = 'purchase' or (${p.type} in ('reversal', 'return')
          and coalesce(${p.reversesId}, ${p.returnsId}) in (select o.id from points_transactions o where o.type = 'purchase'))), 0)`,
      })
      .from(p)
      .where(and(...scopeConditions(scope), ...filterConditions(filter)));
    return row!;
  },

  async expiring(db: Executor, cardId: number, limit: number) {
    const rows = await db
      .select({ expiresAt: pointsLots.expiresAt, points: sql<string>`sum(${pointsLots.remaining})` })
      .from(pointsLots)
      .where(and(eq(pointsLots.cardId, cardId), sql`${pointsLots.remaining} > 0`, sql`${pointsLots.expiresAt} is not null`))
      .groupBy(pointsLots.expiresAt)
      .orderBy(asc(pointsLots.expiresAt))
      .limit(limit);
    return rows.map((r) => ({ expiresAt: r.expiresAt!, points: Number(r.points) }));
  },

  /** Cards with lots past expiry (of one owner, or all), soonest first. */
  async dueCards(db: Executor, now: Date, limit: number, owner: { partnerId?: number; customerId?: number } = {}): Promise<number[]> {
    const conditions = [sql`${loyaltyCards.nextExpiryAt} <= ${now.toISOString()}::timestamptz`];
    if (owner.partnerId !== undefined) conditions.push(eq(loyaltyCards.partnerId, owner.partnerId));
    if (owner.customerId !== undefined) conditions.push(eq(loyaltyCards.customerId, owner.customerId));
    const rows = await db
      .select({ id: loyaltyCards.id })
      .from(loyaltyCards)
      .where(and(...conditions))
      .orderBy(asc(loyaltyCards.nextExpiryAt))
      .limit(limit);
    return rows.map((r) => r.id);
  },

  /** Lock one card unless another transaction holds it (the sweep skips busy cards). */
  async tryLockCard(db: Executor, cardId: number): Promise<boolean> {
    const rows = await db.select({ id: loyaltyCards.id }).from(loyaltyCards).where(eq(loyaltyCards.id, cardId)).for('update', { skipLocked: true });
    return rows.length > 0;
  },

  /** Lock several cards of a partner in id order (the order every multi-card operation uses, so they cannot deadlock). */
  async lockCardIds(db: Executor, partnerId: number, ids: number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const rows = await db
      .select({ id: loyaltyCards.id })
      .from(loyaltyCards)
      .where(and(eq(loyaltyCards.partnerId, partnerId), inArray(loyaltyCards.id, ids)))
      .orderBy(asc(loyaltyCards.id))
      .for('update');
    return rows.map((r) => r.id);
  },
};

export interface TransactionScope {
  partnerId?: number;
  customerId?: number;
}

export interface TransactionFilter {
  cardId?: number;
  customerId?: number;
  shopId?: number;
  type?: PointsTransactionType;
  from?: Date;
  /** Exclusive. */
  to?: Date;
}

function scopeConditions(scope: TransactionScope): SQL[] {
  const out: SQL[] = [];
  if (scope.partnerId !== undefined) out.push(eq(pointsTransactions.partnerId, scope.partnerId));
  if (scope.customerId !== undefined) out.push(eq(pointsTransactions.customerId, scope.customerId));
  // A scope always narrows: a caller without one must never see everything by accident.
  if (out.length === 0) throw new Error('transaction scope required');
  return out;
}

function filterConditions(f: TransactionFilter): SQL[] {
  const out: SQL[] = [];
  if (f.cardId !== undefined) out.push(eq(pointsTransactions.cardId, f.cardId));
  if (f.customerId !== undefined) out.push(eq(pointsTransactions.customerId, f.customerId));
  if (f.shopId !== undefined) out.push(eq(pointsTransactions.shopId, f.shopId));
  if (f.type !== undefined) out.push(eq(pointsTransactions.type, f.type));
  if (f.from !== undefined) out.push(gte(pointsTransactions.createdAt, f.from));
  if (f.to !== undefined) out.push(lt(pointsTransactions.createdAt, f.to));
  return out;
}
