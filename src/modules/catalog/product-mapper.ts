// A feed item's tags → a product's fields (DESIGN.md §9), with the values read the way shops
// write them: prices as exact decimal text ("19.99", "19,99", "1 299,00", "12.99 EUR"),
// availability as words ("in stock", "out_of_stock", "yra"), numbers and flags. An item
// without a name or a key, or with a value that would be wrong if stored (a price that is not
// a price, an over-long identifier), is skipped with its line in the errors; an optional value
// that cannot be read is left out and reported.
import { createHash } from 'node:crypto';
import { formatAmount, parseAmount } from '../../shared/money.js';
import type { StoredImportError } from './catalog.tables.js';
import { DIALECT_RULES, type Dialect, type ProductField, type ResolvedMapping } from './feed-format.js';
import type { RawItem } from './feed-parser.js';

/** A category an item names: by a feed category id (`id:5`) or by its path of names. */
export type CategoryRef = { key: string; path?: undefined } | { key: string; path: string[] };

export interface MappedProduct {
  importKey: string;
  xml_id: string | null;
  external_id: string | null;
  sku: string | null;
  ean: string | null;
  name: string;
  description: string | null;
  brand: string | null;
  model: string | null;
  image_url: string | null;
  /** Pictures after the first (DESIGN.md §9: every YML <picture> after the first). */
  images: string[];
  external_url: string | null;
  weight: string | null;
  color: string | null;
  size: string | null;
  /** Exact decimal text with 4 places, as numeric columns take it. */
  price: string | null;
  discounted_price: string | null;
  currency: string | null;
  availability: boolean;
  stock_quantity: number | null;
  delivery_info: string | null;
  warranty_info: string | null;
  featured: boolean;
  categories: CategoryRef[];
  /** Hash of every field above and the category keys: equal hash = unchanged product. */
  hash: string;
}

export type MapResult =
  | { ok: true; product: MappedProduct; warnings: StoredImportError[]; tags: Partial<Record<ProductField, string>> }
  | { ok: false; error: StoredImportError };

const TEXT_LIMITS: Partial<Record<ProductField, number>> = {
  xml_id: 255,
  external_id: 255,
  sku: 255,
  ean: 255,
  name: 1000,
  description: 65_535,
  image_url: 2048,
  external_url: 2048,
};
const DEFAULT_TEXT_LIMIT = 1000;
const KEY_FIELDS = ['xml_id', 'external_id', 'sku', 'ean'] as const;
const MAX_CATEGORIES = 50;

const TRUE_WORDS = new Set([
  'true', '1', 'yes', 'y', 'in stock', 'in_stock', 'instock', 'available', 'preorder', 'pre-order', 'backorder',
  'taip', 'yra', 'turime', 'sandėlyje',
]);
const FALSE_WORDS = new Set([
  'false', '0', 'no', 'n', 'out of stock', 'out_of_stock', 'outofstock', 'unavailable', 'not available', 'discontinued',
  'ne', 'nėra', 'nera',
]);

export function parseFlag(text: string): boolean | undefined {
  const word = text.trim().toLowerCase().replace(/\s+/g, ' ');
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  return undefined;
}

/**
 * A price as shops write it → exact decimal text, and the currency when written beside it.
 * One separator is a decimal separator (",": Lithuanian "12,99"); with both, the last one is.
 */
export function parsePrice(text: string): { amount: string; currency: string | null } | { error: 'format' | 'decimals' } {
  let s = text.trim().replace(/[\u00a0\u202f' ]/g, '');
  let currency: string | null = null;
  const code = /^([A-Za-z]{3})(?=[\d.,-])|([A-Za-z]{3})$/.exec(s);
  if (code) {
    currency = (code[1] ?? code[2]!).toUpperCase();
    s = code[1] ? s.slice(3) : s.slice(0, -3);
  }
  s = s.replace(/^[€$£]|[€$£]$/g, '');
  const comma = s.lastIndexOf(',');
  const dot = s.lastIndexOf('.');
  if (comma >= 0 && dot >= 0) s = comma > dot ? s.replace(/\./g, '').replace(',', '.') : s.replace(/,/g, '');
  else if (comma >= 0) s = (s.match(/,/g)!.length > 1 ? s.replace(/,/g, '') : s.replace(',', '.'));
  else if ((s.match(/\./g)?.length ?? 0) > 1) s = s.replace(/\./g, '');
  if (!/^\d{1,12}(\.\d+)?$/.test(s)) return { error: 'format' };
  const units = parseAmount(s);
  if (units === undefined) return { error: 'decimals' };
  return { amount: formatAmount(units), currency };
}

/** Lower-case ISO 4217-looking code, or the euro sign. */
function parseCurrency(text: string): string | undefined {
  const s = text.trim();
  if (s === '€') return 'EUR';
  return /^[A-Za-z]{3}$/.test(s) ? s.toUpperCase() : undefined;
}

function parseQuantity(text: string): number | undefined {
  const s = text.trim();
  if (!/^\d{1,9}(\.0+)?$/.test(s)) return undefined;
  return Number.parseInt(s, 10);
}

/** Single-line text: white space (line breaks included) collapsed to one space, trimmed. */
export const collapse = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** "Electronics > Phones" → ["Electronics", "Phones"]; a name with no separator is a root category. */
export function categoryPath(text: string, separator = '>'): string[] {
  return text
    .split(separator)
    .map(collapse)
    .filter((s) => s !== '')
    .map((s) => s.slice(0, 255));
}

/** Fields written on one line: white space collapsed (descriptions keep their line breaks). */
const SINGLE_LINE = new Set<ProductField>(['xml_id', 'external_id', 'sku', 'ean', 'name', 'brand', 'model', 'weight', 'color', 'size']);
/** Ceneo's `avail`: 1 in stock, 3 / 7 / 14 days to ship; 90 (to order) and 99 (unknown) are not in stock. */
const CENEO_IN_STOCK = new Set(['1', '3', '7', '14']);

/** Tags of a dialect that list further pictures (all their values). */
export const EXTRA_IMAGE_TAGS: Record<Dialect, readonly string[]> = {
  generic: [],
  yml: [],
  google: ['additional_image_link'],
  heureka: ['imgurl_alternative'],
  ceneo: ['imgs/i@url'],
  skroutz: ['additionalimage', 'additional_imageurl'],
};
const MAX_IMAGES = 20;

/** The pictures after the first: the image tag's further values, then the dialect's extra tags; distinct, at most 20. */
function extraImages(raw: RawItem, imageTag: string | undefined, first: string | null, dialect: Dialect): string[] {
  const out: string[] = [];
  const seen = new Set(first === null ? [] : [first]);
  const add = (values: readonly string[] | undefined) => {
    for (const v of values ?? []) {
      if (out.length >= MAX_IMAGES) return;
      if (v.length > (TEXT_LIMITS.image_url ?? DEFAULT_TEXT_LIMIT) || seen.has(v)) continue;
      seen.add(v);
      out.push(v);
    }
  };
  if (imageTag !== undefined) add(raw.tags.get(imageTag)?.slice(1));
  for (const tag of EXTRA_IMAGE_TAGS[dialect]) add(raw.tags.get(tag));
  return out;
}

/** Heureka PARAM_NAME (Czech, Slovak, English) → the field its VAL fills. */
const HEUREKA_PARAMS: Record<string, 'color' | 'size' | 'weight'> = {
  barva: 'color',
  farba: 'color',
  color: 'color',
  colour: 'color',
  velikost: 'size',
  'veľkosť': 'size',
  size: 'size',
  hmotnost: 'weight',
  'hmotnosť': 'weight',
  weight: 'weight',
};

export interface MapOptions {
  /** Whether a category id (YML `categoryId`) is defined in the feed so far; an undefined one is reported and not linked. */
  knownCategory?(id: string): boolean;
}

export function mapItem(raw: RawItem, mapping: ResolvedMapping, dialect: Dialect, opts: MapOptions = {}): MapResult {
  const line = raw.line;
  const error = (_line: number, key: string, params?: Record<string, string | number>): StoredImportError => ({
    line: raw.line,
    column: raw.column,
    item: raw.index,
    key,
    ...(params ? { params } : {}),
  });
  if (raw.oversize) return { ok: false, error: error(line, 'catalog.item_too_large', { limit: 1024 * 1024 }) };
  const rules = DIALECT_RULES[dialect];
  const used: Partial<Record<ProductField, string>> = {};
  const first = (field: ProductField): string | null => {
    for (const tag of mapping[field]) {
      const values = raw.tags.get(tag);
      if (values && values.length > 0) {
        used[field] = tag;
        return values[0]!;
      }
    }
    return null;
  };
  const warnings: StoredImportError[] = [];

  const text: Partial<Record<ProductField, string | null>> = {};
  for (const field of [
    'xml_id', 'external_id', 'sku', 'ean', 'name', 'description', 'brand', 'model', 'image_url', 'external_url',
    'weight', 'color', 'size', 'delivery_info', 'warranty_info',
  ] as const) {
    const found = first(field);
    const value = found !== null && SINGLE_LINE.has(field) ? collapse(found) : found;
    const limit = TEXT_LIMITS[field] ?? DEFAULT_TEXT_LIMIT;
    if (value !== null && value.length > limit) return { ok: false, error: error(line, 'catalog.item_value_too_long', { field, limit }) };
    text[field] = value === '' ? null : value;
  }
  // Heureka's PARAM (PARAM_NAME + VAL pairs): colour, size and weight when the item has no such tag.
  if (dialect === 'heureka') {
    const names = raw.tags.get('param/param_name') ?? [];
    const values = raw.tags.get('param/val') ?? [];
    if (names.length === values.length) {
      names.forEach((n, i) => {
        const field = HEUREKA_PARAMS[collapse(n).toLowerCase()];
        const value = collapse(values[i]!);
        if (field && !text[field] && value !== '' && value.length <= DEFAULT_TEXT_LIMIT) {
          text[field] = value;
          used[field] = `PARAM[${n}]`;
        }
      });
    }
  }
  // YML `type="vendor.model"` offers need no <name>: "typePrefix vendor model".
  if (!text.name && dialect === 'yml' && raw.tags.get('type')?.[0] === 'vendor.model') {
    const parts = [raw.tags.get('typeprefix')?.[0], raw.tags.get('vendor')?.[0], raw.tags.get('model')?.[0]]
      .filter((v): v is string => v !== undefined)
      .map(collapse)
      .filter((v) => v !== '');
    if (parts.length > 0) {
      const composed = parts.join(' ');
      if (composed.length > (TEXT_LIMITS.name ?? DEFAULT_TEXT_LIMIT)) return { ok: false, error: error(line, 'catalog.item_value_too_long', { field: 'name', limit: TEXT_LIMITS.name ?? DEFAULT_TEXT_LIMIT }) };
      text.name = composed;
      used.name = 'vendor.model';
    }
  }
  const name = text.name;
  if (!name) return { ok: false, error: error(line, 'catalog.item_no_name') };
  const keyField = KEY_FIELDS.find((f) => text[f]);
  if (!keyField) return { ok: false, error: error(line, 'catalog.item_no_key') };

  // Prices: YML writes the current price as `price` and the one before the discount as
  // `oldprice`: the regular price only when above `price` (otherwise ignored, with a warning).
  let priceText = first('price');
  let discountText = first('discounted_price');
  const old = dialect === 'yml' && !mapping.price.includes('oldprice') ? raw.tags.get('oldprice')?.[0] : undefined;
  if (old !== undefined && discountText === null && priceText !== null) {
    const oldParsed = parsePrice(old);
    const current = parsePrice(priceText);
    if (!('error' in oldParsed) && !('error' in current) && parseAmount(oldParsed.amount)! > parseAmount(current.amount)!) {
      discountText = priceText;
      priceText = old;
      used.discounted_price = used.price;
      used.price = 'oldprice';
    } else {
      warnings.push(error(line, 'catalog.item_oldprice_ignored', { oldprice: old.slice(0, 50), price: priceText.slice(0, 50) }));
    }
  }
  let currency: string | null = null;
  const readPrice = (field: 'price' | 'discounted_price', value: string | null): string | null | StoredImportError => {
    if (value === null) return null;
    const parsed = parsePrice(value);
    if ('error' in parsed) {
      return error(line, parsed.error === 'decimals' ? 'catalog.item_price_decimals' : 'catalog.item_price_invalid', { field, value: value.slice(0, 50) });
    }
    currency ??= parsed.currency;
    return parsed.amount;
  };
  const price = readPrice('price', priceText);
  if (price !== null && typeof price === 'object') return { ok: false, error: price };
  const discounted = readPrice('discounted_price', discountText);
  if (discounted !== null && typeof discounted === 'object') return { ok: false, error: discounted };

  const currencyText = first('currency');
  if (currencyText !== null) {
    const code = parseCurrency(currencyText);
    if (code === undefined) warnings.push(error(line, 'catalog.item_value_unreadable', { field: 'currency', value: currencyText.slice(0, 50) }));
    else currency = code;
  }

  let stock: number | null = null;
  const stockText = first('stock_quantity');
  if (stockText !== null) {
    const n = parseQuantity(stockText);
    if (n === undefined) warnings.push(error(line, 'catalog.item_value_unreadable', { field: 'stock_quantity', value: stockText.slice(0, 50) }));
    else stock = n;
  }
  // Not stated: available if in stock (when the stock is given), else available.
  let availability = stock === null ? true : stock > 0;
  // Heureka: DELIVERY_DATE 0 is in stock (a number of days or a date is not); Ceneo: the `avail` code.
  const dialectStock = dialect === 'heureka' ? raw.tags.get('delivery_date')?.[0] : dialect === 'ceneo' ? raw.tags.get('avail')?.[0] : undefined;
  if (dialectStock !== undefined) availability = dialect === 'heureka' ? dialectStock.trim() === '0' : CENEO_IN_STOCK.has(dialectStock.trim());
  const availabilityText = first('availability');
  if (availabilityText !== null) {
    const flag = parseFlag(availabilityText);
    if (flag === undefined) warnings.push(error(line, 'catalog.item_value_unreadable', { field: 'availability', value: availabilityText.slice(0, 50) }));
    else availability = flag;
  }
  let featured = false;
  const featuredText = first('featured');
  if (featuredText !== null) {
    const flag = parseFlag(featuredText);
    if (flag === undefined) warnings.push(error(line, 'catalog.item_value_unreadable', { field: 'featured', value: featuredText.slice(0, 50) }));
    else featured = flag;
  }

  const categories: CategoryRef[] = [];
  const seen = new Set<string>();
  const addCategory = (ref: CategoryRef) => {
    if (seen.has(ref.key) || categories.length >= MAX_CATEGORIES) return;
    seen.add(ref.key);
    categories.push(ref);
  };
  for (const tag of mapping.categories) {
    const values = raw.tags.get(tag);
    if (!values || values.length === 0) continue;
    used.categories = tag;
    for (const value of values) {
      const path = categoryPath(value, rules.pathSeparator);
      if (path.length > 0) addCategory({ key: `path:${path.join(' > ')}`, path });
    }
    break;
  }
  // A category defined in the feed's categories block, by id (YML categoryId).
  for (const id of raw.tags.get('categoryid') ?? []) {
    if (opts.knownCategory && !opts.knownCategory(id)) {
      warnings.push(error(line, 'catalog.item_unknown_category', { id: id.slice(0, 50) }));
      continue;
    }
    addCategory({ key: `id:${id}` });
  }
  currency ??= rules.currency;

  const product: Omit<MappedProduct, 'hash'> = {
    importKey: `${keyField}:${text[keyField]}`,
    xml_id: text.xml_id ?? null,
    external_id: text.external_id ?? null,
    sku: text.sku ?? null,
    ean: text.ean ?? null,
    name,
    description: text.description ?? null,
    brand: text.brand ?? null,
    model: text.model ?? null,
    image_url: text.image_url ?? null,
    images: extraImages(raw, used.image_url, text.image_url ?? null, dialect),
    external_url: text.external_url ?? null,
    weight: text.weight ?? null,
    color: text.color ?? null,
    size: text.size ?? null,
    price,
    discounted_price: discounted,
    currency,
    availability,
    stock_quantity: stock,
    delivery_info: text.delivery_info ?? null,
    warranty_info: text.warranty_info ?? null,
    featured,
    categories,
  };
  const hash = createHash('sha1').update(JSON.stringify(product)).digest('base64');
  return { ok: true, product: { ...product, hash }, warnings, tags: used };
}

/** A product with a discount below its price carries an import-sourced offer. */
export const hasDiscount = (p: Pick<MappedProduct, 'price' | 'discounted_price'>): boolean =>
  p.price !== null && p.discounted_price !== null && (parseAmount(p.discounted_price) ?? 0n) < (parseAmount(p.price) ?? 0n);
