// Bearer tokens that stop working before they expire (issue 20): sign-out of partners, admins
// and customers revokes the token presented; a password change revokes the account's older
// tokens. Also the QR-login token's own lifetime, what a QR-scoped token may not change (the
// customer's global profile), and Idempotency-Key replays kept to the caller that stored them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { TokenRevocations, TokenService } from '../src/infra/tokens.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { claim, createOffer } from './helpers/engagement.js';
import { createAdmin, createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request, type Response } from './helpers/http.js';
import { createCustomer, createProgramme, joinProgramme, type CustomerFixture } from './helpers/loyalty.js';

const TEST_PHONE = '+37060000077';

describe('token revocation', () => {
  let t: TestApp;

  before(async () => {
    t = await startTestApp({ APP_TEST_PHONES: `${TEST_PHONE}:246810`, SMS_SIMULATOR_DELAY_MS: '0' });
  });
  after(() => t.close());

  /** The 401 every later request with a revoked token gets: the one a forged token gets. */
  function assertRefused(res: Response, label: string) {
    assert.equal(res.status, 401, `${label}: ${res.text}`);
    assert.equal(res.body.code, 'INVALID_CREDENTIALS', label);
    assert.equal(res.body.success, false);
  }

  const partnerLogin = async (p: { email: string }, password: string): Promise<string> => {
    const res = await request(t.url, 'POST', '/en/partners/auth/login', { json: { email: p.email, password } });
    assert.equal(res.status, 200, res.text);
    return res.body.data.token;
  };
  const adminLogin = async (a: { email: string }, password: string): Promise<string> => {
    const res = await request(t.url, 'POST', '/en/admin/auth/login', { json: { email: a.email, password } });
    assert.equal(res.status, 200, res.text);
    return res.body.data.token;
  };
  const partnerMe = (token: string) => request(t.url, 'GET', '/en/partners/auth/me', { headers: bearer(token) });
  const adminCall = (token: string) => request(t.url, 'GET', '/en/admin/partners', { headers: bearer(token) });
  const customerMe = (token: string) => request(t.url, 'GET', '/en/shop/auth/me', { headers: bearer(token) });

  describe('sign-out', () => {
    it('partners/auth/logout revokes that token only', async () => {
      const p = await createPartner(t);
      const first = await partnerLogin(p, p.password);
      const second = await partnerLogin(p, p.password);
      assert.equal((await partnerMe(first)).status, 200);

      const out = await request(t.url, 'POST', '/en/partners/auth/logout', { headers: bearer(first) });
      assert.equal(out.status, 200, out.text);
      assert.equal(out.body.success, true);
      assert.equal(out.body.message, 'Signed out; this token no longer works');

      assertRefused(await partnerMe(first), 'the signed-out token');
      assertRefused(await request(t.url, 'GET', '/en/partners/api-keys', { headers: bearer(first) }), 'on another route');
      assertRefused(await request(t.url, 'POST', '/en/partners/auth/logout', { headers: bearer(first) }), 'signing out twice');
      // The partner's other session and its API credentials are untouched.
      assert.equal((await partnerMe(second)).status, 200);
      assert.equal((await partnerMe(p.token)).status, 200);
      assert.equal((await request(t.url, 'POST', '/en/shop/validate-credentials', { headers: apiHeaders(p.apiKey) })).status, 200);
      // A new sign-in works.
      assert.equal((await partnerMe(await partnerLogin(p, p.password))).status, 200);
    });

    it('admin/auth/logout revokes that token only', async () => {
      const a = await createAdmin(t);
      const first = await adminLogin(a, a.password);
      assert.equal((await adminCall(first)).status, 200);
      const out = await request(t.url, 'POST', '/lt/admin/auth/logout', { headers: bearer(first) });
      assert.equal(out.status, 200, out.text);
      assert.equal(out.body.message, 'Atsijungta; šis prieigos raktas nebegalioja');
      assertRefused(await adminCall(first), 'the signed-out admin token');
      assert.equal((await adminCall(a.token)).status, 200);
    });

    it('app/auth/logout revokes that customer token only (app or QR login)', async () => {
      await request(t.url, 'POST', '/en/app/auth/otp/request', { json: { phone: TEST_PHONE } });
      const verified = await request(t.url, 'POST', '/en/app/auth/otp/verify', { json: { phone: TEST_PHONE, code: '246810' } });
      assert.equal(verified.status, 200, verified.text);
      const appToken = verified.body.data.token as string;
      const customerId = verified.body.data.user.id as number;
      const p = await createPartner(t);
      const qr = (await t.app.context.tokens.sign({ kind: 'customer', subject: customerId, partnerId: p.id })).token;
      const other = (await t.app.context.tokens.sign({ kind: 'customer', subject: customerId })).token;

      const out = await request(t.url, 'POST', '/en/app/auth/logout', { headers: bearer(appToken) });
      assert.equal(out.status, 200, out.text);
      assertRefused(await customerMe(appToken), 'the signed-out app token');
      assert.equal((await customerMe(qr)).status, 200);
      assert.equal((await customerMe(other)).status, 200);

      // A till signs its QR-login customer out the same way.
      assert.equal((await request(t.url, 'POST', '/en/app/auth/logout', { headers: bearer(qr) })).status, 200);
      assertRefused(await customerMe(qr), 'the signed-out QR token');
      assert.equal((await customerMe(other)).status, 200);
    });

    it('is checked from memory on each request: no database query on the hot path', async () => {
      const p = await createPartner(t);
      const revocations = t.app.context.tokens.revocations!;
      const verified = await t.app.context.tokens.verify(p.token);
      assert.ok(verified.ok);
      const before = revocations.isRevoked(verified.token);
      assert.equal(typeof before, 'boolean', 'answered at once, not after a query');
      assert.equal(before, false);
      assert.equal((await request(t.url, 'POST', '/en/partners/auth/logout', { headers: bearer(p.token) })).status, 200);
      assert.equal(revocations.isRevoked(verified.token), true);
    });

    it('a node not (yet) listening asks the database, and gets the same answers', async () => {
      const p = await createPartner(t);
      const stale = await partnerLogin(p, p.password);
      const signedOut = await partnerLogin(p, p.password);
      assert.equal((await request(t.url, 'POST', '/en/partners/auth/logout', { headers: bearer(signedOut) })).status, 200);
      const changed = await request(t.url, 'POST', '/en/partners/auth/password', {
        headers: bearer(stale),
        json: { current_password: p.password, new_password: 'another-password-3' },
      });
      assert.equal(changed.status, 200);
      // Never started: no notifications, so every answer comes from the tables.
      const cold = new TokenRevocations(t.app.context.database);
      const tokenOf = async (jwt: string) => {
        const unchecked = await new TokenService(t.config.jwtSecret!, { access: 60, customer: 60, qrCustomer: 60 }).verify(jwt);
        assert.ok(unchecked.ok);
        return unchecked.token;
      };
      const answers = await Promise.all(
        [signedOut, stale, changed.body.data.token as string].map(async (jwt) => {
          const answer = cold.isRevoked(await tokenOf(jwt));
          assert.ok(answer instanceof Promise, 'not trusted from memory');
          return answer;
        }),
      );
      assert.deepEqual(answers, [true, true, false]);
    });

    it('rows of expired tokens are swept when a new revocation is written', async () => {
      const tokens = t.app.context.tokens;
      const long = Date.now() + 3_600_000;
      const gone = { id: `expired-${process.pid}-${Date.now()}`, kind: 'partner' as const, subject: 1, issuedAt: 0, expiresAt: Date.now() - 1000 };
      await tokens.revoke(gone);
      const rows = async (id: string) =>
        ((await t.app.context.database.db.execute(sql`select count(*)::int as n from revoked_tokens where token_id = ${id}`)) as unknown as { rows: Array<{ n: number }> }).rows[0]!.n;
      assert.equal(await rows(gone.id), 0, 'swept in the same transaction that wrote it');
      const live = { ...gone, id: `live-${gone.id}`, expiresAt: long };
      await tokens.revoke(live);
      assert.equal(await rows(live.id), 1);
    });

    it('signs each kind with its own lifetime', async () => {
      const service = new TokenService(t.config.jwtSecret!, { access: 600, customer: 900, qrCustomer: 300 });
      const life = async (claims: Parameters<TokenService['sign']>[0]) => {
        const claimsOf = decodeJwt((await service.sign(claims)).token);
        return claimsOf.exp! - Math.floor(claimsOf.iat!);
      };
      assert.equal(await life({ kind: 'partner', subject: 1 }), 600);
      assert.equal(await life({ kind: 'admin', subject: 1 }), 600);
      assert.equal(await life({ kind: 'customer', subject: 1 }), 900);
      assert.equal(await life({ kind: 'customer', subject: 1, partnerId: 2 }), 300);
    });

    it('each sign-out needs its own kind of token', async () => {
      const p = await createPartner(t);
      const c = await createCustomer(t);
      const wrong = await request(t.url, 'POST', '/en/admin/auth/logout', { headers: bearer(p.token) });
      assert.equal(wrong.status, 403);
      assert.equal(wrong.body.code, 'INSUFFICIENT_PERMISSIONS');
      assert.equal((await request(t.url, 'POST', '/en/partners/auth/logout', { headers: bearer(c.token) })).status, 403);
      assert.equal((await partnerMe(p.token)).status, 200, 'a refused sign-out revokes nothing');
      const none = await request(t.url, 'POST', '/en/app/auth/logout');
      assert.equal(none.status, 401);
      assert.equal(none.body.code, 'MISSING_AUTHENTICATION');
    });
  });

  describe('password change', () => {
    it("the partner's own change revokes every older token and hands out a fresh one", async () => {
      const p = await createPartner(t);
      const older = await partnerLogin(p, p.password);
      const used = await partnerLogin(p, p.password);
      const change = (token: string, json: unknown) => request(t.url, 'POST', '/en/partners/auth/password', { headers: bearer(token), json });

      const wrong = await change(used, { current_password: 'not-the-password', new_password: 'a-new-password-1' });
      assert.equal(wrong.status, 422, wrong.text);
      assert.deepEqual(Object.keys(wrong.body.errors), ['current_password']);
      const short = await change(used, { current_password: p.password, new_password: 'short' });
      assert.equal(short.status, 422);
      assert.deepEqual(Object.keys(short.body.errors), ['new_password']);
      assert.equal((await partnerMe(used)).status, 200, 'a refused change revokes nothing');

      const res = await change(used, { current_password: p.password, new_password: 'a-new-password-1' });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.partner.id, p.id);
      const fresh = res.body.data.token as string;
      assertRefused(await partnerMe(older), 'a token from before the change');
      assertRefused(await partnerMe(used), 'the token used for the change');
      assertRefused(await partnerMe(p.token), 'the fixture token');
      assert.equal((await partnerMe(fresh)).status, 200, 'the token the change handed out');

      const oldLogin = await request(t.url, 'POST', '/en/partners/auth/login', { json: { email: p.email, password: p.password } });
      assert.equal(oldLogin.status, 401);
      const after = await partnerLogin(p, 'a-new-password-1');
      assert.equal((await partnerMe(after)).status, 200, 'tokens issued after the change work');
      assert.equal((await partnerMe(fresh)).status, 200);
      // API credentials are not sessions: they keep working.
      assert.equal((await request(t.url, 'POST', '/en/shop/validate-credentials', { headers: apiHeaders(p.apiKey) })).status, 200);
    });

    it("an admin's reset of a partner's password revokes the partner's older tokens", async () => {
      const a = await createAdmin(t);
      const p = await createPartner(t);
      const other = await createPartner(t);
      const older = await partnerLogin(p, p.password);
      const reset = (id: number, token = a.token, password = 'reset-password-22') =>
        request(t.url, 'PUT', `/en/admin/partners/${id}/password`, { headers: bearer(token), json: { password } });

      const byPartner = await reset(p.id, p.token);
      assert.equal(byPartner.status, 403);
      assert.equal(byPartner.body.code, 'INSUFFICIENT_PERMISSIONS');
      const unknown = await reset(999_999);
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.code, 'RESOURCE_NOT_FOUND');

      const res = await reset(p.id);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.id, p.id);
      assertRefused(await partnerMe(older), "the partner's token from before the reset");
      assertRefused(await partnerMe(p.token), "the partner's fixture token");
      assert.equal((await partnerMe(await partnerLogin(p, 'reset-password-22'))).status, 200);
      assert.equal((await partnerMe(other.token)).status, 200, "another partner's tokens are untouched");
      assert.equal((await adminCall(a.token)).status, 200);
    });

    it("the admin's own change revokes its older tokens and hands out a fresh one", async () => {
      const a = await createAdmin(t);
      const other = await createAdmin(t);
      const older = await adminLogin(a, a.password);
      const res = await request(t.url, 'POST', '/en/admin/auth/password', {
        headers: bearer(a.token),
        json: { current_password: a.password, new_password: 'admin-new-password-1' },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.admin.id, a.id);
      assertRefused(await adminCall(older), 'an older admin token');
      assertRefused(await adminCall(a.token), 'the token used for the change');
      assert.equal((await adminCall(res.body.data.token)).status, 200);
      assert.equal((await adminCall(await adminLogin(a, 'admin-new-password-1'))).status, 200);
      assert.equal((await adminCall(other.token)).status, 200, "another admin's tokens are untouched");
    });
  });

  describe('QR-login tokens', () => {
    let p: PartnerFixture;

    before(async () => {
      p = await createPartner(t);
    });

    /** A real QR login: the till asks, the app confirms, the till's poll hands out the token. */
    async function qrLogin(c: CustomerFixture): Promise<string> {
      const generated = await request(t.url, 'POST', '/en/shop/auth/qr-login/generate', { headers: apiHeaders(p.apiKey), json: { device_name: 'Till 1' } });
      assert.equal(generated.status, 200, generated.text);
      const { session_id, qr_content } = generated.body.data as { session_id: string; qr_content: string };
      const confirmed = await request(t.url, 'POST', '/en/app/qr-login/confirm', { headers: bearer(c.token), json: { code: qr_content } });
      assert.equal(confirmed.status, 200, confirmed.text);
      const polled = await request(t.url, 'POST', `/en/shop/auth/qr-login/poll/${session_id}`, { headers: apiHeaders(p.apiKey) });
      assert.equal(polled.body.data.status, 'authenticated', polled.text);
      return polled.body.data.token as string;
    }

    it('live 12 h by default (QR_CUSTOMER_TOKEN_TTL); the app keeps CUSTOMER_TOKEN_TTL', async () => {
      assert.equal(t.config.qrCustomerTokenTtlSeconds, 43_200);
      const c = await createCustomer(t);
      const claims = decodeJwt(await qrLogin(c));
      assert.equal(claims.pid, p.id);
      assert.ok(Math.abs(claims.exp! - claims.iat! - 43_200) <= 1, `QR token lives ${claims.exp! - claims.iat!} s`);

      await request(t.url, 'POST', '/en/app/auth/otp/request', { json: { phone: TEST_PHONE } });
      const verified = await request(t.url, 'POST', '/en/app/auth/otp/verify', { json: { phone: TEST_PHONE, code: '246810' } });
      const app = decodeJwt(verified.body.data.token);
      assert.equal(app.pid, undefined);
      assert.ok(Math.abs(app.exp! - app.iat! - 30 * 24 * 3600) <= 1, `app token lives ${app.exp! - app.iat!} s`);
      assert.equal(Date.parse(verified.body.data.expires_at) / 1000, app.exp);
    });

    it("may read the customer's profile but not change it (403); the app's own token may", async () => {
      const c = await createCustomer(t);
      const qr = await qrLogin(c);
      const put = (token: string, json: unknown) => request(t.url, 'PUT', '/en/shop/auth/profile', { headers: bearer(token), json });
      assert.equal((await put(c.token, { name: 'Ona', email: 'ona@example.com' })).status, 200);

      const refused = await put(qr, { name: 'Hijacked', email: 'thief@example.com' });
      assert.equal(refused.status, 403, refused.text);
      assert.equal(refused.body.code, 'INSUFFICIENT_PERMISSIONS');
      assert.equal(refused.body.success, false);
      assert.match(refused.body.message, /QR login/);

      const read = await customerMe(qr);
      assert.equal(read.status, 200);
      assert.equal(read.body.data.name, 'Ona');
      assert.equal(read.body.data.email, 'ona@example.com');

      const changed = await put(c.token, { name: 'Ona Onaitė' });
      assert.equal(changed.status, 200, changed.text);
      assert.equal(changed.body.data.name, 'Ona Onaitė');
    });
  });

  describe('Idempotency-Key across callers', () => {
    it("a QR token of partner A is never given partner B's stored coupon claim", async () => {
      const a = await createPartner(t, 'A');
      const b = await createPartner(t, 'B');
      const c = await createCustomer(t);
      await joinProgramme(t, c, await createProgramme(t, a.id));
      await joinProgramme(t, c, await createProgramme(t, b.id));
      const offerB = await createOffer(t, b, { max_claims_per_customer: 10 });
      const qrA = { ...c, token: (await t.app.context.tokens.sign({ kind: 'customer', subject: c.id, partnerId: a.id })).token };
      const qrB = { ...c, token: (await t.app.context.tokens.sign({ kind: 'customer', subject: c.id, partnerId: b.id })).token };
      const key = { 'idempotency-key': `claim-${Date.now()}-${process.pid}` };

      const stored = await claim(t, qrB, offerB.id, key);
      assert.equal(stored.status, 201, stored.text);

      // A's till sends the same key and the same request: its own request, which its scope refuses.
      const fromA = await claim(t, qrA, offerB.id, key);
      assert.equal(fromA.status, 404, fromA.text);
      assert.equal(fromA.body.code, 'RESOURCE_NOT_FOUND');
      assert.equal(fromA.headers.get('idempotent-replayed'), null);
      assert.equal(JSON.stringify(fromA.body).includes(stored.body.data.coupon.code), false);

      // The app's own token is another caller too: a claim of its own, not B's replay.
      const fromApp = await claim(t, c, offerB.id, key);
      assert.equal(fromApp.status, 201, fromApp.text);
      assert.equal(fromApp.headers.get('idempotent-replayed'), null);
      assert.notEqual(fromApp.body.data.coupon.id, stored.body.data.coupon.id);

      // B's till retrying still gets its own response back.
      const retry = await claim(t, qrB, offerB.id, key);
      assert.equal(retry.status, 201);
      assert.equal(retry.headers.get('idempotent-replayed'), 'true');
      assert.equal(retry.body.data.coupon.id, stored.body.data.coupon.id);
    });
  });
});
