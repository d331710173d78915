// Interleavings of parallel sign-ins that the sign-in lock (DESIGN.md §16) must survive, driven
// against a real SignInLock: each sign-in's password check is a promise the test settles, so
// the order in which checks end, refusals come back and the lock starts is forced rather than
// left to luck. Run on the in-process store (src/infra/rate-limit.test.ts) and on Redis
// (test/sign-in-lock.redis.test.ts).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { it } from 'node:test';
import type { Redis } from 'ioredis';
import { SignInLock } from '../../src/infra/rate-limit.js';
import { fail, ok, type Result } from '../../src/shared/errors.js';

const ATTEMPTS = 10;

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const wrongPassword = (): Result<string> => fail('INVALID_CREDENTIALS');

/** One account's lock and a tally of the passwords it let through to be checked. */
function account(redis: () => Redis | undefined) {
  const lock = new SignInLock({
    redis: redis(),
    prefix: `u${randomBytes(4).toString('hex')}:`,
    attempts: ATTEMPTS,
    minutes: 15,
    disabled: false,
  });
  const email = `${randomBytes(4).toString('hex')}@example.com`;
  let checked = 0;
  const waiting: Array<{ count: number; reached: Deferred<void> }> = [];
  return {
    /** Sign in; the password check answers with whatever `check` gives. */
    signIn(check: () => Promise<Result<string>>): Promise<Result<string>> {
      return lock.attempt('partner', email, () => {
        checked += 1;
        for (const w of waiting) if (checked >= w.count) w.reached.resolve();
        return check();
      });
    },
    get checked() {
      return checked;
    },
    /** Resolves once `count` passwords have reached their check. */
    checkedAtLeast(count: number): Promise<void> {
      const reached = deferred<void>();
      if (checked >= count) reached.resolve();
      else waiting.push({ count, reached });
      return reached.promise;
    },
  };
}

function assertLocked(result: Result<string>) {
  assert.equal(result.ok, false, 'the lock refuses');
  if (!result.ok) assert.equal(result.failure.error, 'RATE_LIMIT_EXCEEDED');
}

export function signInLockRaces(redis: () => Redis | undefined): void {
  it('refusals racing the 10th wrong password do not reopen the lock: at most 10 passwords are checked', async () => {
    const a = account(redis);
    // Ten guesses pass the lock and wait at their password check.
    const held = Array.from({ length: ATTEMPTS }, () => deferred<Result<string>>());
    const first = held.map((d) => a.signIn(() => d.promise));
    await a.checkedAtLeast(ATTEMPTS);
    // All ten turn out wrong — the 10th starts the lock — while fifteen more guesses, taken
    // before the lock started, are refused: their answers reach the store after the lock's.
    for (const d of held) d.resolve(wrongPassword());
    const refused = Array.from({ length: 15 }, () => a.signIn(async () => wrongPassword()));
    (await Promise.all(refused)).forEach(assertLocked);
    await Promise.all(first);
    for (let i = 0; i < 5; i++) assertLocked(await a.signIn(async () => wrongPassword()));
    assertLocked(await a.signIn(async () => ok('signed in')));
    assert.equal(a.checked, ATTEMPTS, 'passwords checked');
  });

  it('sign-ins still being checked when the lock starts do not lift it when they give their point back', async () => {
    const a = account(redis);
    // Three correct passwords pass and wait at their check, holding three of the ten points.
    const held = Array.from({ length: 3 }, () => deferred<Result<string>>());
    const correct = held.map((d) => a.signIn(() => d.promise));
    await a.checkedAtLeast(held.length);
    // Seven wrong passwords take the rest; the last of them starts the lock.
    for (let i = 0; i < ATTEMPTS - held.length; i++) assert.equal((await a.signIn(async () => wrongPassword())).ok, false);
    // The three checks end well: only wrong passwords count, so their points go back.
    for (const d of held) d.resolve(ok('signed in'));
    for (const result of await Promise.all(correct)) assert.equal(result.ok, true);
    // The lock holds for a correct password and a wrong one alike, unchecked.
    assertLocked(await a.signIn(async () => ok('signed in')));
    assertLocked(await a.signIn(async () => wrongPassword()));
    assert.equal(a.checked, ATTEMPTS, 'passwords checked');
  });
}
