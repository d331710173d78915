// Fixed-window limits with a burst window per minute and a sustained window per hour
// (DESIGN.md §3). In-process by default; in Redis when REDIS_URL is set, so that the
// limit holds across every node. rate-limiter-flexible does the counting in both.
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimitRule } from '../config.js';

export type LimitClass = 'api' | 'ip' | 'partner' | 'admin' | 'customer';

export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the reported window resets. */
  resetSeconds: number;
  /** Seconds to wait before retrying (only meaningful when not allowed). */
  retryAfterSeconds: number;
}

interface WindowResult {
  points: number;
  res: RateLimiterRes;
  allowed: boolean;
}

export class RateLimiter {
  private readonly limiters = new Map<string, RateLimiterAbstract>();

  constructor(
    private readonly options: { redis: Redis | undefined; prefix: string },
  ) {}

  private limiter(cls: LimitClass, window: 'minute' | 'hour', points: number): RateLimiterAbstract {
    const id = `${cls}:${window}:${points}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      const duration = window === 'minute' ? 60 : 3600;
      const keyPrefix = `${this.options.prefix}rl:${cls}:${window}`;
      limiter = this.options.redis
        ? new RateLimiterRedis({
            storeClient: this.options.redis,
            keyPrefix,
            points,
            duration,
            // Redis down: keep limiting in process rather than fail open or closed.
            insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration }),
          })
        : new RateLimiterMemory({ keyPrefix, points, duration });
      this.limiters.set(id, limiter);
    }
    return limiter;
  }

  async consume(cls: LimitClass, key: string, rule: RateLimitRule): Promise<LimitDecision> {
    const windows: Array<['minute' | 'hour', number]> = [['minute', rule.perMinute]];
    if (rule.perHour > 0) windows.push(['hour', rule.perHour]);
    const results: WindowResult[] = await Promise.all(
      windows.map(async ([window, points]) => {
        try {
          const res = await this.limiter(cls, window, points).consume(key);
          return { points, res, allowed: true };
        } catch (rejection) {
          if (rejection instanceof RateLimiterRes) return { points, res: rejection, allowed: false };
          throw rejection;
        }
      }),
    );
    const rejected = results.filter((r) => !r.allowed);
    if (rejected.length > 0) {
      // A refused request is not charged to the windows that would have let it through,
      // so hammering against the burst limit does not also drain the hourly budget.
      await Promise.all(
        results
          .map((r, i) => ({ r, window: windows[i]! }))
          .filter(({ r }) => r.allowed)
          .map(({ window: [w, points] }) => this.limiter(cls, w, points).reward(key, 1).catch(() => undefined)),
      );
      // The caller must wait for the window that frees up last.
      const binding = rejected.reduce((a, b) => (b.res.msBeforeNext > a.res.msBeforeNext ? b : a));
      const wait = Math.max(1, Math.ceil(binding.res.msBeforeNext / 1000));
      return { allowed: false, limit: binding.points, remaining: 0, resetSeconds: wait, retryAfterSeconds: wait };
    }
    // Report the window closest to running out.
    const tightest = results.reduce((a, b) => (b.res.remainingPoints < a.res.remainingPoints ? b : a));
    return {
      allowed: true,
      limit: tightest.points,
      remaining: Math.max(0, tightest.res.remainingPoints),
      resetSeconds: Math.max(1, Math.ceil(tightest.res.msBeforeNext / 1000)),
      retryAfterSeconds: 0,
    };
  }
}
