// Campaigns (DESIGN.md §12): rules on top of a programme's base rule, evaluated in the
// award's own transaction (src/modules/awards/evaluate.ts is the pure evaluator, the
// points ledger its transactional shell).
//
// A campaign's counters are its row's `uses_count` / `points_awarded` plus the sum of its
// `campaign_counters` shards (campaignTotalsSql). Every award moves the shard of its card
// (card id mod 16), so that the awards of a popular campaign do not queue on one row;
// returns give back through the shards too. A limit set on a running campaign therefore
// counts everything given before it (the shards are part of the total).
//
// Limits (`limit_uses`, `points_budget`) are taken from `campaign_limit_shards`: what is
// left of each, split over 16 rows. An award takes from its card's row in one conditional
// UPDATE (`left - n > 0`, so a row-level take never uses a limit up); when that row runs dry
// the award locks the campaign row and every shard (in one global order), reads the exact
// counters, takes what is left and spreads the rest evenly again (borrowing). The shards
// hold never more than `limit - counters` (a return frees budget in the counters; the next
// spread hands it out), so a limit is never exceeded, and a campaign is used up only under
// the campaign row's lock — one `campaign.exhausted`. Per-customer limits count in
// `campaign_card_uses` under the card's row lock, which every award holds anyway.
//
// shop_ids / tier_ids / product_ids / category_ids are id arrays, as offers have them: `[]`
// means "all", so a deleted shop must not widen a campaign to every shop.
//
// Campaigns are soft-deleted: the points a transaction earned from one keep its id and name,
// and a return gives its budget back even after the campaign is gone from the list.
import { sql } from 'drizzle-orm';
import { bigint, boolean, check, date, index, integer, numeric, pgTable, primaryKey, smallint, text, timestamp } from 'drizzle-orm/pg-core';
import { loyaltyCards } from '../loyalty-cards/loyalty-cards.tables.js';
import { partnerCards } from '../partner-cards/partner-cards.tables.js';
import { partners } from '../partners/partners.tables.js';

const tz = (name: string) => timestamp(name, { withTimezone: true });
const list = (values: readonly string[]) => sql.raw(values.map((v) => `'${v}'`).join(', '));

export const CAMPAIGN_EFFECT_TYPES = ['multiplier', 'bonus', 'per_currency', 'per_item'] as const;
export type CampaignEffectType = (typeof CAMPAIGN_EFFECT_TYPES)[number];

export const campaigns = pgTable(
  'campaigns',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    partnerCardId: integer('partner_card_id')
      .notNull()
      .references(() => partnerCards.id, { onDelete: 'restrict' }),
    name: text().notNull(),
    description: text(),
    isActive: boolean('is_active').notNull().default(true),
    startsAt: tz('starts_at'),
    endsAt: tz('ends_at'),
    /** ISO days 1 (Monday) … 7; empty = every day. */
    daysOfWeek: smallint('days_of_week').array().notNull().default(sql`'{}'::smallint[]`),
    /** "HH:MM" in `time_zone`; `to_time` exclusive; a window may wrap midnight. */
    fromTime: text('from_time'),
    toTime: text('to_time'),
    timeZone: text('time_zone').notNull().default('Europe/Vilnius'),
    shopIds: integer('shop_ids').array().notNull().default(sql`'{}'::integer[]`),
    tierIds: integer('tier_ids').array().notNull().default(sql`'{}'::integer[]`),
    minAmount: numeric('min_amount', { precision: 14, scale: 4 }),
    productIds: integer('product_ids').array().notNull().default(sql`'{}'::integer[]`),
    categoryIds: integer('category_ids').array().notNull().default(sql`'{}'::integer[]`),
    skus: text().array().notNull().default(sql`'{}'::text[]`),
    firstPurchaseOnly: boolean('first_purchase_only').notNull().default(false),
    effectType: text('effect_type').$type<CampaignEffectType>().notNull(),
    /** Exact decimal, 2 places (a bonus is a whole number). */
    effectValue: numeric('effect_value', { precision: 14, scale: 2 }).notNull(),
    priority: integer().notNull().default(0),
    exclusive: boolean().notNull().default(false),
    limitPerCustomer: integer('limit_per_customer'),
    limitPerCustomerPerDay: integer('limit_per_customer_per_day'),
    limitUses: integer('limit_uses'),
    pointsBudget: integer('points_budget'),
    // Counters that only grow are 64-bit (DESIGN.md §12; migration 0021): an unlimited
    // campaign passes 2^31 points. As JS numbers they are exact up to 2^53.
    /** Awards with a breakdown row of the campaign (returns do not give uses back). */
    usesCount: bigint('uses_count', { mode: 'number' }).notNull().default(0),
    /** Points given, net of returns. */
    pointsAwarded: bigint('points_awarded', { mode: 'number' }).notNull().default(0),
    deletedAt: tz('deleted_at'),
    createdAt: tz('created_at').notNull().defaultNow(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
  },
  (t) => [
    index('campaigns_partner_idx').on(t.partnerId, t.id),
    // The award's load: the programme's live campaigns.
    index('campaigns_programme_live_idx').on(t.partnerCardId).where(sql`${t.deletedAt} is null and ${t.isActive}`),
    check('campaigns_effect_type', sql`${t.effectType} in (${list(CAMPAIGN_EFFECT_TYPES)})`),
    check('campaigns_counters', sql`${t.usesCount} >= 0 and ${t.pointsAwarded} >= 0`),
    check('campaigns_window', sql`${t.endsAt} is null or ${t.startsAt} is null or ${t.endsAt} > ${t.startsAt}`),
  ],
);

/** A card's uses of a campaign per day (in the campaign's time zone); the per-customer total is their sum. */
export const campaignCardUses = pgTable(
  'campaign_card_uses',
  {
    campaignId: integer('campaign_id')
      .notNull()
      .references(() => campaigns.id, { onDelete: 'cascade' }),
    cardId: integer('card_id')
      .notNull()
      .references(() => loyaltyCards.id, { onDelete: 'cascade' }),
    day: date({ mode: 'string' }).notNull(),
    uses: bigint({ mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.campaignId, t.cardId, t.day] }), check('campaign_card_uses_positive', sql`${t.uses} > 0`)],
);

/** Shards of the counters of a campaign (see the header): the total is the row's plus theirs. */
export const CAMPAIGN_COUNTER_SHARDS = 16;

export const campaignCounters = pgTable(
  'campaign_counters',
  {
    campaignId: integer('campaign_id')
      .notNull()
      .references(() => campaigns.id, { onDelete: 'cascade' }),
    shard: smallint().notNull(),
    uses: bigint({ mode: 'number' }).notNull().default(0),
    /** Net of returns: may go below 0 in one shard (a return on another card's shard than its award's). */
    points: bigint({ mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.campaignId, t.shard] })],
);

/**
 * What is left of a limited campaign's `limit_uses` / `points_budget`, split over
 * CAMPAIGN_COUNTER_SHARDS rows (see the header); null where the campaign has no such limit.
 * Their sum is at most the limit minus the counters; rows are written again whenever the
 * limits change (deleted) or a row runs dry (spread evenly again).
 */
export const campaignLimitShards = pgTable(
  'campaign_limit_shards',
  {
    campaignId: integer('campaign_id')
      .notNull()
      .references(() => campaigns.id, { onDelete: 'cascade' }),
    shard: smallint().notNull(),
    usesLeft: bigint('uses_left', { mode: 'number' }),
    pointsLeft: bigint('points_left', { mode: 'number' }),
  },
  (t) => [primaryKey({ columns: [t.campaignId, t.shard] }), check('campaign_limit_shards_left', sql`${t.usesLeft} >= 0 and ${t.pointsLeft} >= 0`)],
);

/**
 * A campaign's counters as the API shows them and as limits are checked: its row's plus its
 * shards'. bigint, never int: a cast to int here made every award of the programme, the
 * campaign's views and `ledger verify` fail once a campaign passed 2^31 points.
 */
export const campaignTotalsSql = (alias: string) => ({
  uses: sql.raw(`(${alias}.uses_count + coalesce((select sum(k.uses) from campaign_counters k where k.campaign_id = ${alias}.id), 0))::bigint`),
  points: sql.raw(`(${alias}.points_awarded + coalesce((select sum(k.points) from campaign_counters k where k.campaign_id = ${alias}.id), 0))::bigint`),
});
