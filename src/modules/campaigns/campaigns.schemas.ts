// TypeBox schemas of the campaigns CRUD (DESIGN.md §12 "Campaign"). They are the types too:
// the service returns Static<typeof Campaign>. The schema checks shapes and plain ranges;
// the service adds what depends on other fields or on stored rows: the effect's range per
// type, decimals, the time window and the schedule's times, the time zone, and that the
// programme, shops, products and categories are the partner's.
import { Type, type TSchema } from 'typebox';
import { DateTime, IdParam, Name, PageQuery } from '../../shared/schemas.js';
import { CAMPAIGN_STATUSES } from './campaign-status.js';
import { CAMPAIGN_EFFECT_TYPES } from './campaigns.tables.js';

/**
 * Ids, skus per list (DESIGN.md §12: product_ids, category_ids, skus, shop_ids, tier_ids hold
 * at most 1,000 entries each): a bound on the work of every award that evaluates the campaign.
 */
export const MAX_LIST = 1000;
/** Campaigns that have not ended per programme (DESIGN.md §12): the 101st is 422 QUOTA_EXCEEDED. */
export const MAX_LIVE_CAMPAIGNS = 100;
export const MAX_SKU_LENGTH = 64;
/** points_budget, uses and the per-customer limits (§12). */
export const MAX_LIMIT = 2_000_000_000;
export const MAX_MULTIPLIER = 10;
/** bonus, per_currency and per_item: one award gives at most 10,000,000 points (the ledger's cap per operation). */
export const MAX_EFFECT_VALUE = 10_000_000;
export const MAX_MIN_AMOUNT = 1_000_000_000;
export const MAX_PRIORITY = 1_000_000;
export const DEFAULT_TIME_ZONE = 'Europe/Vilnius';

const Nullable = <T extends TSchema>(schema: T, options: Record<string, unknown> = {}) => Type.Union([schema, Type.Null()], options);
const IdList = (description: string) => Type.Array(IdParam, { maxItems: MAX_LIST, uniqueItems: true, description: `${description} (at most ${MAX_LIST}, no repeats)` });
const Time = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', 'x-message': 'campaigns.time_format' });
const Limit = (description: string) => Nullable(Type.Integer({ minimum: 1, maximum: MAX_LIMIT }), { description: `${description}; null = no limit.` });
const EffectType = Type.Enum(CAMPAIGN_EFFECT_TYPES, {
  description:
    'multiplier: the matching lines\' base points × (value − 1) on top of the base (1 < value ≤ 10, 2 decimals); bonus: value points once per qualifying purchase (a whole number ≥ 1); per_currency: value points per 1 EUR of the matching lines (> 0, 2 decimals); per_item: value points per whole unit of the matching lines\' quantity (> 0, 2 decimals).',
});

// Nested objects: on create a missing field takes its default, on update it stays as stored —
// so `{"schedule": {"time_zone": "UTC"}}` changes the zone and keeps the days and hours.
const scheduleProperties = {
  days_of_week: Type.Optional(
    Type.Array(Type.Integer({ minimum: 1, maximum: 7 }), { maxItems: 7, uniqueItems: true, description: 'ISO days, 1 = Monday … 7 = Sunday; [] (default) = every day.' }),
  ),
  from_time: Type.Optional(Nullable(Time, { description: '"HH:MM" in time_zone, with to_time (both or neither); null (default) = all day.' })),
  to_time: Type.Optional(Nullable(Time, { description: '"HH:MM", exclusive; before from_time the window wraps midnight ("22:00"–"02:00"); not equal to from_time.' })),
  time_zone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: `IANA time zone of the days, hours and per-day limits; default "${DEFAULT_TIME_ZONE}".` })),
};

const conditionProperties = {
  min_amount: Type.Optional(
    Nullable(Type.Number({ minimum: 0, maximum: MAX_MIN_AMOUNT }), { description: 'EUR the matching lines must come to (met at ≥); at most 4 decimals; null (default) = none.' }),
  ),
  product_ids: Type.Optional(IdList("The partner's catalogue products a line may match")),
  category_ids: Type.Optional(IdList("The partner's catalogue categories a line may match (a category includes its descendants)")),
  skus: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: MAX_SKU_LENGTH, pattern: '\\S', 'x-message': 'validation.not_blank' }), {
      maxItems: MAX_LIST,
      uniqueItems: true,
      description: `SKUs a line may match, by its own sku or its product's (at most ${MAX_LIST}, each ≤ ${MAX_SKU_LENGTH} characters). With no product, category or sku condition every line matches.`,
    }),
  ),
  first_purchase_only: Type.Optional(Type.Boolean({ description: "Only the card's first purchase in the programme; default false." })),
};

const limitProperties = {
  per_customer: Type.Optional(Limit('Uses per card in all')),
  per_customer_per_day: Type.Optional(Limit("Uses per card per day (days in the campaign's time zone)")),
  uses: Type.Optional(Limit('Awards the campaign may apply to in all')),
  points_budget: Type.Optional(Limit('Points the campaign may give in all, net of returns')),
};

const partial = { additionalProperties: false, description: 'Any subset of its fields; the rest take their defaults (create) or stay as stored (update).' };
const ScheduleIn = Type.Object(scheduleProperties, partial);
const ConditionsIn = Type.Object(conditionProperties, partial);
const LimitsIn = Type.Object(limitProperties, partial);

function campaignProperties(withDefaults: boolean) {
  const d = <T>(value: T) => (withDefaults ? { default: value } : {});
  return {
    description: Type.Optional(Nullable(Type.String({ maxLength: 5000 }), d(null))),
    is_active: Type.Optional(Type.Boolean({ description: 'false pauses the campaign.', ...d(true) })),
    starts_at: Type.Optional(Nullable(DateTime, { description: 'From (ISO 8601; may be in the past); null = already started.', ...d(null) })),
    ends_at: Type.Optional(Nullable(DateTime, { description: 'Until (exclusive); after starts_at; null = open-ended.', ...d(null) })),
    schedule: Type.Optional(ScheduleIn),
    shop_ids: Type.Optional(IdList("The partner's shops where it applies; [] = every shop")),
    tier_ids: Type.Optional(IdList("Tiers of the campaign's programme whose cards it applies to (another programme's tier: 422 on tier_ids); [] = every tier")),
    conditions: Type.Optional(ConditionsIn),
    priority: Type.Optional(Type.Integer({ minimum: -MAX_PRIORITY, maximum: MAX_PRIORITY, description: 'Higher first; ties: lower id first.', ...d(0) })),
    exclusive: Type.Optional(Type.Boolean({ description: 'When it applies, no campaign after it does.', ...d(false) })),
    limits: Type.Optional(LimitsIn),
  };
}

const EXAMPLE_CAMPAIGN_IN = {
  partner_card_id: 1,
  name: 'Double points on coffee',
  description: 'Weekday mornings',
  starts_at: '2026-03-02T00:00:00Z',
  ends_at: '2026-04-01T00:00:00Z',
  schedule: { days_of_week: [1, 2, 3, 4, 5], from_time: '07:00', to_time: '11:00', time_zone: 'Europe/Vilnius' },
  conditions: { category_ids: [12], min_amount: 3.5 },
  effect: { type: 'multiplier', value: 2 },
  priority: 10,
  limits: { per_customer_per_day: 1, points_budget: 50000 },
};

export const CreateCampaignBody = Type.Object(
  {
    partner_card_id: Type.Integer({ minimum: 1, maximum: 2147483647, description: "The partner's card programme whose awards the campaign adds to." }),
    name: Name(255),
    effect: Type.Object(
      { type: EffectType, value: Type.Number({ exclusiveMinimum: 0, maximum: MAX_EFFECT_VALUE, description: 'See type.' }) },
      { additionalProperties: false },
    ),
    ...campaignProperties(true),
  },
  { additionalProperties: false, examples: [EXAMPLE_CAMPAIGN_IN] },
);

export const UpdateCampaignBody = Type.Object(
  {
    partner_card_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647 })),
    name: Type.Optional(Name(255)),
    effect: Type.Optional(
      Type.Object(
        { type: Type.Optional(EffectType), value: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: MAX_EFFECT_VALUE })) },
        { ...partial, description: 'Either or both; the pair as it will be is checked (changing type alone checks the stored value against it).' },
      ),
    ),
    ...campaignProperties(false),
  },
  {
    additionalProperties: false,
    description: 'Any subset of the fields; the rest stay. schedule, conditions, effect and limits are partial too: only the fields sent inside them change.',
    examples: [{ is_active: false }, { limits: { points_budget: 80000 } }, { schedule: { from_time: null, to_time: null } }],
  },
);

const EXAMPLE_CAMPAIGN = {
  id: 3,
  ...EXAMPLE_CAMPAIGN_IN,
  is_active: true,
  schedule: EXAMPLE_CAMPAIGN_IN.schedule,
  shop_ids: [],
  tier_ids: [],
  conditions: { min_amount: 3.5, product_ids: [], category_ids: [12], skus: [], first_purchase_only: false },
  exclusive: false,
  limits: { per_customer: null, per_customer_per_day: 1, uses: null, points_budget: 50000 },
  status: 'running',
  uses_count: 120,
  points_awarded: 860,
  budget_left: 49140,
  created_at: '2026-03-01T10:00:00.000Z',
  updated_at: '2026-03-01T10:00:00.000Z',
};

export const Campaign = Type.Object(
  {
    id: Type.Integer(),
    partner_card_id: Type.Integer(),
    name: Type.String(),
    description: Nullable(Type.String()),
    is_active: Type.Boolean(),
    starts_at: Nullable(DateTime),
    ends_at: Nullable(DateTime),
    schedule: Type.Object({
      days_of_week: Type.Array(Type.Integer()),
      from_time: Nullable(Type.String()),
      to_time: Nullable(Type.String()),
      time_zone: Type.String(),
    }),
    shop_ids: Type.Array(Type.Integer()),
    tier_ids: Type.Array(Type.Integer()),
    conditions: Type.Object({
      min_amount: Nullable(Type.Number()),
      product_ids: Type.Array(Type.Integer()),
      category_ids: Type.Array(Type.Integer()),
      skus: Type.Array(Type.String()),
      first_purchase_only: Type.Boolean(),
    }),
    effect: Type.Object({ type: Type.Enum(CAMPAIGN_EFFECT_TYPES), value: Type.Number() }),
    priority: Type.Integer(),
    exclusive: Type.Boolean(),
    limits: Type.Object({
      per_customer: Nullable(Type.Integer()),
      per_customer_per_day: Nullable(Type.Integer()),
      uses: Nullable(Type.Integer()),
      points_budget: Nullable(Type.Integer()),
    }),
    status: Type.Enum(CAMPAIGN_STATUSES, {
      description: 'Derived: paused (is_active false), else scheduled (before starts_at), ended (from ends_at), exhausted (points_budget or uses used up), else running. Schedule hours do not change it.',
    }),
    uses_count: Type.Integer({ description: 'Awards the campaign applied to (returns do not give uses back).' }),
    points_awarded: Type.Integer({ description: 'Points it gave, net of returns.' }),
    budget_left: Nullable(Type.Integer({ description: 'max(points_budget − points_awarded, 0); null without a budget.' })),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { description: 'Campaign', examples: [EXAMPLE_CAMPAIGN] },
);

export const ListCampaignsQuery = Type.Object({
  ...PageQuery.properties,
  partner_card_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: "Only this programme's campaigns." })),
  is_active: Type.Optional(Type.Boolean({ description: 'Only active (true) or paused (false) campaigns; 1 and 0 are read as true and false.' })),
  status: Type.Optional(Type.Enum(CAMPAIGN_STATUSES, { description: 'Only campaigns with this status now.' })),
});
