import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { signInLockRaces } from '../../test/helpers/sign-in-lock-races.js';
import { RateLimiter } from './rate-limit.js';

describe('RateLimiter (in process)', () => {
  it('reports the window closest to running out', async () => {
    const limiter = new RateLimiter({ redis: undefined, prefix: 'u1:' });
    const first = await limiter.consume('api', 'k', { perMinute: 10, perHour: 3 });
    assert.deepEqual([first.allowed, first.limit, first.remaining], [true, 3, 2]);
  });

  it('does not charge a refused request to the window that would have allowed it', async () => {
    const limiter = new RateLimiter({ redis: undefined, prefix: 'u2:' });
    const burst = { perMinute: 2, perHour: 4 };
    for (let i = 0; i < 2; i++) assert.equal((await limiter.consume('api', 'k', burst)).allowed, true);
    for (let i = 0; i < 3; i++) {
      const refused = await limiter.consume('api', 'k', burst);
      assert.equal(refused.allowed, false);
      assert.equal(refused.limit, 2, 'the per-minute window refused it');
    }
    // Same hourly window (4), a roomy burst window: the hour still has 2 of 4 left.
    const roomy = { perMinute: 1000, perHour: 4 };
    assert.equal((await limiter.consume('api', 'k', roomy)).remaining, 1);
    assert.equal((await limiter.consume('api', 'k', roomy)).remaining, 0);
    const over = await limiter.consume('api', 'k', roomy);
    assert.equal(over.allowed, false);
    assert.equal(over.limit, 4);
    assert.ok(over.retryAfterSeconds > 60, 'the hourly window binds');
  });
});

describe('SignInLock (in process): parallel sign-ins', () => {
  signInLockRaces(() => undefined);
});
