// Exact EUR amounts. The database keeps numeric(…, 4); in JavaScript an amount is a bigint
// of ten-thousandths of a euro, so that parts × price and balance arithmetic never touch
// binary floating point. JSON shows amounts as numbers with at most 4 decimals.
const SCALE = 4;
const FACTOR = 10n ** BigInt(SCALE);

/** "12.3" | "0.0290" | 12.3 → ten-thousandths; undefined if not a plain decimal with ≤ 4 places. */
export function parseAmount(value: string | number): bigint | undefined {
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : value.trim();
  const m = /^(-)?(\d{1,12})(?:\.(\d{1,4}))?$/.exec(text);
  if (!m) return undefined;
  const units = BigInt(m[2]!) * FACTOR + BigInt((m[3] ?? '').padEnd(SCALE, '0'));
  return m[1] ? -units : units;
}

/** ten-thousandths → "12.3000", as numeric columns take it. */
export function formatAmount(units: bigint): string {
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const whole = abs / FACTOR;
  const frac = (abs % FACTOR).toString().padStart(SCALE, '0');
  return `${negative ? '-' : ''}${whole}.${frac}`;
}

/** A numeric column's text → a JSON number (at most 4 decimals, exactly representable as text). */
export function amountToJson(value: string): number {
  return Number(formatAmount(parseAmount(value) ?? 0n));
}
