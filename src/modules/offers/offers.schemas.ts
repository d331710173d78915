// TypeBox schemas of the offers routes (DESIGN.md §8). The schema checks shapes and ranges;
// the service adds decimals, the discount rules, the time window, the partner's own card
// and shops, and "points need a programme".
import { Type, type TSchema } from 'typebox';
import { DateTime, IdParam, Name, PageQuery } from '../../shared/schemas.js';
import { OFFER_DISCOUNT_TYPES, OFFER_REWARD_TYPES, OFFER_SOURCES } from './offers.tables.js';

export const MAX_ID_LIST = 1000;
export const MAX_DISCOUNT_VALUE = 1_000_000_000;
export const MAX_POINTS_COST = 10_000_000;

const Nullable = <T extends TSchema>(schema: T, options: Record<string, unknown> = {}) => Type.Union([schema, Type.Null()], options);
const IdList = (what: string) =>
  Type.Array(IdParam, { maxItems: MAX_ID_LIST, uniqueItems: true, description: `${what} (at most ${MAX_ID_LIST}, no repeats)` });

function offerProperties(withDefaults: boolean) {
  const d = <T>(value: T) => (withDefaults ? { default: value } : {});
  return {
    partner_card_id: Type.Optional(
      Nullable(IdParam, { description: "The partner's own card programme; required when points_cost > 0 (the points leave the customer's card in it).", ...d(null) }),
    ),
    description: Type.Optional(Nullable(Type.String({ maxLength: 5000 }), d(null))),
    discount_value: Type.Optional(
      Nullable(Type.Number({ exclusiveMinimum: 0, maximum: MAX_DISCOUNT_VALUE }), {
        description: 'Percent (0 < v ≤ 100) for percent; EUR for fixed (amount off) and price (the price to pay); null for gift. At most 4 decimals.',
        ...d(null),
      }),
    ),
    reward_type: Type.Optional(Type.Enum(OFFER_REWARD_TYPES, { description: 'coupon (the only kind: a claim issues a coupon)', ...d('coupon') })),
    reward_details: Type.Optional(Nullable(Type.String({ maxLength: 1000 }), { description: 'What the coupon gives, in words (shown on the coupon).', ...d(null) })),
    points_cost: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_POINTS_COST, description: 'Points a claim costs; 0 = free.', ...d(0) })),
    starts_at: Type.Optional(Nullable(DateTime, { description: 'Claimable from (ISO 8601); null = now.', ...d(null) })),
    ends_at: Type.Optional(Nullable(DateTime, { description: 'Claimable until; after starts_at; null = open-ended.', ...d(null) })),
    is_active: Type.Optional(Type.Boolean(d(true))),
    featured: Type.Optional(Type.Boolean(d(false))),
    shop_ids: Type.Optional(IdList("The partner's shops where its coupons are valid; [] = every shop")),
    product_ids: Type.Optional(IdList('Catalog product ids the offer applies to')),
    category_ids: Type.Optional(IdList('Catalog category ids the offer applies to')),
    max_claims: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 2_000_000_000 }), { description: 'Coupons the offer gives in total; null = unlimited.', ...d(null) })),
    max_claims_per_customer: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Coupons one customer may claim.', ...d(1) })),
    coupon_validity_days: Type.Optional(
      Nullable(Type.Integer({ minimum: 1, maximum: 3650 }), {
        description: "Days a claimed coupon stays valid, 1 to 3650; null = the programme's default_coupon_validity_days, else never.",
        ...d(null),
      }),
    ),
  };
}

const EXAMPLE_OFFER_IN = {
  title: 'Free coffee',
  description: 'Any coffee, any size.',
  discount_type: 'gift',
  reward_details: 'One coffee of your choice',
  points_cost: 100,
  partner_card_id: 1,
  shop_ids: [],
  max_claims: 500,
  max_claims_per_customer: 1,
  coupon_validity_days: 30,
  featured: true,
};

export const CreateOfferBody = Type.Object(
  {
    title: Name(255),
    discount_type: Type.Enum(OFFER_DISCOUNT_TYPES, { description: 'percent, fixed (EUR off), price (a fixed price) or gift' }),
    ...offerProperties(true),
  },
  { additionalProperties: false, examples: [EXAMPLE_OFFER_IN] },
);

export const UpdateOfferBody = Type.Object(
  {
    title: Type.Optional(Name(255)),
    discount_type: Type.Optional(Type.Enum(OFFER_DISCOUNT_TYPES, { description: 'percent, fixed, price or gift' })),
    ...offerProperties(false),
  },
  { additionalProperties: false, description: 'Any subset of the fields; the rest stay.', examples: [{ is_active: false }, { max_claims: 1000, featured: false }] },
);

const EXAMPLE_OFFER = {
  id: 7,
  partner_card_id: 1,
  title: 'Free coffee',
  description: 'Any coffee, any size.',
  discount_type: 'gift',
  discount_value: null,
  reward_type: 'coupon',
  reward_details: 'One coffee of your choice',
  points_cost: 100,
  starts_at: null,
  ends_at: '2026-12-31T23:59:59.000Z',
  is_active: true,
  featured: true,
  shop_ids: [],
  product_ids: [],
  category_ids: [],
  max_claims: 500,
  max_claims_per_customer: 1,
  claims_count: 42,
  coupon_validity_days: 30,
  source: 'api',
  created_at: '2026-03-01T10:00:00.000Z',
  updated_at: '2026-03-01T10:00:00.000Z',
};

export const Offer = Type.Object(
  {
    id: Type.Integer(),
    partner_card_id: Nullable(Type.Integer()),
    title: Type.String(),
    description: Nullable(Type.String()),
    discount_type: Type.Enum(OFFER_DISCOUNT_TYPES),
    discount_value: Nullable(Type.Number()),
    reward_type: Type.Enum(OFFER_REWARD_TYPES),
    reward_details: Nullable(Type.String()),
    points_cost: Type.Integer(),
    starts_at: Nullable(DateTime),
    ends_at: Nullable(DateTime),
    is_active: Type.Boolean(),
    featured: Type.Boolean(),
    shop_ids: Type.Array(Type.Integer()),
    product_ids: Type.Array(Type.Integer()),
    category_ids: Type.Array(Type.Integer()),
    max_claims: Nullable(Type.Integer()),
    max_claims_per_customer: Type.Integer(),
    claims_count: Type.Integer(),
    coupon_validity_days: Nullable(Type.Integer()),
    source: Type.Enum(OFFER_SOURCES),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { description: 'Offer', examples: [EXAMPLE_OFFER] },
);

export const ListOffersQuery = Type.Object({
  ...PageQuery.properties,
  is_active: Type.Optional(Type.Boolean({ description: 'Only active (true) or inactive (false) offers; 1 and 0 are read as true and false.' })),
  featured: Type.Optional(Type.Boolean({ description: 'Only featured (true) or other (false) offers.' })),
  product_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: 'Offers that name this catalogue product (in product_ids, or import-sourced for it).' })),
});

export const ShopOffersQuery = Type.Object({
  ...PageQuery.properties,
  shop_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: 'Offers valid at this shop (it is listed, or the offer lists no shop).' })),
  category_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: 'Offers whose category_ids contain this category.' })),
});

export const SyncStatus = Type.Object(
  {
    total_offers: Type.Integer({ description: "Every offer of the partner (API and import), deleted ones excepted" }),
    active_offers: Type.Integer({ description: 'Active, started and not ended' }),
    expired_offers: Type.Integer({ description: 'Past ends_at' }),
    last_sync: Nullable(DateTime, { description: 'The last change to any of them (a deletion too); null when there was none' }),
  },
  { examples: [{ total_offers: 12, active_offers: 9, expired_offers: 2, last_sync: '2026-03-01T10:00:00.000Z' }] },
);
