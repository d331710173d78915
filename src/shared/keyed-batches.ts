/** How a KeyedBatches handles its items. */
export interface BatchHandlers<K, I, O> {
  /**
   * Two or more waiting items at once: their outputs in order, or undefined when they cannot
   * go together (each then goes alone). Must change nothing when it does not answer them all.
   */
  together(key: K, items: I[]): Promise<O[] | undefined>;
  /** One item by itself. */
  alone(key: K, item: I): Promise<O>;
  /**
   * An error of `together` after which going alone is pointless (the store is unreachable):
   * the whole batch fails with it at once. Any other error sends each item alone.
   */
  failsAll(err: unknown): boolean;
}

interface Waiting<I, O> {
  readonly item: I;
  resolve(value: O): void;
  reject(err: unknown): void;
}

/**
 * Items that share a key are handled a batch at a time. An item of an idle key goes at once,
 * alone; those that arrive while its key is busy wait, and go together as the next batch (at
 * most `max`, in arrival order). If they cannot go together, each goes alone in the order it
 * came — exactly as if it had not waited — so a bad item fails by itself. Different keys are
 * handled side by side.
 */
export class KeyedBatches<K, I, O> {
  private readonly waiting = new Map<K, Array<Waiting<I, O>>>();
  private readonly busy = new Set<K>();

  constructor(
    private readonly max: number,
    private readonly handlers: BatchHandlers<K, I, O>,
  ) {}

  submit(key: K, item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      const queue = this.waiting.get(key);
      if (queue) queue.push({ item, resolve, reject });
      else this.waiting.set(key, [{ item, resolve, reject }]);
      if (!this.busy.has(key)) void this.drain(key);
    });
  }

  /** Keys with items being handled or waiting. */
  get size(): number {
    return this.busy.size;
  }

  private async drain(key: K): Promise<void> {
    this.busy.add(key);
    try {
      for (let queue = this.waiting.get(key); queue && queue.length > 0; queue = this.waiting.get(key)) {
        const batch = queue.splice(0, this.max);
        if (queue.length === 0) this.waiting.delete(key);
        await this.handle(key, batch);
      }
    } finally {
      this.busy.delete(key);
    }
  }

  private async handle(key: K, batch: Array<Waiting<I, O>>): Promise<void> {
    if (batch.length > 1) {
      try {
        const outputs = await this.handlers.together(
          key,
          batch.map((w) => w.item),
        );
        if (outputs) {
          batch.forEach((w, i) => w.resolve(outputs[i]!));
          return;
        }
      } catch (err) {
        if (this.handlers.failsAll(err)) {
          for (const w of batch) w.reject(err);
          return;
        }
      }
    }
    for (const w of batch) {
      try {
        w.resolve(await this.handlers.alone(key, w.item));
      } catch (err) {
        w.reject(err);
      }
    }
  }
}
