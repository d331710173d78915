// QR login (DESIGN.md §5, reference/realtime.md §4). A till or web shop (API credentials)
// generates a session and shows its QR; the customer's app scans it (sees the device and
// shop), then confirms or rejects. Each change is one conditional UPDATE — a second confirm,
// or a confirm after the 5 minutes, is 409 INVALID_STATE — and is published as
// `status_update` on `qr-login.{session_id}` after it commits. The customer JWT it yields is
// scoped to the partner whose till asked; the poll hands it out once.
import type { Static } from 'typebox';
import QRCode from 'qrcode';
import type { Db } from '../../infra/db/index.js';
import type { TokenService } from '../../infra/tokens.js';
import { randomToken, sha256Hex } from '../../shared/crypto.js';
import { fail, missing, ok, type Result } from '../../shared/errors.js';
import type { MessageKey } from '../../shared/i18n.js';
import { iso, type Clock } from '../../shared/time.js';
import type { CustomersService, CustomerView } from '../customers/customers.service.js';
import type { LoyaltyCardsService } from '../loyalty-cards/loyalty-cards.service.js';
import type { PartnersService } from '../partners/partners.service.js';
import type { ShopsService } from '../shops/shops.service.js';
import { qrRepository as repo, type QrLoginRow } from './qr.repository.js';
import type { QrLoginStatus } from './qr.tables.js';
import type { PollData } from './qr.schemas.js';

export const QR_SESSION_TTL_MS = 5 * 60_000;

/** Publishes an event on a realtime channel (the built-in Pusher server, or an external one). */
export type PublishEvent = (channel: string, event: string, data: Record<string, unknown>) => Promise<void>;

export interface QrDeps {
  db: Db;
  clock: Clock;
  appLinkBase: string;
  publish: PublishEvent;
  shops: ShopsService;
  partners: PartnersService;
  log: { warn(obj: object, msg?: string): void };
}

export interface GeneratedSession {
  session_id: string;
  qr_code: string;
  qr_content: string;
  channel: string;
  expires_at: string;
}

/** The scan code is the last path segment of the QR's link; the app may send either. */
export function scanCodeOf(input: string): string {
  const trimmed = input.trim();
  return trimmed.slice(trimmed.lastIndexOf('/') + 1);
}

export async function qrImage(content: string): Promise<string> {
  return QRCode.toDataURL(content, { errorCorrectionLevel: 'M', margin: 2, width: 320 });
}

export function sessionNotFound(field: string) {
  return missing('resource.qr_session', field);
}

export function invalidState(status: string, key: MessageKey = 'qr.invalid_state') {
  return fail<never>('INVALID_STATE', { message: key, params: { status }, items: [{ field: 'code', code: 'INVALID_STATE', key, params: { status }, meta: { status } }] });
}

/** A session's status as a client sees it: a live status past its expiry is `expired`. */
export function effectiveStatus<S extends string>(row: { status: S; expiresAt: Date }, live: readonly S[], now: Date): S | 'expired' {
  return live.includes(row.status) && row.expiresAt.getTime() <= now.getTime() ? 'expired' : row.status;
}

/**
 * A new session of either kind: the shop (if given) must be the partner's; the session id and
 * the scan code are independent 128-bit random values; the QR shows only the scan code.
 */
export async function openSession(
  deps: QrDeps,
  kind: 'qr-login' | 'qr-card',
  partnerId: number,
  shopId: number | undefined,
  insert: (session: { id: string; scanCodeHash: string; createdAt: Date; expiresAt: Date }) => Promise<unknown>,
): Promise<Result<GeneratedSession>> {
  if (shopId !== undefined && !(await deps.shops.get(partnerId, shopId))) {
    return missing('resource.shop', 'shop_id');
  }
  const id = randomToken(16);
  const code = randomToken(16);
  const createdAt = deps.clock.now();
  const expiresAt = new Date(createdAt.getTime() + QR_SESSION_TTL_MS);
  await insert({ id, scanCodeHash: sha256Hex(code), createdAt, expiresAt });
  const content = `${deps.appLinkBase}/${kind}/${code}`;
  return ok({ session_id: id, qr_code: await qrImage(content), qr_content: content, channel: `${kind}.${id}`, expires_at: iso(expiresAt) });
}

export async function publishQuietly(deps: QrDeps, channel: string, data: Record<string, unknown>) {
  // The change is committed; a client that missed the event learns it from the poll. The
  // channel name holds the secret session id: only a digest of it reaches the log.
  await deps.publish(channel, 'status_update', data).catch((err: unknown) =>
    deps.log.warn({ err, channel_digest: sha256Hex(channel).slice(0, 16) }, 'realtime publish failed'),
  );
}

export type PollView = Static<typeof PollData>;

/** The signed-in customer as the till sees it: with their cards in the partner's programmes (tier included, DESIGN.md §13). */
export type TillUser = NonNullable<PollView['user']>;

export class QrLoginService {
  constructor(
    private readonly deps: QrDeps & {
      tokens: TokenService;
      customers: CustomersService;
      cards: LoyaltyCardsService;
    },
  ) {}

  generate(partnerId: number, input: { deviceName: string; shopId?: number }): Promise<Result<GeneratedSession>> {
    return openSession(this.deps, 'qr-login', partnerId, input.shopId, (session) =>
      repo.insertLogin(this.deps.db, { ...session, partnerId, shopId: input.shopId ?? null, deviceName: input.deviceName }),
    );
  }

  /** The till's view; the token comes with the first poll that sees `authenticated`. */
  async poll(partnerId: number, sessionId: string): Promise<PollView | undefined> {
    const { deps } = this;
    const row = sessionId.length <= 64 ? await repo.findLogin(deps.db, partnerId, sessionId) : undefined;
    if (!row) return undefined;
    const now = deps.clock.now();
    const status = effectiveStatus(row, ['pending', 'scanned'], now);
    const view: PollView = { session_id: row.id, status, device_name: row.deviceName, expires_at: iso(row.expiresAt) };
    if (status === 'authenticated' && row.customerId !== null) {
      view.user = await this.tillUser(row.customerId, partnerId);
      // Handed out once, and only while the till could still be waiting for it.
      const fresh = row.completedAt !== null && now.getTime() - row.completedAt.getTime() <= QR_SESSION_TTL_MS;
      if (fresh && (await repo.claimToken(deps.db, row.id, now))) view.token = await this.tokenFor(row);
    }
    return view;
  }

  async scan(customerId: number, codeInput: string) {
    const row = await this.move(customerId, codeInput, ['pending', 'scanned'], 'scanned', { scannedAt: this.deps.clock.now() });
    if (!row.ok) return row;
    await publishQuietly(this.deps, `qr-login.${row.value.id}`, { status: 'scanned', seq: row.value.seq });
    return ok(await this.appView(row.value));
  }

  async confirm(customerId: number, codeInput: string): Promise<Result<{ status: 'authenticated'; user: CustomerView }>> {
    const { deps } = this;
    const now = deps.clock.now();
    const result = await deps.db.transaction(async (tx) => {
      const row = await repo.transitionLogin(tx, sha256Hex(scanCodeOf(codeInput)), customerId, ['pending', 'scanned'], 'authenticated', now, {
        completedAt: now,
      });
      if (!row) return undefined;
      // Meeting the partner assigns its auto-assign programmes (with their welcome bonus).
      await deps.cards.ensureMembership(tx, customerId, row.partnerId);
      return row;
    });
    if (!result) return this.refusal(customerId, codeInput);
    // The till's event carries the customer's cards with the partner; the app's answer, the customer.
    const { cards, ...user } = await this.tillUser(customerId, result.partnerId);
    await publishQuietly(deps, `qr-login.${result.id}`, { status: 'authenticated', seq: result.seq, user: { ...user, cards }, token: await this.tokenFor(result) });
    return ok({ status: 'authenticated', user });
  }

  async reject(customerId: number, codeInput: string): Promise<Result<{ status: 'rejected' }>> {
    const row = await this.move(customerId, codeInput, ['pending', 'scanned'], 'rejected', { completedAt: this.deps.clock.now() });
    if (!row.ok) return row;
    await publishQuietly(this.deps, `qr-login.${row.value.id}`, { status: 'rejected', seq: row.value.seq });
    return ok({ status: 'rejected' });
  }

  /** The expiry job: live sessions past their 5 minutes become `expired` (and say so on their channel). */
  async expireDue(limit: number): Promise<number> {
    const rows = await repo.expireLogins(this.deps.db, this.deps.clock.now(), limit);
    for (const row of rows) await publishQuietly(this.deps, `qr-login.${row.id}`, { status: 'expired', seq: row.seq });
    return rows.length;
  }

  private async tillUser(customerId: number, partnerId: number): Promise<TillUser> {
    const [user, cards] = await Promise.all([this.deps.customers.get(customerId), this.deps.cards.ofCustomers(partnerId, [customerId])]);
    return { ...user!, cards: cards.get(customerId) ?? [] };
  }

  private async tokenFor(row: QrLoginRow): Promise<string> {
    const { token } = await this.deps.tokens.sign({ kind: 'customer', subject: row.customerId!, partnerId: row.partnerId });
    return token;
  }

  private async move(
    customerId: number,
    codeInput: string,
    from: QrLoginStatus[],
    to: QrLoginStatus,
    set: Partial<QrLoginRow>,
  ): Promise<Result<QrLoginRow>> {
    const row = await repo.transitionLogin(this.deps.db, sha256Hex(scanCodeOf(codeInput)), customerId, from, to, this.deps.clock.now(), set);
    return row ? ok(row) : this.refusal(customerId, codeInput);
  }

  /** Why a transition did not happen: no such code (404), or its state (409). */
  private async refusal(customerId: number, codeInput: string): Promise<Result<never>> {
    const row = await repo.findLoginByCode(this.deps.db, sha256Hex(scanCodeOf(codeInput)));
    if (!row) return sessionNotFound('code');
    const status = effectiveStatus(row, ['pending', 'scanned'], this.deps.clock.now());
    if (status === 'scanned' && row.customerId !== customerId) return invalidState(status, 'qr.scanned_by_other');
    return invalidState(status);
  }

  /** What the app shows before the customer confirms: who is asking. */
  private async appView(row: QrLoginRow) {
    const [partner, shop] = await Promise.all([
      this.deps.partners.get(row.partnerId),
      row.shopId === null ? undefined : this.deps.shops.get(row.partnerId, row.shopId),
    ]);
    return {
      status: row.status,
      device_name: row.deviceName,
      partner: { id: row.partnerId, name: partner?.name ?? '' },
      shop: shop ? { id: shop.id, name: shop.name, address: shop.address, city: shop.city } : null,
      expires_at: iso(row.expiresAt),
    };
  }
}
