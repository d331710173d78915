// How a text travels as SMS (3GPP TS 23.038 / 23.040, DESIGN.md §4, reference/sms.md §2):
// GSM-7 when every character is in the default alphabet or its extension table (extension
// characters cost two septets: ESC + char), otherwise UCS-2 (characters outside the BMP cost
// two UTF-16 units). One part holds 160 septets / 70 units; a concatenated part 153 / 67.
// A character is never split across parts — neither an escape pair nor a surrogate pair —
// so a boundary can cost a part: 152 × "a" + "€" + 152 × "a" is 3 parts. The parts counted
// here are exactly the segments handed to the carrier.

export type SmsEncoding = 'GSM-7' | 'UCS-2';

const GSM_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const GSM_EXTENSION = '\f^{}\\[~]|€';

const basic = new Set(GSM_BASIC);
const extension = new Set(GSM_EXTENSION);

export const LIMITS = {
  'GSM-7': { single: 160, concatenated: 153 },
  'UCS-2': { single: 70, concatenated: 67 },
} as const;

/** Concatenation carries a one-octet reference; more parts than this cannot be sent. */
export const MAX_PARTS = 255;

export interface SmsLayout {
  encoding: SmsEncoding;
  /** Septets (GSM-7) or UTF-16 code units (UCS-2) of the whole text. */
  units: number;
  parts: number;
  /** The text of each part, in order; joined they give the text back. */
  segments: string[];
}

export function isGsm7(text: string): boolean {
  for (const ch of text) if (!basic.has(ch) && !extension.has(ch)) return false;
  return true;
}

/** Cost of one character (code point) in the given encoding. */
function unitsOf(ch: string, encoding: SmsEncoding): number {
  if (encoding === 'GSM-7') return extension.has(ch) ? 2 : 1;
  return ch.length; // 2 for a surrogate pair, else 1
}

export function layout(text: string): SmsLayout {
  const encoding: SmsEncoding = isGsm7(text) ? 'GSM-7' : 'UCS-2';
  const chars = [...text];
  const units = chars.reduce((n, ch) => n + unitsOf(ch, encoding), 0);
  const { single, concatenated } = LIMITS[encoding];
  if (units <= single) return { encoding, units, parts: 1, segments: [text] };
  const segments: string[] = [];
  let current = '';
  let used = 0;
  for (const ch of chars) {
    const cost = unitsOf(ch, encoding);
    if (used + cost > concatenated) {
      segments.push(current);
      current = '';
      used = 0;
    }
    current += ch;
    used += cost;
  }
  segments.push(current);
  return { encoding, units, parts: segments.length, segments };
}

/** Characters as the 1600-character limit counts them: Unicode code points. */
export const characterCount = (text: string): number => [...text].length;
