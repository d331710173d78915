// TypeBox shapes of the catalog and XML import routes (DESIGN.md §9); they become the OpenAPI document.
import { Type } from 'typebox';
import { DateTime, IdParam, LocaleParam, PageQuery } from '../../shared/schemas.js';
import { ITEM_ELEMENTS, MAPPING_TAG_PATTERN, PRODUCT_FIELDS } from './feed-format.js';

const Text = Type.Union([Type.String(), Type.Null()]);
const Amount = Type.Union([Type.Number(), Type.Null()], { description: 'EUR-style amount as the feed gave it (at most 4 decimals), or null' });

export const Product = Type.Object(
  {
    id: Type.Integer(),
    xml_id: Text,
    external_id: Text,
    sku: Text,
    ean: Text,
    name: Type.String(),
    description: Text,
    brand: Text,
    model: Text,
    image_url: Text,
    images: Type.Array(Type.String(), { description: 'Pictures after the first (the first is image_url)' }),
    external_url: Text,
    weight: Text,
    color: Text,
    size: Text,
    price: Amount,
    discounted_price: Amount,
    currency: Text,
    availability: Type.Boolean(),
    stock_quantity: Type.Union([Type.Integer(), Type.Null()]),
    delivery_info: Text,
    warranty_info: Text,
    featured: Type.Boolean(),
    is_active: Type.Boolean(),
    categories: Type.Array(Type.Object({ id: Type.Integer(), name: Type.String() })),
    created_at: DateTime,
    updated_at: DateTime,
    last_import_id: Type.Union([Type.Integer(), Type.Null()], { description: 'The last import whose feed contained the product' }),
  },
  {
    examples: [
      {
        id: 17,
        xml_id: '1001',
        external_id: '1001',
        sku: 'MUG-300',
        ean: '4770000000011',
        name: 'Kavos puodelis',
        description: 'Porcelianinis puodelis, 300 ml.',
        brand: 'Rasa',
        model: null,
        image_url: 'https://shop.example.com/img/mug.jpg',
        images: ['https://shop.example.com/img/mug-2.jpg'],
        external_url: 'https://shop.example.com/p/mug',
        weight: null,
        color: 'balta',
        size: null,
        price: 12.99,
        discounted_price: 9.99,
        currency: 'EUR',
        availability: true,
        stock_quantity: 25,
        delivery_info: null,
        warranty_info: null,
        featured: true,
        is_active: true,
        categories: [{ id: 4, name: 'Virtuvė' }],
        created_at: '2024-05-01T10:00:03.000Z',
        updated_at: '2024-05-01T10:00:03.000Z',
        last_import_id: 9,
      },
    ],
  },
);

const OptionalBoolean = Type.Optional(Type.Boolean());

export const ProductsQuery = Type.Object({
  ...PageQuery.properties,
  q: Type.Optional(Type.String({ maxLength: 200, description: 'Searches name, sku, ean and brand (case-insensitive substring)' })),
  category_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: 'The category or any category under it' })),
  in_stock: Type.Optional(Type.Boolean({ description: 'Filters on availability' })),
  featured: OptionalBoolean,
  is_active: Type.Optional(Type.Boolean({ default: true, description: 'Inactive products are listed only with is_active=false' })),
  import_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: 'Products whose last_import_id is this import (what it created or changed)' })),
});

export const Category = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    parent_id: Type.Union([Type.Integer(), Type.Null()]),
    path: Type.String({ description: 'Names from the top category down, joined with " > "' }),
  },
  { examples: [{ id: 4, name: 'Virtuvė', parent_id: 3, path: 'Namai > Virtuvė' }] },
);

export const CategoryInUse = Type.Object({ ...Category.properties, product_count: Type.Integer({ description: 'Active products in this category' }) });

export const ProductSyncStatus = Type.Object(
  {
    total_products: Type.Integer(),
    active_products: Type.Integer(),
    inactive_products: Type.Integer(),
    products_with_discount: Type.Integer({ description: 'Active products whose discounted_price is below price' }),
    products_in_stock: Type.Integer({ description: 'Active products with availability true' }),
    categories_used: Type.Integer({ description: 'Categories of active products' }),
    last_sync: Type.Union([DateTime, Type.Null()], { description: 'End of the last completed import; null before any' }),
  },
  {
    examples: [
      {
        total_products: 1200,
        active_products: 1180,
        inactive_products: 20,
        products_with_discount: 95,
        products_in_stock: 1100,
        categories_used: 42,
        last_sync: '2024-05-01T10:00:09.000Z',
      },
    ],
  },
);

// --- import ----------------------------------------------------------------------------------

export const Mapping = Type.Record(Type.String(), Type.String({ pattern: MAPPING_TAG_PATTERN }), {
  description: `Overrides of the spec's table, field → the one tag to read it from. Fields: ${PRODUCT_FIELDS.join(', ')}`,
  examples: [{ name: 'pavadinimas', price: 'kaina' }],
});

export const ImportMode = Type.Union(
  [Type.Literal('upsert'), Type.Literal('replace')],
  { description: 'upsert (default): add and update; replace: also deactivate products of earlier imports missing from this feed' },
);

const AllowMassDeactivation = Type.Boolean({
  description:
    'replace mode only: deactivate the missing products even when they are more than half of the active ones ' +
    '(without it such an import deactivates nothing and says so in its errors); kept for a scheduled feed',
});

/** A problem of a feed or of one of its items, where it is. */
export const FeedProblem = Type.Object({
  line: Type.Union([Type.Integer(), Type.Null()], { description: 'Line of the item (or of the malformed spot); null: the feed as a whole' }),
  column: Type.Union([Type.Integer(), Type.Null()], { description: 'Column of the item start tag (or of the malformed spot)' }),
  item: Type.Union([Type.Integer(), Type.Null()], { description: '1-based index of the item in the feed; null when not about one item' }),
  message: Type.String(),
});

export const FromUrlBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL of the feed; private addresses are refused' }),
    mapping: Type.Optional(Mapping),
    mode: Type.Optional(ImportMode),
    allow_mass_deactivation: Type.Optional(AllowMassDeactivation),
    every_minutes: Type.Optional(
      Type.Integer({ minimum: 15, maximum: 10080, description: 'Keep the URL as a feed re-imported this often (conditional GET)' }),
    ),
  },
  { examples: [{ url: 'https://shop.example.com/feed.xml', mode: 'upsert', every_minutes: 60 }] },
);

export const Queued = Type.Object(
  { import_id: Type.Integer(), status: Type.Literal('queued') },
  { examples: [{ import_id: 9, status: 'queued' }] },
);

export const ImportRecord = Type.Object(
  {
    id: Type.Integer(),
    source: Type.Union([Type.Literal('url'), Type.Literal('file')]),
    url: Text,
    filename: Text,
    status: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('completed'), Type.Literal('failed'), Type.Literal('unchanged')]),
    mode: ImportMode,
    started_at: Type.Union([DateTime, Type.Null()]),
    finished_at: Type.Union([DateTime, Type.Null()]),
    items_seen: Type.Integer(),
    created: Type.Integer(),
    updated: Type.Integer(),
    unchanged: Type.Integer(),
    deactivated: Type.Integer(),
    skipped: Type.Integer(),
    errors_count: Type.Integer(),
    errors: Type.Array(FeedProblem, {
      description: 'The first 100 problems and warnings, each with the line, column and index of its item (null: the feed as a whole)',
    }),
  },
  {
    examples: [
      {
        id: 9,
        source: 'url',
        url: 'https://shop.example.com/feed.xml',
        filename: null,
        status: 'completed',
        mode: 'upsert',
        started_at: '2024-05-01T10:00:01.000Z',
        finished_at: '2024-05-01T10:00:09.000Z',
        items_seen: 1202,
        created: 1180,
        updated: 15,
        unchanged: 5,
        deactivated: 0,
        skipped: 2,
        errors_count: 2,
        errors: [{ line: 811, column: 12, item: 203, message: 'The item has no name; skipped' }],
      },
    ],
  },
);

export const ImportStats = Type.Object(
  {
    imports_total: Type.Integer(),
    completed: Type.Integer(),
    failed: Type.Integer(),
    last_import_at: Type.Union([DateTime, Type.Null()], { description: 'When the latest import finished, whatever its outcome' }),
    products_total: Type.Integer(),
    products_active: Type.Integer(),
    items_imported_total: Type.Integer({ description: 'Items written or confirmed (created + updated + unchanged) over every import' }),
  },
  {
    examples: [
      { imports_total: 12, completed: 10, failed: 1, last_import_at: '2024-05-01T10:00:09.000Z', products_total: 1200, products_active: 1180, items_imported_total: 13900 },
    ],
  },
);

export const Feed = Type.Object(
  {
    id: Type.Integer(),
    url: Type.String(),
    mode: ImportMode,
    mapping: Type.Union([Mapping, Type.Null()]),
    allow_mass_deactivation: Type.Boolean(),
    every_minutes: Type.Integer(),
    next_run_at: DateTime,
    last_run_at: Type.Union([DateTime, Type.Null()]),
    last_import_id: Type.Union([Type.Integer(), Type.Null()]),
    created_at: DateTime,
    updated_at: DateTime,
  },
  {
    examples: [
      {
        id: 3,
        url: 'https://shop.example.com/feed.xml',
        mode: 'replace',
        mapping: null,
        allow_mass_deactivation: false,
        every_minutes: 60,
        next_run_at: '2024-05-01T11:00:01.000Z',
        last_run_at: '2024-05-01T10:00:01.000Z',
        last_import_id: 9,
        created_at: '2024-04-01T08:00:00.000Z',
        updated_at: '2024-04-01T08:00:00.000Z',
      },
    ],
  },
);

export const Validation = Type.Object(
  {
    valid: Type.Boolean({ description: 'Well-formed, safe, within the limits, and at least one item the import would accept' }),
    item_element: Type.Union([Type.String(), Type.Null()], { description: `One of ${ITEM_ELEMENTS.join(', ')}` }),
    items_found: Type.Integer({ description: "Items the import will see (its items_seen)" }),
    fields: Type.Record(Type.String(), Type.String(), { description: 'field → the tag it was read from' }),
    unmapped_tags: Type.Array(Type.String(), { description: 'Item tags no field reads' }),
    errors: Type.Array(FeedProblem, { description: 'Every error and warning the import would record (the first 100)' }),
    sample: Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: 'The first 3 products as mapped' }),
  },
  {
    examples: [
      {
        valid: false,
        item_element: 'products/product',
        items_found: 1,
        fields: { name: 'name', xml_id: 'id', price: 'price' },
        unmapped_tags: ['vat'],
        errors: [{ line: 10, column: 12, item: null, message: 'The XML is not well-formed at line 10, column 12: unexpected close tag' }],
        sample: [{ name: 'Fine', xml_id: '1', price: 1 }],
      },
    ],
  },
);

export const ValidateUrlBody = Type.Object({
  url: Type.String({ minLength: 1, maxLength: 2048 }),
  mapping: Type.Optional(Mapping),
});

export const FieldMappings = Type.Object({
  item_elements: Type.Array(Type.String()),
  fields: Type.Array(Type.Object({ field: Type.String(), tags: Type.Array(Type.String()) })),
});

export const UploadQuery = Type.Object({
  mode: Type.Optional(ImportMode),
  allow_mass_deactivation: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'See from-url (raw XML bodies only)' })),
  mapping: Type.Optional(Type.String({ maxLength: 10_000, description: 'JSON object field → tag (raw XML bodies only)' })),
  filename: Type.Optional(Type.String({ maxLength: 255, description: 'Name to show in the history (raw XML bodies only)' })),
});

export const ImportIdParams = Type.Object({ locale: LocaleParam, import_id: IdParam });
