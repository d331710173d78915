/** An item waiting in a batch, with what settles its caller's promise. */
export interface Waiting<I, O> {
  readonly item: I;
  resolve(value: O): void;
  reject(err: unknown): void;
}

/**
 * Items that share a key are handled a batch at a time. An item of an idle key goes at once,
 * alone; those that arrive while its key is busy wait, and go together as the next batch (at
 * most `max`, in arrival order). Different keys are handled side by side.
 *
 * `handle` settles every item of its batch; should it throw, the items it left unsettled are
 * rejected with that error, and the key's next batch goes on.
 */
export class KeyedBatches<K, I, O> {
  private readonly waiting = new Map<K, Array<Waiting<I, O>>>();
  private readonly busy = new Set<K>();

  constructor(
    private readonly max: number,
    private readonly handle: (key: K, batch: Array<Waiting<I, O>>) => Promise<void>,
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
        try {
          await this.handle(key, batch);
        } catch (err) {
          for (const w of batch) w.reject(err); // a settled promise ignores this
        }
      }
    } finally {
      this.busy.delete(key);
    }
  }
}
