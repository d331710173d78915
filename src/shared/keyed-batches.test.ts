import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeyedBatches, type BatchHandlers } from './keyed-batches.js';

const tick = () => new Promise((r) => setImmediate(r));

/**
 * Records what goes together and what alone; answers every item doubled, after a pause.
 * `together` may be replaced to refuse or fail.
 */
function recorder(max: number, together?: BatchHandlers<string, number, number>['together']) {
  const calls: Array<{ key: string; items: number[]; how: 'together' | 'alone' }> = [];
  let running = 0;
  let most = 0;
  const paced = async <T>(work: () => Promise<T> | T): Promise<T> => {
    running++;
    most = Math.max(most, running);
    await tick();
    await tick();
    running--;
    return work();
  };
  const batcher = new KeyedBatches<string, number, number>(max, {
    together: (key, items) => {
      calls.push({ key, items, how: 'together' });
      return paced(() => (together ? together(key, items) : items.map((n) => n * 2)));
    },
    alone: (key, item) => {
      calls.push({ key, items: [item], how: 'alone' });
      return paced(() => {
        if (item < 0) throw new Error(`bad ${item}`);
        return item * 2;
      });
    },
    failsAll: (err) => err instanceof Error && err.message === 'unreachable',
  });
  return { batcher, calls, most: () => most };
}

describe('KeyedBatches', () => {
  it('sends an idle key’s item alone, then those that arrived meanwhile together, in order', async () => {
    const { batcher, calls, most } = recorder(10);
    const results = await Promise.all([1, 2, 3, 4].map((n) => batcher.submit('card', n)));
    assert.deepEqual(results, [2, 4, 6, 8]);
    assert.deepEqual(calls, [
      { key: 'card', items: [1], how: 'alone' },
      { key: 'card', items: [2, 3, 4], how: 'together' },
    ]);
    assert.equal(most(), 1, 'one batch of a key at a time');
    assert.equal(batcher.size, 0, 'the key is forgotten once done');
  });

  it('makes batches of at most `max`', async () => {
    const { batcher, calls } = recorder(2);
    await Promise.all([1, 2, 3, 4, 5, 6].map((n) => batcher.submit('card', n)));
    assert.deepEqual(
      calls.map((c) => c.items),
      [[1], [2, 3], [4, 5], [6]],
    );
  });

  it('handles different keys side by side', async () => {
    const { batcher, calls, most } = recorder(10);
    await Promise.all([batcher.submit('a', 1), batcher.submit('b', 2), batcher.submit('a', 3)]);
    assert.deepEqual(
      calls.slice(0, 2).map((c) => [c.key, c.items]),
      [
        ['a', [1]],
        ['b', [2]],
      ],
    );
    assert.equal(most(), 2);
  });

  it('sends each alone, in order, when they cannot go together or that fails; a bad one fails by itself', async () => {
    for (const together of [async () => undefined, async () => Promise.reject(new Error('one of them is bad'))]) {
      const { batcher, calls } = recorder(10, together);
      const submitted = [1, 2, -3, 4].map((n) => batcher.submit('k', n));
      const settled = await Promise.allSettled(submitted);
      assert.deepEqual(
        settled.map((s) => (s.status === 'fulfilled' ? s.value : String(s.reason))),
        [2, 4, 'Error: bad -3', 8],
      );
      assert.deepEqual(
        calls.map((c) => `${c.how} ${c.items.join(',')}`),
        ['alone 1', 'together 2,-3,4', 'alone 2', 'alone -3', 'alone 4'],
      );
    }
  });

  it('fails the whole batch at once on an error that failsAll names, and goes on with the next', async () => {
    let fail = true;
    const { batcher, calls } = recorder(10, async (_key, items) => {
      if (fail) throw new Error('unreachable');
      return items.map((n) => n * 2);
    });
    const first = batcher.submit('k', 1);
    const rest = [2, 3].map((n) => batcher.submit('k', n));
    assert.equal(await first, 2);
    for (const r of rest) await assert.rejects(r, /unreachable/);
    assert.deepEqual(
      calls.map((c) => c.how),
      ['alone', 'together'],
      'nobody went alone after the store was unreachable',
    );
    fail = false;
    assert.deepEqual(await Promise.all([5, 6, 7].map((n) => batcher.submit('k', n))), [10, 12, 14]);
  });
});
