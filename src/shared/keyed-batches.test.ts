import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeyedBatches, type Waiting } from './keyed-batches.js';

const tick = () => new Promise((r) => setImmediate(r));

/** Records each batch it is given and answers every item doubled, after a pause. */
function recorder(max: number) {
  const batches: Array<{ key: string; items: number[] }> = [];
  let running = 0;
  let most = 0;
  const batcher = new KeyedBatches<string, number, number>(max, async (key, batch: Array<Waiting<number, number>>) => {
    running++;
    most = Math.max(most, running);
    batches.push({ key, items: batch.map((w) => w.item) });
    await tick();
    await tick();
    for (const w of batch) w.resolve(w.item * 2);
    running--;
  });
  return { batcher, batches, most: () => most };
}

describe('KeyedBatches', () => {
  it('sends an idle key’s item alone, then those that arrived meanwhile together, in order', async () => {
    const { batcher, batches, most } = recorder(10);
    const results = await Promise.all([1, 2, 3, 4].map((n) => batcher.submit('card', n)));
    assert.deepEqual(results, [2, 4, 6, 8]);
    assert.deepEqual(batches, [
      { key: 'card', items: [1] },
      { key: 'card', items: [2, 3, 4] },
    ]);
    assert.equal(most(), 1, 'one batch of a key at a time');
    assert.equal(batcher.size, 0, 'the key is forgotten once done');
  });

  it('makes batches of at most `max`', async () => {
    const { batcher, batches } = recorder(2);
    await Promise.all([1, 2, 3, 4, 5, 6].map((n) => batcher.submit('card', n)));
    assert.deepEqual(
      batches.map((b) => b.items),
      [[1], [2, 3], [4, 5], [6]],
    );
  });

  it('handles different keys side by side', async () => {
    const { batcher, batches, most } = recorder(10);
    await Promise.all([batcher.submit('a', 1), batcher.submit('b', 2), batcher.submit('a', 3)]);
    assert.deepEqual(batches.slice(0, 2), [
      { key: 'a', items: [1] },
      { key: 'b', items: [2] },
    ]);
    assert.equal(most(), 2);
  });

  it('rejects what a failed batch left unsettled, and goes on with the next batch', async () => {
    const seen: number[][] = [];
    const batcher = new KeyedBatches<string, number, number>(10, async (_key, batch) => {
      seen.push(batch.map((w) => w.item));
      await tick();
      if (batch.some((w) => w.item === 2)) {
        batch[0]!.resolve(-1);
        throw new Error('boom');
      }
      for (const w of batch) w.resolve(w.item);
    });
    const first = batcher.submit('k', 1);
    const second = batcher.submit('k', 2);
    const third = batcher.submit('k', 3);
    assert.equal(await first, 1);
    // 2 and 3 were one batch: the 2 settled by the handler keeps its answer, 3 gets the error.
    assert.equal(await second, -1);
    await assert.rejects(third, /boom/);
    assert.equal(await batcher.submit('k', 4), 4);
    assert.deepEqual(seen, [[1], [2, 3], [4]]);
  });
});
