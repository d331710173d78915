// TypeBox schemas of tiers (DESIGN.md §13): the tier CRUD of a programme, the tier fields
// every card view adds (`tier`, `tier_progress`), the programme's tier settings and the
// card's tier history. They are the types too: the service returns their Static types.
import { Type, type TSchema } from 'typebox';
import { DateTime, Name } from '../../shared/schemas.js';
import { TIER_HISTORY_REASONS } from './tiers.tables.js';

/** Tiers per programme: a ladder longer than this is a mistake, and every card view carries the whole ladder's lookup. */
export const MAX_TIERS = 20;
export const MAX_THRESHOLD = 1_000_000_000;
export const MAX_EARN_MULTIPLIER = 10;
export const MAX_BENEFITS_CHARS = 2000;

export const TIER_BASES = ['points_earned', 'amount_spent'] as const;
export const TIER_WINDOWS = ['lifetime', 'calendar_year', 'rolling_12_months'] as const;
export const TIER_DOWNGRADES = ['end_of_window', 'never'] as const;
export const DEFAULT_TIER_TIME_ZONE = 'Europe/Vilnius';

const Nullable = <T extends TSchema>(schema: T, options: Record<string, unknown> = {}) => Type.Union([schema, Type.Null()], options);

const TierName = Type.Object({ en: Name(100), lt: Name(100) }, { additionalProperties: false, description: 'In both languages, each 1 to 100 characters.' });
const Benefits = Type.Object(
  { en: Name(MAX_BENEFITS_CHARS), lt: Name(MAX_BENEFITS_CHARS) },
  { additionalProperties: false, description: `What the tier gives, in both languages, each 1 to ${MAX_BENEFITS_CHARS} characters.` },
);
const Color = Type.String({ pattern: '^#[0-9A-Fa-f]{6}$', 'x-message': 'tiers.color' });
const Threshold = Type.Integer({
  minimum: 0,
  maximum: MAX_THRESHOLD,
  description: "Qualifying value from which a card holds the tier: points (tier_basis points_earned) or whole EUR (amount_spent); unique in the programme (409 DUPLICATE_VALUE).",
});
const Multiplier = (options: Record<string, unknown> = {}) =>
  Type.Number({ minimum: 1, maximum: MAX_EARN_MULTIPLIER, description: 'Multiplies the base points of an award (1 to 10, at most 2 decimals).', ...options });

export const CreateTierBody = Type.Object(
  {
    name: TierName,
    threshold: Threshold,
    earn_multiplier: Type.Optional(Multiplier({ default: 1 })),
    benefits: Type.Optional(Nullable(Benefits, { default: null })),
    color: Type.Optional(Nullable(Color, { description: '#RRGGBB', default: null })),
  },
  { additionalProperties: false, examples: [{ name: { en: 'Gold', lt: 'Auksinis' }, threshold: 1000, earn_multiplier: 1.5, color: '#D4AF37' }] },
);

export const UpdateTierBody = Type.Object(
  {
    name: Type.Optional(TierName),
    threshold: Type.Optional(Threshold),
    earn_multiplier: Type.Optional(Multiplier()),
    benefits: Type.Optional(Nullable(Benefits)),
    color: Type.Optional(Nullable(Color, { description: '#RRGGBB' })),
  },
  { additionalProperties: false, description: 'Any subset of the fields; the rest stay.', examples: [{ threshold: 1200 }, { color: null }] },
);

const NameOut = Type.Object({ en: Type.String(), lt: Type.String() });

export const Tier = Type.Object(
  {
    id: Type.Integer(),
    name: NameOut,
    threshold: Type.Integer(),
    earn_multiplier: Type.Number(),
    benefits: Nullable(NameOut),
    color: Nullable(Type.String()),
  },
  {
    description: 'Tier of a card programme',
    examples: [{ id: 4, name: { en: 'Gold', lt: 'Auksinis' }, threshold: 1000, earn_multiplier: 1.5, benefits: { en: 'Free coffee on Fridays', lt: 'Nemokama kava penktadieniais' }, color: '#D4AF37' }],
  },
);

// ---- on every card view ----

export const CardTier = Nullable(Type.Object({ id: Type.Integer(), name: NameOut, color: Nullable(Type.String()) }), {
  description: "The card's tier (its name as stored, {en, lt}); null below every threshold or in a programme without tiers.",
});

export const TierProgress = Type.Object(
  {
    basis: Type.Enum(TIER_BASES),
    window: Type.Enum(TIER_WINDOWS),
    value: Type.Number({ description: "The card's qualifying value in its window: points, or EUR (at most 4 decimals) for amount_spent." }),
    next: Nullable(
      Type.Object({
        id: Type.Integer(),
        name: NameOut,
        threshold: Type.Integer(),
        remaining: Type.Number({ description: 'threshold − value (points, or EUR with at most 4 decimals)' }),
      }),
      { description: 'The lowest tier above both the value and the tier held; null at the top (or without tiers).' },
    ),
    keep_until: Nullable(DateTime, { description: 'Until when the tier is kept (end_of_window); null without a tier or for lifetime.' }),
  },
  { description: 'Where the card stands (DESIGN.md §13), from its stored state' },
);

/** Spread into a card view's schema. */
export const cardTierProperties = { tier: CardTier, tier_progress: TierProgress };
/** The tier fields alone: the type of what the tiers module adds to a card view (CardTierView). */
export const CardTierFields = Type.Object(cardTierProperties);

// ---- the programme's settings (partner card fields) ----

export const tierSettingProperties = (withDefaults: boolean) => {
  const d = <T>(value: T) => (withDefaults ? { default: value } : {});
  return {
    tier_basis: Type.Optional(
      Type.Enum(TIER_BASES, { description: 'What qualifies for tiers: points earned, or EUR spent (purchases net of returns); default points_earned.', ...d('points_earned') }),
    ),
    tier_window: Type.Optional(
      Type.Enum(TIER_WINDOWS, {
        description:
          'Which earnings count: all (lifetime), this calendar year (a tier reached is kept to the end of the next year), or the last 12 months (kept at least 12 months); default rolling_12_months.',
        ...d('rolling_12_months'),
      }),
    ),
    tier_downgrade: Type.Optional(
      Type.Enum(TIER_DOWNGRADES, { description: 'end_of_window: when keep_until passes the card falls to what its value gives; never: it never falls by time. Default end_of_window.', ...d('end_of_window') }),
    ),
    tier_time_zone: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: `IANA time zone of the calendar year; default "${DEFAULT_TIER_TIME_ZONE}".`, ...d(DEFAULT_TIER_TIME_ZONE) }),
    ),
  };
};

export const tierSettingsOut = {
  tier_basis: Type.Enum(TIER_BASES),
  tier_window: Type.Enum(TIER_WINDOWS),
  tier_downgrade: Type.Enum(TIER_DOWNGRADES),
  tier_time_zone: Type.String(),
};

// ---- the Overview's summary ----

export const TierSummary = Type.Object(
  {
    partner_card_id: Type.Integer(),
    title: NameOut,
    tiers: Type.Array(
      Type.Object({
        tier_id: Nullable(Type.Integer()),
        name: Nullable(NameOut),
        color: Nullable(Type.String()),
        cards: Type.Integer({ minimum: 0 }),
      }),
      { description: 'First the cards without a tier (tier_id null), then every tier, lowest threshold first; 0 where no card holds it.' },
    ),
  },
  {
    description: "How many of the programme's cards hold each of its tiers",
    examples: [
      {
        partner_card_id: 3,
        title: { en: 'Coffee club', lt: 'Kavos klubas' },
        tiers: [
          { tier_id: null, name: null, color: null, cards: 120 },
          { tier_id: 4, name: { en: 'Gold', lt: 'Auksinis' }, color: '#D4AF37', cards: 15 },
        ],
      },
    ],
  },
);

// ---- history ----

const HistoryTier = Nullable(
  Type.Object({
    id: Nullable(Type.Integer(), { description: 'null when the tier has been deleted since' }),
    name: NameOut,
  }),
  { description: 'The tier as it was named then; null = no tier' },
);

export const TierHistoryItem = Type.Object(
  {
    from: HistoryTier,
    to: HistoryTier,
    reason: Type.Enum(TIER_HISTORY_REASONS, {
      description: 'earned (an earning crossed a threshold), returned (a return or reversal dropped the value), window_ended (keep_until passed), tiers_changed (the thresholds changed)',
    }),
    at: DateTime,
  },
  { description: 'A move of the card between tiers' },
);
