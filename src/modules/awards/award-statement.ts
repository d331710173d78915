// An amount-only purchase's award as ONE statement: the engine's hot path (DESIGN.md §6, §12,
// §13). It writes the ledger's rows (the transaction, its lot, its sources, the balance, the
// qualifying value) as PointsLedger does, and the campaign counters and uses as the engine's
// evaluation would — or nothing, when anything needs the engine (awards.service.ts).
import { sql } from 'drizzle-orm';
import { boolArray, dateArray, executePrepared, intArray, type Executor } from '../../infra/db/index.js';
import { shops } from '../shops/shops.tables.js';

export interface AwardStatementInput {
  partnerId: number;
  cardId: number;
  shopId: number;
  /** EUR as numeric text, and the same in ten-thousandths. */
  amount: string;
  amountUnits: bigint;
  receiptNumber: string | null;
  now: Date;
  maxPoints: number;
  maxBalance: number;
  /** Campaigns' points evaluated before the statement, one variant per card fact they depend on (awards/earn-rules.ts). */
  campaignVariants?: CampaignVariants;
}

/**
 * An amount-only purchase evaluated against a programme's campaigns for each fact of the card
 * they look at, as arrays (one element per variant; `apps` flattened over the variants).
 */
export interface CampaignVariants {
  programme: number[];
  /** partner_cards.earn_version the evaluation read. */
  version: number[];
  /** -1: any tier; 0: none held; else the held tier's id. */
  tier: number[];
  /** The card has no earlier purchase; null: either. */
  first: Array<boolean | null>;
  /** The base points the evaluation used. */
  base: number[];
  campaignPoints: number[];
  /** Applications: variant (1-based), campaign, points, day (in the campaign's zone), ordinal in the sources. */
  apps: { variant: number[]; campaign: number[]; points: number[]; day: string[]; ordinal: number[] };
  /** Some variant depends on the card's first purchase. */
  needFirst: boolean;
  /** The card's counter shard (campaigns.tables.ts CAMPAIGN_COUNTER_SHARDS). */
  shard: number;
}

export const NO_VARIANTS: CampaignVariants = {
  programme: [],
  version: [],
  tier: [],
  first: [],
  base: [],
  campaignPoints: [],
  apps: { variant: [], campaign: [], points: [], day: [], ordinal: [] },
  needFirst: false,
  shard: 0,
};

export interface AwardStatementResult {
  customerId: number;
  pointsBalance: number;
  active: boolean;
  /** A lot of the card is past its expiry: expire first, then award. */
  due: boolean;
  /** The card's programme runs a campaign and no variant of `campaignVariants` served it: the basket engine awards. */
  campaigns: boolean;
  /** The card owes points (a return took more than its balance): the basket engine awards. */
  debt: boolean;
  /** Tier work the statement leaves to the engine: a higher tier reached, the value due to be counted again, a kept tier's keep ended. */
  tierWork: boolean;
  shopOk: boolean;
  /** All the award's points: the base and the tier's. */
  points: bigint;
  /** The held tier's multiplier's share of `points` (a `tier` source when > 0). */
  tierPoints: number;
  /** The index into `campaignVariants` whose campaigns' points are in `points` (null: none). */
  variant: number | null;
  /** The card's programme and its earn_version now (a copy older than that is stale). */
  programme: { id: number; earnVersion: number };
  /** Set when the award was written. */
  transactionId: number | null;
  balanceAfter: number | null;
}

export const awardStatement = {
  /**
   * A purchase's award as ONE statement: lock the card, compute the points by the
   * programme's rules (exact integer arithmetic on the scaled decimals) and the tier's
   * multiplier, write the transaction, its lot, its sources (with a tier's points), the
   * balance and the qualifying value — or nothing, when a check fails. One round trip and no
   * explicit transaction: an award is the till's hot path. The card's state comes back so
   * that the caller can tell why nothing was written.
   *
   *   base  = amount / currency_amount × points_per_currency, rounded up if round_points_up
   *           else down, + points_per_visit, clamped to min..max_points_per_purchase
   * computed as ⌊X / Y⌋ (or ⌈X / Y⌉) with X = amount·10⁴ × points_per_currency·10⁴ and
   * Y = currency_amount·10⁴ × 10⁴, all integers;
   *   tier  = base × (earn_multiplier − 1) of the tier the card holds, rounded once as the
   *           base is (tier-rules.ts `tierPoints`).
   *
   * The tier rules of an earning (tier-rules.ts `applyChange`) are compared in the statement:
   * the new qualifying value against the next threshold. Reaching a higher tier, a value due
   * to be counted again or a kept tier whose keep has ended is work for the engine (a move
   * recorded, an event): the statement then writes nothing and says `tierWork`. Meeting the
   * held tier's threshold again keeps it from now (reached_at, keep_until), as the rules say.
   */
  async award(db: Executor, a: AwardStatementInput): Promise<AwardStatementResult | undefined> {
    const now = a.now.toISOString();
    const v = a.campaignVariants ?? NO_VARIANTS;
    const [row] = await executePrepared<{
      customer_id: number;
      points_balance: number;
      active: boolean;
      due: boolean;
      campaigns: boolean;
      debt: boolean;
      tier_work: boolean;
      shop_ok: boolean;
      points: string;
      tier_points: string;
      variant: number | null;
      programme_id: number;
      earn_version: number;
      tx_id: number | null;
      balance_after: number | null;
    }>(db, sql`
      with locked as (
        select c.id, c.customer_id, c.points_balance, c.partner_card_id, c.tier_value, c.tier_keep_until, pc.earn_version,
               (pc.is_active and pc.deleted_at is null) as active,
               (c.next_expiry_at is not null and c.next_expiry_at <= ${now}::timestamptz) as due,
               -- A live campaign: its points come from a variant evaluated before the statement, or the basket engine awards.
               exists (select 1 from campaigns k where k.partner_card_id = c.partner_card_id and k.deleted_at is null
                  and k.is_active and (k.ends_at is null or k.ends_at > ${now}::timestamptz)) as campaigns,
               -- A debt to pay off: the basket engine awards instead (basket-award.ts).
               c.points_debt > 0 as debt,
               -- Tier work time made due (tier-ledger.ts refreshTier): the value counted again once
               -- an entry left the window, or the fall of a kept tier whose keep has ended.
               ((pc.tier_window <> 'lifetime' and (c.tier_value_until is null or c.tier_value_until <= ${now}::timestamptz))
                 or (pc.tier_downgrade = 'end_of_window' and coalesce(c.tier_keep_until <= ${now}::timestamptz, false))) as tier_due,
               pc.tier_basis, pc.tier_window, pc.tier_time_zone, pc.round_points_up,
               -- The tier the card holds (none, or one no longer in the programme: rank −1, no multiplier).
               h.id as held_id,
               coalesce(h.threshold, -1) as held_rank,
               coalesce((h.earn_multiplier * 100)::int, 100) as multiplier,
               (${v.needFirst}::boolean and not exists (select 1 from points_transactions x where x.card_id = c.id and x.type = 'purchase')) as first_purchase,
               pc.points_expiration_days as exp_days,
               exists (select 1 from ${shops} s where s.id = ${a.shopId} and s.partner_id = c.partner_id) as shop_ok,
               case when not pc.points_enabled then 0::numeric else least(greatest(
                 case when pc.round_points_up
                   then div(${a.amountUnits.toString()}::numeric * (pc.points_per_currency * 10000) + pc.currency_amount * 100000000 - 1, pc.currency_amount * 100000000)
                   else div(${a.amountUnits.toString()}::numeric * (pc.points_per_currency * 10000), pc.currency_amount * 100000000)
                 end + pc.points_per_visit,
                 pc.min_points_per_purchase), coalesce(pc.max_points_per_purchase, 1e30)) end as base
        from loyalty_cards c join partner_cards pc on pc.id = c.partner_card_id
          left join tiers h on h.id = c.tier_id and h.partner_card_id = c.partner_card_id
        where c.id = ${a.cardId} and c.partner_id = ${a.partnerId}
        for update of c
      ), variants as (
        select * from unnest(${intArray(v.programme)}::int[], ${intArray(v.version)}::int[], ${intArray(v.tier)}::int[],
                             ${boolArray(v.first)}::boolean[], ${intArray(v.base)}::int[], ${intArray(v.campaignPoints)}::int[])
          with ordinality as v(programme, version, tier, first, base, campaign_points, i)
      ), apps as (
        select * from unnest(${intArray(v.apps.variant)}::int[], ${intArray(v.apps.campaign)}::int[], ${intArray(v.apps.points)}::int[],
                             ${dateArray(v.apps.day)}::text[], ${intArray(v.apps.ordinal)}::int[]) as a(variant, campaign, points, day, ordinal)
      ), earned as (
        select l.*,
               case when l.multiplier > 100 and l.base > 0
                 then case when l.round_points_up then div(l.base * (l.multiplier - 100) + 99, 100) else div(l.base * (l.multiplier - 100), 100) end
                 else 0::numeric end as tier_points,
               -- The variant the locked card matches, evaluated from the programme's current version with the same base.
               (select v.i from variants v
                 where v.programme = l.partner_card_id and v.version = l.earn_version and v.base = l.base
                   and (v.tier = -1 or v.tier = coalesce(l.held_id, 0)) and (v.first is null or v.first = l.first_purchase)
                 order by v.i limit 1) as variant
        from locked l
      ), valued as (
        select e.*, e.base + e.tier_points + coalesce((select v.campaign_points from variants v where v.i = e.variant), 0) as points
        from earned e
      ), card as (
        select v.*,
               case when v.tier_basis = 'points_earned' then v.points else ${a.amount}::numeric end as delta,
               -- The highest threshold the new value reaches (tier-rules.ts tierForValue), against the held tier's.
               coalesce((select max(t.threshold) from tiers t where t.partner_card_id = v.partner_card_id
                  and t.threshold <= v.tier_value + case when v.tier_basis = 'points_earned' then v.points else ${a.amount}::numeric end), -1) as reached_rank
        from valued v
      ), t as (
        insert into points_transactions (partner_id, card_id, customer_id, shop_id, type, points, amount, balance_after, receipt_number, created_at)
        select ${a.partnerId}, id, customer_id, ${a.shopId}, 'purchase', points::int, ${a.amount}::numeric, (points_balance + points)::int,
               ${a.receiptNumber}, ${now}::timestamptz
        from card
        where active and shop_ok and not due and (not campaigns or variant is not null) and not debt and not tier_due and reached_rank <= held_rank
          and points <= ${a.maxPoints} and points_balance + points <= ${a.maxBalance}
        on conflict do nothing
        returning id, points, balance_after
      ), new_lot as (
        insert into points_lots (card_id, transaction_id, points, remaining, expires_at, created_at)
        select ${a.cardId}, t.id, t.points, t.points, ${now}::timestamptz + card.exp_days * interval '86400 seconds', ${now}::timestamptz
        from t, card where t.points > 0
        returning expires_at
      ), sources as (
        -- Where the points came from, as the engine writes them (basket-award.ts sourcesOf): only
        -- with a tier's or a campaign's points; a purchase without rows earned all from the base.
        insert into points_transaction_sources (transaction_id, position, source, campaign_id, ordinal, points)
        select t.id, 0, s.source, s.campaign_id, s.ordinal, s.points
        from t, (
          select 'base' as source, 0 as campaign_id, 0 as ordinal, card.base::int as points from card
            where card.tier_points > 0 or exists (select 1 from apps where apps.variant = card.variant)
          union all select 'tier', 0, 1, card.tier_points::int from card where card.tier_points > 0
          union all select 'campaign', a.campaign, a.ordinal, a.points from card join apps a on a.variant = card.variant
        ) s
      ), counters as (
        -- The applied campaigns' counters, in the card's shard (basket.repository.ts writePurchase).
        insert into campaign_counters (campaign_id, shard, uses, points)
        select a.campaign, ${v.shard}, 1, a.points from t, card join apps a on a.variant = card.variant
        order by a.campaign
        on conflict (campaign_id, shard) do update set uses = campaign_counters.uses + 1, points = campaign_counters.points + excluded.points
      ), uses as (
        insert into campaign_card_uses (campaign_id, card_id, day, uses)
        select a.campaign, ${a.cardId}, a.day::date, 1 from t, card join apps a on a.variant = card.variant
        on conflict (campaign_id, card_id, day) do update set uses = campaign_card_uses.uses + 1
      ), upd as (
        update loyalty_cards set points_balance = t.balance_after,
               next_expiry_at = least(loyalty_cards.next_expiry_at, (select expires_at from new_lot)),
               -- The qualifying value (its window's end is already set: else the engine awards).
               tier_value = loyalty_cards.tier_value + card.delta,
               -- The held tier's threshold met again: kept from now (tier-rules.ts applyChange).
               tier_reached_at = case when requalified then ${now}::timestamptz else loyalty_cards.tier_reached_at end,
               tier_keep_until = case when not requalified then loyalty_cards.tier_keep_until
                                      when keep_for is null then loyalty_cards.tier_keep_until
                                      when loyalty_cards.tier_keep_until is null then keep_for
                                      else greatest(loyalty_cards.tier_keep_until, keep_for) end,
               updated_at = ${now}::timestamptz
        from t, card,
          lateral (select card.delta > 0 and card.held_rank >= 0 and card.reached_rank = card.held_rank) r(requalified),
          -- tier-rules.ts keepUntilFor: the end of the next calendar year in the programme's zone,
          -- or a year on (as JavaScript's setUTCFullYear counts it: 29 February → 1 March).
          lateral (select case card.tier_window
                     when 'lifetime' then null::timestamptz
                     when 'calendar_year' then make_timestamptz(extract(year from ${now}::timestamptz at time zone card.tier_time_zone)::int + 2, 1, 1, 0, 0, 0, card.tier_time_zone)
                     else ((${now}::timestamptz at time zone 'UTC') + interval '1 year'
                           + case when to_char(${now}::timestamptz at time zone 'UTC', 'MM-DD') = '02-29' then interval '1 day' else interval '0' end) at time zone 'UTC'
                   end) k(keep_for)
        where loyalty_cards.id = ${a.cardId}
      )
      select card.customer_id, card.points_balance, card.active, card.due, (card.campaigns and card.variant is null) as campaigns, card.debt,
             (card.tier_due or card.reached_rank > card.held_rank) as tier_work, card.shop_ok,
             card.points::text as points, card.tier_points::text as tier_points, card.variant, card.partner_card_id as programme_id,
             card.earn_version, t.id as tx_id, t.balance_after
      from card left join t on true`);
    if (!row) return undefined;
    return {
      customerId: Number(row.customer_id),
      pointsBalance: Number(row.points_balance),
      active: row.active,
      due: row.due,
      campaigns: row.campaigns,
      debt: row.debt,
      tierWork: row.tier_work,
      shopOk: row.shop_ok,
      points: BigInt(row.points),
      tierPoints: Number(row.tier_points),
      variant: row.variant === null ? null : Number(row.variant) - 1,
      programme: { id: Number(row.programme_id), earnVersion: Number(row.earn_version) },
      transactionId: row.tx_id === null ? null : Number(row.tx_id),
      balanceAfter: row.balance_after === null ? null : Number(row.balance_after),
    };
  },

};
