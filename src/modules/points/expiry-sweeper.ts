// The expiry job: lots past their expiry on cards nobody touches are expired here (cards
// that are read or moved expire lazily, under their row lock). Several nodes may run it:
// each locks the cards it sweeps with SKIP LOCKED, so no card is expired twice.
import type { Logger } from '../../context.js';
import type { PointsLedger } from './ledger.service.js';

const BATCH = 200;

export class ExpirySweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly ledger: PointsLedger,
    private readonly opts: { intervalMs: number; log: Logger },
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.runOnce(), this.opts.intervalMs);
    this.timer.unref();
  }

  /** One sweep: batches until no due card is left. Resolves when done (tests call it directly). */
  runOnce(): Promise<void> {
    this.running ??= (async () => {
      try {
        while ((await this.ledger.sweepExpired(BATCH)) === BATCH) {
          if (!this.timer) break;
        }
      } catch (err) {
        this.opts.log.error({ err }, 'points expiry sweep failed; retrying at the next interval');
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
