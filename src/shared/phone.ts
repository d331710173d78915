// Phone numbers: E.164 with '+', validated and normalised by libphonenumber (the spec allows
// the plus sign to be left out, so a bare international number gets one).
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

export interface NormalisedPhone {
  e164: string;
  country: string;
  national: string;
}

export function normalisePhone(input: string): NormalisedPhone | undefined {
  const compact = input.trim().replace(/[\s().-]/g, '');
  if (!/^\+?\d{6,15}$/.test(compact)) return undefined;
  const parsed = parsePhoneNumberFromString(compact.startsWith('+') ? compact : `+${compact}`);
  if (!parsed || !parsed.isValid() || !parsed.country) return undefined;
  return { e164: parsed.number, country: parsed.country, national: parsed.nationalNumber };
}
