import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecentKeys } from './recent-keys.js';

describe('RecentKeys', () => {
  it('forgets a key ttl after it was last remembered', () => {
    let t = 0;
    const keys = new RecentKeys<number>(100, 10, () => t);
    keys.remember(1);
    t = 99;
    assert.equal(keys.has(1), true);
    keys.remember(1);
    t = 150;
    assert.equal(keys.has(1), true);
    t = 199;
    assert.equal(keys.has(1), false);
    assert.equal(keys.has(2), false);
  });
  it('stays bounded: past max keys the oldest half goes', () => {
    const keys = new RecentKeys<number>(1_000, 4, () => 0);
    for (let i = 1; i <= 5; i++) keys.remember(i);
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((k) => keys.has(k)),
      [false, false, true, true, true],
    );
  });
});
