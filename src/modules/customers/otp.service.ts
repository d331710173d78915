// Mobile-app sign-in by a one-time code sent by SMS (DESIGN.md §5).
//
// - A code is 6 digits from the CSPRNG, kept only as an HMAC under a server key (a bare
//   hash of a 6-digit code is reversed by trying all 10^6), valid 10 minutes.
// - 5 wrong attempts kill it; the attempt counter is committed even when the answer is
//   "wrong code", so parallel guesses cannot run past the limit (the row is locked).
// - A new code for the same number at most once a minute and 5 times an hour.
// - Numbers in APP_TEST_PHONES get their fixed code and no SMS, like the test numbers of
//   well-known auth services; every other rule applies to them too.
import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import type { Db } from '../../infra/db/index.js';
import type { IssuedToken, TokenService } from '../../infra/tokens.js';
import { fail, ok, type Result } from '../../shared/errors.js';
import { t, type Locale } from '../../shared/i18n.js';
import { normalisePhone } from '../../shared/phone.js';
import { iso, type Clock } from '../../shared/time.js';
import type { SmsService } from '../sms/sms.service.js';
import { customersRepository as repo } from './customers.repository.js';
import type { CustomerView, CustomersService } from './customers.service.js';

export const OTP_TTL_MS = 10 * 60_000;
export const OTP_MAX_ATTEMPTS = 5;
export const OTP_RESEND_AFTER_MS = 60_000;
export const OTP_SENDS_PER_HOUR = 5;
const HOUR_MS = 3600_000;

export interface OtpRequested {
  phone: string;
  expires_at: string;
  resend_after: number;
}

export interface OtpVerified {
  token: string;
  expires_at: string;
  user: CustomerView;
}

const invalidPhone = () => fail('VALIDATION', { fields: { phone: [{ key: 'sms.invalid_phone' }] } });

const retryAfter = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

export class OtpService {
  constructor(
    private readonly deps: {
      db: Db;
      sms: SmsService;
      customers: CustomersService;
      tokens: TokenService;
      clock: Clock;
      /** HMAC key for stored codes (a system setting shared by every node). */
      hashKey: string;
      testPhones: Record<string, string>;
    },
  ) {}

  /** Sign-out of the app (or of a till holding a QR-login token): that token is refused from now on. */
  signOut(token: IssuedToken): Promise<void> {
    return this.deps.tokens.revoke(token);
  }

  private digest(phone: string, code: string): Buffer {
    return createHmac('sha256', this.deps.hashKey).update(`${phone}:${code}`).digest();
  }

  async request(phoneInput: string, locale: Locale): Promise<Result<OtpRequested>> {
    const phone = normalisePhone(phoneInput);
    if (!phone) return invalidPhone();
    const { db, clock, testPhones, sms } = this.deps;
    const fixed = testPhones[phone.e164];
    const result = await db.transaction(async (tx): Promise<Result<OtpRequested>> => {
      const now = clock.now();
      const code = fixed ?? String(randomInt(0, 1_000_000)).padStart(6, '0');
      const fresh = {
        codeHash: this.digest(phone.e164, code).toString('hex'),
        expiresAt: new Date(now.getTime() + OTP_TTL_MS),
        attempts: 0,
        sentAt: now,
        consumedAt: null,
      };
      const current = await repo.lockChallenge(tx, phone.e164);
      if (!current) {
        const inserted = await repo.insertChallenge(tx, { phone: phone.e164, ...fresh, windowStartedAt: now, sendsInWindow: 1 });
        // A concurrent first request for the same number won: this one is a too-quick resend
        // (for a test phone, the winner already holds the same fixed code).
        if (!inserted && fixed === undefined) return this.throttled(OTP_RESEND_AFTER_MS);
      } else if (fixed !== undefined) {
        // Test phones get no SMS, so nothing to throttle: integrators' suites sign the same
        // test customer in from many tests. Wrong codes still count per challenge.
        await repo.updateChallenge(tx, phone.e164, fresh);
      } else {
        const sinceSent = now.getTime() - current.sentAt.getTime();
        if (sinceSent < OTP_RESEND_AFTER_MS) return this.throttled(OTP_RESEND_AFTER_MS - sinceSent);
        const windowOpen = now.getTime() - current.windowStartedAt.getTime() < HOUR_MS;
        if (windowOpen && current.sendsInWindow >= OTP_SENDS_PER_HOUR) {
          return this.throttled(current.windowStartedAt.getTime() + HOUR_MS - now.getTime());
        }
        await repo.updateChallenge(tx, phone.e164, {
          ...fresh,
          windowStartedAt: windowOpen ? current.windowStartedAt : now,
          sendsInWindow: windowOpen ? current.sendsInWindow + 1 : 1,
        });
      }
      if (fixed === undefined) await sms.sendSystem(tx, phone, t(locale, 'otp.sms_text', { code, minutes: OTP_TTL_MS / 60_000 }));
      return ok({ phone: phone.e164, expires_at: iso(fresh.expiresAt), resend_after: OTP_RESEND_AFTER_MS / 1000 });
    });
    if (result.ok && fixed === undefined) sms.queuedCommitted();
    return result;
  }

  private throttled(waitMs: number): Result<never> {
    const seconds = retryAfter(waitMs);
    return fail('RATE_LIMIT_EXCEEDED', { message: 'otp.resend_too_soon', params: { seconds }, headers: { 'retry-after': String(seconds) } });
  }

  /**
   * Check a code. Failures are returned (not thrown) from inside the transaction so that the
   * attempt they used is committed.
   */
  async verify(phoneInput: string, code: string): Promise<Result<OtpVerified>> {
    const phone = normalisePhone(phoneInput);
    if (!phone) return invalidPhone();
    const { db, clock, customers, tokens } = this.deps;
    const outcome = await db.transaction(async (tx): Promise<Result<CustomerView>> => {
      const now = clock.now();
      const challenge = await repo.lockChallenge(tx, phone.e164);
      if (!challenge || challenge.consumedAt !== null) return this.refused('otp.no_code');
      if (challenge.expiresAt.getTime() <= now.getTime()) return this.refused('otp.expired');
      if (challenge.attempts >= OTP_MAX_ATTEMPTS) {
        // Retry-After: when a new code may be requested.
        const wait = retryAfter(challenge.sentAt.getTime() + OTP_RESEND_AFTER_MS - now.getTime());
        return fail('RATE_LIMIT_EXCEEDED', {
          message: 'otp.too_many_attempts',
          headers: { 'retry-after': String(wait) },
          items: [{ field: 'code', code: 'RATE_LIMIT_EXCEEDED', key: 'otp.too_many_attempts' }],
        });
      }
      const expected = Buffer.from(challenge.codeHash, 'hex');
      const given = this.digest(phone.e164, code);
      if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
        const attempts = challenge.attempts + 1;
        await repo.updateChallenge(tx, phone.e164, { attempts });
        const left = OTP_MAX_ATTEMPTS - attempts;
        return fail('INVALID_CREDENTIALS', {
          message: 'otp.wrong_code',
          params: { left },
          items: [{ field: 'code', code: 'INVALID_CREDENTIALS', key: 'otp.wrong_code', params: { left }, meta: { attempts_left: left } }],
        });
      }
      await repo.updateChallenge(tx, phone.e164, { consumedAt: now, attempts: challenge.attempts + 1 });
      return ok(await customers.findOrCreateByPhone(tx, phone.e164));
    });
    if (!outcome.ok) return outcome;
    // The app's own token is not partner-scoped: the app shows the customer everything.
    const { token, expiresAt } = await tokens.sign({ kind: 'customer', subject: outcome.value.id });
    return ok({ token, expires_at: iso(expiresAt), user: outcome.value });
  }

  private refused(key: 'otp.no_code' | 'otp.expired'): Result<never> {
    return fail('INVALID_CREDENTIALS', { message: key, items: [{ field: 'code', code: 'INVALID_CREDENTIALS', key }] });
  }
}
