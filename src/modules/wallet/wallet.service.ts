// Wallet passes (DESIGN.md §15): the partner's Apple and Google configuration, the passes and
// save links of cards and coupons, Apple's PassKit web service, and the background updates
// (APNs pushes, Google object patches) after a card changed. Expected failures are values.
import { readFileSync } from 'node:fs';
import { createPrivateKey, timingSafeEqual } from 'node:crypto';
import type { Db } from '../../infra/db/index.js';
import { randomToken, sha256, sha256Hex } from '../../shared/crypto.js';
import { AppError, fail, failOn, missing, ok, type Result } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import { iso, type Clock } from '../../shared/time.js';
import type { CouponScope } from '../coupons/coupons.repository.js';
import type { CouponsService } from '../coupons/coupons.service.js';
import type { CardOwner } from '../loyalty-cards/loyalty-cards.repository.js';
import type { LoyaltyCardsService } from '../loyalty-cards/loyalty-cards.service.js';
import { ApnsConnection } from './apns.js';
import { couponSerial, type AppleSigning, type Locale } from './apple-pass.js';
import { googleObjectId, loyaltyObject, patchLoyaltyObject } from './google-pass.js';
import type { SecretBox } from './secret-box.js';
import { certificateSummary, keyProblem, type AppleInput, type CredentialProblem, type ServiceAccount } from './wallet-credentials.js';
import { WalletBusy, WalletWorkerError, WalletWorkers, type WalletTask } from './wallet-worker.js';
import { walletRepository as repo, type PassFacts, type WalletConfigRow } from './wallet.repository.js';

export interface WalletDeps {
  db: Db;
  clock: Clock;
  secrets: () => Promise<SecretBox | undefined>;
  cards: LoyaltyCardsService;
  coupons: CouponsService;
  /** PUBLIC_BASE_URL, else undefined (then http://localhost:{the port listened on}). */
  publicBaseUrl: string | undefined;
  apnsUrl: string;
  apnsCaFile: string | undefined;
  googleWalletApiUrl: string | undefined;
  log: Logger;
  /** Per-request timeout of APNs and Google calls. */
  timeoutMs?: number;
  /** The crypto worker pool (tests pass their own). */
  workers?: WalletWorkers;
}

const secretsKeyMissing = () => failOn('INVALID_STATE', 'wallet', 'wallet.secrets_key_missing', { meta: { reason: 'secrets_key_missing' } });
const notConfigured = (wallet: 'Apple Wallet' | 'Google Wallet') =>
  failOn('INVALID_STATE', 'wallet', 'wallet.not_configured', { params: { wallet }, meta: { reason: 'wallet_not_configured' } });
const invalid = (field: string, key: Parameters<typeof failOn>[2], params?: Record<string, string | number>) =>
  fail<never>('VALIDATION', { fields: { [field]: [{ key, ...(params ? { params } : {}) }] } });

const aad = (partnerId: number, what: 'apple_key' | 'google_service_account') => `wallet:${partnerId}:${what}`;

/** Retry after a failed push: 10 s, 20 s, 40 s … up to an hour. */
const backoffSeconds = (attempts: number) => Math.min(3600, 10 * 2 ** Math.min(attempts, 9));

export type PassResponse = { status: 401 } | { status: 304; lastModified: string } | { status: 200; lastModified: string; body: Buffer };

/** The pool's queue is full: 429, try again in a moment (the queue does not grow without bound). */
const busy = () => new AppError('RATE_LIMIT_EXCEEDED', { message: 'wallet.busy', headers: { 'retry-after': '1' } });

export class WalletService {
  private readonly extraCa: string | undefined;
  /** Credential checks and pass signing, off the request thread (wallet-worker.ts). */
  readonly workers: WalletWorkers;

  constructor(private readonly deps: WalletDeps) {
    // Read at start: a wrong APNS_CA_FILE path fails the boot, not every push.
    this.extraCa = deps.apnsCaFile ? readFileSync(deps.apnsCaFile, 'utf8') : undefined;
    this.workers = deps.workers ?? new WalletWorkers();
  }

  /** Ends the worker threads (the app's onClose). */
  close(): Promise<void> {
    return this.workers.close();
  }

  /** A task in the worker pool; a full queue is 429. */
  private async offThread<K extends WalletTask['op']>(task: Extract<WalletTask, { op: K }>) {
    try {
      return await this.workers.run<K>(task);
    } catch (err) {
      if (err instanceof WalletBusy) throw busy();
      throw err;
    }
  }

  /**
   * An upload checked in the worker. A thread that died or timed out on it (its heap limit,
   * which the caps should keep it within) refuses the upload on the field rather than 500.
   */
  private async checkOffThread<K extends 'checkApple' | 'checkGoogle'>(task: Extract<WalletTask, { op: K }>, field: string) {
    try {
      return await this.offThread<K>(task);
    } catch (err) {
      if (err instanceof WalletWorkerError) {
        this.deps.log.warn({ err: err.message, field }, 'wallet upload check failed in its worker; refused');
        const problem: CredentialProblem = { field, key: field === 'certificate' ? 'wallet.certificate_invalid' : 'wallet.service_account_json' };
        return { ok: false as const, problem };
      }
      throw err;
    }
  }

  private get db() {
    return this.deps.db;
  }

  /** The port the HTTP server listens on (set by app.ts), for webServiceURL without PUBLIC_BASE_URL. */
  listeningPort: () => number | undefined = () => undefined;

  private webServiceURL(): string {
    return `${this.deps.publicBaseUrl ?? `http://localhost:${this.listeningPort() ?? 3000}`}/wallet`;
  }

  // ---- configuration ----

  async configView(partnerId: number) {
    return viewOf(await repo.config(this.db, partnerId));
  }

  async saveApple(partnerId: number, input: AppleInput): Promise<Result<ReturnType<typeof viewOf>>> {
    const checked = await this.checkOffThread<'checkApple'>({ op: 'checkApple', input, nowMs: this.deps.clock.now().getTime() }, 'certificate');
    if (!checked.ok) return invalid(checked.problem.field, checked.problem.key, checked.problem.params);
    const box = await this.deps.secrets();
    if (!box) return secretsKeyMissing();
    await repo.saveConfig(this.db, partnerId, {
      applePassTypeIdentifier: input.pass_type_identifier,
      appleTeamIdentifier: input.team_identifier,
      appleCertificate: checked.value.certificatePem,
      appleWwdrCertificate: checked.value.wwdrPem,
      appleKeySealed: box.seal(checked.value.keyPem, aad(partnerId, 'apple_key')),
      appleUpdatedAt: this.deps.clock.now(),
    });
    return ok(await this.configView(partnerId));
  }

  async saveGoogle(partnerId: number, input: { issuer_id: string; service_account: unknown }): Promise<Result<ReturnType<typeof viewOf>>> {
    const checked = await this.checkOffThread<'checkGoogle'>({ op: 'checkGoogle', value: input.service_account }, 'service_account');
    if (!checked.ok) return invalid(checked.problem.field, checked.problem.key, checked.problem.params);
    const box = await this.deps.secrets();
    if (!box) return secretsKeyMissing();
    await repo.saveConfig(this.db, partnerId, {
      googleIssuerId: input.issuer_id,
      googleClientEmail: checked.value.client_email,
      googleServiceAccountSealed: box.seal(JSON.stringify(checked.value), aad(partnerId, 'google_service_account')),
      googleUpdatedAt: this.deps.clock.now(),
    });
    return ok(await this.configView(partnerId));
  }

  private async appleSigning(partnerId: number): Promise<Result<AppleSigning>> {
    const row = await repo.config(this.db, partnerId);
    if (!row?.appleKeySealed || !row.appleCertificate || !row.appleWwdrCertificate || !row.applePassTypeIdentifier || !row.appleTeamIdentifier) {
      return notConfigured('Apple Wallet');
    }
    const box = await this.deps.secrets();
    if (!box) return secretsKeyMissing();
    const keyPem = box.open(row.appleKeySealed, aad(partnerId, 'apple_key'));
    // Sealed with another key (LOYALTY_SECRETS_KEY changed): as good as not configured. So is a
    // key stored before the caps that is past them (an 8,192-bit key took 4–5 s a pass): upload again.
    if (keyPem === undefined || keyProblem(createPrivateKey(keyPem), 'private_key')) return notConfigured('Apple Wallet');
    return ok({
      passTypeIdentifier: row.applePassTypeIdentifier,
      teamIdentifier: row.appleTeamIdentifier,
      certificatePem: row.appleCertificate,
      keyPem,
      wwdrPem: row.appleWwdrCertificate,
    });
  }

  private async googleAccount(partnerId: number): Promise<Result<{ account: ServiceAccount; issuerId: string }>> {
    const row = await repo.config(this.db, partnerId);
    if (!row?.googleServiceAccountSealed || !row.googleIssuerId) return notConfigured('Google Wallet');
    const box = await this.deps.secrets();
    if (!box) return secretsKeyMissing();
    const json = box.open(row.googleServiceAccountSealed, aad(partnerId, 'google_service_account'));
    if (json === undefined) return notConfigured('Google Wallet');
    return ok({ account: JSON.parse(json) as ServiceAccount, issuerId: row.googleIssuerId });
  }

  // ---- passes and save links ----

  private async cardWithFacts(owner: CardOwner, cardId: number) {
    const card = await this.deps.cards.get(owner, { cardId });
    if (!card) return undefined;
    const facts = await repo.facts(this.db, 'card', card.partner_id, card.id);
    return facts && { card, facts };
  }

  private async couponWithFacts(scope: CouponScope, couponId: number) {
    const coupon = await this.deps.coupons.get(scope, couponId);
    if (!coupon) return undefined;
    const facts = await repo.facts(this.db, 'coupon', coupon.partner_id, coupon.id);
    return facts && { coupon, facts };
  }

  /**
   * The token of the card's or coupon's current pass in this pass type and language: the same
   * one on every download (a device holding an earlier download keeps working, and downloads
   * add no rows); made once, kept as its SHA-256 and sealed with the secrets key.
   */
  private async passToken(signing: AppleSigning, facts: PassFacts, kind: 'card' | 'coupon', subjectId: number, serialNumber: string, locale: Locale): Promise<Result<string>> {
    const box = await this.deps.secrets();
    if (!box) return secretsKeyMissing();
    const where = `wallet-pass:${kind}:${subjectId}:${signing.passTypeIdentifier}:${locale}`;
    for (let attempt = 0; attempt < 3; attempt++) {
      const current = await repo.currentPass(this.db, kind, subjectId, signing.passTypeIdentifier, locale);
      if (current) {
        const token = box.open(current.tokenSealed!, where);
        if (token !== undefined && sha256Hex(token) === current.tokenHash && current.serialNumber === serialNumber) return ok(token);
        await repo.retirePass(this.db, current.id);
      }
      const token = randomToken(24);
      const made = await repo.insertCurrentPass(this.db, {
        partnerId: facts.partnerId,
        kind,
        subjectId,
        passTypeIdentifier: signing.passTypeIdentifier,
        serialNumber,
        tokenHash: sha256Hex(token),
        tokenSealed: box.seal(token, where),
        locale,
      });
      if (made) return ok(token);
      // Another download made it at the same moment: hand out that one.
    }
    throw new Error('no current wallet pass after three attempts');
  }

  async cardApplePass(owner: CardOwner, cardId: number, locale: Locale): Promise<Result<Buffer>> {
    const found = await this.cardWithFacts(owner, cardId);
    if (!found) return missing('resource.loyalty_card');
    const signing = await this.appleSigning(found.card.partner_id);
    if (!signing.ok) return signing;
    const issued = await this.passToken(signing.value, found.facts, 'card', found.card.id, found.card.card_number, locale);
    if (!issued.ok) return issued;
    const token = issued.value;
    return ok(await this.offThread<'cardPass'>({ op: 'cardPass', signing: signing.value, card: found.card, facts: found.facts, opts: { locale, token, webServiceURL: this.webServiceURL() } }));
  }

  async couponApplePass(scope: CouponScope, couponId: number, locale: Locale): Promise<Result<Buffer>> {
    const found = await this.couponWithFacts(scope, couponId);
    if (!found) return missing('resource.coupon');
    const signing = await this.appleSigning(found.coupon.partner_id);
    if (!signing.ok) return signing;
    const issued = await this.passToken(signing.value, found.facts, 'coupon', found.coupon.id, couponSerial(found.coupon.id), locale);
    if (!issued.ok) return issued;
    const token = issued.value;
    return ok(
      await this.offThread<'couponPass'>({ op: 'couponPass', signing: signing.value, coupon: found.coupon, facts: found.facts, opts: { locale, token, webServiceURL: this.webServiceURL() } }),
    );
  }

  async cardGoogleLink(owner: CardOwner, cardId: number, locale: Locale): Promise<Result<{ save_url: string }>> {
    const found = await this.cardWithFacts(owner, cardId);
    if (!found) return missing('resource.loyalty_card');
    const google = await this.googleAccount(found.card.partner_id);
    if (!google.ok) return google;
    const { account, issuerId } = google.value;
    await repo.rememberGoogleObject(this.db, {
      partnerId: found.facts.partnerId,
      kind: 'card',
      subjectId: found.card.id,
      objectId: googleObjectId(issuerId, found.card.id),
      locale,
      modifiedMicros: found.facts.modified,
    });
    return ok({ save_url: await this.offThread<'cardSaveUrl'>({ op: 'cardSaveUrl', account, issuerId, card: found.card, facts: found.facts, locale }) });
  }

  async couponGoogleLink(scope: CouponScope, couponId: number, locale: Locale): Promise<Result<{ save_url: string }>> {
    const found = await this.couponWithFacts(scope, couponId);
    if (!found) return missing('resource.coupon');
    const google = await this.googleAccount(found.coupon.partner_id);
    if (!google.ok) return google;
    const { account, issuerId } = google.value;
    return ok({ save_url: await this.offThread<'couponSaveUrl'>({ op: 'couponSaveUrl', account, issuerId, coupon: found.coupon, facts: found.facts, locale }) });
  }

  // ---- Apple's PassKit web service ----

  /**
   * The pass whose token the device presents (`Authorization: ApplePass <token>`): found by the
   * token's SHA-256 (an index lookup, so however many passes a serial has — rows from before
   * bounded storage were one per download — every token is found), then compared in constant time.
   */
  private async authenticate(passTypeIdentifier: string, serialNumber: string, authorization: string | undefined) {
    const token = /^ApplePass (\S{16,})$/.exec(authorization ?? '')?.[1];
    if (token === undefined) return undefined;
    const presented = sha256(token);
    const row = await repo.passByToken(this.db, passTypeIdentifier, serialNumber, presented.toString('hex'));
    if (!row || !timingSafeEqual(Buffer.from(row.tokenHash, 'hex'), presented)) return undefined;
    return { pass: row, token };
  }

  async register(
    device: string,
    passTypeIdentifier: string,
    serialNumber: string,
    authorization: string | undefined,
    pushToken: string,
  ): Promise<'created' | 'updated' | 'unauthorized'> {
    const auth = await this.authenticate(passTypeIdentifier, serialNumber, authorization);
    if (!auth) return 'unauthorized';
    const facts = await repo.facts(this.db, auth.pass.kind, auth.pass.partnerId, auth.pass.subjectId);
    if (!facts) return 'unauthorized';
    return repo.register(this.db, { passId: auth.pass.id, device, passTypeIdentifier, serialNumber, pushToken, modifiedMicros: facts.modified });
  }

  async unregister(device: string, passTypeIdentifier: string, serialNumber: string, authorization: string | undefined): Promise<boolean> {
    const auth = await this.authenticate(passTypeIdentifier, serialNumber, authorization);
    if (!auth) return false;
    await repo.unregister(this.db, device, passTypeIdentifier, serialNumber);
    return true;
  }

  /** The serial numbers changed after the tag (µs since the epoch); undefined = none (204). */
  async updatedSerials(device: string, passTypeIdentifier: string, since: string | undefined) {
    const passes = await repo.devicePasses(this.db, device, passTypeIdentifier);
    const after = since !== undefined && /^\d{1,20}$/.test(since) ? BigInt(since) : undefined;
    const changed = passes.filter((p) => after === undefined || BigInt(p.modified) > after);
    if (changed.length === 0) return undefined;
    const lastUpdated = changed.reduce((max, p) => (BigInt(p.modified) > BigInt(max) ? p.modified : max), changed[0]!.modified);
    return { serialNumbers: changed.map((p) => p.serialNumber), lastUpdated };
  }

  async latestPass(passTypeIdentifier: string, serialNumber: string, authorization: string | undefined, ifModifiedSince: string | undefined): Promise<PassResponse> {
    const auth = await this.authenticate(passTypeIdentifier, serialNumber, authorization);
    if (!auth) return { status: 401 };
    const { pass, token } = auth;
    const signing = await this.appleSigning(pass.partnerId);
    if (!signing.ok) return { status: 401 };
    const locale = pass.locale;
    const built =
      pass.kind === 'card'
        ? await this.cardWithFacts({ partnerId: pass.partnerId }, pass.subjectId).then(
            (f) =>
              f && {
                facts: f.facts,
                body: () => this.offThread<'cardPass'>({ op: 'cardPass', signing: signing.value, card: f.card, facts: f.facts, opts: { locale, token, webServiceURL: this.webServiceURL() } }),
              },
          )
        : await this.couponWithFacts({ partnerId: pass.partnerId }, pass.subjectId).then(
            (f) =>
              f && {
                facts: f.facts,
                body: () => this.offThread<'couponPass'>({ op: 'couponPass', signing: signing.value, coupon: f.coupon, facts: f.facts, opts: { locale, token, webServiceURL: this.webServiceURL() } }),
              },
          );
    if (!built) return { status: 401 };
    // HTTP dates have whole seconds: a change within the second of If-Modified-Since still counts.
    const modifiedMs = Number(BigInt(built.facts.modified) / 1000n);
    const lastModified = new Date(modifiedMs).toUTCString();
    const since = ifModifiedSince === undefined ? NaN : Date.parse(ifModifiedSince);
    if (!Number.isNaN(since) && Math.floor(modifiedMs / 1000) <= Math.floor(since / 1000)) return { status: 304, lastModified };
    return { status: 200, lastModified, body: await built.body() };
  }

  // ---- updates ----

  /** One batch of APNs pushes for cards that changed; returns how many registrations it handled. */
  async pushUpdates(limit: number): Promise<number> {
    // The lease outlasts a batch whose every push times out (50 × 10 s), so no other node takes it meanwhile.
    const due = await repo.claimDuePushes(this.db, limit, 600);
    const byPartner = new Map<number, typeof due>();
    for (const d of due) byPartner.set(d.partnerId, [...(byPartner.get(d.partnerId) ?? []), d]);
    for (const [partnerId, items] of byPartner) {
      const signing = await this.appleSigning(partnerId);
      if (!signing.ok) {
        for (const d of items) await repo.pushFailed(this.db, d.id, 'wallet not configured', 3600);
        continue;
      }
      const apns = new ApnsConnection(this.deps.apnsUrl, { cert: signing.value.certificatePem, key: signing.value.keyPem, extraCa: this.extraCa }, this.deps.timeoutMs ?? 10_000);
      try {
        for (const d of items) {
          const result = await apns.push(d.pushToken, d.passTypeIdentifier);
          if (result.status === 200) await repo.pushed(this.db, d.id, d.modified);
          // The device no longer takes pushes for this token: it registers again when it needs to.
          else if (result.status === 410 || (result.status === 400 && result.reason === 'BadDeviceToken')) await repo.dropRegistration(this.db, d.id);
          else {
            this.deps.log.warn({ status: result.status, reason: result.reason, partner_id: partnerId }, 'wallet pass push failed; retrying');
            await repo.pushFailed(this.db, d.id, `${result.status} ${result.reason ?? ''}`.trim(), backoffSeconds(d.attempts));
          }
        }
      } finally {
        apns.close();
      }
    }
    return due.length;
  }

  /** One batch of Google Wallet object patches (when GOOGLE_WALLET_API_URL is set). */
  async patchGoogleObjects(limit: number): Promise<number> {
    const apiUrl = this.deps.googleWalletApiUrl;
    if (apiUrl === undefined) return 0;
    const due = await repo.claimDueGoogle(this.db, limit, 600);
    for (const d of due) {
      const google = await this.googleAccount(d.partnerId);
      const found = google.ok ? await this.cardWithFacts({ partnerId: d.partnerId }, d.cardId) : undefined;
      if (!google.ok || !found) {
        await repo.googleFailed(this.db, d.id, 'not configured', 3600);
        continue;
      }
      try {
        const status = await patchLoyaltyObject(apiUrl, google.value.account, loyaltyObject(google.value.issuerId, found.card, found.facts, d.locale), this.deps.timeoutMs ?? 10_000);
        // 404: the save link was never used, so there is no object to keep up to date.
        if ((status >= 200 && status < 300) || status === 404) await repo.googlePushed(this.db, d.id, d.modified);
        else await repo.googleFailed(this.db, d.id, `HTTP ${status}`, backoffSeconds(d.attempts));
      } catch (err) {
        await repo.googleFailed(this.db, d.id, (err as Error).message, backoffSeconds(d.attempts));
      }
    }
    return due.length;
  }
}

function viewOf(row: WalletConfigRow | undefined) {
  const apple =
    row?.appleCertificate && row.appleWwdrCertificate && row.applePassTypeIdentifier && row.appleTeamIdentifier
      ? {
          pass_type_identifier: row.applePassTypeIdentifier,
          team_identifier: row.appleTeamIdentifier,
          certificate: certificateSummary(row.appleCertificate),
          wwdr_certificate: certificateSummary(row.appleWwdrCertificate),
          updated_at: iso(row.appleUpdatedAt)!,
        }
      : null;
  const google =
    row?.googleIssuerId && row.googleClientEmail
      ? { issuer_id: row.googleIssuerId, client_email: row.googleClientEmail, updated_at: iso(row.googleUpdatedAt)! }
      : null;
  return { apple, google };
}
