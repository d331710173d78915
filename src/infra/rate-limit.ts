// Fixed-window limits with a burst window per minute and a sustained window per hour
// (DESIGN.md §3). In-process by default; in Redis when REDIS_URL is set, so that the
// limit holds across every node. rate-limiter-flexible does the counting in both.
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimitRule } from '../config.js';
import { sha256Hex } from '../shared/crypto.js';
import { fail, type DomainError, type Result } from '../shared/errors.js';

/** The callers' classes (DESIGN.md §3), and the limits of one action (`webhook_ping`: §14's test pings per partner; `wallet_log`: Apple Wallet's log endpoint per address). */
export type LimitClass = 'api' | 'ip' | 'partner' | 'admin' | 'customer' | 'webhook_ping' | 'wallet_log';

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

/** Whose sign-in is counted: partners and admins are separate accounts even with one e-mail. */
export type SignInAccount = 'partner' | 'admin';

export interface SignInLockOptions {
  redis: Redis | undefined;
  prefix: string;
  /** Wrong passwords within the window that lock the e-mail (SIGNIN_LOCK_ATTEMPTS). */
  attempts: number;
  /** The counting window and the length of the lock (SIGNIN_LOCK_MINUTES). */
  minutes: number;
  /** RATE_LIMIT_DISABLED: no lock either. */
  disabled: boolean;
}

/**
 * Per-account sign-in throttle (DESIGN.md §16): `attempts` wrong passwords within `minutes`
 * lock that e-mail for `minutes`, whatever the client address — the per-IP limit alone lets
 * a botnet (or a client that can pick its address) guess one account's password for ever.
 * While locked every sign-in to that e-mail is refused, a correct password too, without
 * checking it.
 *
 * Each attempt takes a point before the password is checked (one atomic increment, so a
 * burst of parallel guesses cannot all slip in before the first failure is counted) and
 * gives it back when its password was checked and was not wrong: only wrong passwords count.
 * A successful sign-in does not reset the count (docs/decisions.md "Sign-in lock"). The key is
 * a digest of the normalised e-mail: no e-mail sits in Redis or in a log.
 *
 * Nothing may take the count back under the limit while the lock runs, whatever the order in
 * which parallel attempts reach the store (test/helpers/sign-in-lock-races.ts):
 * - a refused attempt keeps its point. Starting the lock overwrites the count, so a refusal
 *   taken before it and given back after it would free a slot for an 11th password;
 * - the lock sets the count to twice the limit rather than one over it: the attempts still
 *   being checked when it starts (fewer than `attempts` — each holds a point, and so does the
 *   wrong password that starts the lock) may give theirs back without lifting it.
 * Refusals still do not extend the lock: an increment leaves the key's expiry alone.
 */
export class SignInLock {
  private readonly limiter: RateLimiterAbstract;

  constructor(private readonly options: SignInLockOptions) {
    const keyPrefix = `${options.prefix}signin-lock`;
    const limits = { keyPrefix, points: options.attempts, duration: options.minutes * 60 };
    this.limiter = options.redis
      ? new RateLimiterRedis({ storeClient: options.redis, ...limits, insuranceLimiter: new RateLimiterMemory(limits) })
      : new RateLimiterMemory(limits);
  }

  /**
   * Run `signIn` unless the e-mail is locked. A failure `isWrongPassword` names (by default
   * INVALID_CREDENTIALS, a sign-in's) counts as a wrong password; the one that reaches the
   * limit starts the lock. A password change passes its own (a wrong current_password), so
   * a stolen token cannot guess the password there outside the lock.
   */
  async attempt<T>(
    account: SignInAccount,
    email: string,
    signIn: () => Promise<Result<T>>,
    isWrongPassword: (failure: DomainError) => boolean = (failure) => failure.error === 'INVALID_CREDENTIALS',
  ): Promise<Result<T>> {
    if (this.options.disabled) return signIn();
    const key = `${account}:${sha256Hex(email.trim().toLowerCase())}`;
    let taken: RateLimiterRes;
    try {
      taken = await this.limiter.consume(key);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      // The point is not given back (see above): the key expires with the lock all the same.
      return this.locked(rejection.msBeforeNext);
    }
    let result: Result<T>;
    try {
      result = await signIn();
    } catch (err) {
      await this.limiter.reward(key, 1).catch(() => undefined);
      throw err;
    }
    if (result.ok || !isWrongPassword(result.failure)) {
      await this.limiter.reward(key, 1).catch(() => undefined);
    } else if (taken.consumedPoints >= this.options.attempts) {
      // The last allowed wrong password: the lock runs its full length from now.
      await this.limiter.set(key, 2 * this.options.attempts, this.options.minutes * 60);
    }
    return result;
  }

  private locked<T>(msBeforeNext: number): Result<T> {
    const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
    // The same answer as every other limit (DESIGN.md §3): 429 code 1003 with Retry-After and
    // X-RateLimit-*, the limit being the number of wrong passwords allowed.
    return fail('RATE_LIMIT_EXCEEDED', {
      params: { seconds },
      headers: {
        'retry-after': String(seconds),
        'x-ratelimit-limit': String(this.options.attempts),
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': String(seconds),
      },
    });
  }
}
