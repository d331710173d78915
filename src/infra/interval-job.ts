// A periodic background job (expiry sweeps). Each run works through batches until a batch
// comes back short; runs never overlap within a node, and jobs that claim rows with
// SKIP LOCKED never do the same work twice across nodes.
import type { Logger } from '../shared/logger.js';

export class IntervalJob {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  /**
   * @param batch one unit of work; returns how many items it handled.
   * @param batchSize a batch that handled this many is followed by another at once.
   */
  constructor(
    private readonly name: string,
    private readonly batch: () => Promise<number>,
    private readonly opts: { intervalMs: number; batchSize: number; log: Logger },
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.runOnce(), this.opts.intervalMs);
    this.timer.unref();
  }

  /** One run; resolves when it is done (tests call it directly). */
  runOnce(): Promise<void> {
    this.running ??= (async () => {
      try {
        while ((await this.batch()) >= this.opts.batchSize) {
          if (!this.timer) break;
        }
      } catch (err) {
        this.opts.log.error({ err, job: this.name }, 'background job failed; retrying at the next interval');
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
