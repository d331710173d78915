// Helpers for the rule checks that routes with `attachValidation` run beside the schema, on
// a body that may also have failed the schema (so every check looks at types first).
import type { FieldErrors } from './errors.js';
import type { MessageKey, MessageParams } from './i18n.js';

export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export const hasOwn = (obj: object, key: string): boolean => Object.prototype.hasOwnProperty.call(obj, key);

export function addFieldError(errors: FieldErrors, field: string, key: MessageKey, params?: MessageParams): void {
  (errors[field] ??= []).push(params ? { key, params } : { key });
}

// In unicode mode a surrogate range matches only unpaired surrogates. U+0000 is the point.
// eslint-disable-next-line no-control-regex
const UNSTORABLE = /[\u0000\uD800-\uDFFF]/u;

/**
 * Dotted paths of the strings (and object keys) PostgreSQL cannot store: text refuses
 * U+0000 and jsonb refuses an unpaired surrogate. Found here, they are a 422 on their
 * field instead of a failed insert.
 */
export function unstorableTextFields(value: unknown, path = '', out: string[] = []): string[] {
  if (typeof value === 'string') {
    if (UNSTORABLE.test(value)) out.push(path || '_');
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => unstorableTextFields(item, path ? `${path}.${i}` : String(i), out));
  } else if (isPlainObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      if (UNSTORABLE.test(key)) {
        out.push(path || '_');
        continue;
      }
      unstorableTextFields(item, path ? `${path}.${key}` : key, out);
    }
  }
  return out;
}
