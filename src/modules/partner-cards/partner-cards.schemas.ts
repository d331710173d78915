// TypeBox schemas of /{locale}/partners/cards: the spec's "Partner card" resource. The
// schema checks shapes, types and ranges; the service adds what a schema cannot say
// (language keys, image bytes, decimal places, min ≤ max, the partner's own shops), and
// the route answers both in one 422.
import { Type, type TSchema } from 'typebox';
import { DateTime, Name, PageQuery } from '../../shared/schemas.js';
import { DATA_URI_PATTERN, dataUriMaxLength, IMAGE_LIMITS } from './card-images.js';
import { tierSettingProperties, tierSettingsOut } from '../tiers/tiers.schemas.js';
import { PROGRAMME_DEFAULTS } from './partner-cards.tables.js';

/** Limits of the free-text fields, also used to size the route's body limit. */
export const TEXT_LIMITS = { titleChars: 255, languages: 20, textChars: 10_000 } as const;
export const MAX_SHOP_IDS = 1000;
/** numeric(14,4) holds 10 integer digits; a rate above this is a typo, not a programme. */
export const MAX_RATE = 1_000_000_000;
/** Point counts stay far below int4 so that sums in the ledger cannot overflow. */
export const MAX_POINTS = 1_000_000_000;
export const MAX_EXPIRATION_DAYS = 36_500;

const Nullable = <T extends TSchema>(schema: T, options: Record<string, unknown> = {}) =>
  Type.Union([schema, Type.Null()], options);

const Title = Type.Object(
  { en: Name(TEXT_LIMITS.titleChars), lt: Name(TEXT_LIMITS.titleChars) },
  { additionalProperties: false, description: 'Card title in both languages, each 1 to 255 characters.' },
);

/** `{en: "...", lt: "...", ...}`: keys are two-letter language codes (checked by the service). */
const PerLanguage = (description: string) =>
  Type.Unsafe<Record<string, string>>(
    Type.Object(
      {},
      {
        additionalProperties: Type.String({ maxLength: TEXT_LIMITS.textChars }),
        maxProperties: TEXT_LIMITS.languages,
        description: `${description} Keys are two-letter language codes (en, lt, ...), at most ${TEXT_LIMITS.languages}; each text at most ${TEXT_LIMITS.textChars} characters.`,
      },
    ),
  );

const Colour = Nullable(Type.String({ pattern: '^#[0-9A-Fa-f]{6}$', 'x-message': 'partner_cards.colour' }), {
  description: 'Colour as #RRGGBB.',
});
const Image = (bytes: number, what: string) =>
  Nullable(
    Type.String({
      maxLength: dataUriMaxLength(bytes),
      pattern: DATA_URI_PATTERN,
      'x-message': 'partner_cards.image_data_uri',
    }),
    {
      description: `${what} as a base64 data URI: data:image/(png|jpeg|gif|webp);base64,… — at most ${bytes} bytes decoded; the bytes must be of the declared type. SVG is not accepted.`,
    },
  );

const CardDesignProperties = {
  logo: Type.Optional(Image(IMAGE_LIMITS.logo, 'Logo')),
  text_color: Type.Optional(Colour),
  text_color_labels: Type.Optional(Colour),
  qr_background_color: Type.Optional(Colour),
  qr_color: Type.Optional(Colour),
  background_color: Type.Optional(Colour),
  background_color_opacity: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }), { description: '0 (transparent) to 1 (opaque).' })),
  background_image: Type.Optional(Image(IMAGE_LIMITS.background_image, 'Background image')),
};
const CardDesignIn = Type.Object(CardDesignProperties, {
  additionalProperties: false,
  description: 'Card look. Sent as a whole: an update replaces the stored design. A null or omitted field is not set.',
});

/** Positive, at most 4 decimals (the service checks the places, exactly). */
const Rate = (description: string, defaultValue?: number) =>
  Type.Number({ exclusiveMinimum: 0, maximum: MAX_RATE, description: `${description} Positive, at most 4 decimals.`, ...(defaultValue !== undefined ? { default: defaultValue } : {}) });
const Count = (description: string, defaultValue?: number) =>
  Type.Integer({ minimum: 0, maximum: MAX_POINTS, description, ...(defaultValue !== undefined ? { default: defaultValue } : {}) });
const NullableCount = (description: string, withDefault: boolean) =>
  Nullable(Type.Integer({ minimum: 0, maximum: MAX_POINTS }), { description, ...(withDefault ? { default: null } : {}) });
const Flag = (description: string, defaultValue?: boolean) =>
  Type.Boolean({ description, ...(defaultValue !== undefined ? { default: defaultValue } : {}) });

export const COUPON_VALIDITY_DEPRECATION =
  'Deprecated: coupon validity is configured per game (coupon_validity_days of /partners/games). Still honoured for game coupons whose game sets none: expires_at = creation + this many days; null = never. Sending it makes the response carry `Deprecation: true`.';

/**
 * The programme fields after title/description/terms/design. With `withDefaults` (create)
 * each optional field carries its default, which AJV fills in; an update has none, so that
 * only what the client sent is changed.
 */
function programmeProperties(withDefaults: boolean) {
  const d = withDefaults ? PROGRAMME_DEFAULTS : undefined;
  return {
    is_active: Type.Optional(Flag('Whether the programme is in use.', d?.isActive)),
    shop_ids: Type.Optional(
      Type.Array(Type.Integer(), {
        uniqueItems: true,
        maxItems: MAX_SHOP_IDS,
        description: "Shops where the card is valid; each must be one of the partner's own shops. Sent as a whole: an update replaces the list.",
        ...(withDefaults ? { default: [] } : {}),
      }),
    ),
    auto_assign: Type.Optional(Flag('Give the card to new customers automatically.', d?.autoAssign)),
    points_enabled: Type.Optional(Flag('Whether purchases earn points.', d?.pointsEnabled)),
    // The bonus is one ledger entry: at most what one operation may move (points/ledger.service.ts).
    initial_bonus_points: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 10_000_000,
        description: 'Points given when a customer gets the card.',
        ...(d?.initialBonusPoints !== undefined ? { default: d.initialBonusPoints } : {}),
      }),
    ),
    points_expiration_days: Type.Optional(
      Nullable(Type.Integer({ minimum: 1, maximum: MAX_EXPIRATION_DAYS }), {
        description: 'Days until earned points expire; null means never.',
        ...(d ? { default: d.pointsExpirationDays } : {}),
      }),
    ),
    points_per_currency: Type.Optional(Rate('Points earned per currency_amount spent.', d && Number(d.pointsPerCurrency))),
    currency_amount: Type.Optional(Rate('Amount (EUR) that earns points_per_currency points.', d && Number(d.currencyAmount))),
    round_points_up: Type.Optional(Flag('Round fractional points up (otherwise down).', d?.roundPointsUp)),
    min_points_per_purchase: Type.Optional(Count('Lower clamp of the points of one purchase.', d?.minPointsPerPurchase)),
    max_points_per_purchase: Type.Optional(NullableCount('Upper clamp of the points of one purchase; null = none. At least min_points_per_purchase.', withDefaults)),
    points_per_visit: Type.Optional(Count('Points added per purchase (visit).', d?.pointsPerVisit)),
    points_redemption_enabled: Type.Optional(Flag('Whether points can be spent.', d?.pointsRedemptionEnabled)),
    points_per_currency_redemption: Type.Optional(
      Rate('Points that buy currency_amount_redemption.', d && Number(d.pointsPerCurrencyRedemption)),
    ),
    currency_amount_redemption: Type.Optional(Rate('Amount (EUR) bought by points_per_currency_redemption points.', d && Number(d.currencyAmountRedemption))),
    min_points_for_redemption: Type.Optional(Count('Smallest redemption.', d?.minPointsForRedemption)),
    max_points_per_redemption: Type.Optional(NullableCount('Largest redemption; null = none. At least min_points_for_redemption.', withDefaults)),
    default_coupon_validity_days: Type.Optional(
      Nullable(Type.Integer({ minimum: 1, maximum: 3650 }), {
        deprecated: true,
        description: `1 to 3650, or null for no expiry. ${COUPON_VALIDITY_DEPRECATION}`,
        ...(withDefaults ? { default: null } : {}),
      }),
    ),
    // Tiers (DESIGN.md §13): a change of any of them re-evaluates the programme's cards in the background.
    ...tierSettingProperties(withDefaults),
  };
}

export const CreateCardBody = Type.Object({
  title: Title,
  description: PerLanguage('Description per language.'),
  terms_conditions: PerLanguage('Terms and conditions per language.'),
  card_design: CardDesignIn,
  ...programmeProperties(true),
});

export const UpdateCardBody = Type.Object(
  {
    title: Type.Optional(Title),
    description: Type.Optional(PerLanguage('Description per language; replaces the stored one.')),
    terms_conditions: Type.Optional(PerLanguage('Terms and conditions per language; replaces the stored ones.')),
    card_design: Type.Optional(CardDesignIn),
    ...programmeProperties(false),
  },
  { description: 'Every field optional; a field sent is validated as on create (title: both en and lt).' },
);

// ---- responses ----------------------------------------------------------------------

const TitleOut = Type.Object({ en: Type.String(), lt: Type.String() });
const TextsOut = Type.Unsafe<Record<string, string>>(Type.Object({}, { additionalProperties: Type.String() }));
const CardDesignOut = Type.Object({
  logo: Type.Optional(Type.String()),
  text_color: Type.Optional(Type.String()),
  text_color_labels: Type.Optional(Type.String()),
  qr_background_color: Type.Optional(Type.String()),
  qr_color: Type.Optional(Type.String()),
  background_color: Type.Optional(Type.String()),
  background_color_opacity: Type.Optional(Type.Number()),
  background_image: Type.Optional(Type.String()),
});
const CouponValidityOut = Nullable(Type.Integer(), { deprecated: true, description: COUPON_VALIDITY_DEPRECATION });

const fullProperties = {
  id: Type.Integer(),
  title: TitleOut,
  description: TextsOut,
  terms_conditions: TextsOut,
  card_design: CardDesignOut,
  is_active: Type.Boolean(),
  shop_ids: Type.Array(Type.Integer()),
  auto_assign: Type.Boolean(),
  points_enabled: Type.Boolean(),
  initial_bonus_points: Type.Integer(),
  points_expiration_days: Nullable(Type.Integer()),
  points_per_currency: Type.Number(),
  currency_amount: Type.Number(),
  round_points_up: Type.Boolean(),
  min_points_per_purchase: Type.Integer(),
  max_points_per_purchase: Nullable(Type.Integer()),
  points_per_visit: Type.Integer(),
  points_redemption_enabled: Type.Boolean(),
  points_per_currency_redemption: Type.Number(),
  currency_amount_redemption: Type.Number(),
  min_points_for_redemption: Type.Integer(),
  max_points_per_redemption: Nullable(Type.Integer()),
  default_coupon_validity_days: CouponValidityOut,
  ...tierSettingsOut,
  created_at: DateTime,
  updated_at: DateTime,
};

export const PartnerCard = Type.Object(fullProperties, { description: 'Partner card programme (every field)' });

export const CreatedCard = Type.Object({
  id: fullProperties.id,
  title: TitleOut,
  description: TextsOut,
  is_active: Type.Boolean(),
  default_coupon_validity_days: CouponValidityOut,
  created_at: DateTime,
  updated_at: DateTime,
});

export const CardListItem = Type.Object({
  id: fullProperties.id,
  title: TitleOut,
  is_active: Type.Boolean(),
  default_coupon_validity_days: CouponValidityOut,
  created_at: DateTime,
  updated_at: DateTime,
});

const { id: _id, created_at: _created, updated_at: _updated, ...updatable } = fullProperties;
export const UpdatedCard = Type.Object(
  {
    ...Object.fromEntries(Object.entries(updatable).map(([k, v]) => [k, Type.Optional(v)])),
    updated_at: DateTime,
  } as { [K in keyof typeof updatable]: ReturnType<typeof Type.Optional<(typeof updatable)[K]>> } & { updated_at: typeof DateTime },
  { description: 'The fields the request sent (as stored), plus updated_at' },
);

export const ListCardsQuery = Type.Object({
  ...PageQuery.properties,
  is_active: Type.Optional(Type.Boolean({ description: 'Only active (true) or inactive (false) cards; 1 and 0 are read as true and false.' })),
  shop_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: 'Only cards valid in this shop.' })),
});
