// TypeBox schemas of the shop routes (DESIGN.md §10): the full shop record, the nearby
// search, analytics and the import report. They become the OpenAPI document.
import { Type, type TSchema } from 'typebox';
import { DateTime, Name } from '../../shared/schemas.js';
import { DEFAULT_ANALYTICS_DAYS, MAX_ANALYTICS_DAYS, MAX_IMPORT_BYTES, MAX_IMPORT_ROWS, SHOP_CSV_COLUMNS } from './shops.limits.js';

const Nullable = <T extends TSchema>(schema: T, options: Record<string, unknown> = {}) => Type.Union([schema, Type.Null()], options);

export const EXAMPLE_SHOP = {
  id: 3,
  partner_id: 1,
  name: 'Vilnius Old Town',
  code: 'VNO-01',
  address: 'Gedimino pr. 1',
  city: 'Vilnius',
  country: 'LT',
  postal_code: '01103',
  phone: '+37052123456',
  email: 'oldtown@example.com',
  lat: 54.687157,
  lng: 25.279652,
  opening_hours: 'Mo-Fr 09:00-20:00; Sa 10:00-16:00',
  is_active: true,
  created_at: '2026-03-01T10:00:00.000Z',
  updated_at: '2026-03-02T08:30:00.000Z',
};

const shopProperties = {
  id: Type.Integer(),
  partner_id: Type.Integer(),
  name: Type.String(),
  code: Nullable(Type.String(), { description: "The partner's own reference, unique among its shops" }),
  address: Nullable(Type.String()),
  city: Nullable(Type.String()),
  country: Nullable(Type.String({ description: 'ISO 3166-1 alpha-2' })),
  postal_code: Nullable(Type.String()),
  phone: Nullable(Type.String()),
  email: Nullable(Type.String()),
  lat: Nullable(Type.Number()),
  lng: Nullable(Type.Number()),
  opening_hours: Nullable(Type.String({ description: 'Free text, e.g. OpenStreetMap syntax "Mo-Fr 09:00-18:00"' })),
  is_active: Type.Boolean(),
  created_at: DateTime,
  updated_at: DateTime,
};

export const Shop = Type.Object(shopProperties, { description: 'Shop', examples: [EXAMPLE_SHOP] });

const optionalText = (max: number, options: Record<string, unknown> = {}) => Type.Optional(Nullable(Type.String({ maxLength: max, ...options })));
const ShopFields = {
  code: optionalText(64, { description: 'Unique among the partner’s shops; empty = none' }),
  address: optionalText(500),
  city: optionalText(120),
  country: Type.Optional(Nullable(Type.String({ pattern: '^([A-Za-z]{2})?$', 'x-message': 'shops.country_format' }))),
  postal_code: optionalText(20),
  phone: optionalText(32),
  email: Type.Optional(Nullable(Type.Union([Type.String({ format: 'email', maxLength: 254 }), Type.Literal('')]))),
  lat: Type.Optional(Nullable(Type.Number({ minimum: -90, maximum: 90 }))),
  lng: Type.Optional(Nullable(Type.Number({ minimum: -180, maximum: 180 }))),
  opening_hours: optionalText(1000),
  is_active: Type.Optional(Type.Boolean()),
};
const { id: _id, partner_id: _p, created_at: _c, updated_at: _u, ...EXAMPLE_FIELDS } = EXAMPLE_SHOP;
export const CreateShop = Type.Object({ name: Name(255), ...ShopFields }, { examples: [EXAMPLE_FIELDS] });
export const UpdateShop = Type.Object({ name: Type.Optional(Name(255)), ...ShopFields }, { examples: [{ opening_hours: 'Mo-Su 08:00-22:00', is_active: false }] });

export const NearbyQuery = Type.Object({
  lat: Type.Number({ minimum: -90, maximum: 90, description: 'Latitude of the point, degrees' }),
  lng: Type.Number({ minimum: -180, maximum: 180, description: 'Longitude of the point, degrees' }),
  radius_km: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 100, default: 10, description: 'Search radius, km (default 10, at most 100)' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'At most this many shops (default 20, at most 100)' })),
});

export const NearbyShop = Type.Object(
  { ...shopProperties, distance_km: Type.Number({ description: 'Great-circle distance from the point, km, 3 decimals' }) },
  { examples: [{ ...EXAMPLE_SHOP, distance_km: 1.234 }] },
);

const Day = Type.String({ format: 'date', description: 'UTC day, YYYY-MM-DD' });
export const AnalyticsQuery = Type.Object({
  from: Type.Optional(Type.String({ format: 'date', description: `First UTC day (default: ${DEFAULT_ANALYTICS_DAYS - 1} days before "to")` })),
  to: Type.Optional(Type.String({ format: 'date', description: 'Last UTC day, included (default: today)' })),
});

const counters = {
  transactions: Type.Integer({ description: 'Ledger entries made at the shop' }),
  purchase_amount: Type.Number({ description: 'EUR of purchases, less reversed purchases and returned goods (on the day of the refund)' }),
  points_awarded: Type.Integer({ description: 'Points earned, less what reversals and returns took back from earnings' }),
  points_deducted: Type.Integer({ description: 'Points spent, as a positive number, less what reversals and returns gave back to deductions' }),
};
export const ShopAnalytics = Type.Object(
  {
    shop_id: Type.Integer(),
    from: Day,
    to: Day,
    ...counters,
    unique_customers: Type.Integer(),
    new_cards: Type.Integer({ description: 'Cards whose first ledger entry at any of the partner’s shops was made here, in the window' }),
    coupons_redeemed: Type.Integer(),
    by_day: Type.Array(Type.Object({ day: Day, ...counters, coupons_redeemed: Type.Integer() }), { description: `Every day of the window (at most ${MAX_ANALYTICS_DAYS})` }),
  },
  {
    examples: [
      {
        shop_id: 3,
        from: '2026-03-01',
        to: '2026-03-02',
        transactions: 3,
        purchase_amount: 57.5,
        points_awarded: 57,
        points_deducted: 20,
        unique_customers: 2,
        new_cards: 1,
        coupons_redeemed: 1,
        by_day: [
          { day: '2026-03-01', transactions: 2, purchase_amount: 57.5, points_awarded: 57, points_deducted: 0, coupons_redeemed: 0 },
          { day: '2026-03-02', transactions: 1, purchase_amount: 0, points_awarded: 0, points_deducted: 20, coupons_redeemed: 1 },
        ],
      },
    ],
  },
);

const ImportErrorItem = Type.Object({ row: Type.Integer({ description: '1-based data row (0 = the header or the file as a whole)' }), field: Type.String(), message: Type.String() });
export const ImportReport = Type.Object(
  { created: Type.Integer(), updated: Type.Integer(), errors: Type.Array(ImportErrorItem) },
  { examples: [{ created: 2, updated: 5, errors: [] }] },
);
export const ImportFailure = Type.Object(
  {
    success: Type.Literal(false),
    code: Type.Integer(),
    message: Type.String(),
    request_id: Type.String(),
    errors: Type.Array(ImportErrorItem),
    data: ImportReport,
  },
  {
    description: 'Some rows are bad: nothing was written; every bad row is listed',
    examples: [
      {
        success: false,
        code: 422,
        message: 'Nothing was imported: fix the rows listed in errors',
        request_id: '5f0c…',
        errors: [{ row: 2, field: 'lat', message: 'Must be <= 90' }],
        data: { created: 0, updated: 0, errors: [{ row: 2, field: 'lat', message: 'Must be <= 90' }] },
      },
    ],
  },
);

const CSV_EXAMPLE = `${SHOP_CSV_COLUMNS.join(',')}\r\n,Kaunas Centre,KUN-01,Laisvės al. 10,Kaunas,LT,44240,+37037123456,kaunas@example.com,54.897,23.911,Mo-Fr 09:00-18:00,true,,\r\n`;
export const importBody = {
  description: `A CSV with a header row (columns: ${SHOP_CSV_COLUMNS.join(', ')}; any subset, in any order), as a raw text/csv body or multipart field \`file\`, or a JSON array of shop objects. At most ${MAX_IMPORT_ROWS} rows and ${MAX_IMPORT_BYTES / 1024 / 1024} MiB.`,
  content: {
    'text/csv': { schema: { type: 'string' }, example: CSV_EXAMPLE },
    'multipart/form-data': { schema: { properties: { file: { type: 'string', format: 'binary', description: 'The CSV' } }, required: ['file'] } },
    'application/json': {
      // No type: the route checks the array itself, so that every refusal lists rows the same way.
      schema: { description: `An array of shop objects (at most ${MAX_IMPORT_ROWS})`, items: { type: 'object' } },
      example: [{ id: 3, opening_hours: 'Mo-Su 08:00-22:00' }, { code: 'KUN-01', name: 'Kaunas Centre', city: 'Kaunas', country: 'LT' }],
    },
  },
};
