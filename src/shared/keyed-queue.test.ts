import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeyedQueue } from './keyed-queue.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('KeyedQueue', () => {
  it('runs one key’s tasks one at a time, in arrival order', async () => {
    const queue = new KeyedQueue<number>();
    const log: string[] = [];
    let running = 0;
    let most = 0;
    const task = (name: string) => async () => {
      running++;
      most = Math.max(most, running);
      log.push(`start ${name}`);
      await tick();
      await tick();
      log.push(`end ${name}`);
      running--;
      return name;
    };
    const results = await Promise.all(['a', 'b', 'c'].map((n) => queue.run(1, task(n))));
    assert.deepEqual(results, ['a', 'b', 'c']);
    assert.equal(most, 1);
    assert.deepEqual(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    await tick();
    assert.equal(queue.size, 0, 'a key is forgotten once its tasks are done');
  });

  it('runs different keys side by side', async () => {
    const queue = new KeyedQueue<number>();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = queue.run(1, () => gate.then(() => 'one'));
    const second = await queue.run(2, async () => 'two');
    assert.equal(second, 'two', 'key 2 did not wait for key 1');
    release();
    assert.equal(await first, 'one');
  });

  it('goes on after a failed task, which rejects only its own caller', async () => {
    const queue = new KeyedQueue<string>();
    const failed = queue.run('k', async () => {
      throw new Error('boom');
    });
    const next = queue.run('k', async () => 'after');
    await assert.rejects(failed, /boom/);
    assert.equal(await next, 'after');
  });
});
