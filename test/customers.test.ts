// Customer sign-in by SMS code (DESIGN.md §5) and the customer's own profile, over real
// HTTP with the SMS module's simulator as the phone: the code is read from the message
// the platform queued, as a phone would receive it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { and, desc, eq, isNull } from 'drizzle-orm';
import { customers, otpChallenges } from '../src/modules/customers/customers.tables.js';
import { smsMessages } from '../src/modules/sms/sms.tables.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner } from './helpers/fixtures.js';
import { bearer, request } from './helpers/http.js';
import { TestClock } from './helpers/loyalty.js';

const TEST_PHONE = '+37060000099';

describe('customer sign-in and profile', () => {
  let t: TestApp;
  const clock = new TestClock();
  let next = 1_000_000;
  const phone = () => `+3706${String(next++).padStart(7, '0')}`;

  before(async () => {
    // No background workers: the SMS stays queued with its text, which these tests read as the
    // phone would (the last test starts the dispatcher to check the code is not kept).
    t = await startTestApp({ APP_TEST_PHONES: `${TEST_PHONE}:123456`, SMS_SIMULATOR_DELAY_MS: '0' }, undefined, { clock, workers: false });
  });
  after(() => t.close());

  const requestCode = (p: string, locale = 'en') => request(t.url, 'POST', `/${locale}/app/auth/otp/request`, { json: { phone: p } });
  const verify = (p: string, code: string) => request(t.url, 'POST', '/en/app/auth/otp/verify', { json: { phone: p, code } });

  /** The code as the phone received it: the last platform message to that number. */
  async function codeSentTo(p: string): Promise<string> {
    const [msg] = await t.app.context.database.db
      .select()
      .from(smsMessages)
      .where(and(eq(smsMessages.destination, p), isNull(smsMessages.partnerId)))
      .orderBy(desc(smsMessages.createdAt));
    assert.ok(msg, `an SMS was queued to ${p}`);
    return /\b(\d{6})\b/.exec(msg.body)![1]!;
  }

  it('sends a code from the platform sender and signs in with it, creating the customer once', async () => {
    const p = phone();
    const res = await requestCode(p.slice(1)); // the plus sign is optional
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body.data).sort(), ['expires_at', 'phone', 'resend_after']);
    assert.equal(res.body.data.phone, p);
    assert.equal(res.body.data.resend_after, 60);
    assert.equal(Date.parse(res.body.data.expires_at) - clock.now().getTime(), 10 * 60_000);
    const [msg] = await t.app.context.database.db.select().from(smsMessages).where(eq(smsMessages.destination, p));
    assert.equal(msg!.source, 'Loyalty');
    assert.equal(msg!.partnerId, null);
    assert.equal(msg!.cost, '0.0000');

    const ok = await verify(p, await codeSentTo(p));
    assert.equal(ok.status, 200, ok.text);
    assert.equal(typeof ok.body.data.token, 'string');
    assert.equal(ok.body.data.user.phone, p);
    const me = await request(t.url, 'GET', '/en/shop/auth/me', { headers: bearer(ok.body.data.token) });
    assert.equal(me.status, 200);
    assert.equal(me.body.data.id, ok.body.data.user.id);

    // The code is single-use.
    const reused = await verify(p, await codeSentTo(p));
    assert.equal(reused.status, 401);
    assert.equal(reused.body.code, 'INVALID_CREDENTIALS');

    // A later sign-in finds the same customer.
    clock.advanceMs(61_000);
    assert.equal((await requestCode(p)).status, 200);
    const again = await verify(p, await codeSentTo(p));
    assert.equal(again.body.data.user.id, ok.body.data.user.id);
  });

  it('refuses a wrong code (with attempts left), and a sixth attempt even with the right code', async () => {
    const p = phone();
    await requestCode(p);
    const code = await codeSentTo(p);
    const wrong = code === '000000' ? '111111' : '000000';
    for (let attempt = 1; attempt <= 5; attempt++) {
      const res = await verify(p, wrong);
      assert.equal(res.status, 401, res.text);
      assert.equal(res.body.code, 'INVALID_CREDENTIALS');
      assert.equal(res.body.errors[0].field, 'code');
      assert.equal(res.body.errors[0].meta.attempts_left, 5 - attempt);
    }
    const sixth = await verify(p, code);
    assert.equal(sixth.status, 429);
    assert.equal(sixth.body.code, 1003);
    assert.match(sixth.body.message, /request a new code/);
  });

  it('parallel wrong guesses cannot run past the attempt limit', async () => {
    const p = phone();
    await requestCode(p);
    const code = await codeSentTo(p);
    const guesses = Array.from({ length: 12 }, (_, i) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0'));
    const results = await Promise.all(guesses.map((g) => verify(p, g)));
    assert.equal(results.filter((r) => r.status === 401).length, 5);
    assert.equal(results.filter((r) => r.status === 429).length, 7);
    // Each wrong guess used its own attempt: every count from 4 left down to 0 was told once.
    assert.deepEqual(
      results
        .filter((r) => r.status === 401)
        .map((r) => r.body.errors[0].meta.attempts_left)
        .sort(),
      [0, 1, 2, 3, 4],
    );
    assert.equal((await verify(p, code)).status, 429);
    const { db } = t.app.context.database;
    const [challenge] = await db.select().from(otpChallenges).where(eq(otpChallenges.phone, p));
    assert.equal(challenge?.attempts, 5);
    assert.equal(challenge?.consumedAt, null);
    assert.deepEqual(await db.select().from(customers).where(eq(customers.phone, p)), [], 'nobody signed in');
  });

  it('refuses an expired code', async () => {
    const p = phone();
    await requestCode(p);
    const code = await codeSentTo(p);
    clock.advanceMs(10 * 60_000 + 1000);
    const res = await verify(p, code);
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 'INVALID_CREDENTIALS');
    assert.match(res.body.message, /expired/);
  });

  it('throttles resends: once a minute, five times an hour, with Retry-After', async () => {
    const p = phone();
    assert.equal((await requestCode(p)).status, 200);
    const soon = await requestCode(p);
    assert.equal(soon.status, 429);
    assert.equal(soon.body.code, 1003);
    assert.equal(soon.headers.get('retry-after'), '60');
    for (let i = 0; i < 4; i++) {
      clock.advanceMs(61_000);
      assert.equal((await requestCode(p)).status, 200, `send ${i + 2}`);
    }
    clock.advanceMs(61_000);
    const sixth = await requestCode(p);
    assert.equal(sixth.status, 429);
    assert.ok(Number(sixth.headers.get('retry-after')) > 60);
    // The newest code is the valid one.
    assert.equal((await verify(p, await codeSentTo(p))).status, 200);
  });

  it('test numbers get their fixed code and no SMS', async () => {
    assert.equal((await requestCode(TEST_PHONE)).status, 200);
    const sent = await t.app.context.database.db.select().from(smsMessages).where(eq(smsMessages.destination, TEST_PHONE));
    assert.equal(sent.length, 0);
    assert.equal((await verify(TEST_PHONE, '654321')).status, 401);
    assert.equal((await verify(TEST_PHONE, '123456')).status, 200);
  });

  it('test numbers are not throttled: integrators sign the same test customer in again and again', async () => {
    for (let i = 0; i < 8; i++) {
      const res = await requestCode(TEST_PHONE);
      assert.equal(res.status, 200, `request ${i + 1}: ${res.text}`);
      assert.equal((await verify(TEST_PHONE, '123456')).status, 200, `sign-in ${i + 1}`);
    }
    const parallel = await Promise.all(Array.from({ length: 4 }, () => requestCode(TEST_PHONE)));
    assert.deepEqual(parallel.map((r) => r.status), [200, 200, 200, 200]);
  });

  it('test numbers still count wrong codes: the sixth attempt is refused', async () => {
    assert.equal((await requestCode(TEST_PHONE)).status, 200);
    for (let attempt = 1; attempt <= 5; attempt++) assert.equal((await verify(TEST_PHONE, '000000')).status, 401);
    const sixth = await verify(TEST_PHONE, '123456');
    assert.equal(sixth.status, 429);
    assert.equal(sixth.body.code, 1003);
  });

  it('validates the phone and the code format with Shape A errors, in the path locale', async () => {
    const bad = await requestCode('12');
    assert.equal(bad.status, 422);
    assert.equal(bad.body.code, 422);
    assert.ok('phone' in bad.body.errors);
    const lt = await requestCode('abc', 'lt');
    assert.match(lt.body.errors.phone[0], /numeris/);
    const code = await verify(phone(), '12ab');
    assert.equal(code.status, 422);
    assert.ok('code' in code.body.errors);
    const none = await verify(phone(), '123456');
    assert.equal(none.status, 401);
  });

  it('updates the profile with validated fields; only customer tokens reach it', async () => {
    const p = phone();
    await requestCode(p);
    const { token } = (await verify(p, await codeSentTo(p))).body.data;
    const put = (json: unknown) => request(t.url, 'PUT', '/en/shop/auth/profile', { headers: bearer(token), json });
    const ok = await put({ name: ' Ona Onaitė ', email: 'Ona@Example.com', birth_date: '1990-05-17', language: 'lt' });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.data.name, 'Ona Onaitė');
    assert.equal(ok.body.data.email, 'ona@example.com');
    assert.equal(ok.body.data.birth_date, '1990-05-17');
    assert.equal(ok.body.data.language, 'lt');

    const bad = await put({ email: 'nope', birth_date: '2999-01-01', language: 'de', name: '' });
    assert.equal(bad.status, 422);
    assert.deepEqual(Object.keys(bad.body.errors).sort(), ['email', 'language', 'name']);
    const future = await put({ birth_date: '2999-01-01' });
    assert.equal(future.status, 422);
    assert.ok('birth_date' in future.body.errors);
    const cleared = await put({ email: null });
    assert.equal(cleared.body.data.email, null);
    assert.equal(cleared.body.data.name, 'Ona Onaitė');

    const partner = await createPartner(t);
    assert.equal((await request(t.url, 'GET', '/en/shop/auth/me', { headers: bearer(partner.token) })).status, 403);
    const none = await request(t.url, 'GET', '/en/shop/auth/me');
    assert.equal(none.status, 401);
    assert.equal(none.body.code, 'MISSING_AUTHENTICATION');
  });

  it('does not keep the code once the message has left for the carrier', async () => {
    const p = phone();
    await requestCode(p);
    const code = await codeSentTo(p);
    const dispatcher = t.app.context.workers.smsDispatcher;
    await dispatcher.start();
    try {
      for (let i = 0; i < 100; i++) {
        const [msg] = await t.app.context.database.db.select().from(smsMessages).where(eq(smsMessages.destination, p));
        if (msg!.status !== 'queued') break;
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await dispatcher.stop();
    }
    const [msg] = await t.app.context.database.db.select().from(smsMessages).where(eq(smsMessages.destination, p));
    assert.notEqual(msg!.status, 'queued');
    assert.ok(!msg!.body.includes(code), msg!.body);
    assert.doesNotMatch(msg!.body, /\d/);
    // The code itself still works: only its copy in the message log is gone.
    assert.equal((await verify(p, code)).status, 200);
  });
});
