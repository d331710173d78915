// The loop shared by the outbox workers (webhooks, mail). Any number of nodes may run one on
// a database: a row is claimed (FOR UPDATE SKIP LOCKED, next_attempt_at pushed past a lease)
// in a short transaction and delivered outside it, so no two nodes deliver it at once, and a
// node that dies mid-delivery only delays it until the lease runs out.
//
// It wakes every `pollIntervalMs`, on NOTIFY after an enqueue commits (any node), and when
// one of its own deliveries finishes; claims run one at a time, deliveries up to
// `concurrency` at once.
import type { Database } from './db/index.js';

export interface OutboxLoopOptions {
  /** For log messages. */
  name: string;
  /** The NOTIFY channel enqueues announce themselves on. */
  channel: string;
  pollIntervalMs: number;
  /** Deliveries in flight at once on this node. */
  concurrency: number;
  /** Longer than any delivery can take, so a live worker never loses its claim. */
  leaseMs: number;
  /** On stop: abort deliveries in flight (they hand their row back), or wait for them. */
  abortOnStop: boolean;
  log?: { warn(obj: object, msg?: string): void };
}

export abstract class OutboxWorker<Row extends { id: number }> {
  private running = false;
  private listenRegistered = false;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private again = false;
  private readonly inFlight = new Map<number, { row: Row; abort: AbortController; done: Promise<void> }>();

  constructor(
    protected readonly database: Database,
    private readonly loop: OutboxLoopOptions,
  ) {}

  /** Claim up to `limit` due rows for `leaseMs`. */
  protected abstract claim(limit: number, leaseMs: number): Promise<Row[]>;
  /** Deliver one claimed row and record the attempt; `signal` aborts on stop when asked to. */
  protected abstract deliver(row: Row, signal: AbortSignal): Promise<void>;
  /** The rows this node is delivering now (for a claim that shares the slots out). */
  protected inFlightRows(): IterableIterator<Row> {
    return [...this.inFlight.values()].map((f) => f.row).values();
  }
  protected onStart(): void {}
  protected onStop(): void {}

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.onStart();
    if (!this.listenRegistered) {
      this.listenRegistered = true;
      // Without notifications (connection lost) the poll still finds everything.
      await this.database
        .listen(
          this.loop.channel,
          () => this.wake(),
          () => undefined,
        )
        .catch((err: unknown) => this.loop.log?.warn({ err }, `${this.loop.name}: LISTEN failed; polling only`));
    }
    this.wake();
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.ticking;
    if (this.loop.abortOnStop) for (const { abort } of this.inFlight.values()) abort.abort();
    await Promise.all([...this.inFlight.values()].map((f) => f.done));
    this.onStop();
  }

  /** Look for due rows now (coalesced with a look already under way). */
  wake(): void {
    if (!this.running) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  /**
   * A retry due sooner than the next poll: wake for it. Called after the attempt is recorded,
   * as the database counted the wait from its own now() inside that transaction.
   */
  protected retryIn(ms: number): void {
    if (ms < this.loop.pollIntervalMs) setTimeout(() => this.wake(), ms + 5).unref();
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.runTick(), ms);
  }

  private runTick(): void {
    if (!this.running || this.ticking) return;
    this.again = false;
    this.ticking = this.tick()
      .catch((err: unknown) => this.loop.log?.warn({ err }, `${this.loop.name}: claiming failed`))
      .finally(() => {
        this.ticking = undefined;
        if (this.running) this.schedule(this.again ? 0 : this.loop.pollIntervalMs);
      });
  }

  private async tick(): Promise<void> {
    const free = this.loop.concurrency - this.inFlight.size;
    if (free <= 0) return;
    const claimed = await this.claim(free, this.loop.leaseMs);
    for (const row of claimed) this.launch(row);
    // A full batch: there may be more due (taken as slots free up). A short one may also leave
    // rows due that the claim held back (a partner at its share): each delivery that ends
    // wakes the loop again.
    if (claimed.length === free) this.again = true;
  }

  private launch(row: Row): void {
    const abort = new AbortController();
    const done = this.deliver(row, abort.signal)
      .catch((err: unknown) => this.loop.log?.warn({ err, id: row.id }, `${this.loop.name}: recording an attempt failed`))
      .finally(() => {
        this.inFlight.delete(row.id);
        this.wake();
      });
    this.inFlight.set(row.id, { row, abort, done });
  }
}
