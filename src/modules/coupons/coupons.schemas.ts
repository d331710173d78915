// TypeBox schemas of the coupon routes: the spec's coupon list item (plus DESIGN.md §8's
// fields) and verification result, field for field.
import { Type, type TSchema } from 'typebox';
import { DateTime, DecimalInput, IdParam, PageMeta, PageQuery } from '../../shared/schemas.js';
import { cardTierProperties } from '../tiers/tiers.schemas.js';

const Nullable = <T extends TSchema>(schema: T, options: Record<string, unknown> = {}) => Type.Union([schema, Type.Null()], options);
const Status = Type.Enum(['active', 'pending', 'used', 'expired'] as const, { description: 'active, pending (reserved at one shop), used or expired' });

export const CouponOffer = Type.Object(
  {
    id: Type.Integer(),
    title: Type.String(),
    description: Type.String({ description: 'Empty when the offer has none' }),
    discount_type: Type.String({ description: 'percent, fixed, price or gift' }),
    reward_type: Type.String(),
    reward_details: Type.String({ description: 'Empty when the offer has none' }),
  },
  { description: 'The offer the coupon came from, with the terms it was claimed with' },
);

export const CouponGame = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    type: Type.String({ description: 'spin_wheel, scratch_card or slot_machine' }),
    reward_description: Type.String({ description: 'The prize, e.g. "5% off coffee (5% off)"' }),
  },
  { description: 'The game whose prize the coupon is' },
);

const EXAMPLE_COUPON = {
  id: 31,
  code: '7K3M-9Q2X-HV4T',
  qr_code: 'loyalty://app/coupon/7K3M-9Q2X-HV4T',
  status: 'active',
  expires_at: '2026-03-31T10:00:00.000Z',
  is_used: false,
  is_pending: false,
  offer: { id: 7, title: 'Free coffee', description: 'Any coffee, any size.', discount_type: 'gift', reward_type: 'coupon', reward_details: 'One coffee of your choice' },
  game: null,
  user: { id: 12, name: 'Ona', email: 'ona@example.com' },
  products: [],
  categories: [],
  requires_product_selection: false,
  partner_id: 1,
  card_id: 40,
  created_at: '2026-03-01T10:00:00.000Z',
  used_at: null,
  used_shop_id: null,
  pending_until: null,
};

export const Coupon = Type.Object(
  {
    id: Type.Integer(),
    code: Type.String({ description: 'XXXX-XXXX-XXXX (Crockford base32); lookups ignore case and dashes' }),
    qr_code: Type.String({ description: 'The text the app renders as a QR: {APP_LINK_BASE}/coupon/{code}' }),
    status: Status,
    expires_at: Nullable(DateTime, { description: 'null = never expires' }),
    is_used: Type.Boolean(),
    is_pending: Type.Boolean(),
    offer: Nullable(CouponOffer),
    game: Nullable(CouponGame),
    user: Type.Object({ id: Type.Integer(), name: Type.String(), email: Type.String() }, { description: 'The holder; empty strings for what they have not given' }),
    products: Type.Array(Type.Object({ id: Type.Integer() }), { description: "The offer's catalog products" }),
    categories: Type.Array(Type.Object({ id: Type.Integer() }), { description: "The offer's catalog categories" }),
    requires_product_selection: Type.Boolean({ description: 'The offer names more than one product: pick the one it applies to' }),
    partner_id: Type.Integer(),
    card_id: Type.Integer(),
    created_at: DateTime,
    used_at: Nullable(DateTime),
    used_shop_id: Nullable(Type.Integer()),
    pending_until: Nullable(DateTime, { description: 'End of the current reservation (status pending)' }),
  },
  { description: 'Coupon', examples: [EXAMPLE_COUPON] },
);

export const CouponEvent = Type.Object({
  event: Type.Enum(['issued', 'verified', 'released', 'redeemed', 'rolled_back'] as const),
  shop_id: Nullable(Type.Integer()),
  receipt_number: Nullable(Type.String()),
  amount: Nullable(Type.Number({ description: 'EUR' })),
  reason: Nullable(Type.String()),
  created_at: DateTime,
});

export const CouponWithHistory = Type.Object(
  { ...Coupon.properties, history: Type.Array(CouponEvent, { description: 'Oldest first' }) },
  {
    examples: [
      {
        ...EXAMPLE_COUPON,
        status: 'used',
        is_used: true,
        used_at: '2026-03-02T12:00:00.000Z',
        used_shop_id: 3,
        history: [
          { event: 'issued', shop_id: null, receipt_number: null, amount: null, reason: null, created_at: '2026-03-01T10:00:00.000Z' },
          { event: 'verified', shop_id: 3, receipt_number: null, amount: null, reason: null, created_at: '2026-03-02T11:58:00.000Z' },
          { event: 'redeemed', shop_id: 3, receipt_number: 'R-2026-000123', amount: 12.5, reason: null, created_at: '2026-03-02T12:00:00.000Z' },
        ],
      },
    ],
  },
);

export const COUPON_CSV_EXAMPLE =
  'id,code,status,created_at,expires_at,used_at,used_shop_id,offer_id,game_id,title,discount_type,discount_value,user_id,user_name,user_email,card_id\r\n' +
  '31,7K3M-9Q2X-HV4T,used,2026-03-01T10:00:00.000Z,2026-03-31T10:00:00.000Z,2026-03-02T12:00:00.000Z,3,7,,Free coffee,gift,,12,Ona,ona@example.com,40\r\n';

export const Verification = Type.Object(
  {
    coupon: Type.Object({
      id: Type.Integer(),
      code: Type.String(),
      status: Status,
      expiry_time: Nullable(DateTime, { description: 'null = never expires' }),
      is_pending: Type.Boolean(),
      pending_shop_id: Nullable(Type.Integer()),
      offer: Nullable(CouponOffer),
    }),
    user: Type.Object({
      id: Type.Integer(),
      name: Type.String(),
      email: Type.String(),
      phone: Type.String(),
      default_card_id: Type.Integer({ description: "The coupon's card" }),
      points_balance: Type.Integer({ description: "That card's balance" }),
    }),
    card: Type.Object({ id: Type.Integer(), card_number: Type.String(), user_id: Type.Integer(), points_balance: Type.Integer(), ...cardTierProperties }),
    points_rules: Type.Object({
      points_enabled: Type.Boolean(),
      points_redemption_enabled: Type.Boolean(),
      points_per_euro: Type.Number(),
      euro_per_point: Type.Number(),
    }),
    games_count: Type.Integer({ description: 'Active games of the partner' }),
    coupons_count: Type.Integer({ description: "The holder's active coupons with the partner" }),
    game: Type.Optional(CouponGame),
  },
  {
    description: 'Coupon verification result (the coupon as it is after the reservation)',
    examples: [
      {
        coupon: { id: 31, code: '7K3M-9Q2X-HV4T', status: 'pending', expiry_time: '2026-03-31T10:00:00.000Z', is_pending: true, pending_shop_id: 3, offer: EXAMPLE_COUPON.offer },
        user: { id: 12, name: 'Ona', email: 'ona@example.com', phone: '+37060000000', default_card_id: 40, points_balance: 120 },
        card: {
          id: 40,
          card_number: '4000123412341234',
          user_id: 12,
          points_balance: 120,
          tier: { id: 2, name: { en: 'Silver', lt: 'Sidabrinis' }, color: '#C0C0C0' },
          tier_progress: { basis: 'points_earned', window: 'rolling_12_months', value: 640, next: { id: 3, name: { en: 'Gold', lt: 'Auksinis' }, threshold: 1000, remaining: 360 }, keep_until: '2027-03-01T10:00:00.000Z' },
        },
        points_rules: { points_enabled: true, points_redemption_enabled: true, points_per_euro: 1, euro_per_point: 0.01 },
        games_count: 1,
        coupons_count: 2,
      },
    ],
  },
);

export const VerifyBody = Type.Object(
  {
    coupon_code: Type.String({ minLength: 1, maxLength: 255, description: 'The code (any case, dashes optional) or the QR text' }),
    shop_id: IdParam,
  },
  { examples: [{ coupon_code: '7K3M-9Q2X-HV4T', shop_id: 3 }] },
);

export const RedeemBody = Type.Object(
  {
    shop_id: IdParam,
    receipt_number: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64 }))),
    amount: Type.Optional(
      Nullable(
        DecimalInput(4, false, 'EUR of the sale, at most 1000000000 and 4 decimals (recorded in the history)'),
      ),
    ),
  },
  { examples: [{ shop_id: 3, receipt_number: 'R-2026-000123', amount: 12.5 }] },
);

export const ShopBody = Type.Object({ shop_id: IdParam }, { examples: [{ shop_id: 3 }] });

export const RollbackBody = Type.Object(
  { shop_id: IdParam, reason: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))) },
  { examples: [{ shop_id: 3, reason: 'Sale cancelled' }] },
);

export const CouponData = Type.Object({ coupon: Coupon });

const StatusQuery = (statuses: readonly string[], defaultValue: string, description: string) =>
  Type.Optional(Type.Enum(statuses, { default: defaultValue, description }));

export const ShopCouponsQuery = Type.Object({
  shop_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: 'Coupons valid at this shop' })),
  user_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: "The holder's id" })),
  card_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: "The holder's loyalty card" })),
  status: StatusQuery(['active', 'used', 'expired', 'all'], 'active', 'active (includes pending: reserved at a shop), used, expired or all; default active'),
  ...PageQuery.properties,
});

export const PartnerCouponsFilter = {
  status: StatusQuery(['active', 'pending', 'used', 'expired', 'all'], 'all', 'active (includes pending), pending, used, expired or all (default)'),
  offer_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647 })),
  game_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647 })),
  user_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647 })),
  card_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647 })),
  shop_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: 'Redeemed at this shop' })),
  code: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'One coupon by its code (any case, dashes optional)' })),
  from: Type.Optional(Type.Union([DateTime, Type.String({ format: 'date' })], { description: 'Created at or after (a date = that UTC day)' })),
  to: Type.Optional(Type.Union([DateTime, Type.String({ format: 'date' })], { description: 'Created before (a date = up to the end of that UTC day)' })),
};

export const CouponListData = Type.Object({ coupons: Type.Array(Coupon), pagination: PageMeta });
