// An edit's PUT carries only the fields whose value differs from what was loaded.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { changedFields } from './changed-fields.js';

describe('changedFields', () => {
  it('keeps what differs, drops what is equal or not given', () => {
    const loaded = { name: 'Cafe', shop_ids: [1, 2], design: { logo: 'x', color: '#000' }, points: 5, note: null };
    const body = { name: 'Cafe', shop_ids: [2, 1], design: { logo: 'x', color: '#000' }, points: 6, note: null, extra: undefined };
    assert.deepEqual(changedFields(body, loaded), { shop_ids: [2, 1], points: 6 });
  });

  it('sends a field the loaded object lacks, and a value set to null', () => {
    assert.deepEqual(changedFields({ a: 1, b: null }, { b: 'was' }), { a: 1, b: null });
  });
});
