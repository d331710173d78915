// The shops module's limits, shared by its schemas, service and import (a file of its own so
// that shops.schemas.ts imports neither the service nor the import: no circle).

/** At most this many rows in one import. */
export const MAX_IMPORT_ROWS = 5000;
/** The largest import body (raw CSV, JSON or the multipart file), bytes. */
export const MAX_IMPORT_BYTES = 2 * 1024 * 1024;

/** The export's columns, in order: `id` and every field of the shop record. */
export const SHOP_CSV_COLUMNS = [
  'id',
  'name',
  'code',
  'address',
  'city',
  'country',
  'postal_code',
  'phone',
  'email',
  'lat',
  'lng',
  'opening_hours',
  'is_active',
  'created_at',
  'updated_at',
] as const;

/** The longest analytics window, in days (both ends included). */
export const MAX_ANALYTICS_DAYS = 366;
export const DEFAULT_ANALYTICS_DAYS = 30;
