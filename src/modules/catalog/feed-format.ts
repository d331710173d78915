// What a feed item's tags mean: the spec's field-mapping table ("Product import field
// mappings"), the recognised item elements, the extra tags of the YML and Google Merchant
// dialects (DESIGN.md §9), and per-request overrides. For each field the first of its tags
// that the item carries wins (the table's order, not the document's). Tag names match
// regardless of case; an item's own attributes count as tags (`<offer id="12">`).
import type { FieldMapping } from './catalog.tables.js';

/** The spec's recognised repeating elements, as the field-mappings endpoint lists them. */
export const ITEM_ELEMENTS = ['product', 'item', 'products/product', 'items/item', 'offer', 'offers/offer'] as const;

/** Element names that start an item (with or without their plural parent). */
export const ITEM_NAMES = new Set(['product', 'item', 'offer']);

export const PRODUCT_FIELDS = [
  'name',
  'description',
  'brand',
  'model',
  'ean',
  'sku',
  'xml_id',
  'image_url',
  'external_url',
  'weight',
  'color',
  'size',
  'price',
  'discounted_price',
  'currency',
  'availability',
  'stock_quantity',
  'delivery_info',
  'warranty_info',
  'external_id',
  'featured',
  'categories',
] as const;
export type ProductField = (typeof PRODUCT_FIELDS)[number];

/** The spec's table, in its order ("weight, color, size: same names" → one row each). */
export const SPEC_MAPPING: ReadonlyArray<{ field: ProductField; tags: readonly string[] }> = [
  { field: 'name', tags: ['name', 'title', 'product_name'] },
  { field: 'description', tags: ['description', 'desc'] },
  { field: 'brand', tags: ['brand', 'manufacturer'] },
  { field: 'model', tags: ['model'] },
  { field: 'ean', tags: ['ean', 'ean13', 'barcode'] },
  { field: 'sku', tags: ['sku', 'code', 'id'] },
  { field: 'xml_id', tags: ['id', 'xml_id', 'external_id'] },
  { field: 'image_url', tags: ['image', 'image_url', 'picture'] },
  { field: 'external_url', tags: ['url', 'link', 'product_url'] },
  { field: 'weight', tags: ['weight'] },
  { field: 'color', tags: ['color'] },
  { field: 'size', tags: ['size'] },
  { field: 'price', tags: ['price', 'regular_price'] },
  { field: 'discounted_price', tags: ['discounted_price', 'sale_price', 'loyalty_program_item_price'] },
  { field: 'currency', tags: ['currency'] },
  { field: 'availability', tags: ['availability', 'in_stock'] },
  { field: 'stock_quantity', tags: ['stock', 'quantity'] },
  { field: 'delivery_info', tags: ['delivery', 'shipping'] },
  { field: 'warranty_info', tags: ['warranty'] },
  { field: 'external_id', tags: ['id', 'external_id'] },
  { field: 'featured', tags: ['featured'] },
  { field: 'categories', tags: ['categories/category', 'category'] },
];

/** Which vocabulary a feed speaks, from its root element and namespaces. */
export type Dialect = 'generic' | 'yml' | 'google';

/** The Google Merchant namespace: its elements are read by their local name (`g:price` → price). */
export const GOOGLE_NS = 'http://base.google.com/ns/1.0';

/**
 * Tags a dialect adds after the spec's (so the spec's win when both are present). YML:
 * `available` attribute, `currencyId`, `vendor`, `vendorCode` (and `oldprice`/`categoryId`,
 * handled by the mapper). Google: `g:gtin`, `g:image_link`, `g:product_type` (a category path).
 */
const DIALECT_TAGS: Record<Dialect, Partial<Record<ProductField, readonly string[]>>> = {
  generic: {},
  yml: { availability: ['available'], currency: ['currencyid'], brand: ['vendor'], sku: ['vendorcode'] },
  google: { ean: ['gtin'], image_url: ['image_link'], categories: ['product_type'] },
};

/** Field → the tags to try, in order (lower-case). */
export type ResolvedMapping = Readonly<Record<ProductField, readonly string[]>>;

/** A tag as matched: lower-case; `parent/child` for a nested element. */
export const tagKey = (name: string) => name.toLowerCase();

export function resolveMapping(dialect: Dialect, overrides: FieldMapping | null | undefined): ResolvedMapping {
  const out = {} as Record<ProductField, readonly string[]>;
  for (const { field, tags } of SPEC_MAPPING) out[field] = [...tags, ...(DIALECT_TAGS[dialect][field] ?? [])];
  for (const [field, tag] of Object.entries(overrides ?? {})) out[field as ProductField] = [tagKey(tag)];
  return out;
}

/** Every tag any field may read (for "unmapped_tags"). */
export function mappedTags(mapping: ResolvedMapping): Set<string> {
  const out = new Set<string>();
  for (const tags of Object.values(mapping)) for (const tag of tags) out.add(tag);
  return out;
}

/** A tag an override may name: an element or attribute name, or `parent/child`. */
export const MAPPING_TAG_PATTERN = '^[A-Za-z_][A-Za-z0-9_.:-]{0,99}(/[A-Za-z_][A-Za-z0-9_.:-]{0,99})?$';
