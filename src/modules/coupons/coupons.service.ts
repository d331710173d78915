// Coupons (DESIGN.md §6, §8): issuing (in the caller's transaction: an offer claim or a game
// prize), the till's verify / redeem / release / rollback, and the lists. States:
//
//   active ──verify──► pending (one shop, 10 min; lapses back to active) ──redeem──► used
//     ▲  └──────────────────────────redeem────────────────────────────────────────┘  │
//     └───────────── release (pending) · rollback (used, same shop, within 24 h) ◄───┘
//   active | pending ──expires_at passes──► expired
//
// Expired and lapsed reservations are derived from the clock at read time (coupons.tables.ts).
// Expected refusals come back as values; a caller inside a transaction must roll it back.
import type { Static } from 'typebox';
import { sql } from 'drizzle-orm';
import type { Db, Executor } from '../../infra/db/index.js';
import { csvField } from '../../shared/csv.js';
import { failOn, missing, ok, type Result } from '../../shared/errors.js';
import { amountToJson } from '../../shared/money.js';
import type { PageWindow } from '../../shared/pagination.js';
import { iso, type Clock } from '../../shared/time.js';
import { displayRates } from '../points/points-rules.js';
import type { TiersService } from '../tiers/tiers.service.js';
import { couponQrContent, displayCode, newCouponCode } from './coupon-code.js';
import { couponsRepository as repo, type CouponFilter, type CouponRow, type CouponScope, type CouponWithHolder, type Holder, type Transition } from './coupons.repository.js';
import type { CouponGame, CouponStatus, CouponTerms } from './coupons.tables.js';
import type { PartnerEventSink } from '../webhooks/webhooks.events.js';
import type { Coupon, CouponEvent, CouponGame as CouponGameSchema, CouponOffer, Verification } from './coupons.schemas.js';

/** A reservation lasts this long (DESIGN.md §8). */
export const RESERVATION_MS = 10 * 60_000;
/** A redemption can be rolled back (a cancelled sale) this long after it. */
export const ROLLBACK_WINDOW_MS = 24 * 3600_000;
const DAY_MS = 86_400_000;

export type CouponOfferView = Static<typeof CouponOffer>;

export type CouponGameView = Static<typeof CouponGameSchema>;

/** The spec's coupon list item plus DESIGN.md §8's fields. */
export type CouponView = Static<typeof Coupon>;

/** The spec's verification result. */
export type VerificationView = Static<typeof Verification>;

export type CouponEventView = Static<typeof CouponEvent>;

export type IssueSource =
  | { kind: 'offer'; offerId: number; terms: CouponTerms; shopIds: number[]; productIds: number[]; categoryIds: number[] }
  | { kind: 'game'; gameId: number; game: CouponGame };

export interface IssueInput {
  partnerId: number;
  customerId: number;
  cardId: number;
  source: IssueSource;
  /** null = never expires. */
  validityDays: number | null;
}

/** The state a client sees: a reservation past pending_until has lapsed, a live coupon past expires_at has expired. */
export function effectiveStatus(row: Pick<CouponRow, 'status' | 'expiresAt' | 'pendingUntil'>, now: Date): CouponStatus {
  const t = now.getTime();
  if ((row.status === 'active' || row.status === 'pending') && row.expiresAt !== null && row.expiresAt.getTime() <= t) return 'expired';
  if (row.status === 'pending' && (row.pendingUntil === null || row.pendingUntil.getTime() <= t)) return 'active';
  return row.status;
}


const couponNotFound = (field = 'id') => missing('resource.coupon', field);
const shopNotFound = () => missing('resource.shop', 'shop_id');
const used = (field: string) => failOn('INVALID_STATE', field, 'coupons.used', { meta: { status: 'used' } });
const expired = (field: string, at: Date) =>
  failOn('EXPIRED_OFFER', field, 'coupons.expired', { params: { expired_at: iso(at) }, meta: { expired_at: iso(at) } });
const pendingElsewhere = (field: string, shopId: number | null) =>
  failOn('INVALID_STATE', field, 'coupons.pending_elsewhere', { params: { shop_id: shopId ?? 0 }, meta: { status: 'pending', pending_shop_id: shopId } });
const storeDenied = (shopIds: number[]) => failOn('STORE_ACCESS_DENIED', 'shop_id', 'coupons.store_denied', { meta: { shop_ids: shopIds } });

const validAt = (row: CouponRow, shopId: number) => row.shopIds.length === 0 || row.shopIds.includes(shopId);

/**
 * Why a coupon cannot be reserved or redeemed at `shopId` now, in the order a till fixes
 * things: used, expired, not valid at this shop, reserved by another shop. undefined when
 * nothing forbids it (a concurrent change decided: the caller reads again).
 */
function whyNotUsable(row: CouponRow, shopId: number, now: Date, field: string): Result<never> | undefined {
  const status = effectiveStatus(row, now);
  if (status === 'used') return used(field);
  if (status === 'expired') return expired(field, row.expiresAt!);
  if (!validAt(row, shopId)) return storeDenied(row.shopIds);
  if (status === 'pending' && row.pendingShopId !== shopId) return pendingElsewhere(field, row.pendingShopId);
  return undefined;
}

function whyNotReleasable(row: CouponRow, shopId: number, now: Date): Result<never> | undefined {
  const status = effectiveStatus(row, now);
  if (status === 'used') return used('id');
  if (status === 'expired') return expired('id', row.expiresAt!);
  if (status === 'active') return failOn('INVALID_STATE', 'id', 'coupons.not_pending', { meta: { status: 'active' } });
  if (row.pendingShopId !== shopId) return pendingElsewhere('id', row.pendingShopId);
  return undefined;
}

function whyNotRollbackable(row: CouponRow, shopId: number, now: Date): Result<never> | undefined {
  const status = effectiveStatus(row, now);
  if (status !== 'used') return failOn('INVALID_STATE', 'id', 'coupons.not_used', { params: { status }, meta: { status } });
  if (row.usedShopId !== shopId) {
    return failOn('INVALID_STATE', 'shop_id', 'coupons.used_elsewhere', { meta: { status: 'used', reason: 'other_shop', used_shop_id: row.usedShopId } });
  }
  if (row.usedAt!.getTime() <= now.getTime() - ROLLBACK_WINDOW_MS) {
    return failOn('INVALID_STATE', 'id', 'coupons.rollback_window_passed', { meta: { status: 'used', reason: 'rollback_window_passed', used_at: iso(row.usedAt) } });
  }
  return undefined;
}

const text = (v: string | null | undefined) => v ?? '';

function offerOf(row: CouponRow): CouponOfferView | null {
  if (row.offerId === null || !row.terms) return null;
  const t = row.terms;
  return {
    id: row.offerId,
    title: t.title,
    description: text(t.description),
    discount_type: t.discount_type,
    reward_type: t.reward_type,
    reward_details: text(t.reward_details),
  };
}

function gameOf(row: CouponRow): CouponGameView | null {
  if (row.gameId === null || !row.game) return null;
  return { id: row.gameId, name: row.game.name, type: row.game.type, reward_description: row.game.reward_description };
}

export class CouponsService {
  constructor(
    private readonly deps: {
      db: Db;
      clock: Clock;
      appLinkBase: string;
      /** The tier on the verified coupon's card (DESIGN.md §13). */
      tiers: TiersService;
      /** Partner events (DESIGN.md §14): coupon.redeemed, coupon.rolled_back. */
      events?: PartnerEventSink;
    },
  ) {}

  private get db() {
    return this.deps.db;
  }

  view(row: CouponRow, holder: Holder, now = this.deps.clock.now()): CouponView {
    const status = effectiveStatus(row, now);
    const code = displayCode(row.code);
    return {
      id: row.id,
      code,
      qr_code: couponQrContent(this.deps.appLinkBase, row.code),
      status,
      expires_at: iso(row.expiresAt),
      is_used: status === 'used',
      is_pending: status === 'pending',
      offer: offerOf(row),
      game: gameOf(row),
      user: { id: row.customerId, name: text(holder.name), email: text(holder.email) },
      products: row.productIds.map((id) => ({ id })),
      categories: row.categoryIds.map((id) => ({ id })),
      // More than one product: the till (or the customer) picks the one the coupon applies to.
      requires_product_selection: row.productIds.length > 1,
      partner_id: row.partnerId,
      card_id: row.cardId,
      created_at: iso(row.createdAt),
      used_at: iso(row.usedAt),
      used_shop_id: row.usedShopId,
      pending_until: status === 'pending' ? iso(row.pendingUntil) : null,
    };
  }

  /**
   * A new coupon, in the caller's transaction (with the points that bought it, or the play
   * that won it), and its `issued` history row.
   */
  async issue(tx: Executor, input: IssueInput): Promise<CouponView> {
    const now = this.deps.clock.now();
    const source = input.source;
    const values = {
      partnerId: input.partnerId,
      customerId: input.customerId,
      cardId: input.cardId,
      ...(source.kind === 'offer'
        ? { offerId: source.offerId, terms: source.terms, shopIds: source.shopIds, productIds: source.productIds, categoryIds: source.categoryIds }
        : { gameId: source.gameId, game: source.game }),
      expiresAt: input.validityDays === null ? null : new Date(now.getTime() + input.validityDays * DAY_MS),
    };
    // 60 random bits: a collision is astronomically rare, and a retry settles it.
    for (let attempt = 0; attempt < 5; attempt++) {
      const row = await repo.issue(tx, { ...values, code: newCouponCode(), createdAt: now });
      if (row) return this.view(row, row.holder, now);
    }
    throw new Error('could not draw an unused coupon code');
  }

  /** The till's verify: reserve the coupon for the shop for 10 minutes and show it with its holder. */
  async verify(partnerId: number, code: string, shopId: number): Promise<Result<VerificationView>> {
    for (let attempt = 0; ; attempt++) {
      const now = this.deps.clock.now();
      const r = await repo.reserveByCode(this.db, partnerId, code, shopId, now, new Date(now.getTime() + RESERVATION_MS));
      if (!r) return couponNotFound('coupon_code');
      if (!r.shopOk) return shopNotFound();
      if (!r.changed) {
        const why = whyNotUsable(r.before, shopId, now, 'coupon_code');
        // Nothing forbade it a moment ago: another till changed it meanwhile; read again.
        if (why || attempt >= 2) return why ?? used('coupon_code');
        continue;
      }
      const row: CouponRow = { ...r.before, status: 'pending', pendingShopId: shopId, pendingUntil: new Date(now.getTime() + RESERVATION_MS) };
      const rates = displayRates(r.programme);
      const view: VerificationView = {
        coupon: {
          id: row.id,
          code: displayCode(row.code),
          status: 'pending',
          expiry_time: iso(row.expiresAt),
          is_pending: true,
          pending_shop_id: shopId,
          offer: offerOf(row),
        },
        user: {
          id: row.customerId,
          name: text(r.holder.name),
          email: text(r.holder.email),
          phone: r.holder.phone,
          default_card_id: row.cardId,
          points_balance: r.card.pointsBalance,
        },
        card: { id: row.cardId, card_number: r.card.cardNumber, user_id: row.customerId, points_balance: r.card.pointsBalance, ...(await this.deps.tiers.cardView(r.card)) },
        points_rules: {
          points_enabled: r.programme.pointsEnabled,
          points_redemption_enabled: r.programme.pointsRedemptionEnabled,
          ...rates,
        },
        games_count: r.gamesCount,
        coupons_count: r.couponsCount,
      };
      const game = gameOf(row);
      if (game) view.game = game;
      return ok(view);
    }
  }

  /** Redeem at the shop: an active coupon, or one this shop reserved. Exactly once. */
  redeem(exec: Executor, partnerId: number, id: number, input: { shopId: number; receiptNumber?: string | null; amount?: string | null }) {
    return this.change(exec, partnerId, id, input.shopId, 'coupon.redeemed', (now) => ({
      set: sql`status = 'used', used_at = ${now.toISOString()}::timestamptz, used_shop_id = ${input.shopId}, pending_shop_id = null, pending_until = null`,
      where: repo.usableAt(input.shopId, now.toISOString()),
      event: 'redeemed' as const,
      receiptNumber: input.receiptNumber ?? null,
      amount: input.amount ?? null,
      why: (row: CouponRow) => whyNotUsable(row, input.shopId, now, 'id'),
      after: (row: CouponRow): CouponRow => ({ ...row, status: 'used', usedAt: now, usedShopId: input.shopId, pendingShopId: null, pendingUntil: null }),
    }));
  }

  /** End this shop's reservation: the coupon is active again. */
  release(exec: Executor, partnerId: number, id: number, input: { shopId: number }) {
    return this.change(exec, partnerId, id, input.shopId, null, (now) => {
      const at = now.toISOString();
      return {
        set: sql`status = 'active', pending_shop_id = null, pending_until = null`,
        where: sql`status = 'pending' and pending_shop_id = ${input.shopId}::int and pending_until > ${at}::timestamptz
          and (expires_at is null or expires_at > ${at}::timestamptz)`,
        event: 'released' as const,
        why: (row: CouponRow) => whyNotReleasable(row, input.shopId, now),
        after: (row: CouponRow): CouponRow => ({ ...row, status: 'active', pendingShopId: null, pendingUntil: null }),
      };
    });
  }

  /** Undo a redemption made at this shop within the last 24 hours (a cancelled sale). */
  rollback(exec: Executor, partnerId: number, id: number, input: { shopId: number; reason?: string | null }) {
    return this.change(exec, partnerId, id, input.shopId, 'coupon.rolled_back', (now) => ({
      set: sql`status = 'active', used_at = null, used_shop_id = null`,
      where: sql`status = 'used' and used_shop_id = ${input.shopId}::int and used_at > ${new Date(now.getTime() - ROLLBACK_WINDOW_MS).toISOString()}::timestamptz`,
      event: 'rolled_back' as const,
      reason: input.reason ?? null,
      why: (row: CouponRow) => whyNotRollbackable(row, input.shopId, now),
      after: (row: CouponRow): CouponRow => ({ ...row, status: 'active', usedAt: null, usedShopId: null }),
    }));
  }

  private async change(
    exec: Executor,
    partnerId: number,
    id: number,
    shopId: number,
    event: 'coupon.redeemed' | 'coupon.rolled_back' | null,
    plan: (now: Date) => Transition & { why: (row: CouponRow) => Result<never> | undefined; after: (row: CouponRow) => CouponRow },
  ): Promise<Result<{ coupon: CouponView }>> {
    const events = this.deps.events;
    // Someone listens (DESIGN.md §14): the change and its event in one transaction. The one
    // statement runs without one (no Idempotency-Key) when nobody does.
    if (event && events && exec === this.db && (await events.wants(exec, partnerId, event))) {
      return this.db.transaction((tx) => this.change(tx, partnerId, id, shopId, event, plan));
    }
    for (let attempt = 0; ; attempt++) {
      const now = this.deps.clock.now();
      const p = plan(now);
      const r = await repo.transition(exec, partnerId, id, shopId, now, p);
      if (!r) return couponNotFound();
      if (!r.shopOk) return shopNotFound();
      if (r.changed) {
        const coupon = this.view(p.after(r.before), r.holder, now);
        if (event) await events?.emit(exec, partnerId, event, coupon);
        return ok({ coupon });
      }
      const why = p.why(r.before);
      // Nothing forbade it in the row as it was: a concurrent change won; read again.
      if (why || attempt >= 2) return why ?? used('id');
    }
  }

  async get(scope: CouponScope, id: number): Promise<(CouponView & { history: CouponEventView[] }) | undefined> {
    const row = await repo.find(this.db, scope, id);
    if (!row) return undefined;
    const events = await repo.events(this.db, id);
    return {
      ...this.view(row, row.holder),
      history: events.map((e) => ({
        event: e.event,
        shop_id: e.shopId,
        receipt_number: e.receiptNumber,
        amount: e.amount === null ? null : amountToJson(e.amount),
        reason: e.reason,
        created_at: iso(e.createdAt),
      })),
    };
  }

  async list(scope: CouponScope, filter: CouponFilter, page: PageWindow): Promise<{ items: CouponView[]; total: number }> {
    const now = this.deps.clock.now();
    const { rows, total } = await repo.list(this.db, scope, filter, now, page.perPage, page.offset);
    return { items: rows.map((r: CouponWithHolder) => this.view(r, r.holder, now)), total };
  }

  countOfOffer(tx: Executor, offerId: number, customerId: number): Promise<number> {
    return repo.countOfOffer(tx, offerId, customerId);
  }

  /** The partner's coupons as CSV, oldest first, read in pages so that memory stays flat. */
  async *exportCsv(partnerId: number, filter: CouponFilter): AsyncGenerator<string> {
    const now = this.deps.clock.now();
    yield `${EXPORT_COLUMNS.join(',')}\r\n`;
    let after = 0;
    for (;;) {
      const rows = await repo.listAfter(this.db, { partnerId }, filter, now, after, 1000);
      if (rows.length === 0) return;
      let chunk = '';
      for (const r of rows) {
        const v = this.view(r, r.holder, now);
        const title = r.terms?.title ?? r.game?.reward_description ?? null;
        const discountType = r.terms?.discount_type ?? r.game?.discount_type ?? null;
        const discountValue = r.terms?.discount_value ?? r.game?.discount_value ?? null;
        chunk += `${[
          csvField(v.id),
          csvField(v.code),
          csvField(v.status),
          csvField(v.created_at),
          csvField(v.expires_at),
          csvField(v.used_at),
          csvField(v.used_shop_id),
          csvField(r.offerId),
          csvField(r.gameId),
          csvField(title, true),
          csvField(discountType),
          csvField(discountValue === null ? null : String(amountToJson(discountValue))),
          csvField(v.user.id),
          csvField(v.user.name || null, true),
          csvField(v.user.email || null, true),
          csvField(v.card_id),
        ].join(',')}\r\n`;
      }
      yield chunk;
      after = rows[rows.length - 1]!.id;
    }
  }
}

const EXPORT_COLUMNS = [
  'id',
  'code',
  'status',
  'created_at',
  'expires_at',
  'used_at',
  'used_shop_id',
  'offer_id',
  'game_id',
  'title',
  'discount_type',
  'discount_value',
  'user_id',
  'user_name',
  'user_email',
  'card_id',
] as const;
