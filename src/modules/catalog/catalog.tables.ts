// The partner's product catalogue and the XML feed imports that fill it (DESIGN.md §9).
//
// Products are keyed per partner by `import_key` ("xml_id:12", "sku:AB-1", …: the first of
// xml_id, external_id, sku, ean an item carries), so a re-import finds what an earlier one
// wrote. `content_hash` covers every mapped field and the item's categories: a re-import
// compares hashes instead of columns. `last_import_id` is the last import that saw the
// product; replace mode deactivates the partner's active products some other import saw last.
//
// Imports are durable jobs: the row is the queue (claimed FOR UPDATE SKIP LOCKED by any
// node, held by a lease the running node keeps extending). Counters and the first 100 errors
// are written with each batch of products, in the same transaction, so a node that dies
// leaves the row exactly as far as its last committed batch: the next claim resumes after it.
import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  type AnyPgColumn,
} from 'drizzle-orm/pg-core';
import { partners } from '../partners/partners.tables.js';

export const IMPORT_STATUSES = ['queued', 'running', 'completed', 'failed', 'unchanged'] as const;
export type ImportStatus = (typeof IMPORT_STATUSES)[number];
export const IMPORT_MODES = ['upsert', 'replace'] as const;
export type ImportMode = (typeof IMPORT_MODES)[number];
export type ImportSource = 'url' | 'file';

/** An error of an import as stored: a message key and its parameters, translated when read. */
export interface StoredImportError {
  line: number | null;
  /** Column of the item's start tag (or of the malformed spot), when known. */
  column?: number | null;
  /** 1-based index of the item in the feed, for an item's error. */
  item?: number | null;
  key: string;
  params?: Record<string, string | number>;
}

/** `{field: tag}` overrides of the spec's mapping table. */
export type FieldMapping = Record<string, string>;

const ts = (name: string) => timestamp(name, { withTimezone: true });

export const catalogCategories = pgTable(
  'catalog_categories',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    /** "id:5" (a feed's category id, YML) or "path:Phones > Smartphones" (named in the item). */
    externalKey: text('external_key').notNull(),
    name: text().notNull(),
    parentId: integer('parent_id').references((): AnyPgColumn => catalogCategories.id, { onDelete: 'set null' }),
    /** Names from the root down, joined with " > ". */
    path: text().notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('catalog_categories_key').on(t.partnerId, t.externalKey), index('catalog_categories_partner_idx').on(t.partnerId, t.id)],
);

export const catalogProducts = pgTable(
  'catalog_products',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    importKey: text('import_key').notNull(),
    xmlId: text('xml_id'),
    externalId: text('external_id'),
    sku: text(),
    ean: text(),
    name: text().notNull(),
    description: text(),
    brand: text(),
    model: text(),
    imageUrl: text('image_url'),
    /** Pictures after the first (the first is image_url), as the feed lists them. */
    images: jsonb().$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    externalUrl: text('external_url'),
    weight: text(),
    color: text(),
    size: text(),
    // numeric, never float: 19.99 in the feed is 19.99 here and in JSON.
    price: numeric({ precision: 16, scale: 4 }),
    discountedPrice: numeric('discounted_price', { precision: 16, scale: 4 }),
    currency: text(),
    availability: boolean().notNull().default(true),
    stockQuantity: integer('stock_quantity'),
    deliveryInfo: text('delivery_info'),
    warrantyInfo: text('warranty_info'),
    featured: boolean().notNull().default(false),
    isActive: boolean('is_active').notNull().default(true),
    contentHash: text('content_hash').notNull(),
    lastImportId: integer('last_import_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('catalog_products_key').on(t.partnerId, t.importKey),
    index('catalog_products_partner_idx').on(t.partnerId, t.isActive, t.id),
    // A till's basket line is matched by sku, else ean (DESIGN.md §12), on every award with lines.
    index('catalog_products_sku_idx').on(t.partnerId, t.sku).where(sql`${t.sku} is not null`),
    index('catalog_products_ean_idx').on(t.partnerId, t.ean).where(sql`${t.ean} is not null`),
  ],
);

export const catalogProductCategories = pgTable(
  'catalog_product_categories',
  {
    productId: integer('product_id')
      .notNull()
      .references(() => catalogProducts.id, { onDelete: 'cascade' }),
    categoryId: integer('category_id')
      .notNull()
      .references(() => catalogCategories.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.productId, t.categoryId] }), index('catalog_product_categories_category_idx').on(t.categoryId)],
);

export const catalogFeeds = pgTable(
  'catalog_feeds',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    url: text().notNull(),
    mode: text().$type<ImportMode>().notNull(),
    mapping: jsonb().$type<FieldMapping>(),
    /** Replace mode may deactivate more than half of the active products (DESIGN.md §9's replace guard). */
    allowMassDeactivation: boolean('allow_mass_deactivation').notNull().default(false),
    everyMinutes: integer('every_minutes').notNull(),
    nextRunAt: ts('next_run_at').notNull(),
    /** Validators of the last feed body imported, sent back as If-None-Match / If-Modified-Since. */
    etag: text(),
    lastModified: text('last_modified'),
    lastImportId: integer('last_import_id'),
    lastRunAt: ts('last_run_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('catalog_feeds_url').on(t.partnerId, t.url),
    index('catalog_feeds_due_idx').on(t.nextRunAt),
    check('catalog_feeds_every_minutes', sql`${t.everyMinutes} between 15 and 10080`),
  ],
);

export const catalogImports = pgTable(
  'catalog_imports',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    feedId: integer('feed_id').references(() => catalogFeeds.id, { onDelete: 'set null' }),
    source: text().$type<ImportSource>().notNull(),
    url: text(),
    filename: text(),
    /** The uploaded feed in the file store while the import needs it. */
    fileKey: text('file_key'),
    status: text().$type<ImportStatus>().notNull().default('queued'),
    mode: text().$type<ImportMode>().notNull(),
    mapping: jsonb().$type<FieldMapping>(),
    /** Replace mode may deactivate more than half of the active products (DESIGN.md §9's replace guard). */
    allowMassDeactivation: boolean('allow_mass_deactivation').notNull().default(false),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
    itemsSeen: integer('items_seen').notNull().default(0),
    created: integer().notNull().default(0),
    updated: integer().notNull().default(0),
    unchanged: integer().notNull().default(0),
    deactivated: integer().notNull().default(0),
    skipped: integer().notNull().default(0),
    errorsCount: integer('errors_count').notNull().default(0),
    errors: jsonb().$type<StoredImportError[]>().notNull().default(sql`'[]'::jsonb`),
    /** Claims so far; a claim that finds it over the limit fails the import instead of running it. */
    attempts: integer().notNull().default(0),
    leaseUntil: ts('lease_until'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    index('catalog_imports_partner_idx').on(t.partnerId, t.id),
    index('catalog_imports_pending_idx')
      .on(t.id)
      .where(sql`${t.status} in ('queued', 'running')`),
    // One running import per partner: two imports of one catalogue never interleave their
    // batches (counts and replace mode stay exact), whatever the number of nodes.
    uniqueIndex('catalog_imports_one_running')
      .on(t.partnerId)
      .where(sql`${t.status} = 'running'`),
  ],
);
