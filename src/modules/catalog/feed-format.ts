// What a feed item's tags mean: the spec's field-mapping table ("Product import field
// mappings"), the recognised item elements, the extra tags of the YML and Google Merchant
// dialects (DESIGN.md §9), and per-request overrides. For each field the first of its tags
// that the item carries wins (the table's order, not the document's). Field tag names match
// regardless of case (item elements do not: see isItemName); an item's own attributes count
// as tags (`<offer id="12">`).
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

/**
 * Which vocabulary a feed speaks, known once its item element is found (DESIGN.md §9 "The
 * feeds shops in the region actually publish"): YML (`yml_catalog`), Google Merchant / Meta
 * (RSS 2.0 or Atom 1.0 with the `g:` namespace), Heureka (`SHOP/SHOPITEM`), Ceneo
 * (`offers/o`), Skroutz (`mywebstore/products/product`), or the spec's generic table.
 */
export type Dialect = 'generic' | 'yml' | 'google' | 'heureka' | 'ceneo' | 'skroutz';

/** The Google Merchant namespace: its elements are read by their local name (`g:price` → price). */
export const GOOGLE_NS = 'http://base.google.com/ns/1.0';

/**
 * The item element, from the document's structure, names matched case-sensitively (a field
 * such as Heureka's `<PRODUCT>` is never taken for an item): the spec's `product`, `item`,
 * `offer` (any parent), Heureka's `SHOPITEM`, Atom's `entry` under `feed`, Ceneo's `o` under
 * `offers` or `group`. Names are local (a prefix or default namespace does not matter).
 */
export function isItemName(local: string, parentLocal: string | null): boolean {
  switch (local) {
    case 'product':
    case 'item':
    case 'offer':
    case 'SHOPITEM':
      return true;
    case 'entry':
      return parentLocal === 'feed';
    case 'o':
      return parentLocal === 'offers' || parentLocal === 'group';
    default:
      return false;
  }
}

/** The dialect of a feed from its root element, its item element and whether Google's namespace is declared. */
export function detectDialect(rootLocal: string, itemLocal: string, google: boolean): Dialect {
  if (rootLocal === 'yml_catalog') return 'yml';
  if (itemLocal === 'SHOPITEM') return 'heureka';
  if (itemLocal === 'o') return 'ceneo';
  if (rootLocal === 'mywebstore') return 'skroutz';
  if (google) return 'google';
  return 'generic';
}

/**
 * A dialect's tags per field, replacing the spec's list for that field (the list says where
 * the spec's tags still count). Tags are lower-case; `child@attr` is an attribute of a child
 * element, `child/grandchild@attr` of a grandchild, `child/grandchild[name]` a grandchild by
 * its `name` attribute (Ceneo's `attrs/a[@name]`).
 */
const DIALECT_TAGS: Record<Dialect, Partial<Record<ProductField, readonly string[]>>> = {
  generic: {},
  // YML: `available` attribute, `currencyId`, `vendor`; `vendorCode` is the sku (the offer id
  // stays xml_id). `oldprice`, `categoryId` and vendor.model names are handled by the mapper.
  yml: {
    sku: ['vendorcode', 'sku', 'code', 'id'],
    availability: ['availability', 'in_stock', 'available'],
    currency: ['currency', 'currencyid'],
    brand: ['brand', 'manufacturer', 'vendor'],
  },
  // Google Merchant RSS and Atom (and Meta catalogs): `g:mpn` is the sku, `g:gtin` the ean,
  // `g:product_type` the category path; Atom's `<link href>` the URL when the link has no text.
  google: {
    sku: ['sku', 'mpn', 'code', 'id'],
    ean: ['ean', 'ean13', 'barcode', 'gtin'],
    image_url: ['image', 'image_url', 'picture', 'image_link'],
    external_url: ['url', 'link', 'link@href', 'product_url'],
    categories: ['categories/category', 'category', 'product_type'],
  },
  heureka: {
    xml_id: ['item_id', 'id', 'xml_id', 'external_id'],
    external_id: ['external_id'],
    sku: ['productno', 'sku', 'code'],
    name: ['productname', 'product', 'name', 'title'],
    image_url: ['imgurl', 'image'],
    price: ['price_vat', 'price'],
    categories: ['categorytext'],
    delivery_info: ['delivery_date', 'delivery'],
    availability: [],
  },
  ceneo: {
    xml_id: ['id'],
    external_id: ['external_id'],
    sku: ['attrs/a[kod_producenta]', 'attrs/a[sku]', 'sku', 'code'],
    ean: ['attrs/a[ean]', 'ean'],
    brand: ['attrs/a[producent]', 'brand', 'manufacturer'],
    description: ['desc', 'description'],
    image_url: ['imgs/main@url', 'image'],
    categories: ['cat'],
    availability: [],
  },
  skroutz: {
    sku: ['mpn', 'sku'],
    ean: ['ean', 'barcode', 'ean13'],
    price: ['price_with_vat', 'price'],
    availability: ['instock'],
    delivery_info: ['availability', 'delivery'],
  },
};

/** How a dialect writes a category path (split on this), and the currency its prices are in when unstated. */
export const DIALECT_RULES: Record<Dialect, { pathSeparator: string; currency: string | null }> = {
  generic: { pathSeparator: '>', currency: null },
  yml: { pathSeparator: '>', currency: null },
  google: { pathSeparator: '>', currency: null },
  heureka: { pathSeparator: '|', currency: null },
  ceneo: { pathSeparator: '/', currency: 'PLN' },
  skroutz: { pathSeparator: '>', currency: 'EUR' },
};

/** Field → the tags to try, in order (lower-case). */
export type ResolvedMapping = Readonly<Record<ProductField, readonly string[]>>;

/** A tag as matched: lower-case; `parent/child` for a nested element. */
export const tagKey = (name: string) => name.toLowerCase();

export function resolveMapping(dialect: Dialect, overrides: FieldMapping | null | undefined): ResolvedMapping {
  const out = {} as Record<ProductField, readonly string[]>;
  for (const { field, tags } of SPEC_MAPPING) out[field] = DIALECT_TAGS[dialect][field] ?? tags;
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
