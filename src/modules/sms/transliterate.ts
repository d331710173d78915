// Opt-in transliteration to the GSM-7 alphabet (issue 3 item 1, DESIGN.md §4).
//
// Lithuanian and Polish letters are not in GSM-7, so a single one of them sends the whole
// message as UCS-2 (70/67 units a part instead of 160/153). When the sender asks for it, this
// replaces them — and a few common typographic characters — with GSM-7 look-alikes:
//   Lithuanian  ą č ę ė į š ų ū ž  → a c e e i s u u z   (capitals likewise)
//   Polish      ą ć ę ł ń ó ś ź ż  → a c e l n o s z z   (capitals likewise)
//   “ ” „ → "   ‘ ’ ‚ → '   – — → -   … → ...   NBSP → space   • → *
// Decomposed input (a base letter followed by combining marks, as some keyboards and macOS
// produce) is treated like the precomposed letter: "s" + U+030C becomes "s", and "e" + U+0301
// becomes the GSM-7 "é".
//
// Rules:
// - A text that is already GSM-7 is returned as it is (the same string, changed: false).
// - Characters that are already GSM-7 (é, ä, ö, ü, Ä, Ç, …) are never touched.
// - Characters with no look-alike (Cyrillic, Greek lower case, CJK, emoji, …) are left as they
//   are. Such a text stays outside GSM-7 after transliteration and is sent as UCS-2, with only
//   the mapped characters replaced; layout() decides the encoding from the result.
// - Transliterating twice gives the same result as once.
import { isGsm7 } from './sms-text.js';

const LETTERS: Record<string, string> = {
  // Lithuanian
  ą: 'a', č: 'c', ę: 'e', ė: 'e', į: 'i', š: 's', ų: 'u', ū: 'u', ž: 'z',
  Ą: 'A', Č: 'C', Ę: 'E', Ė: 'E', Į: 'I', Š: 'S', Ų: 'U', Ū: 'U', Ž: 'Z',
  // Polish (ą, ę, ż and their capitals are shared with Lithuanian above)
  ć: 'c', ł: 'l', ń: 'n', ó: 'o', ś: 's', ź: 'z', ż: 'z',
  Ć: 'C', Ł: 'L', Ń: 'N', Ó: 'O', Ś: 'S', Ź: 'Z', Ż: 'Z',
};

const TYPOGRAPHY: Record<string, string> = {
  '\u201C': '"', // “
  '\u201D': '"', // ”
  '\u201E': '"', // „
  '\u2018': "'", // ‘
  '\u2019': "'", // ’
  '\u201A': "'", // ‚
  '\u2013': '-', // – en dash
  '\u2014': '-', // — em dash
  '\u2026': '...', // …
  '\u00A0': ' ', // no-break space
  '\u2022': '*', // •
};

const MAP: Readonly<Record<string, string>> = { ...LETTERS, ...TYPOGRAPHY };

/** Every character that transliteration replaces, and what it becomes. */
export const TRANSLITERATIONS: Readonly<Record<string, string>> = MAP;

const mappable = new RegExp(`[${Object.keys(MAP).join('')}]`, 'gu');
/** An ASCII letter followed by combining diacritical marks (decomposed form). */
const decomposed = /[A-Za-z][\u0300-\u036F]+/g;

export interface Transliteration {
  text: string;
  /** True when at least one character was replaced. */
  changed: boolean;
}

export function transliterate(text: string): Transliteration {
  if (isGsm7(text)) return { text, changed: false };
  const out = text
    .replace(mappable, (ch) => MAP[ch] ?? ch)
    .replace(decomposed, (seq) => {
      const composed = seq.normalize('NFC');
      const mapped = MAP[composed];
      if (mapped !== undefined) return mapped;
      // e.g. "e" + U+0301 → "é", which GSM-7 has; anything else is left as it came.
      return [...composed].length === 1 && isGsm7(composed) ? composed : seq;
    });
  return { text: out, changed: out !== text };
}
