// The console's texts in English and Lithuanian (the same keys: lt.ts is typed by en.ts and
// web/src/i18n/i18n.test.ts checks placeholders). The chosen locale also picks the API's
// language: every call goes to /{locale}/…, so the API's own messages match the page.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { en, type MessageKey } from './en';
import { lt } from './lt';

export type Locale = 'en' | 'lt';
export const LOCALES: readonly Locale[] = ['en', 'lt'];
const CATALOGUES: Record<Locale, Record<MessageKey, string>> = { en, lt };
const STORAGE_KEY = 'loyalty.locale';

let locale: Locale = 'en';

export function initLocale(): Locale {
  const stored = localStorage.getItem(STORAGE_KEY);
  locale = stored === 'lt' || stored === 'en' ? stored : 'en';
  document.documentElement.lang = locale;
  return locale;
}

export function setLocale(next: Locale) {
  locale = next;
  localStorage.setItem(STORAGE_KEY, next);
  document.documentElement.lang = next;
}

export const currentLocale = () => locale;

export type Translate = (key: MessageKey, params?: Record<string, string | number>) => string;

export function translator(l: Locale): Translate {
  const catalogue = CATALOGUES[l];
  return (key, params) => {
    const text = catalogue[key];
    return params ? text.replace(/\{(\w+)\}/g, (m, name: string) => (name in params ? String(params[name]) : m)) : text;
  };
}

export interface I18n {
  locale: Locale;
  t: Translate;
  setLocale(l: Locale): void;
}

export const I18nContext = createContext<I18n>({ locale: 'en', t: translator('en'), setLocale: () => undefined });
export const useI18n = () => useContext(I18nContext);
export const useT = () => useContext(I18nContext).t;

export function formatDateTime(l: Locale, iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Intl.DateTimeFormat(l === 'lt' ? 'lt-LT' : 'en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(new Date(iso)) + ' UTC';
}

export function formatNumber(l: Locale, n: number | null | undefined, digits?: number): string {
  if (n === null || n === undefined) return '—';
  return new Intl.NumberFormat(l === 'lt' ? 'lt-LT' : 'en-GB', digits === undefined ? {} : { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(n);
}

export function formatEur(l: Locale, n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  return new Intl.NumberFormat(l === 'lt' ? 'lt-LT' : 'en-GB', { style: 'currency', currency: 'EUR', minimumFractionDigits: 2, maximumFractionDigits: 4 }).format(n);
}
