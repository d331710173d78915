// Both languages have every text, none empty, with the same {placeholders}.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { en } from './en.js';
import { lt } from './lt.js';

const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('console texts', () => {
  it('has the same keys in English and Lithuanian', () => {
    assert.deepEqual(Object.keys(lt).sort(), Object.keys(en).sort());
  });
  it('has no empty text and the same placeholders in both', () => {
    for (const key of Object.keys(en) as Array<keyof typeof en>) {
      assert.ok(en[key].trim() && lt[key].trim(), key);
      assert.deepEqual(placeholders(lt[key]), placeholders(en[key]), key);
    }
  });
});
