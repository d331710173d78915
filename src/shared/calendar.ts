// Calendar arithmetic on UTC days ("YYYY-MM-DD") and months ("YYYY-MM"): the reporting and
// commission periods are whole UTC days and months, whatever the server's time zone.

/** The UTC day of a moment, "YYYY-MM-DD". */
export function utcDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** "YYYY-MM-DD" → the Date of its UTC midnight. */
export function dayStart(day: string): Date {
  return new Date(`${day}T00:00:00.000Z`);
}

/** The day `n` days after `day` (n may be negative). */
export function addDays(day: string, n: number): string {
  const d = dayStart(day);
  d.setUTCDate(d.getUTCDate() + n);
  return utcDay(d);
}

/** Whole days from `from` to `to` (0 when equal, negative when `to` is earlier). */
export function daysBetween(from: string, to: string): number {
  return Math.round((dayStart(to).getTime() - dayStart(from).getTime()) / 86_400_000);
}

/**
 * Years 1970..2999: wide enough for any business date, and every day and month in it (and the
 * day after) is valid for JavaScript's Date and PostgreSQL alike (PostgreSQL has no year 0).
 */
const YEAR = '(19[7-9][0-9]|2[0-9]{3})';
export const PERIOD_PATTERN = `^${YEAR}-(0[1-9]|1[0-2])$`;
/** With format "date": a calendar day in the supported years. */
export const DAY_PATTERN = `^${YEAR}-`;

/** The month of a moment, "YYYY-MM". */
export function monthOf(d: Date): string {
  return d.toISOString().slice(0, 7);
}

/** The month `n` months after `period` (n may be negative). */
export function addMonths(period: string, n: number): string {
  const [y, m] = period.split('-').map(Number) as [number, number];
  const index = y * 12 + (m - 1) + n;
  const year = Math.floor(index / 12);
  return `${String(year).padStart(4, '0')}-${String((index % 12) + 1).padStart(2, '0')}`;
}

/** First day of the month and first day of the next one (exclusive end), "YYYY-MM-DD". */
export function monthDays(period: string): { first: string; next: string } {
  return { first: `${period}-01`, next: `${addMonths(period, 1)}-01` };
}
