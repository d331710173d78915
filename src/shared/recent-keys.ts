// Keys seen recently, each forgotten `ttlMs` after it was last remembered (a monotonic clock:
// a test clock or a wall-clock jump does not keep or drop them). Bounded: past `max` keys the
// oldest half is dropped, so a flood of keys cannot grow the process.
export class RecentKeys<K> {
  private readonly until = new Map<K, number>();

  constructor(
    private readonly ttlMs: number,
    private readonly max: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  remember(key: K): void {
    this.until.delete(key);
    if (this.until.size >= this.max) {
      let drop = Math.ceil(this.max / 2);
      for (const k of this.until.keys()) {
        if (drop-- <= 0) break;
        this.until.delete(k);
      }
    }
    this.until.set(key, this.now() + this.ttlMs);
  }

  has(key: K): boolean {
    const until = this.until.get(key);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.until.delete(key);
    return false;
  }
}
