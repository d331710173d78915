// The sign-in lock holds across nodes (DESIGN.md §1, §16): two apps sharing one database and
// one Redis key prefix count one e-mail's wrong passwords together, whichever node each
// attempt reaches; and parallel sign-ins racing the lock cannot get an 11th password checked
// when the count lives in Redis. Runs only with REDIS_URL (scripts/test.mjs).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { createAdmin, createPartner } from './helpers/fixtures.js';
import { request } from './helpers/http.js';
import { signInLockRaces } from './helpers/sign-in-lock-races.js';

describe('sign-in lock across two nodes sharing Redis', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;

  before(async () => {
    db = await createTestDatabase();
    const shared = { TRUST_PROXY: '1', RATE_LIMIT_DISABLED: 'false', REDIS_KEY_PREFIX: `t${randomBytes(4).toString('hex')}:` };
    a = await startTestApp(shared, db);
    b = await startTestApp(shared, db);
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  const signIn = (t: TestApp, who: 'partners' | 'admin', from: string, email: string, password: string) =>
    request(t.url, 'POST', `/en/${who}/auth/login`, { headers: { 'x-forwarded-for': from }, json: { email, password } });

  for (const who of ['partners', 'admin'] as const) {
    it(`${who}: wrong passwords on either node add up; the lock answers on both`, async () => {
      const account = who === 'partners' ? await createPartner(a) : await createAdmin(a);
      for (let i = 0; i < 10; i++) {
        const node = i % 2 === 0 ? a : b;
        const res = await signIn(node, who, `203.0.113.${i + 1}`, account.email, `wrong-${i}`);
        assert.equal(res.status, 401, `attempt ${i + 1}: ${res.text}`);
      }
      for (const node of [a, b]) {
        const res = await signIn(node, who, '203.0.113.99', account.email, account.password);
        assert.equal(res.status, 429, res.text);
        assert.equal(res.body.code, 1003);
        assert.equal(res.headers.get('x-ratelimit-limit'), '10');
        assert.ok(Number(res.headers.get('retry-after')) > 800, res.headers.get('retry-after') ?? 'no Retry-After');
      }
    });
  }
});

describe('SignInLock (Redis): parallel sign-ins', () => {
  let redis: Redis;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(() => redis.quit());
  signInLockRaces(() => redis);
});
