// Coupon codes (DESIGN.md §8): 12 characters of Crockford base32 — 60 random bits from the
// CSPRNG — shown as XXXX-XXXX-XXXX. A till or a customer reads them aloud and types them,
// so lookups ignore case and dashes and, as Crockford's alphabet intends, read O as 0 and
// I or L as 1. The QR the app renders carries `{APP_LINK_BASE}/coupon/{code}`; verify
// accepts the code or that text.
import { randomInt } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
export const CODE_LENGTH = 12;
const STORED = /^[0-9A-HJKMNP-TV-Z]{12}$/;

/** A new code as stored: 12 upper-case characters, no dashes. */
export function newCouponCode(): string {
  let code = '';
  for (let i = 0; i < CODE_LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return code;
}

/** XXXX-XXXX-XXXX. */
export function displayCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4, 8)}-${code.slice(8)}`;
}

/** The text of the coupon's QR code. */
export function couponQrContent(appLinkBase: string, code: string): string {
  return `${appLinkBase}/coupon/${displayCode(code)}`;
}

/**
 * What a till or customer sent (a code in any case, with or without dashes or spaces, or the
 * QR's link) → the stored code; undefined when it cannot be one.
 */
export function normalizeCouponCode(input: string): string | undefined {
  let text = input.trim();
  const marker = text.lastIndexOf('/coupon/');
  if (marker >= 0) text = text.slice(marker + '/coupon/'.length);
  const code = text
    .replace(/[\s-]/g, '')
    .toUpperCase()
    .replace(/O/g, '0')
    .replace(/[IL]/g, '1');
  return STORED.test(code) ? code : undefined;
}
