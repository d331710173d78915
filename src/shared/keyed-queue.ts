/**
 * Runs tasks that share a key one after another, in arrival order; tasks with different keys
 * run side by side. A failed task does not stop the ones queued behind it.
 */
export class KeyedQueue<K> {
  private readonly tails = new Map<K, Promise<void>>();

  run<T>(key: K, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key);
    const result = previous ? previous.then(task) : task();
    const tail = result.then(settled, settled);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Keys with a task running or queued. */
  get size(): number {
    return this.tails.size;
  }
}

function settled(): void {}
