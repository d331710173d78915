// SQL of the award with a basket or campaigns (DESIGN.md §12): what the evaluator needs,
// loaded in as few statements as possible, and the purchase written in ONE statement —
// transaction, lot, debt payment, lines, per-line per-source points, the campaigns' counters
// and the card's per-day uses — so that a failure leaves nothing half-written and the
// campaign rows the award updates stay locked only from that statement to the commit.
//
// It reads and writes other modules' tables on purpose — catalog_products and its categories
// (matching lines), campaigns, campaign_counters and campaign_card_uses (the evaluator's input
// and the counters) — as points.repository.ts reads partner_cards: the award is the till's hot
// path, and a service call per module would turn one statement into several round trips and
// split the write that makes the limits exact. The campaigns module owns those tables' shapes
// (campaigns.tables.ts, campaignTotalsSql); returns.repository.ts and ledger-verify.ts do the same.

import { sql } from 'drizzle-orm';
import { executePrepared, intArray, type Executor } from '../../infra/db/index.js';
import { CAMPAIGN_COUNTER_SHARDS, campaignTotalsSql } from '../campaigns/campaigns.tables.js';
import type { BaseRule, CampaignFacts } from './evaluate.js';
import type { CardTierState } from '../tiers/tier-rules.js';
import { tierColumns } from '../tiers/tiers.repository.js';

interface Rows<T> {
  rows: T[];
}
const rowsOf = <T>(result: unknown): T[] => (result as Rows<T>).rows;
/** A Postgres text[] literal; null elements as NULL. */
function textArray(values: ReadonlyArray<string | null>): string {
  return `{${values.map((v) => (v === null ? 'NULL' : `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`)).join(',')}}`;
}

export interface LineLookup {
  position: number;
  productId: number | null;
  sku: string | null;
  ean: string | null;
}

export interface MatchedProduct {
  position: number;
  id: number;
  sku: string | null;
  /** Its categories and every ancestor of them. */
  categoryIds: number[];
}

interface CampaignRow {
  id: number;
  name: string;
  is_active: boolean;
  starts_ms: number | null;
  ends_ms: number | null;
  days_of_week: number[];
  from_time: string | null;
  to_time: string | null;
  time_zone: string;
  shop_ids: number[];
  tier_ids: number[];
  min_amount: string | null;
  product_ids: number[];
  category_ids: number[];
  skus: string[];
  first_purchase_only: boolean;
  effect_type: CampaignFacts['effectType'];
  effect_value: string;
  priority: number;
  exclusive: boolean;
  limit_per_customer: number | null;
  limit_per_customer_per_day: number | null;
  limit_uses: number | null;
  points_budget: number | null;
  uses_count: number;
  points_awarded: number;
  card_uses: Array<[string, number]> | null;
}

const units = (decimal: string, places: number): bigint => {
  const [whole, frac = ''] = decimal.split('.');
  return BigInt(whole!) * 10n ** BigInt(places) + BigInt(frac.padEnd(places, '0').slice(0, places) || '0');
};

function campaignFacts(r: CampaignRow): CampaignFacts {
  const byDay = new Map<string, number>();
  let total = 0;
  for (const [day, uses] of r.card_uses ?? []) {
    byDay.set(day, Number(uses));
    total += Number(uses);
  }
  return {
    id: Number(r.id),
    name: r.name,
    isActive: r.is_active,
    startsAt: r.starts_ms === null ? null : new Date(Number(r.starts_ms)),
    endsAt: r.ends_ms === null ? null : new Date(Number(r.ends_ms)),
    daysOfWeek: r.days_of_week.map(Number),
    fromTime: r.from_time,
    toTime: r.to_time,
    timeZone: r.time_zone,
    shopIds: r.shop_ids.map(Number),
    tierIds: r.tier_ids.map(Number),
    minAmountUnits: r.min_amount === null ? null : units(r.min_amount, 4),
    productIds: r.product_ids.map(Number),
    categoryIds: r.category_ids.map(Number),
    skus: r.skus,
    firstPurchaseOnly: r.first_purchase_only,
    effectType: r.effect_type,
    effectHundredths: units(r.effect_value, 2),
    priority: Number(r.priority),
    exclusive: r.exclusive,
    limitPerCustomer: r.limit_per_customer === null ? null : Number(r.limit_per_customer),
    limitPerCustomerPerDay: r.limit_per_customer_per_day === null ? null : Number(r.limit_per_customer_per_day),
    limitUses: r.limit_uses === null ? null : Number(r.limit_uses),
    pointsBudget: r.points_budget === null ? null : Number(r.points_budget),
    usesCount: Number(r.uses_count),
    pointsAwarded: Number(r.points_awarded),
    cardUses: r.card_uses === null ? null : { total, byDay },
  };
}


export interface PurchaseWrite {
  /** The card's tier state after the purchase (DESIGN.md §13), written with it. */
  tier: CardTierState;
  partnerId: number;
  cardId: number;
  customerId: number;
  shopId: number;
  points: number;
  amount: string;
  balanceAfter: number;
  debtAfter: number;
  /** Debt this earning pays off (drawn from its own lot). */
  debtPaid: number;
  receiptNumber: string | null;
  now: Date;
  lotExpiresAt: Date | null;
  lines: Array<{
    position: number;
    lineId: string;
    productId: number | null;
    sku: string | null;
    ean: string | null;
    name: string | null;
    quantity: string;
    amount: string;
    points: number;
  }>;
  sources: Array<{ position: number; source: 'base' | 'tier' | 'campaign'; campaignId: number; ordinal: number; points: number }>;
  /** Campaigns applied: one use each, and their points, counted in the card's counter shard. */
  campaigns: Array<{ id: number; points: number; day: string }>;
}

/** A programme as basketRepository.earnRules reads it. */
export interface EarnRulesRow {
  id: number;
  /** partner_cards.earn_version when read. */
  version: number;
  base: BaseRule;
  tierIds: number[];
  /** Active campaigns that have not ended (also those not yet started). */
  campaigns: CampaignFacts[];
}

export interface BasketLoad {
  campaigns: CampaignFacts[];
  firstPurchase: boolean;
  matched: MatchedProduct[];
  /** Positions whose product_id is not one of the partner's products at all. */
  foreign: number[];
}

const totals = campaignTotalsSql('c');

/** A campaign row (alias `c`) as the evaluator reads it, in a json_build_object; each query adds its counters and card uses. */
const campaignFields = sql.raw(`'id', c.id, 'name', c.name, 'is_active', c.is_active,
  'starts_ms', (extract(epoch from c.starts_at) * 1000)::float8, 'ends_ms', (extract(epoch from c.ends_at) * 1000)::float8,
  'days_of_week', c.days_of_week, 'from_time', c.from_time, 'to_time', c.to_time, 'time_zone', c.time_zone,
  'shop_ids', c.shop_ids, 'tier_ids', c.tier_ids, 'min_amount', c.min_amount::text, 'product_ids', c.product_ids,
  'category_ids', c.category_ids, 'skus', c.skus, 'first_purchase_only', c.first_purchase_only,
  'effect_type', c.effect_type, 'effect_value', c.effect_value::text, 'priority', c.priority, 'exclusive', c.exclusive,
  'limit_per_customer', c.limit_per_customer, 'limit_per_customer_per_day', c.limit_per_customer_per_day,
  'limit_uses', c.limit_uses, 'points_budget', c.points_budget`);

export const basketRepository = {
  /**
   * Everything the evaluator needs, in ONE prepared statement: the basket lines' catalogue
   * products (by product_id, else sku, else ean; active ones; the lowest id when several share
   * a sku or ean) with their categories and every ancestor; the programme's campaigns
   * (`forPreview`: every active one, so that a preview can say why it skipped those outside
   * their dates), each with its counters and the card's uses; whether the card has an earlier
   * purchase. (A receipt used before is refused by the write's unique index.)
   */
  async load(
    db: Executor,
    q: {
      partnerId: number;
      partnerCardId: number;
      cardId: number | null;
      now: Date;
      forPreview: boolean;
      lines: readonly LineLookup[];
    },
  ): Promise<BasketLoad> {
    const now = q.now.toISOString();
    const L = q.lines;
    const [row] = await executePrepared<{
      products: Array<[number, number | null, boolean, string | null, number[]]>;
      campaigns: CampaignRow[];
      has_purchase: boolean;
    }>(
      db,
      sql`
      with recursive l as (
        select * from unnest(${intArray(L.map((l) => l.position))}::int[], ${intArray(L.map((l) => l.productId ?? 0))}::int[],
                             ${textArray(L.map((l) => l.sku))}::text[], ${textArray(L.map((l) => l.ean))}::text[]) as l(pos, pid, sku, ean)
      ), m as (
        select l.pos,
          case when l.pid <> 0 then (select p.id from catalog_products p where p.id = l.pid and p.partner_id = ${q.partnerId} and p.is_active)
               when l.sku is not null then (select min(p.id) from catalog_products p where p.partner_id = ${q.partnerId} and p.sku = l.sku and p.is_active)
               when l.ean is not null then (select min(p.id) from catalog_products p where p.partner_id = ${q.partnerId} and p.ean = l.ean and p.is_active)
          end as product_id,
          (l.pid <> 0 and not exists (select 1 from catalog_products p where p.id = l.pid and p.partner_id = ${q.partnerId})) as foreign_id
        from l
      ), up(product_id, category_id) as (
        select pc.product_id, pc.category_id from catalog_product_categories pc where pc.product_id in (select product_id from m)
        union
        select up.product_id, c.parent_id from up join catalog_categories c on c.id = up.category_id where c.parent_id is not null
      )
      select
        (select coalesce(json_agg(json_build_array(m.pos, m.product_id, m.foreign_id, p.sku,
                  (select coalesce(array_agg(up.category_id), '{}') from up where up.product_id = m.product_id)) order by m.pos), '[]'::json)
           from m left join catalog_products p on p.id = m.product_id) as products,
        (select coalesce(json_agg(json_build_object(
             ${campaignFields}, 'uses_count', ${totals.uses}, 'points_awarded', ${totals.points},
             'card_uses', case when ${q.cardId}::int is null then null else
               (select coalesce(json_agg(json_build_array(u.day::text, u.uses)), '[]'::json) from campaign_card_uses u
                 where u.campaign_id = c.id and u.card_id = ${q.cardId}::int) end
           ) order by c.priority desc, c.id), '[]'::json)
           from campaigns c
           where c.partner_card_id = ${q.partnerCardId} and c.deleted_at is null and c.is_active
             and (${q.forPreview}::boolean or ((c.starts_at is null or c.starts_at <= ${now}::timestamptz) and (c.ends_at is null or c.ends_at > ${now}::timestamptz)))
        ) as campaigns,
        (${q.cardId}::int is not null and exists (select 1 from points_transactions t where t.card_id = ${q.cardId}::int and t.type = 'purchase')) as has_purchase`,
    );
    const products = row?.products ?? [];
    return {
      campaigns: (row?.campaigns ?? []).map(campaignFacts),
      firstPurchase: !(row?.has_purchase ?? false),
      matched: products
        .filter((p) => p[1] !== null)
        .map(([pos, id, , sku, categoryIds]) => ({ position: Number(pos), id: Number(id), sku, categoryIds: categoryIds.map(Number) })),
      foreign: products.filter((p) => p[2]).map((p) => Number(p[0])),
    };
  },

  /**
   * The fast take of limits (campaigns.tables.ts): each limited campaign's use and points from
   * the card's shard, all or nothing, and only while the shard keeps something (`left - n > 0`:
   * a take here never uses a limit up). False when a shard is missing or would run dry — the
   * caller's savepoint then undoes the row locks this took, before the slow path takes locks
   * in the global order. The shards are locked in campaign id order: two awards never deadlock.
   * `wait` false (an award that holds the locks of awards before it in its transaction): a
   * shard locked by another transaction fails the statement at once (55P03) instead.
   */
  async takeFromShard(db: Executor, cardId: number, takes: ReadonlyArray<{ id: number; points: number }>, wait = true): Promise<boolean> {
    const ids = takes.map((t) => t.id);
    const [row] = await executePrepared<{ ok: boolean }>(
      db,
      sql`
      with w as (
        select * from unnest(${intArray(ids)}::int[], ${intArray(takes.map((t) => t.points))}::bigint[]) as w(id, points)
      ), lk as (
        select s.campaign_id, s.uses_left, s.points_left from campaign_limit_shards s
        where s.campaign_id = any(${intArray(ids)}::int[]) and s.shard = ${cardId % CAMPAIGN_COUNTER_SHARDS}
        order by s.campaign_id for update ${wait ? sql`` : sql`nowait`}
      ), ok as (
        select count(*) = ${takes.length} and coalesce(bool_and((lk.uses_left is null or lk.uses_left > 1) and (lk.points_left is null or lk.points_left > w.points)), false) as ok
        from lk join w on w.id = lk.campaign_id
      ), took as (
        update campaign_limit_shards s set uses_left = s.uses_left - 1, points_left = s.points_left - w.points
        from w where s.campaign_id = w.id and s.shard = ${cardId % CAMPAIGN_COUNTER_SHARDS} and (select ok from ok)
        returning 1
      )
      select (select ok from ok) and (select count(*) from took) = ${takes.length} as ok`,
    );
    return row?.ok === true;
  },

  /**
   * The slow path (a shard ran dry, was never written, or the evaluation cut a campaign to its
   * budget): lock the campaigns' rows (FOR NO KEY UPDATE: the counter rows' foreign-key checks
   * of awards that hold a shard take KEY SHARE on them, and must not wait), then every shard of theirs, in one global order (campaign
   * id, then shard), and read their limits and counters as they are now — in a statement of its
   * own, so that it sees every award that held a shard while this waited. Deleted campaigns are
   * absent from the answer.
   */
  async lockLimits(db: Executor, ids: number[]): Promise<Map<number, { limitUses: number | null; pointsBudget: number | null; usesCount: number; pointsAwarded: number }>> {
    const sorted = intArray([...ids].sort((a, b) => a - b));
    await executePrepared(db, sql`select c.id from campaigns c where c.id = any(${sorted}::int[]) order by c.id for no key update of c`);
    await executePrepared(db, sql`select 1 from campaign_limit_shards s where s.campaign_id = any(${sorted}::int[]) order by s.campaign_id, s.shard for update`);
    const rows = await executePrepared<{ id: number; limit_uses: number | null; points_budget: number | null; uses: number; points: number }>(
      db,
      sql`select c.id, c.limit_uses, c.points_budget, ${totals.uses} as uses, ${totals.points} as points from campaigns c
          where c.id = any(${sorted}::int[]) and c.deleted_at is null`,
    );
    return new Map(
      rows.map((r) => [
        Number(r.id),
        {
          limitUses: r.limit_uses === null ? null : Number(r.limit_uses),
          pointsBudget: r.points_budget === null ? null : Number(r.points_budget),
          usesCount: Number(r.uses),
          pointsAwarded: Number(r.points),
        },
      ]),
    );
  },

  /**
   * After a slow path, under the locks lockLimits took: what is left of each limit (after this
   * award) spread evenly over the shards again — the borrowing that lets the next awards take
   * from their own shard. Null: the campaign has no such limit.
   */
  async spreadLimits(db: Executor, left: ReadonlyArray<{ id: number; uses: number | null; points: number | null }>): Promise<void> {
    if (left.length === 0) return;
    const n = (v: number | null) => (v === null ? null : String(Math.max(0, v)));
    await executePrepared(
      db,
      sql`
      insert into campaign_limit_shards (campaign_id, shard, uses_left, points_left)
      select c.id, g.shard, c.uses / ${CAMPAIGN_COUNTER_SHARDS} + (g.shard < c.uses % ${CAMPAIGN_COUNTER_SHARDS})::int,
             c.points / ${CAMPAIGN_COUNTER_SHARDS} + (g.shard < c.points % ${CAMPAIGN_COUNTER_SHARDS})::int
      from unnest(${intArray(left.map((l) => l.id))}::int[], ${textArray(left.map((l) => n(l.uses)))}::bigint[], ${textArray(left.map((l) => n(l.points)))}::bigint[]) as c(id, uses, points),
           generate_series(0, ${CAMPAIGN_COUNTER_SHARDS - 1}) as g(shard)
      order by c.id, g.shard
      on conflict (campaign_id, shard) do update set uses_left = excluded.uses_left, points_left = excluded.points_left`,
    );
  },

  /**
   * A partner's programmes as an amount-only award evaluates them (awards/earn-rules.ts), in
   * ONE statement so that each programme's version is that of the rules and campaigns read
   * with it: the earning rules, the tiers' ids, and every active campaign that has not ended.
   * Counters and the card's uses are not read: a copy serves only programmes whose campaigns
   * have no limit.
   */
  async earnRules(db: Executor, partnerId: number, now: Date): Promise<EarnRulesRow[]> {
    const rows = await executePrepared<{
      id: number;
      version: number;
      points_enabled: boolean;
      ppc: string;
      ca: string;
      round_points_up: boolean;
      min_points_per_purchase: number;
      max_points_per_purchase: number | null;
      points_per_visit: number;
      tier_ids: number[];
      campaigns: CampaignRow[];
    }>(
      db,
      sql`
      select pc.id, pc.earn_version as version, pc.points_enabled, pc.points_per_currency::text as ppc, pc.currency_amount::text as ca,
             pc.round_points_up, pc.min_points_per_purchase, pc.max_points_per_purchase, pc.points_per_visit,
             (select coalesce(array_agg(t.id order by t.id), '{}') from tiers t where t.partner_card_id = pc.id) as tier_ids,
             (select coalesce(json_agg(json_build_object(
                 ${campaignFields}, 'uses_count', 0, 'points_awarded', 0, 'card_uses', null
               ) order by c.priority desc, c.id), '[]'::json)
               from campaigns c
               where c.partner_card_id = pc.id and c.deleted_at is null and c.is_active and (c.ends_at is null or c.ends_at > ${now.toISOString()}::timestamptz)) as campaigns
      from partner_cards pc
      where pc.partner_id = ${partnerId} and pc.deleted_at is null and pc.is_active
      order by pc.id`,
    );
    return rows.map((r) => ({
      id: Number(r.id),
      version: Number(r.version),
      base: {
        pointsEnabled: r.points_enabled,
        pointsPerCurrency: r.ppc,
        currencyAmount: r.ca,
        roundPointsUp: r.round_points_up,
        minPointsPerPurchase: Number(r.min_points_per_purchase),
        maxPointsPerPurchase: r.max_points_per_purchase === null ? null : Number(r.max_points_per_purchase),
        pointsPerVisit: Number(r.points_per_visit),
      },
      tierIds: r.tier_ids.map(Number),
      campaigns: r.campaigns.map(campaignFacts),
    }));
  },

  /** The purchase in one statement; undefined when its receipt number was already used at the shop. */
  async writePurchase(db: Executor, w: PurchaseWrite): Promise<{ id: number } | undefined> {
    const now = w.now.toISOString();
    const L = w.lines;
    const S = w.sources;
    const C = w.campaigns;
    const rows = await executePrepared<{ id: number }>(db, sql`
      with t as (
        insert into points_transactions (partner_id, card_id, customer_id, shop_id, type, points, amount, balance_after, receipt_number, created_at)
        values (${w.partnerId}, ${w.cardId}, ${w.customerId}, ${w.shopId}, 'purchase', ${w.points}, ${w.amount}::numeric, ${w.balanceAfter},
                ${w.receiptNumber}, ${now}::timestamptz)
        on conflict do nothing
        returning id
      ), new_lot as (
        insert into points_lots (card_id, transaction_id, points, remaining, expires_at, created_at)
        select ${w.cardId}, t.id, ${w.points}::int, ${w.points - w.debtPaid}::int, ${w.lotExpiresAt?.toISOString() ?? null}::timestamptz, ${now}::timestamptz
        from t where ${w.points}::int > 0
        returning id, expires_at
      ), paid as (
        insert into points_lot_draws (transaction_id, lot_id, points)
        select t.id, new_lot.id, ${w.debtPaid}::int from t, new_lot where ${w.debtPaid}::int > 0
      ), debt as (
        insert into points_debt_entries (transaction_id, card_id, points)
        select t.id, ${w.cardId}, ${-w.debtPaid}::int from t where ${w.debtPaid}::int > 0
      ), lines as (
        insert into points_transaction_lines (transaction_id, position, line_id, product_id, sku, ean, name, quantity, amount, points)
        select t.id, l.* from t, unnest(${intArray(L.map((l) => l.position))}::int[], ${textArray(L.map((l) => l.lineId))}::text[],
          ${textArray(L.map((l) => (l.productId === null ? null : String(l.productId))))}::int[], ${textArray(L.map((l) => l.sku))}::text[],
          ${textArray(L.map((l) => l.ean))}::text[], ${textArray(L.map((l) => l.name))}::text[], ${textArray(L.map((l) => l.quantity))}::numeric[],
          ${textArray(L.map((l) => l.amount))}::numeric[], ${intArray(L.map((l) => l.points))}::int[]) as l
      ), sources as (
        insert into points_transaction_sources (transaction_id, position, source, campaign_id, ordinal, points)
        select t.id, s.* from t, unnest(${intArray(S.map((s) => s.position))}::int[], ${textArray(S.map((s) => s.source))}::text[],
          ${intArray(S.map((s) => s.campaignId))}::int[], ${intArray(S.map((s) => s.ordinal))}::int[], ${intArray(S.map((s) => s.points))}::int[]) as s
      ), shards as (
        -- Every applied campaign's counters: the card's shard, no hot row to queue on (limits
        -- were taken from campaign_limit_shards before this statement).
        insert into campaign_counters (campaign_id, shard, uses, points)
        select c.id, ${w.cardId % CAMPAIGN_COUNTER_SHARDS}, 1, c.points
        from t, unnest(${intArray(C.map((c) => c.id))}::int[], ${intArray(C.map((c) => c.points))}::int[]) as c(id, points)
        order by c.id
        on conflict (campaign_id, shard) do update set uses = campaign_counters.uses + 1, points = campaign_counters.points + excluded.points
      ), uses as (
        insert into campaign_card_uses (campaign_id, card_id, day, uses)
        select c.id, ${w.cardId}, c.day::date, 1 from t, unnest(${intArray(C.map((c) => c.id))}::int[], ${textArray(C.map((c) => c.day))}::text[]) as c(id, day)
        on conflict (campaign_id, card_id, day) do update set uses = campaign_card_uses.uses + 1
      ), card as (
        update loyalty_cards set points_balance = ${w.balanceAfter}, points_debt = ${w.debtAfter},
               next_expiry_at = case when ${w.points - w.debtPaid}::int > 0 then least(loyalty_cards.next_expiry_at, (select expires_at from new_lot)) else loyalty_cards.next_expiry_at end,
               updated_at = ${now}::timestamptz ${tierColumns(w.tier)}
        where id = ${w.cardId} and exists (select 1 from t)
      )
      select t.id from t`);
    const [row] = rows;
    return row ? { id: Number(row.id) } : undefined;
  },
};

export interface PurchaseDetails {
  lines: Array<{
    line_id: string;
    product_id: number | null;
    sku: string | null;
    ean: string | null;
    name: string | null;
    quantity: string;
    amount: string;
    points: number;
    returned_quantity: string;
  }>;
  sources: Array<{ source: 'base' | 'tier' | 'campaign'; campaign_id: number; name: string | null; points: number; line_ids: string[] }>;
}

export const basketReads = {
  /** A purchase's lines and its points per source, in breakdown order (nothing for an award without either). */
  async details(db: Executor, transactionId: number): Promise<PurchaseDetails> {
    const result = await db.execute(sql`
      select
        (select coalesce(json_agg(json_build_object('line_id', l.line_id, 'product_id', l.product_id, 'sku', l.sku, 'ean', l.ean, 'name', l.name,
                  'quantity', l.quantity::text, 'amount', l.amount::text, 'points', l.points, 'returned_quantity', l.returned_quantity::text) order by l.position), '[]'::json)
           from points_transaction_lines l where l.transaction_id = ${transactionId}) as lines,
        (select coalesce(json_agg(json_build_object('source', s.source, 'campaign_id', s.campaign_id, 'name', c.name, 'points', s.points, 'line_ids', s.line_ids) order by s.ordinal), '[]'::json)
           from (select s.ordinal, s.source, s.campaign_id, sum(s.points)::int as points,
                        coalesce(array_agg(l.line_id order by s.position) filter (where l.line_id is not null), '{}') as line_ids
                 from points_transaction_sources s
                 left join points_transaction_lines l on l.transaction_id = s.transaction_id and l.position = s.position
                 where s.transaction_id = ${transactionId}
                 group by s.ordinal, s.source, s.campaign_id) s
           left join campaigns c on c.id = s.campaign_id) as sources`);
    const [row] = rowsOf<{ lines: PurchaseDetails['lines']; sources: PurchaseDetails['sources'] }>(result);
    return { lines: row?.lines ?? [], sources: row?.sources ?? [] };
  },
};
