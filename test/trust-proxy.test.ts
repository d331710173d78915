// Behind a proxy (DESIGN.md §16): the client address comes from X-Forwarded-For only as far
// as TRUST_PROXY says the proxies go, so a client that writes its own X-Forwarded-For cannot
// escape the per-address limit; and partner and admin sign-in is throttled per account —
// 10 wrong passwords within 15 minutes lock that e-mail for 15 minutes, whatever the address.
// The test client stands in for the proxy: each request carries the address the client
// claimed, then the one the proxy saw (appended, rightmost). In-process limits by default;
// in Redis when REDIS_URL is set (startTestApp passes it on).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type Env, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { createAdmin, createPartner, type AdminFixture, type PartnerFixture } from './helpers/fixtures.js';
import { request, type Response } from './helpers/http.js';

const LOCK_SECONDS = 15 * 60;

/** The apps of this file share one database (starting PGlite per app is slow); each has its own limits. */
let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());
const app = (env: Env) => startTestApp(env, db);

let spoofed = 0;
/** The headers of a request the proxy forwards from `real`, the client having claimed a fresh address. */
function viaProxy(real: string): Record<string, string> {
  spoofed += 1;
  return { 'x-forwarded-for': `198.18.${spoofed >> 8}.${spoofed & 0xff}, ${real}` };
}

const signIn = (t: TestApp, who: 'partners' | 'admin', real: string, email: string, password: string) =>
  request(t.url, 'POST', `/en/${who}/auth/login`, { headers: viaProxy(real), json: { email, password } });

function header(res: Response, name: string): number {
  const raw = res.headers.get(name);
  assert.ok(raw !== null && /^\d+$/.test(raw), `${name}: ${raw} (status ${res.status})`);
  return Number(raw);
}

/** A wrong password as the client sees it: 401 INVALID_CREDENTIALS. */
function assertWrongPassword(res: Response) {
  assert.equal(res.status, 401, res.text);
  assert.equal(res.body.code, 'INVALID_CREDENTIALS');
}

/** The account lock: the service's rate-limit answer (429, 1003) whose limit is the 10 wrong passwords. */
function assertLocked(res: Response) {
  assert.equal(res.status, 429, res.text);
  assert.equal(res.body.success, false);
  assert.equal(res.body.code, 1003);
  assert.equal(res.body.data, undefined);
  assert.equal(header(res, 'x-ratelimit-limit'), 10);
  assert.equal(header(res, 'x-ratelimit-remaining'), 0);
  const wait = header(res, 'retry-after');
  // The lock runs 15 minutes from the 10th wrong password.
  assert.ok(wait > LOCK_SECONDS - 120 && wait <= LOCK_SECONDS, `Retry-After ${wait}`);
  assert.equal(header(res, 'x-ratelimit-reset'), wait);
}

/** The per-address limit (60 a minute on unauthenticated routes). */
function assertAddressLimited(res: Response) {
  assert.equal(res.status, 429, res.text);
  assert.equal(res.body.code, 1003);
  assert.equal(header(res, 'x-ratelimit-limit'), 60);
  assert.ok(header(res, 'retry-after') <= 60);
}

describe('TRUST_PROXY=1 with rate limits on', () => {
  let t: TestApp;
  let partner: PartnerFixture;
  let other: PartnerFixture;
  let admin: AdminFixture;

  before(async () => {
    t = await app({ TRUST_PROXY: '1', RATE_LIMIT_DISABLED: 'false' });
    partner = await createPartner(t);
    other = await createPartner(t);
    admin = await createAdmin(t);
  });
  after(() => t.close());

  it('70 wrong partner passwords with fresh X-Forwarded-For: locked after 10, the per-address limit counts the proxy-given address', async () => {
    const real = '203.0.113.10';
    const answers: Response[] = [];
    for (let i = 0; i < 70; i++) answers.push(await signIn(t, 'partners', real, partner.email, `wrong-${i}`));
    answers.slice(0, 10).forEach(assertWrongPassword);
    // 11th to 60th: the account lock (checked without verifying the password).
    answers.slice(10, 60).forEach(assertLocked);
    // 61st on: the address the proxy saw has spent its 60 a minute, whatever the client claimed.
    answers.slice(60).forEach(assertAddressLimited);
    // That address stays limited for any account; another one is not.
    assertAddressLimited(await signIn(t, 'partners', real, other.email, other.password));
    assert.equal((await signIn(t, 'partners', '203.0.113.11', other.email, other.password)).status, 200);
  });

  it('the lock holds from another address, for the right password and however the e-mail is written', async () => {
    assertLocked(await signIn(t, 'partners', '203.0.113.20', partner.email, partner.password));
    assertLocked(await signIn(t, 'partners', '203.0.113.21', `  ${partner.email.toUpperCase()} `, partner.password));
    assertLocked(await signIn(t, 'partners', '2001:db8::21', partner.email, 'wrong-again'));
  });

  it('locks only that e-mail: another partner still signs in, and a wrong password there is a plain 401', async () => {
    assertWrongPassword(await signIn(t, 'partners', '203.0.113.30', other.email, 'wrong'));
    const res = await signIn(t, 'partners', '203.0.113.30', other.email, other.password);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.partner.id, other.id);
    // The same e-mail as an admin account is another account (nobody has it: a plain 401).
    assertWrongPassword(await signIn(t, 'admin', '203.0.113.30', partner.email, partner.password));
  });

  it('admin sign-in: 10 wrong passwords from 10 addresses lock the e-mail, the right password too', async () => {
    for (let i = 0; i < 10; i++) assertWrongPassword(await signIn(t, 'admin', `203.0.113.${100 + i}`, admin.email, `wrong-${i}`));
    assertLocked(await signIn(t, 'admin', '203.0.113.120', admin.email, 'wrong-10'));
    assertLocked(await signIn(t, 'admin', '203.0.113.121', admin.email, admin.password));
    const another = await createAdmin(t);
    const res = await signIn(t, 'admin', '203.0.113.122', another.email, another.password);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.admin.id, another.id);
  });

  it('counts only wrong passwords: sign-ins that succeed in between neither count nor reset the count', async () => {
    const p = await createPartner(t);
    const from = (i: number) => `203.0.113.${150 + i}`;
    for (let i = 0; i < 9; i++) {
      assertWrongPassword(await signIn(t, 'partners', from(i), p.email, `wrong-${i}`));
      assert.equal((await signIn(t, 'partners', from(i), p.email, p.password)).status, 200);
    }
    assertWrongPassword(await signIn(t, 'partners', from(9), p.email, 'wrong-9'));
    assertLocked(await signIn(t, 'partners', from(10), p.email, p.password));
  });

  it('parallel wrong passwords cannot slip past the lock: at most 10 are checked', async () => {
    const p = await createPartner(t);
    const answers = await Promise.all(
      Array.from({ length: 25 }, (_, i) => signIn(t, 'partners', `203.0.113.${200 + i}`, p.email, `wrong-${i}`)),
    );
    assert.equal(answers.filter((r) => r.status === 401).length, 10, answers.map((r) => r.status).join(','));
    answers.filter((r) => r.status !== 401).forEach(assertLocked);
    assertLocked(await signIn(t, 'partners', '203.0.113.250', p.email, p.password));
  });

  it('wrong current passwords on a password change count towards the same lock (a stolen token cannot guess there)', async () => {
    const change = (who: 'partners' | 'admin', token: string, current: string) =>
      request(t.url, 'POST', `/en/${who}/auth/password`, {
        headers: { ...viaProxy('203.0.113.240'), authorization: `Bearer ${token}` },
        json: { current_password: current, new_password: 'a-brand-new-password-1' },
      });
    const assertWrongCurrent = (res: Response) => {
      assert.equal(res.status, 422, res.text);
      assert.deepEqual(Object.keys(res.body.errors), ['current_password'], res.text);
    };
    // Partner: 10 wrong current passwords lock the e-mail for the change and for sign-in.
    const p = await createPartner(t);
    for (let i = 0; i < 10; i++) assertWrongCurrent(await change('partners', p.token, `wrong-${i}`));
    assertLocked(await change('partners', p.token, p.password));
    assertLocked(await signIn(t, 'partners', '203.0.113.241', p.email, p.password));
    // Admin: wrong sign-ins and wrong current passwords add up to one count.
    const a = await createAdmin(t);
    for (let i = 0; i < 5; i++) assertWrongPassword(await signIn(t, 'admin', `203.0.113.${230 + i}`, a.email, `wrong-${i}`));
    for (let i = 5; i < 10; i++) assertWrongCurrent(await change('admin', a.token, `wrong-${i}`));
    assertLocked(await change('admin', a.token, a.password));
    assertLocked(await signIn(t, 'admin', '203.0.113.242', a.email, a.password));
  });
});

describe('TRUST_PROXY unset: X-Forwarded-For is ignored', () => {
  let t: TestApp;
  before(async () => {
    t = await app({ RATE_LIMIT_DISABLED: 'false', RATE_LIMIT_IP_PER_MINUTE: '5' });
  });
  after(() => t.close());

  it('every request counts against the socket address, whatever the client claims', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await signIn(t, 'partners', `203.0.113.${i}`, `nobody-${i}@example.com`, 'x')).status);
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429]);
  });
});

describe('TRUST_PROXY as a list of proxy addresses', () => {
  let t: TestApp;
  before(async () => {
    // The test client connects from 127.0.0.1: the listed proxy.
    t = await app({ TRUST_PROXY: '10.0.0.0/8,127.0.0.1', RATE_LIMIT_DISABLED: 'false', RATE_LIMIT_IP_PER_MINUTE: '3' });
  });
  after(() => t.close());

  it('walks back through the listed proxies to the first address that is not one', async () => {
    const statuses: number[] = [];
    // The client claims a fresh address each time; 10.1.2.3 is an inner proxy, 203.0.113.9 the client.
    for (let i = 0; i < 4; i++) {
      const res = await request(t.url, 'POST', '/en/partners/auth/login', {
        headers: { 'x-forwarded-for': `198.18.0.${i}, 203.0.113.9, 10.1.2.3` },
        json: { email: `nobody-${i}@example.com`, password: 'x' },
      });
      statuses.push(res.status);
    }
    assert.deepEqual(statuses, [401, 401, 401, 429]);
    // Another client behind the same proxies has its own budget.
    const res = await request(t.url, 'POST', '/en/partners/auth/login', {
      headers: { 'x-forwarded-for': '203.0.113.10, 10.1.2.3' },
      json: { email: 'nobody@example.com', password: 'x' },
    });
    assert.equal(res.status, 401);
  });
});

describe('RATE_LIMIT_DISABLED=true', () => {
  let t: TestApp;
  before(async () => {
    t = await app({ TRUST_PROXY: '1' });
  });
  after(() => t.close());

  it('turns the sign-in lock off with the other limits', async () => {
    const p = await createPartner(t);
    for (let i = 0; i < 11; i++) assertWrongPassword(await signIn(t, 'partners', '203.0.113.1', p.email, `wrong-${i}`));
    assert.equal((await signIn(t, 'partners', '203.0.113.1', p.email, p.password)).status, 200);
  });
});
