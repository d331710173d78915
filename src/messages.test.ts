// The message catalogue: every user-facing message in both locales, with the same
// placeholders, and really translated; every module's messages registered.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { moduleMessages } from './messages.js';
import { isLocale, LOCALES, messageCatalogue, t } from './shared/i18n.js';

const SRC = path.dirname(fileURLToPath(import.meta.url));

function messageFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? messageFiles(path.join(dir, e.name)) : /\.messages\.[jt]s$/.test(e.name) ? [path.join(dir, e.name)] : [],
  );
}

/** Keys whose Lithuanian text may equal the English one (e.g. a brand or code). None today. */
const SAME_IN_BOTH: readonly string[] = [];

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('message catalogue', () => {
  const entries = Object.entries(messageCatalogue);

  it('registers every module messages file (src/messages.ts)', async () => {
    const files = messageFiles(SRC);
    assert.ok(files.length >= 10, String(files.length));
    for (const file of files) {
      const exported = Object.values(await import(pathToFileURL(file).href)) as unknown[];
      assert.ok(
        exported.some((set) => moduleMessages.includes(set as never)),
        `${path.relative(SRC, file)} is not registered in src/messages.ts`,
      );
      for (const set of exported) {
        for (const key of Object.keys(set as object)) assert.ok(key in messageCatalogue, key);
      }
    }
  });

  it('has messages', () => {
    assert.ok(entries.length >= 40, String(entries.length));
    assert.deepEqual([...LOCALES].sort(), ['en', 'lt']);
  });

  it('has non-empty, trimmed text in every locale for every key', () => {
    for (const [key, texts] of entries) {
      assert.deepEqual(Object.keys(texts).sort(), ['en', 'lt'], key);
      for (const locale of LOCALES) {
        const text = texts[locale];
        assert.equal(typeof text, 'string', `${key}.${locale}`);
        assert.ok(text.trim().length > 0, `${key}.${locale} is empty`);
        assert.equal(text, text.trim(), `${key}.${locale} has surrounding whitespace`);
      }
    }
  });

  it('uses the same {placeholders} in both locales', () => {
    for (const [key, texts] of entries) {
      assert.deepEqual(placeholders(texts.lt), placeholders(texts.en), key);
    }
  });

  it('translates every key (Lithuanian differs from English) except the listed ones', () => {
    const same = entries.filter(([, texts]) => texts.lt === texts.en).map(([key]) => key);
    assert.deepEqual(same.sort(), [...SAME_IN_BOTH].sort());
  });
});

describe('t()', () => {
  it('fills placeholders in the requested locale', () => {
    assert.equal(t('en', 'error.body_too_large', { limit: 2048 }), 'The request body is larger than 2048 bytes');
    assert.equal(t('lt', 'error.body_too_large', { limit: 2048 }), 'Užklausos turinys didesnis nei 2048 baitų');
  });

  it('translates resource names passed as message keys', () => {
    assert.equal(t('en', 'error.resource_not_found', { resource: 'resource.partner' }), 'Partner not found');
    assert.equal(t('lt', 'error.resource_not_found', { resource: 'resource.partner' }), 'Nerasta: Partneris');
  });

  it('leaves a placeholder without a value visible rather than inventing one', () => {
    assert.equal(t('en', 'error.rate_limited', {}), 'Too many requests; retry after {seconds} seconds');
    assert.equal(t('lt', 'ok'), 'Gerai');
  });

  it('accepts only lt and en as locales', () => {
    assert.equal(isLocale('lt'), true);
    assert.equal(isLocale('en'), true);
    for (const v of ['de', 'EN', 'LT', '', undefined, 1]) assert.equal(isLocale(v), false, String(v));
  });
});
