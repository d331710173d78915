// Shop import and export (DESIGN.md §10): the CSV columns, reading a CSV or a JSON array
// into rows, checking every row against the partner's shops, and the plan of creates and
// updates that the service then applies in one transaction. Nothing here writes.
import { parse } from 'csv-parse/sync';
import { csvField } from '../../shared/csv.js';
import { t, type Locale, type MessageKey, type MessageParams } from '../../shared/i18n.js';
import type { ShopFields, ShopRow } from './shops.repository.js';
import { fieldsOf, type ShopInput, type ShopView } from './shops.service.js';

export { MAX_IMPORT_BYTES, MAX_IMPORT_ROWS, SHOP_CSV_COLUMNS } from './shops.limits.js';
import { MAX_IMPORT_ROWS, SHOP_CSV_COLUMNS } from './shops.limits.js';
type Column = (typeof SHOP_CSV_COLUMNS)[number];
/** Columns an import reads back but never writes (the service keeps these). */
const READ_ONLY: ReadonlySet<string> = new Set(['created_at', 'updated_at', 'partner_id']);
const KNOWN: ReadonlySet<string> = new Set([...SHOP_CSV_COLUMNS, 'partner_id']);
/** Free-text columns: guarded against spreadsheet formulas in the export. */
const FREE_TEXT: ReadonlySet<Column> = new Set(['name', 'code', 'address', 'city', 'postal_code', 'phone', 'email', 'opening_hours']);

const TEXT_LIMITS: Record<string, number> = {
  name: 255,
  code: 64,
  address: 500,
  city: 120,
  postal_code: 20,
  phone: 32,
  email: 254,
  opening_hours: 1000,
};

// ---- formula guard ---------------------------------------------------------------------
// A cell starting with = + - @ (or a tab/CR) is run as a formula by spreadsheets. The export
// prefixes such cells with an apostrophe — and also cells that already are apostrophes
// followed by one of those, so that the import can strip exactly one apostrophe from any
// cell matching /^'+[=+\-@\t\r]/ and get back the stored text, whatever it was.
const FORMULA = /^'*[=+\-@\t\r]/;
const GUARDED = /^'+[=+\-@\t\r]/;
export const guardFormula = (text: string) => (FORMULA.test(text) ? `'${text}` : text);
export const unguardFormula = (text: string) => (GUARDED.test(text) ? text.slice(1) : text);

/** The CSV header line and one line per shop (RFC 4180, CRLF). */
export function csvHeader(): string {
  return `${SHOP_CSV_COLUMNS.join(',')}\r\n`;
}
export function csvLine(shop: ShopView): string {
  return `${SHOP_CSV_COLUMNS.map((column) => {
    const value = shop[column];
    if (value === null) return '';
    if (typeof value === 'boolean') return value ? 'true' : 'false';
    if (typeof value === 'number') return csvField(value);
    return csvField(FREE_TEXT.has(column) ? guardFormula(value) : value);
  }).join(',')}\r\n`;
}

// ---- reading ---------------------------------------------------------------------------

export interface ImportError {
  row: number;
  field: string;
  message: string;
}

export interface RawRows {
  /** Each row's cells by column; CSV cells are strings. */
  rows: Array<Record<string, unknown>>;
  fromCsv: boolean;
}

export class ImportRejected {
  constructor(readonly errors: Array<{ row: number; field: string; key: MessageKey; params?: MessageParams }>) {}
  localised(locale: Locale): ImportError[] {
    return this.errors.map((e) => ({ row: e.row, field: e.field, message: t(locale, e.key, e.params) }));
  }
}

/** CSV text with a header row → rows. Row 0 is the header; data rows count from 1. */
export function readCsv(text: string): RawRows {
  let records: string[][];
  try {
    records = parse(text, { bom: true, skip_empty_lines: true, relax_column_count: false }) as string[][];
  } catch (err) {
    const line = (err as { lines?: number }).lines ?? 0;
    throw new ImportRejected([{ row: 0, field: 'file', key: 'shops.csv_malformed', params: { line } }]);
  }
  if (records.length === 0) throw new ImportRejected([{ row: 0, field: 'file', key: 'shops.csv_no_header' }]);
  const header = records[0]!.map((h) => h.trim().toLowerCase());
  const headerErrors: ImportRejected['errors'] = [];
  const seen = new Set<string>();
  for (const column of header) {
    if (!KNOWN.has(column)) headerErrors.push({ row: 0, field: column || '_', key: 'shops.unknown_column' });
    else if (seen.has(column)) headerErrors.push({ row: 0, field: column, key: 'shops.duplicate_column' });
    seen.add(column);
  }
  if (headerErrors.length > 0) throw new ImportRejected(headerErrors);
  tooMany(records.length - 1);
  return {
    fromCsv: true,
    rows: records.slice(1).map((cells) => Object.fromEntries(header.map((column, i) => [column, cells[i]]))),
  };
}

/** A JSON body: an array of shop objects. */
export function readJson(body: unknown): RawRows {
  if (!Array.isArray(body)) throw new ImportRejected([{ row: 0, field: 'body', key: 'shops.json_not_array' }]);
  tooMany(body.length);
  const errors: ImportRejected['errors'] = [];
  body.forEach((item, i) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) errors.push({ row: i + 1, field: '_', key: 'validation.type', params: { type: 'object' } });
  });
  if (errors.length > 0) throw new ImportRejected(errors);
  return { fromCsv: false, rows: body as Array<Record<string, unknown>> };
}

function tooMany(count: number) {
  if (count > MAX_IMPORT_ROWS) throw new ImportRejected([{ row: 0, field: 'rows', key: 'shops.too_many_rows', params: { limit: MAX_IMPORT_ROWS } }]);
}

// ---- checking one row ------------------------------------------------------------------

type RowErrors = ImportRejected['errors'];
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DECIMAL = /^-?\d{1,3}(\.\d+)?$/;
// eslint-disable-next-line no-control-regex
const UNSTORABLE = /[\u0000\uD800-\uDFFF]/u;

interface CheckedRow {
  id?: number;
  input: ShopInput;
}

/** One row → the fields it sets (absent = keep), or its errors. CSV: '' is null (or "keep" for is_active and id). */
function checkRow(raw: Record<string, unknown>, row: number, fromCsv: boolean, errors: RowErrors): CheckedRow {
  const err = (field: string, key: MessageKey, params?: MessageParams) => errors.push({ row, field, key, ...(params ? { params } : {}) });
  const input: ShopInput = {};
  const out: CheckedRow = { input };
  for (const [column, value] of Object.entries(raw)) {
    if (!KNOWN.has(column)) {
      err(column, 'shops.unknown_column');
      continue;
    }
    if (READ_ONLY.has(column) || value === undefined) continue;
    if (typeof value === 'string' && UNSTORABLE.test(value)) {
      err(column, 'validation.unstorable_text');
      continue;
    }
    const empty = value === null || value === '';
    switch (column) {
      case 'id': {
        if (empty) break;
        const n = typeof value === 'string' && /^\d{1,10}$/.test(value.trim()) ? Number(value.trim()) : value;
        if (typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 2147483647) out.id = n;
        else err('id', 'validation.type', { type: 'integer' });
        break;
      }
      case 'lat':
      case 'lng': {
        if (empty) {
          input[column] = null;
          break;
        }
        const n = typeof value === 'string' && DECIMAL.test(value.trim()) ? Number(value.trim()) : value;
        const limit = column === 'lat' ? 90 : 180;
        if (typeof n !== 'number' || !Number.isFinite(n)) err(column, 'validation.type', { type: 'number' });
        else if (n < -limit) err(column, 'validation.minimum', { limit: -limit });
        else if (n > limit) err(column, 'validation.maximum', { limit });
        else input[column] = n;
        break;
      }
      case 'is_active': {
        if (empty) break;
        const text = typeof value === 'string' ? value.trim().toLowerCase() : value;
        if (text === true || text === 'true' || text === '1') input.is_active = true;
        else if (text === false || text === 'false' || text === '0') input.is_active = false;
        else err('is_active', 'validation.type', { type: 'boolean' });
        break;
      }
      default: {
        const field = column as Exclude<Column, 'id' | 'lat' | 'lng' | 'is_active' | 'created_at' | 'updated_at'>;
        if (value === null) {
          if (field === 'name') err('name', 'validation.required');
          else input[field] = null;
          break;
        }
        if (typeof value !== 'string') {
          err(field, 'validation.type', { type: 'string' });
          break;
        }
        const text = fromCsv ? unguardFormula(value) : value;
        const limit = TEXT_LIMITS[field]!;
        if (field === 'name' && text.trim() === '') err('name', 'validation.required');
        else if (text.length > limit) err(field, 'validation.max_length', { limit });
        else if (field === 'country' && text !== '' && !/^[A-Za-z]{2}$/.test(text)) err('country', 'shops.country_format');
        else if (field === 'email' && text !== '' && !EMAIL.test(text)) err('email', 'validation.email');
        else input[field] = text;
      }
    }
  }
  return out;
}

// ---- the plan --------------------------------------------------------------------------

export interface ImportPlan {
  creates: Array<Partial<ShopFields> & { name: string }>;
  updates: Array<{ id: number; fields: Partial<ShopFields> }>;
  /** Rows that matched a shop, changed or not. */
  updated: number;
}

/**
 * Resolves every row against the partner's shops: an `id` of the partner's updates that shop
 * (another partner's id is "not found"), else a known `code` updates by code, else the row
 * creates. Throws ImportRejected listing every bad row; nothing is written by this.
 */
export function planImport(input: RawRows, current: ShopRow[]): ImportPlan {
  const errors: RowErrors = [];
  const byId = new Map(current.map((s) => [s.id, s]));
  const byCode = new Map(current.filter((s) => s.code !== null).map((s) => [s.code!, s]));
  const targeted = new Map<number, number>(); // shop id → row
  const finalCode = new Map<number, string | null>(current.map((s) => [s.id, s.code]));
  const plan: ImportPlan = { creates: [], updates: [], updated: 0 };
  const createdCodes: Array<{ code: string; row: number }> = [];
  const rowOfUpdate = new Map<number, number>();

  input.rows.forEach((raw, i) => {
    const row = i + 1;
    const before = errors.length;
    const checked = checkRow(raw, row, input.fromCsv, errors);
    const fields = fieldsOf(checked.input);
    let target: ShopRow | undefined;
    if (checked.id !== undefined) {
      target = byId.get(checked.id);
      if (!target) errors.push({ row, field: 'id', key: 'error.resource_not_found', params: { resource: 'resource.shop' } });
    } else if (fields.code) {
      target = byCode.get(fields.code);
    }
    if (target) {
      const first = targeted.get(target.id);
      if (first !== undefined) errors.push({ row, field: checked.id !== undefined ? 'id' : 'code', key: 'shops.row_repeats', params: { row: first } });
      targeted.set(target.id, row);
    }
    // Coordinates come as a pair or not at all, after the row is laid over the shop.
    const lat = fields.lat !== undefined ? fields.lat : (target?.lat ?? null);
    const lng = fields.lng !== undefined ? fields.lng : (target?.lng ?? null);
    const coordinateErrors = errors.slice(before).some((e) => e.field === 'lat' || e.field === 'lng');
    if (!coordinateErrors && (lat === null) !== (lng === null)) errors.push({ row, field: lat === null ? 'lat' : 'lng', key: 'validation.required' });
    if (!target && checked.id === undefined && fields.name === undefined && !errors.slice(before).some((e) => e.field === 'name')) {
      errors.push({ row, field: 'name', key: 'validation.required' });
    }
    if (errors.length > before) return;
    if (target) {
      plan.updated++;
      const changed: Partial<ShopFields> = {};
      for (const key of Object.keys(fields) as Array<keyof ShopFields>) {
        if (fields[key] !== target[key]) (changed as Record<string, unknown>)[key] = fields[key];
      }
      if (changed.code !== undefined) finalCode.set(target.id, changed.code);
      if (Object.keys(changed).length > 0) {
        plan.updates.push({ id: target.id, fields: changed });
        rowOfUpdate.set(target.id, row);
      }
    } else {
      plan.creates.push({ ...fields, name: fields.name! });
      if (fields.code) createdCodes.push({ code: fields.code, row });
    }
  });

  // A code may be held by one shop of the partner once the whole import is applied.
  const holders = new Map<string, number>();
  for (const code of finalCode.values()) if (code !== null) holders.set(code, (holders.get(code) ?? 0) + 1);
  for (const { code } of createdCodes) holders.set(code, (holders.get(code) ?? 0) + 1);
  const movesCode = new Set(plan.updates.filter((u) => u.fields.code !== undefined).map((u) => u.id));
  for (const [id, row] of rowOfUpdate) {
    const code = finalCode.get(id);
    if (code && (holders.get(code) ?? 0) > 1 && movesCode.has(id)) {
      errors.push({ row, field: 'code', key: 'shops.code_taken' });
    }
  }
  for (const { code, row } of createdCodes) if ((holders.get(code) ?? 0) > 1) errors.push({ row, field: 'code', key: 'shops.code_taken' });

  if (errors.length > 0) {
    errors.sort((a, b) => a.row - b.row);
    throw new ImportRejected(errors);
  }
  return plan;
}
