// Partner card programmes: the rules a schema cannot state, the transactions, the views
// of the spec's "Partner card" resource, and — read-only, for the points ledger and the
// coupons — a programme's rules (`findProgramme`).
import type { Static } from 'typebox';
import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import { pgErrorCode, type Db, type Executor } from '../../infra/db/index.js';
import { fail, missing, ok, type FieldErrors, type Result } from '../../shared/errors.js';
import { amountToJson, formatAmount, parseAmount } from '../../shared/money.js';
import type { PageWindow } from '../../shared/pagination.js';
import { iso } from '../../shared/time.js';
import { addFieldError, hasOwn, isPlainObject } from '../../shared/validation.js';
import type { ShopsService } from '../shops/shops.service.js';
import { canonicalTimeZone } from '../../shared/zoned-time.js';
import type { TierBasis, TierDowngrade, TierWindow } from '../tiers/tier-rules.js';
import { IMAGE_LIMITS, imageProblem } from './card-images.js';
import { partnerCardsRepository as repo, type CardColumns, type CardListFilter, type CardListRow, type CardRow } from './partner-cards.repository.js';
import { partnerCards, PROGRAMME_DEFAULTS, type CardDesign, type LocalizedText } from './partner-cards.tables.js';
import type { PartnerCard } from './partner-cards.schemas.js';

// ---- input ----------------------------------------------------------------------------

/** A request body after the schema (create: defaults filled in; update: only what was sent). */
export interface CardInput {
  title?: { en: string; lt: string };
  description?: LocalizedText;
  terms_conditions?: LocalizedText;
  card_design?: { [K in keyof CardDesign]?: CardDesign[K] | null };
  is_active?: boolean;
  shop_ids?: number[];
  auto_assign?: boolean;
  points_enabled?: boolean;
  initial_bonus_points?: number;
  points_expiration_days?: number | null;
  points_per_currency?: number;
  currency_amount?: number;
  round_points_up?: boolean;
  min_points_per_purchase?: number;
  max_points_per_purchase?: number | null;
  points_per_visit?: number;
  points_redemption_enabled?: boolean;
  points_per_currency_redemption?: number;
  currency_amount_redemption?: number;
  min_points_for_redemption?: number;
  max_points_per_redemption?: number | null;
  default_coupon_validity_days?: number | null;
  tier_basis?: TierBasis;
  tier_window?: TierWindow;
  tier_downgrade?: TierDowngrade;
  tier_time_zone?: string;
}
export type NewCardInput = CardInput & Required<Pick<CardInput, 'title' | 'description' | 'terms_conditions' | 'card_design'>>;

/** Every field a client can send, in the order of the spec's resource table. */
export const CARD_INPUT_FIELDS = [
  'title',
  'description',
  'terms_conditions',
  'card_design',
  'is_active',
  'shop_ids',
  'auto_assign',
  'points_enabled',
  'initial_bonus_points',
  'points_expiration_days',
  'points_per_currency',
  'currency_amount',
  'round_points_up',
  'min_points_per_purchase',
  'max_points_per_purchase',
  'points_per_visit',
  'points_redemption_enabled',
  'points_per_currency_redemption',
  'currency_amount_redemption',
  'min_points_for_redemption',
  'max_points_per_redemption',
  'default_coupon_validity_days',
  'tier_basis',
  'tier_window',
  'tier_downgrade',
  'tier_time_zone',
] as const satisfies ReadonlyArray<keyof CardInput>;
type CardField = (typeof CARD_INPUT_FIELDS)[number];

const RATE_FIELDS = ['points_per_currency', 'currency_amount', 'points_per_currency_redemption', 'currency_amount_redemption'] as const;

/** [max field, min field, min column, max column]: the columns serve updates that send only one of the pair. */
const MIN_MAX_PAIRS = [
  ['max_points_per_purchase', 'min_points_per_purchase', 'minPointsPerPurchase', 'maxPointsPerPurchase'],
  ['max_points_per_redemption', 'min_points_for_redemption', 'minPointsForRedemption', 'maxPointsPerRedemption'],
] as const;

const LANGUAGE_KEY = /^[a-z]{2}$/;

/**
 * The checks a schema cannot make, on a body that may also have failed the schema: each
 * check looks only at values of the right type, and the route lets the schema's own
 * message win for a field both report.
 */
function ruleErrors(body: Record<string, unknown>, existing: CardRow | undefined): FieldErrors {
  const errors: FieldErrors = {};
  for (const field of ['description', 'terms_conditions'] as const) {
    const texts = body[field];
    if (isPlainObject(texts) && Object.keys(texts).some((k) => !LANGUAGE_KEY.test(k))) addFieldError(errors, field, 'partner_cards.language_keys');
  }
  const design = body.card_design;
  if (isPlainObject(design)) {
    for (const field of ['logo', 'background_image'] as const) {
      const value = design[field];
      if (typeof value !== 'string') continue;
      const problem = imageProblem(value, IMAGE_LIMITS[field]);
      if (problem) addFieldError(errors, `card_design.${field}`, problem.key, problem.params);
    }
  }
  for (const field of RATE_FIELDS) {
    const value = body[field];
    if (typeof value === 'number' && value > 0 && parseAmount(value) === undefined) {
      addFieldError(errors, field, 'validation.decimal_places', { limit: 4 });
    }
  }
  for (const [maxField, minField, minColumn, maxColumn] of MIN_MAX_PAIRS) {
    // Only a change can break the pair: a stored card already satisfies it.
    if (!hasOwn(body, maxField) && !hasOwn(body, minField)) continue;
    const max = hasOwn(body, maxField) ? body[maxField] : existing?.[maxColumn];
    const min = hasOwn(body, minField) ? body[minField] : (existing?.[minColumn] ?? PROGRAMME_DEFAULTS[minColumn]);
    if (Number.isInteger(max) && Number.isInteger(min) && (max as number) < (min as number)) {
      addFieldError(errors, maxField, 'partner_cards.max_below_min', { field: minField, min: min as number });
    }
  }
  if (typeof body.tier_time_zone === 'string' && canonicalTimeZone(body.tier_time_zone) === undefined) {
    addFieldError(errors, 'tier_time_zone', 'tiers.time_zone');
  }
  return errors;
}

const TIER_SETTING_COLUMNS = ['tierBasis', 'tierWindow', 'tierDowngrade', 'tierTimeZone'] as const;

/** Ids that cannot be a shop's (out of the int4 range) are never owned. */
const isShopId = (id: unknown): id is number => Number.isInteger(id) && (id as number) >= 1 && (id as number) <= 2147483647;

function shopsNotOwnedError(missing: number[]): FieldErrors {
  return { shop_ids: [{ key: 'partner_cards.shops_not_owned', params: { ids: missing.join(', ') } }] };
}

const rate = (value: number) => formatAmount(parseAmount(value)!);

/** Request fields → columns; only the fields present. */
function columnsOf(input: CardInput): Partial<CardColumns> {
  const out: Partial<CardColumns> = {};
  if (input.title !== undefined) out.title = { en: input.title.en.trim(), lt: input.title.lt.trim() };
  if (input.description !== undefined) out.description = { ...input.description };
  if (input.terms_conditions !== undefined) out.termsConditions = { ...input.terms_conditions };
  if (input.card_design !== undefined) {
    // null means "not set": the stored design has no key for it.
    out.cardDesign = Object.fromEntries(Object.entries(input.card_design).filter(([, v]) => v !== null && v !== undefined)) as CardDesign;
  }
  if (input.is_active !== undefined) out.isActive = input.is_active;
  if (input.auto_assign !== undefined) out.autoAssign = input.auto_assign;
  if (input.points_enabled !== undefined) out.pointsEnabled = input.points_enabled;
  if (input.initial_bonus_points !== undefined) out.initialBonusPoints = input.initial_bonus_points;
  if (input.points_expiration_days !== undefined) out.pointsExpirationDays = input.points_expiration_days;
  if (input.points_per_currency !== undefined) out.pointsPerCurrency = rate(input.points_per_currency);
  if (input.currency_amount !== undefined) out.currencyAmount = rate(input.currency_amount);
  if (input.round_points_up !== undefined) out.roundPointsUp = input.round_points_up;
  if (input.min_points_per_purchase !== undefined) out.minPointsPerPurchase = input.min_points_per_purchase;
  if (input.max_points_per_purchase !== undefined) out.maxPointsPerPurchase = input.max_points_per_purchase;
  if (input.points_per_visit !== undefined) out.pointsPerVisit = input.points_per_visit;
  if (input.points_redemption_enabled !== undefined) out.pointsRedemptionEnabled = input.points_redemption_enabled;
  if (input.points_per_currency_redemption !== undefined) out.pointsPerCurrencyRedemption = rate(input.points_per_currency_redemption);
  if (input.currency_amount_redemption !== undefined) out.currencyAmountRedemption = rate(input.currency_amount_redemption);
  if (input.min_points_for_redemption !== undefined) out.minPointsForRedemption = input.min_points_for_redemption;
  if (input.max_points_per_redemption !== undefined) out.maxPointsPerRedemption = input.max_points_per_redemption;
  if (input.default_coupon_validity_days !== undefined) out.defaultCouponValidityDays = input.default_coupon_validity_days;
  if (input.tier_basis !== undefined) out.tierBasis = input.tier_basis;
  if (input.tier_window !== undefined) out.tierWindow = input.tier_window;
  if (input.tier_downgrade !== undefined) out.tierDowngrade = input.tier_downgrade;
  if (input.tier_time_zone !== undefined) out.tierTimeZone = canonicalTimeZone(input.tier_time_zone)!;
  return out;
}

// ---- views ----------------------------------------------------------------------------

export type PartnerCardView = Static<typeof PartnerCard>;
export type CreatedCardView = Pick<PartnerCardView, 'id' | 'title' | 'description' | 'is_active' | 'default_coupon_validity_days' | 'created_at' | 'updated_at'>;
export type CardListItemView = Pick<PartnerCardView, 'id' | 'title' | 'is_active' | 'default_coupon_validity_days' | 'created_at' | 'updated_at'>;
export type UpdatedCardView = Partial<Omit<PartnerCardView, 'id' | 'created_at'>> & { updated_at: string };

function fullView(row: CardRow, shopIds: number[]): PartnerCardView {
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    terms_conditions: row.termsConditions,
    card_design: row.cardDesign,
    is_active: row.isActive,
    shop_ids: shopIds,
    auto_assign: row.autoAssign,
    points_enabled: row.pointsEnabled,
    initial_bonus_points: row.initialBonusPoints,
    points_expiration_days: row.pointsExpirationDays,
    points_per_currency: amountToJson(row.pointsPerCurrency),
    currency_amount: amountToJson(row.currencyAmount),
    round_points_up: row.roundPointsUp,
    min_points_per_purchase: row.minPointsPerPurchase,
    max_points_per_purchase: row.maxPointsPerPurchase,
    points_per_visit: row.pointsPerVisit,
    points_redemption_enabled: row.pointsRedemptionEnabled,
    points_per_currency_redemption: amountToJson(row.pointsPerCurrencyRedemption),
    currency_amount_redemption: amountToJson(row.currencyAmountRedemption),
    min_points_for_redemption: row.minPointsForRedemption,
    max_points_per_redemption: row.maxPointsPerRedemption,
    default_coupon_validity_days: row.defaultCouponValidityDays,
    tier_basis: row.tierBasis,
    tier_window: row.tierWindow,
    tier_downgrade: row.tierDowngrade,
    tier_time_zone: row.tierTimeZone,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

function listItemView(row: CardListRow | CardRow): CardListItemView {
  return {
    id: row.id,
    title: row.title,
    is_active: row.isActive,
    default_coupon_validity_days: row.defaultCouponValidityDays,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

function createdView(row: CardRow): CreatedCardView {
  const { id, title, is_active, default_coupon_validity_days, created_at, updated_at } = listItemView(row);
  return { id, title, description: row.description, is_active, default_coupon_validity_days, created_at, updated_at };
}

/** The fields the request sent, as stored, plus updated_at (the spec's PUT response). */
function updatedView(row: CardRow, shopIds: number[], sent: CardField[]): UpdatedCardView {
  const full = fullView(row, shopIds);
  const out: Record<string, unknown> = {};
  for (const field of sent) out[field] = full[field];
  out.updated_at = full.updated_at;
  return out as UpdatedCardView;
}

// ---- for other modules ----------------------------------------------------------------

/**
 * A programme's rules, for the points ledger and coupons. Rates are exact ten-thousandths
 * (the units of src/shared/money.ts), never floats. A deleted programme is still returned
 * (with `deleted: true`): customers' cards in it keep their history.
 */
export interface ProgrammeRules {
  id: number;
  partnerId: number;
  isActive: boolean;
  deleted: boolean;
  pointsEnabled: boolean;
  initialBonusPoints: number;
  pointsExpirationDays: number | null;
  pointsPerCurrency: bigint;
  currencyAmount: bigint;
  roundPointsUp: boolean;
  minPointsPerPurchase: number;
  maxPointsPerPurchase: number | null;
  pointsPerVisit: number;
  pointsRedemptionEnabled: boolean;
  pointsPerCurrencyRedemption: bigint;
  currencyAmountRedemption: bigint;
  minPointsForRedemption: number;
  maxPointsPerRedemption: number | null;
  defaultCouponValidityDays: number | null;
}

const units = (numeric: string) => parseAmount(numeric) ?? 0n;

function programmeRules(row: CardRow): ProgrammeRules {
  return {
    id: row.id,
    partnerId: row.partnerId,
    isActive: row.isActive && row.deletedAt === null,
    deleted: row.deletedAt !== null,
    pointsEnabled: row.pointsEnabled,
    initialBonusPoints: row.initialBonusPoints,
    pointsExpirationDays: row.pointsExpirationDays,
    pointsPerCurrency: units(row.pointsPerCurrency),
    currencyAmount: units(row.currencyAmount),
    roundPointsUp: row.roundPointsUp,
    minPointsPerPurchase: row.minPointsPerPurchase,
    maxPointsPerPurchase: row.maxPointsPerPurchase,
    pointsPerVisit: row.pointsPerVisit,
    pointsRedemptionEnabled: row.pointsRedemptionEnabled,
    pointsPerCurrencyRedemption: units(row.pointsPerCurrencyRedemption),
    currencyAmountRedemption: units(row.currencyAmountRedemption),
    minPointsForRedemption: row.minPointsForRedemption,
    maxPointsPerRedemption: row.maxPointsPerRedemption,
    defaultCouponValidityDays: row.defaultCouponValidityDays,
  };
}

// ---- the seed's insert ----------------------------------------------------------------

/** Trusted input (the demo seed); the API goes through createCard. */
export interface NewPartnerCard {
  title: { en: string; lt: string };
  description: LocalizedText;
  termsConditions: LocalizedText;
  cardDesign: CardDesign;
  shopIds?: number[];
  initialBonusPoints?: number;
  pointsPerCurrency?: string;
  currencyAmount?: string;
  pointsRedemptionEnabled?: boolean;
}

/** Thrown out of a transaction to roll it back, carrying the failure to return. */
class RolledBack extends Error {
  constructor(readonly result: Result<never>) {
    super('rolled back');
  }
}


export class PartnerCardsService {
  constructor(
    private readonly db: Db,
    private readonly shops: ShopsService,
    private readonly hooks: { onTierSettingsChanged?: () => void } = {},
  ) {}

  /** Insert a card programme; `shopIds` must already be checked to be the partner's own. */
  async create(tx: Executor, partnerId: number, card: NewPartnerCard): Promise<{ id: number }> {
    const { shopIds = [], ...fields } = card;
    const row = await repo.insert(tx, partnerId, fields);
    if (shopIds.length > 0) await repo.replaceShops(tx, partnerId, row.id, shopIds);
    return { id: row.id };
  }

  /**
   * Every rule problem of a body (which may have failed the schema too), for a create or —
   * with `id` — an update of that card. Fails with not-found when the card is not the partner's.
   */
  async problems(partnerId: number, body: Record<string, unknown>, id?: number): Promise<Result<FieldErrors>> {
    let existing: CardRow | undefined;
    if (id !== undefined) {
      existing = await repo.find(this.db, partnerId, id);
      if (!existing) return missing('resource.partner_card');
    }
    return ok(await this.fieldErrors(this.db, partnerId, body, existing));
  }

  private async fieldErrors(tx: Executor, partnerId: number, body: Record<string, unknown>, existing: CardRow | undefined): Promise<FieldErrors> {
    const errors = ruleErrors(body, existing);
    const ids = body.shop_ids;
    if (Array.isArray(ids) && ids.every(Number.isInteger)) {
      const owned = new Set(await this.shops.ownedIds(partnerId, ids.filter(isShopId), tx));
      const missing = (ids as number[]).filter((id) => !owned.has(id));
      if (missing.length > 0) Object.assign(errors, shopsNotOwnedError(missing));
    }
    return errors;
  }

  /**
   * Create in the caller's transaction (the route's Idempotency-Key one). On a failure the
   * caller must not commit: unwrapping the result inside the transaction throws, which rolls back.
   */
  async createCard(partnerId: number, input: NewCardInput, tx: Executor): Promise<Result<CreatedCardView>> {
    const errors = await this.fieldErrors(tx, partnerId, input as unknown as Record<string, unknown>, undefined);
    if (Object.keys(errors).length > 0) return fail('VALIDATION', { fields: errors });
    const row = await repo.insert(tx, partnerId, columnsOf(input) as CardColumns);
    const linked = await this.linkShops(tx, partnerId, row.id, input.shop_ids);
    if (!linked.ok) return linked;
    return ok(createdView(row));
  }

  async getCard(partnerId: number, id: number): Promise<PartnerCardView | undefined> {
    const row = await repo.find(this.db, partnerId, id);
    return row && fullView(row, await repo.shopIds(this.db, partnerId, id));
  }

  async listCards(partnerId: number, filter: CardListFilter, page: PageWindow): Promise<{ items: CardListItemView[]; total: number }> {
    const { rows, total } = await repo.list(this.db, partnerId, filter, page.perPage, page.offset);
    return { items: rows.map(listItemView), total };
  }

  /** A partial update: only the fields sent change; the answer is those fields plus updated_at. */
  async updateCard(partnerId: number, id: number, input: CardInput): Promise<Result<UpdatedCardView>> {
    const sent = CARD_INPUT_FIELDS.filter((f) => input[f] !== undefined);
    let tierSettingsChanged = false;
    try {
      const result = await this.db.transaction(async (tx): Promise<Result<UpdatedCardView>> => {
        // Locked: a concurrent update cannot slip a min past the max this one checks against.
        const existing = await repo.find(tx, partnerId, id, { forUpdate: true });
        if (!existing) return missing('resource.partner_card');
        const errors = await this.fieldErrors(tx, partnerId, input as unknown as Record<string, unknown>, existing);
        if (Object.keys(errors).length > 0) return fail('VALIDATION', { fields: errors });
        if (sent.length === 0) return ok({ updated_at: iso(existing.updatedAt) });
        const columns = columnsOf(input);
        tierSettingsChanged = TIER_SETTING_COLUMNS.some((c) => columns[c] !== undefined && columns[c] !== existing[c]);
        // The tier rules changed: every card of the programme is re-evaluated in the background.
        if (tierSettingsChanged) columns.tiersVersion = sql`${partnerCards.tiersVersion} + 1` as unknown as number;
        const row = (await repo.update(tx, partnerId, id, columns))!;
        const linked = await this.linkShops(tx, partnerId, id, input.shop_ids);
        // The card row was already written: roll it back with the failure.
        if (!linked.ok) throw new RolledBack(linked);
        const shopIds = sent.includes('shop_ids') ? await repo.shopIds(tx, partnerId, id) : [];
        return ok(updatedView(row, shopIds, sent));
      });
      if (result.ok && tierSettingsChanged) this.hooks.onTierSettingsChanged?.();
      return result;
    } catch (err) {
      if (err instanceof RolledBack) return err.result;
      throw err;
    }
  }

  deleteCard(partnerId: number, id: number): Promise<boolean> {
    return repo.softDelete(this.db, partnerId, id);
  }

  /** Read-only, for other modules: the programme's rules, deleted ones included; undefined if not the partner's. */
  async findProgramme(partnerId: number, id: number, tx: Executor = this.db): Promise<ProgrammeRules | undefined> {
    const row = await repo.findIncludingDeleted(tx, partnerId, id);
    return row && programmeRules(row);
  }

  /**
   * Replace the card's shops. The ids were checked to be the partner's, but a shop deleted
   * since then makes the link's foreign key fail: that is the same 422, not a 500.
   */
  private async linkShops(tx: Executor, partnerId: number, cardId: number, shopIds: number[] | undefined): Promise<Result<void>> {
    if (shopIds === undefined) return ok(undefined);
    try {
      await repo.replaceShops(tx, partnerId, cardId, [...shopIds].sort((a, b) => a - b));
      return ok(undefined);
    } catch (err) {
      if (pgErrorCode(err) === '23503') return fail('VALIDATION', { fields: shopsNotOwnedError(shopIds) });
      throw err;
    }
  }

  /**
   * What issuing (or showing) a loyalty card needs to know about a programme, whoever's it is
   * (callers check the owner). A deleted programme does not exist for issuing.
   */
  async programme(tx: Executor, id: number, opts: { includeDeleted?: boolean } = {}): Promise<ProgrammeForIssue | undefined> {
    const [row] = await tx
      .select(programmeColumns)
      .from(partnerCards)
      .where(opts.includeDeleted ? eq(partnerCards.id, id) : and(eq(partnerCards.id, id), isNull(partnerCards.deletedAt)));
    if (!row) return undefined;
    // A deleted programme is shown as inactive.
    return { ...row, isActive: row.isActive && row.deletedAt === null };
  }

  /** The partner's active programmes that assign a card to every new customer. */
  autoAssignProgrammes(tx: Executor, partnerId: number): Promise<ProgrammeForIssue[]> {
    return tx
      .select(programmeColumns)
      .from(partnerCards)
      .where(
        and(
          eq(partnerCards.partnerId, partnerId),
          eq(partnerCards.isActive, true),
          eq(partnerCards.autoAssign, true),
          isNull(partnerCards.deletedAt),
        ),
      )
      .orderBy(asc(partnerCards.id));
  }
}

const programmeColumns = {
  id: partnerCards.id,
  deletedAt: partnerCards.deletedAt,
  partnerId: partnerCards.partnerId,
  isActive: partnerCards.isActive,
  pointsEnabled: partnerCards.pointsEnabled,
  initialBonusPoints: partnerCards.initialBonusPoints,
  title: partnerCards.title,
  pointsPerCurrency: partnerCards.pointsPerCurrency,
  currencyAmount: partnerCards.currencyAmount,
  pointsRedemptionEnabled: partnerCards.pointsRedemptionEnabled,
  pointsPerCurrencyRedemption: partnerCards.pointsPerCurrencyRedemption,
  currencyAmountRedemption: partnerCards.currencyAmountRedemption,
  minPointsForRedemption: partnerCards.minPointsForRedemption,
  maxPointsPerRedemption: partnerCards.maxPointsPerRedemption,
};

export interface ProgrammeForIssue {
  id: number;
  deletedAt: Date | null;
  partnerId: number;
  isActive: boolean;
  pointsEnabled: boolean;
  initialBonusPoints: number;
  title: { en: string; lt: string };
  pointsPerCurrency: string;
  currencyAmount: string;
  pointsRedemptionEnabled: boolean;
  pointsPerCurrencyRedemption: string;
  currencyAmountRedemption: string;
  minPointsForRedemption: number;
  maxPointsPerRedemption: number | null;
}
