// Offers (DESIGN.md §8): the partner's configuration (rules a schema cannot state, views),
// what tills and apps see, and the claim — one database transaction that takes the offer's
// points through the ledger, issues the coupon and counts the claim, or does none of it:
//
//   offer visible? → ended (EXPIRED_OFFER) → inactive / not started (INVALID_STATE)
//   → lock the customer's card (no card: INVALID_STATE no_card; the lock serialises one
//     customer's claims, so the per-customer count below is exact)
//   → sold out? claim limit? (INVALID_STATE sold_out / claim_limit)
//   → points through the ledger, type redeem (INSUFFICIENT_BALANCE)
//   → [hooks.afterDebit — a seam for tests that kill the transaction here]
//   → the coupon → count the claim on a limited offer (one conditional UPDATE: the last unit
//     has one winner); an unlimited offer's claims hold its shared advisory lock instead, so
//     they never queue on its row and a partner setting a limit waits for them
import type { Static } from 'typebox';
import type { Db, Executor } from '../../infra/db/index.js';
import { ERRORS, fail, missing, ok, type ErrorName, type FieldErrors, type Result } from '../../shared/errors.js';
import type { MessageKey, MessageParams } from '../../shared/i18n.js';
import { amountToJson, formatAmount, parseAmount } from '../../shared/money.js';
import type { PageWindow } from '../../shared/pagination.js';
import { iso, type Clock } from '../../shared/time.js';
import { addFieldError, hasOwn } from '../../shared/validation.js';
import type { CouponsService, CouponView } from '../coupons/coupons.service.js';
import type { LoyaltyCardsService } from '../loyalty-cards/loyalty-cards.service.js';
import type { PartnerCardsService } from '../partner-cards/partner-cards.service.js';
import type { PointsLedger } from '../points/ledger.service.js';
import type { ShopsService } from '../shops/shops.service.js';
import { offersRepository as repo, type OfferColumns, type OfferListFilter, type OfferRow } from './offers.repository.js';
import type { OfferDiscountType, OfferRewardType, OfferSource } from './offers.tables.js';
import type { PartnerEventSink } from '../webhooks/webhooks.events.js';
import type { Offer } from './offers.schemas.js';

/** A request body after the schema (create: defaults filled in; update: only what was sent). */
export interface OfferInput {
  partner_card_id?: number | null;
  title?: string;
  description?: string | null;
  discount_type?: OfferDiscountType;
  discount_value?: number | null;
  reward_type?: OfferRewardType;
  reward_details?: string | null;
  points_cost?: number;
  starts_at?: string | null;
  ends_at?: string | null;
  is_active?: boolean;
  featured?: boolean;
  shop_ids?: number[];
  product_ids?: number[];
  category_ids?: number[];
  max_claims?: number | null;
  max_claims_per_customer?: number;
  coupon_validity_days?: number | null;
}
export type NewOfferInput = OfferInput & Required<Pick<OfferInput, 'title' | 'discount_type'>>;

export type OfferView = Static<typeof Offer>;

/** Who is asking, for the customer-facing reads and the claim. */
export interface OfferAudience {
  /** API credentials: that partner's offers. */
  partnerId?: number;
  /** Customer token: the offers of the partners the customer holds a card of (or only `partnerScope`'s). */
  customerId?: number;
  partnerScope?: number;
}

/** Test seams: called inside the claim's transaction. */
export interface ClaimHooks {
  /** After the points left the card, before the coupon exists: a throw here must leave nothing behind. */
  afterDebit?: () => Promise<void>;
}

const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(10000, 0, 1);
const isSet = (v: unknown) => v !== undefined && v !== null;
const isRowId = (id: unknown): id is number => Number.isInteger(id) && (id as number) >= 1 && (id as number) <= 2147483647;

function instant(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) && ms >= EARLIEST && ms < LATEST ? ms : undefined;
}

/** The checks a schema cannot make, on a body that may also have failed the schema, against the stored offer on an update. */
function ruleErrors(body: Record<string, unknown>, existing: OfferRow | undefined): FieldErrors {
  const errors: FieldErrors = {};
  for (const field of ['starts_at', 'ends_at'] as const) {
    if (typeof body[field] === 'string' && instant(body[field]) === undefined) {
      addFieldError(errors, field, 'validation.format', { format: 'date-time (1970 to 9999)' });
    }
  }
  if (hasOwn(body, 'starts_at') || hasOwn(body, 'ends_at')) {
    const starts = hasOwn(body, 'starts_at') ? instant(body.starts_at) : existing?.startsAt?.getTime();
    const ends = hasOwn(body, 'ends_at') ? instant(body.ends_at) : existing?.endsAt?.getTime();
    if (starts !== undefined && ends !== undefined && ends <= starts) addFieldError(errors, 'ends_at', 'offers.ends_before_starts');
  }
  // The discount as it will be after this request.
  const type = hasOwn(body, 'discount_type') ? body.discount_type : existing?.discountType;
  const value = hasOwn(body, 'discount_value') ? body.discount_value : existing?.discountValue === null || existing === undefined ? null : Number(existing.discountValue);
  if (typeof value === 'number' && value > 0 && parseAmount(value) === undefined) addFieldError(errors, 'discount_value', 'validation.decimal_places', { limit: 4 });
  if ((type === 'percent' || type === 'fixed' || type === 'price') && !isSet(value) && (hasOwn(body, 'discount_type') || hasOwn(body, 'discount_value') || !existing)) {
    addFieldError(errors, 'discount_value', 'offers.value_required', { type });
  }
  if (type === 'percent' && typeof value === 'number' && value > 100 && (hasOwn(body, 'discount_type') || hasOwn(body, 'discount_value'))) {
    addFieldError(errors, 'discount_value', 'offers.percent_over_100');
  }
  return errors;
}

const exact = (value: number) => formatAmount(parseAmount(value)!);

function columnsOf(input: OfferInput): Partial<OfferColumns> {
  const out: Partial<OfferColumns> = {};
  if (input.partner_card_id !== undefined) out.partnerCardId = input.partner_card_id;
  if (input.title !== undefined) out.title = input.title.trim();
  if (input.description !== undefined) out.description = input.description;
  if (input.discount_type !== undefined) out.discountType = input.discount_type;
  if (input.discount_value !== undefined) out.discountValue = input.discount_value === null ? null : exact(input.discount_value);
  if (input.reward_type !== undefined) out.rewardType = input.reward_type;
  if (input.reward_details !== undefined) out.rewardDetails = input.reward_details;
  if (input.points_cost !== undefined) out.pointsCost = input.points_cost;
  if (input.starts_at !== undefined) out.startsAt = input.starts_at === null ? null : new Date(input.starts_at);
  if (input.ends_at !== undefined) out.endsAt = input.ends_at === null ? null : new Date(input.ends_at);
  if (input.is_active !== undefined) out.isActive = input.is_active;
  if (input.featured !== undefined) out.featured = input.featured;
  if (input.shop_ids !== undefined) out.shopIds = [...input.shop_ids].sort((a, b) => a - b);
  if (input.product_ids !== undefined) out.productIds = [...input.product_ids];
  if (input.category_ids !== undefined) out.categoryIds = [...input.category_ids];
  if (input.max_claims !== undefined) out.maxClaims = input.max_claims;
  if (input.max_claims_per_customer !== undefined) out.maxClaimsPerCustomer = input.max_claims_per_customer;
  if (input.coupon_validity_days !== undefined) out.couponValidityDays = input.coupon_validity_days;
  return out;
}

export function offerView(row: OfferRow): OfferView {
  return {
    id: row.id,
    partner_card_id: row.partnerCardId,
    title: row.title,
    description: row.description,
    discount_type: row.discountType,
    discount_value: row.discountValue === null ? null : amountToJson(row.discountValue),
    reward_type: row.rewardType,
    reward_details: row.rewardDetails,
    points_cost: row.pointsCost,
    starts_at: iso(row.startsAt),
    ends_at: iso(row.endsAt),
    is_active: row.isActive,
    featured: row.featured,
    shop_ids: row.shopIds,
    product_ids: row.productIds,
    category_ids: row.categoryIds,
    max_claims: row.maxClaims,
    max_claims_per_customer: row.maxClaimsPerCustomer,
    claims_count: row.claimsCount,
    coupon_validity_days: row.couponValidityDays,
    source: row.source,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

function refuse(error: ErrorName, key: MessageKey, opts: { params?: MessageParams; meta?: Record<string, unknown> } = {}) {
  return fail<never>(error, {
    message: key,
    ...(opts.params ? { params: opts.params } : {}),
    items: [{ field: 'id', code: String(ERRORS[error].code), key, ...(opts.params ? { params: opts.params } : {}), ...(opts.meta ? { meta: opts.meta } : {}) }],
  });
}

const offerNotFound = () => missing('resource.offer');

export class OffersService {
  /** Test seams (see ClaimHooks); empty in production. */
  readonly hooks: ClaimHooks = {};

  constructor(
    private readonly deps: {
      db: Db;
      clock: Clock;
      shops: ShopsService;
      partnerCards: PartnerCardsService;
      cards: LoyaltyCardsService;
      ledger: PointsLedger;
      coupons: CouponsService;
      /** Partner events (DESIGN.md §14): coupon.claimed. */
      events?: PartnerEventSink;
    },
  ) {}

  private get db() {
    return this.deps.db;
  }

  // ---- partner configuration -------------------------------------------------------------

  /** Every rule problem of a body (which may have failed the schema too); with `id`, of an update of that offer. */
  async problems(partnerId: number, body: Record<string, unknown>, id?: number): Promise<Result<FieldErrors>> {
    let existing: OfferRow | undefined;
    if (id !== undefined) {
      existing = await repo.find(this.db, partnerId, id);
      if (!existing) return offerNotFound();
    }
    return ok(await this.fieldErrors(this.db, partnerId, body, existing));
  }

  private async fieldErrors(tx: Executor, partnerId: number, body: Record<string, unknown>, existing: OfferRow | undefined): Promise<FieldErrors> {
    const errors = ruleErrors(body, existing);
    const cardId = hasOwn(body, 'partner_card_id') ? body.partner_card_id : (existing?.partnerCardId ?? null);
    if (hasOwn(body, 'partner_card_id') && Number.isInteger(cardId)) {
      const programme = isRowId(cardId) ? await this.deps.partnerCards.findProgramme(partnerId, cardId, tx) : undefined;
      if (!programme || programme.deleted) addFieldError(errors, 'partner_card_id', 'offers.card_not_owned');
    }
    const cost = hasOwn(body, 'points_cost') ? body.points_cost : (existing?.pointsCost ?? 0);
    if (typeof cost === 'number' && cost > 0 && cardId === null && (hasOwn(body, 'points_cost') || hasOwn(body, 'partner_card_id'))) {
      addFieldError(errors, 'partner_card_id', 'offers.points_need_card');
    }
    const ids = body.shop_ids;
    if (Array.isArray(ids) && ids.length > 0 && ids.every(isRowId)) {
      const owned = new Set(await this.deps.shops.ownedIds(partnerId, ids, tx));
      const foreign = ids.filter((shopId) => !owned.has(shopId));
      if (foreign.length > 0) addFieldError(errors, 'shop_ids', 'offers.shops_not_owned', { ids: foreign.join(', ') });
    }
    return errors;
  }

  /** Create in the caller's transaction (the route's Idempotency-Key one). */
  async createOffer(partnerId: number, input: NewOfferInput, tx: Executor, source: OfferSource = 'api'): Promise<Result<OfferView>> {
    const errors = await this.fieldErrors(tx, partnerId, input as unknown as Record<string, unknown>, undefined);
    if (Object.keys(errors).length > 0) return fail('VALIDATION', { fields: errors });
    const row = await repo.insert(tx, partnerId, { ...(columnsOf(input) as OfferColumns), source }, this.deps.clock.now());
    return ok(offerView(row));
  }

  async getOffer(partnerId: number, id: number): Promise<OfferView | undefined> {
    const row = await repo.find(this.db, partnerId, id);
    return row && offerView(row);
  }

  async listOffers(partnerId: number, filter: OfferListFilter, page: PageWindow): Promise<{ items: OfferView[]; total: number }> {
    const { rows, total } = await repo.list(this.db, partnerId, filter, page.perPage, page.offset);
    return { items: rows.map(offerView), total };
  }

  /** A partial update; answers the whole offer. */
  async updateOffer(partnerId: number, id: number, input: OfferInput): Promise<Result<OfferView>> {
    return this.db.transaction(async (tx) => {
      const existing = await repo.find(tx, partnerId, id);
      if (!existing) return offerNotFound();
      const errors = await this.fieldErrors(tx, partnerId, input as unknown as Record<string, unknown>, existing);
      if (Object.keys(errors).length > 0) return fail('VALIDATION', { fields: errors });
      const settingLimit = existing.maxClaims === null && input.max_claims !== undefined && input.max_claims !== null;
      const row = await repo.update(tx, partnerId, id, columnsOf(input), this.deps.clock.now(), settingLimit);
      return row ? ok(offerView(row)) : offerNotFound();
    });
  }

  /** Soft delete: the offer disappears, its coupons keep their terms and their link. */
  deleteOffer(partnerId: number, id: number): Promise<boolean> {
    return repo.softDelete(this.db, partnerId, id, this.deps.clock.now());
  }

  async syncStatus(partnerId: number) {
    const s = await repo.syncStatus(this.db, partnerId, this.deps.clock.now());
    return { total_offers: s.total, active_offers: s.active, expired_offers: s.expired, last_sync: s.lastChange === null ? null : iso(new Date(s.lastChange)) };
  }

  // ---- tills and apps --------------------------------------------------------------------

  private async partnersOf(audience: OfferAudience): Promise<number[]> {
    if (audience.partnerId !== undefined) return [audience.partnerId];
    if (audience.partnerScope !== undefined) return [audience.partnerScope];
    return this.deps.cards.partnerIdsOf(audience.customerId!);
  }

  /** Live offers (active, started, not ended) the caller may see. */
  async listLive(audience: OfferAudience, filter: { featured?: boolean; shopId?: number; categoryId?: number }, page: PageWindow) {
    const partnerIds = await this.partnersOf(audience);
    const { rows, total } = await repo.listLive(this.db, { partnerIds, ...filter }, this.deps.clock.now(), page.perPage, page.offset);
    return { items: rows.map(offerView), total };
  }

  /** Claim the offer for the customer, in the caller's transaction (see the head of this file). */
  async claim(tx: Executor, customer: { customerId: number; partnerScope?: number }, offerId: number): Promise<Result<{ coupon: CouponView }>> {
    let offer = await repo.findForClaim(tx, offerId);
    if (!offer || (customer.partnerScope !== undefined && offer.partnerId !== customer.partnerScope)) return offerNotFound();
    const now = this.deps.clock.now();
    if (offer.endsAt !== null && offer.endsAt.getTime() <= now.getTime()) {
      const at = iso(offer.endsAt);
      return refuse('EXPIRED_OFFER', 'offers.expired', { params: { expired_at: at }, meta: { expired_at: at } });
    }
    if (!offer.isActive) return refuse('INVALID_STATE', 'offers.inactive', { meta: { reason: 'inactive' } });
    if (offer.startsAt !== null && offer.startsAt.getTime() > now.getTime()) {
      const at = iso(offer.startsAt);
      return refuse('INVALID_STATE', 'offers.not_started', { params: { starts_at: at }, meta: { reason: 'not_started', starts_at: at } });
    }
    const card = await this.deps.cards.cardFor(tx, customer.customerId, offer.partnerId, offer.partnerCardId, { lock: true });
    if (!card) return refuse('INVALID_STATE', 'offers.no_card', { meta: { reason: 'no_card' } });
    if (offer.maxClaims === null) {
      await repo.holdUnlimited(tx, offer.id);
      offer = (await repo.findForClaim(tx, offer.id)) ?? offer;
    }
    const limited = offer.maxClaims !== null;
    // Under the card's lock: this customer's claims of the offer are counted one at a time.
    if (limited && offer.claimsCount >= offer.maxClaims!) return this.soldOut();
    if ((await this.deps.coupons.countOfOffer(tx, offer.id, customer.customerId)) >= offer.maxClaimsPerCustomer) {
      return refuse('INVALID_STATE', 'offers.claim_limit', { params: { limit: offer.maxClaimsPerCustomer }, meta: { reason: 'claim_limit', limit: offer.maxClaimsPerCustomer } });
    }
    if (offer.pointsCost > 0) {
      const spent = await this.deps.ledger.redeem(tx, offer.partnerId, {
        cardId: card.id,
        points: offer.pointsCost,
        reason: `offer #${offer.id}: ${offer.title}`.slice(0, 255),
        field: 'points_cost',
      });
      if (!spent.ok) return spent;
    }
    await this.hooks.afterDebit?.();
    // The programme's (deprecated) default only when the offer sets no validity.
    const programme = offer.couponValidityDays === null ? await this.deps.partnerCards.findProgramme(offer.partnerId, card.partnerCardId, tx) : undefined;
    const coupon = await this.deps.coupons.issue(tx, {
      partnerId: offer.partnerId,
      customerId: customer.customerId,
      cardId: card.id,
      source: {
        kind: 'offer',
        offerId: offer.id,
        terms: {
          title: offer.title,
          description: offer.description,
          discount_type: offer.discountType,
          discount_value: offer.discountValue,
          reward_type: offer.rewardType,
          reward_details: offer.rewardDetails,
        },
        shopIds: offer.shopIds,
        productIds: offer.productIds,
        categoryIds: offer.categoryIds,
      },
      validityDays: offer.couponValidityDays ?? programme?.defaultCouponValidityDays ?? null,
    });
    // Last, so that a limited offer's row is locked only for the end of the transaction.
    if (limited && !(await repo.countClaim(tx, offer.id))) return this.soldOut();
    await this.deps.events?.emit(tx, offer.partnerId, 'coupon.claimed', coupon);
    return ok({ coupon });
  }

  private soldOut() {
    return refuse('INVALID_STATE', 'offers.sold_out', { meta: { reason: 'sold_out' } });
  }
}

