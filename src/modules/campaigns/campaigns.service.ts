// Campaigns CRUD (DESIGN.md §12 "Campaign"): the rules a schema cannot state, checked on the
// campaign as it will be after the request (an update is merged with the stored row, nested
// objects field by field), and the view. Evaluation is not here: src/modules/campaigns/
// evaluate.ts and the points ledger read the same table.
//
// Every problem of a body comes back in one 422 (Shape A, dotted field paths such as
// `effect.value` or `schedule.to_time`); the routes merge the schema's problems with these.
import type { Static } from 'typebox';
import type { Db, Executor } from '../../infra/db/index.js';
import { fail, failOn, missing, ok, type FieldErrors, type Result } from '../../shared/errors.js';
import { amountToJson, formatAmount, parseAmount } from '../../shared/money.js';
import type { PageWindow } from '../../shared/pagination.js';
import { iso, type Clock } from '../../shared/time.js';
import { canonicalTimeZone } from '../../shared/zoned-time.js';
import { addFieldError, hasOwn, isPlainObject } from '../../shared/validation.js';
import type { PartnerCardsService } from '../partner-cards/partner-cards.service.js';
import type { CatalogService } from '../catalog/catalog.service.js';
import type { ShopsService } from '../shops/shops.service.js';
import type { TiersService } from '../tiers/tiers.service.js';
import { budgetLeft, campaignStatus } from './campaign-status.js';
import { campaignsRepository as repo, type CampaignColumns, type CampaignListFilter, type CampaignRow } from './campaigns.repository.js';
import { Campaign, CreateCampaignBody, MAX_LIVE_CAMPAIGNS, MAX_MULTIPLIER, UpdateCampaignBody } from './campaigns.schemas.js';

export type CampaignView = Static<typeof Campaign>;
/** A create body after the schema (top-level defaults filled in). */
export type NewCampaignInput = Static<typeof CreateCampaignBody>;
/** An update body after the schema: only what was sent, nested objects partial too. */
export type CampaignInput = Static<typeof UpdateCampaignBody>;

const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(10000, 0, 1);
const isRowId = (id: unknown): id is number => Number.isInteger(id) && (id as number) >= 1 && (id as number) <= 2147483647;
const objectAt = (body: Record<string, unknown>, key: string): Record<string, unknown> => (isPlainObject(body[key]) ? body[key] : {});

function instant(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) && ms >= EARLIEST && ms < LATEST ? ms : undefined;
}

/** A JSON number written with at most `places` decimals (0.1 + 0.2 is not 0.3 here, and is refused). */
function hasAtMostDecimals(value: number, places: number): boolean {
  const m = /^\d+(?:\.(\d+))?$/.exec(String(value));
  return m !== null && (m[1] ?? '').length <= places;
}

/** The checks a schema cannot make, on a body that may also have failed the schema, merged with the stored campaign on an update. */
function ruleErrors(body: Record<string, unknown>, existing: CampaignRow | undefined): FieldErrors {
  const errors: FieldErrors = {};

  for (const field of ['starts_at', 'ends_at'] as const) {
    if (typeof body[field] === 'string' && instant(body[field]) === undefined) addFieldError(errors, field, 'validation.format', { format: 'date-time (1970 to 9999)' });
  }
  if (hasOwn(body, 'starts_at') || hasOwn(body, 'ends_at')) {
    const starts = hasOwn(body, 'starts_at') ? instant(body.starts_at) : existing?.startsAt?.getTime();
    const ends = hasOwn(body, 'ends_at') ? instant(body.ends_at) : existing?.endsAt?.getTime();
    if (starts !== undefined && ends !== undefined && ends <= starts) addFieldError(errors, 'ends_at', 'campaigns.ends_before_starts');
  }

  // The effect as it will be: changing the type alone checks the stored value against it.
  if (hasOwn(body, 'effect')) {
    const effect = objectAt(body, 'effect');
    const type = hasOwn(effect, 'type') ? effect.type : existing?.effectType;
    const value = hasOwn(effect, 'value') ? effect.value : existing ? Number(existing.effectValue) : undefined;
    if (typeof value === 'number' && value > 0) {
      if (type === 'multiplier' && !(value > 1 && value <= MAX_MULTIPLIER)) addFieldError(errors, 'effect.value', 'campaigns.multiplier_range', { max: MAX_MULTIPLIER });
      else if (type === 'bonus' && !Number.isInteger(value)) addFieldError(errors, 'effect.value', 'campaigns.bonus_whole');
      else if (type !== 'bonus' && !hasAtMostDecimals(value, 2)) addFieldError(errors, 'effect.value', 'validation.decimal_places', { limit: 2 });
    }
  }

  const schedule = objectAt(body, 'schedule');
  if (hasOwn(schedule, 'from_time') || hasOwn(schedule, 'to_time')) {
    const from = hasOwn(schedule, 'from_time') ? schedule.from_time : (existing?.fromTime ?? null);
    const to = hasOwn(schedule, 'to_time') ? schedule.to_time : (existing?.toTime ?? null);
    const isTime = (v: unknown) => typeof v === 'string';
    if (isTime(from) && to === null) addFieldError(errors, 'schedule.to_time', 'campaigns.time_pair');
    else if (from === null && isTime(to)) addFieldError(errors, 'schedule.from_time', 'campaigns.time_pair');
    else if (isTime(from) && from === to) addFieldError(errors, 'schedule.to_time', 'campaigns.times_equal');
  }
  if (typeof schedule.time_zone === 'string' && canonicalTimeZone(schedule.time_zone) === undefined) {
    addFieldError(errors, 'schedule.time_zone', 'campaigns.time_zone');
  }

  const minAmount = objectAt(body, 'conditions').min_amount;
  if (typeof minAmount === 'number' && minAmount >= 0 && parseAmount(minAmount) === undefined) {
    addFieldError(errors, 'conditions.min_amount', 'validation.decimal_places', { limit: 4 });
  }
  return errors;
}

/** An exact decimal for a numeric column, from a number the rules accepted (≤ 4 decimals). */
const exact = (value: number) => formatAmount(parseAmount(value)!);

function columnsOf(input: CampaignInput): Partial<CampaignColumns> {
  const out: Partial<CampaignColumns> = {};
  if (input.partner_card_id !== undefined) out.partnerCardId = input.partner_card_id;
  if (input.name !== undefined) out.name = input.name.trim();
  if (input.description !== undefined) out.description = input.description;
  if (input.is_active !== undefined) out.isActive = input.is_active;
  if (input.starts_at !== undefined) out.startsAt = input.starts_at === null ? null : new Date(input.starts_at);
  if (input.ends_at !== undefined) out.endsAt = input.ends_at === null ? null : new Date(input.ends_at);
  const s = input.schedule;
  if (s?.days_of_week !== undefined) out.daysOfWeek = [...s.days_of_week].sort((a, b) => a - b);
  if (s?.from_time !== undefined) out.fromTime = s.from_time;
  if (s?.to_time !== undefined) out.toTime = s.to_time;
  if (s?.time_zone !== undefined) out.timeZone = canonicalTimeZone(s.time_zone)!;
  if (input.shop_ids !== undefined) out.shopIds = [...input.shop_ids];
  if (input.tier_ids !== undefined) out.tierIds = [...input.tier_ids];
  const c = input.conditions;
  if (c?.min_amount !== undefined) out.minAmount = c.min_amount === null ? null : exact(c.min_amount);
  if (c?.product_ids !== undefined) out.productIds = [...c.product_ids];
  if (c?.category_ids !== undefined) out.categoryIds = [...c.category_ids];
  if (c?.skus !== undefined) out.skus = [...c.skus];
  if (c?.first_purchase_only !== undefined) out.firstPurchaseOnly = c.first_purchase_only;
  if (input.effect?.type !== undefined) out.effectType = input.effect.type;
  if (input.effect?.value !== undefined) out.effectValue = exact(input.effect.value);
  if (input.priority !== undefined) out.priority = input.priority;
  if (input.exclusive !== undefined) out.exclusive = input.exclusive;
  const l = input.limits;
  if (l?.per_customer !== undefined) out.limitPerCustomer = l.per_customer;
  if (l?.per_customer_per_day !== undefined) out.limitPerCustomerPerDay = l.per_customer_per_day;
  if (l?.uses !== undefined) out.limitUses = l.uses;
  if (l?.points_budget !== undefined) out.pointsBudget = l.points_budget;
  return out;
}

export function campaignView(row: CampaignRow, now: Date): CampaignView {
  return {
    id: row.id,
    partner_card_id: row.partnerCardId,
    name: row.name,
    description: row.description,
    is_active: row.isActive,
    starts_at: iso(row.startsAt),
    ends_at: iso(row.endsAt),
    schedule: { days_of_week: row.daysOfWeek, from_time: row.fromTime, to_time: row.toTime, time_zone: row.timeZone },
    shop_ids: row.shopIds,
    tier_ids: row.tierIds,
    conditions: {
      min_amount: row.minAmount === null ? null : amountToJson(row.minAmount),
      product_ids: row.productIds,
      category_ids: row.categoryIds,
      skus: row.skus,
      first_purchase_only: row.firstPurchaseOnly,
    },
    effect: { type: row.effectType, value: amountToJson(row.effectValue) },
    priority: row.priority,
    exclusive: row.exclusive,
    limits: {
      per_customer: row.limitPerCustomer,
      per_customer_per_day: row.limitPerCustomerPerDay,
      uses: row.limitUses,
      points_budget: row.pointsBudget,
    },
    status: campaignStatus(row, now),
    uses_count: row.usesCount,
    points_awarded: row.pointsAwarded,
    budget_left: budgetLeft(row),
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

const campaignNotFound = () => missing('resource.campaign');
const foreign = (ids: number[], owned: number[]) => {
  const mine = new Set(owned);
  return ids.filter((id) => !mine.has(id));
};
const validIds = (ids: unknown): ids is number[] => Array.isArray(ids) && ids.length > 0 && ids.every(isRowId);
const tooMany = () =>
  failOn('QUOTA_EXCEEDED', 'partner_card_id', 'campaigns.too_many', { params: { limit: MAX_LIVE_CAMPAIGNS }, meta: { limit: MAX_LIVE_CAMPAIGNS } });
/** A campaign that has not ended at `now` counts under the programme's quota (DESIGN.md §12), paused or exhausted alike. */
const notEnded = (endsAt: Date | null, now: Date) => endsAt === null || endsAt.getTime() > now.getTime();

export class CampaignsService {
  constructor(
    private readonly deps: {
      db: Db;
      clock: Clock;
      shops: ShopsService;
      partnerCards: PartnerCardsService;
      catalog: CatalogService;
      tiers: TiersService;
    },
  ) {}

  private get db() {
    return this.deps.db;
  }

  /** Every rule problem of a body (which may have failed the schema too); with `id`, of an update of that campaign. */
  async problems(partnerId: number, body: Record<string, unknown>, id?: number): Promise<Result<FieldErrors>> {
    let existing: CampaignRow | undefined;
    if (id !== undefined) {
      existing = await repo.find(this.db, partnerId, id);
      if (!existing) return campaignNotFound();
    }
    return ok(await this.fieldErrors(this.db, partnerId, body, existing));
  }

  /** The rules, then the tenant checks: the programme, shops, products and categories must be the partner's (422 on that field). */
  private async fieldErrors(tx: Executor, partnerId: number, body: Record<string, unknown>, existing: CampaignRow | undefined): Promise<FieldErrors> {
    const errors = ruleErrors(body, existing);
    if (isRowId(body.partner_card_id)) {
      const programme = await this.deps.partnerCards.findProgramme(partnerId, body.partner_card_id, tx);
      if (!programme || programme.deleted) addFieldError(errors, 'partner_card_id', 'campaigns.card_not_owned');
    }
    if (validIds(body.shop_ids)) {
      const others = foreign(body.shop_ids, await this.deps.shops.ownedIds(partnerId, body.shop_ids, tx));
      if (others.length > 0) addFieldError(errors, 'shop_ids', 'campaigns.shops_not_owned', { ids: others.join(', ') });
    }
    const conditions = objectAt(body, 'conditions');
    if (validIds(conditions.product_ids)) {
      const others = foreign(conditions.product_ids, await this.deps.catalog.ownedProductIds(partnerId, conditions.product_ids, tx));
      if (others.length > 0) addFieldError(errors, 'conditions.product_ids', 'campaigns.products_not_owned', { ids: others.join(', ') });
    }
    if (validIds(conditions.category_ids)) {
      const others = foreign(conditions.category_ids, await this.deps.catalog.ownedCategoryIds(partnerId, conditions.category_ids, tx));
      if (others.length > 0) addFieldError(errors, 'conditions.category_ids', 'campaigns.categories_not_owned', { ids: others.join(', ') });
    }
    // tier_ids are tiers of the campaign's programme as it will be: moving a campaign to another
    // programme checks its stored tier_ids against that one.
    const programme = isRowId(body.partner_card_id) ? body.partner_card_id : existing?.partnerCardId;
    const tierIds = hasOwn(body, 'tier_ids') ? body.tier_ids : existing && programme !== existing.partnerCardId ? existing.tierIds : undefined;
    if (programme !== undefined && validIds(tierIds)) {
      const others = foreign(tierIds, await this.deps.tiers.programmeTierIds(partnerId, programme, tierIds, tx));
      if (others.length > 0) addFieldError(errors, 'tier_ids', 'campaigns.tiers_not_in_programme', { ids: others.join(', ') });
    }
    return errors;
  }

  /**
   * The programme's quota of campaigns that have not ended (DESIGN.md §12), for a campaign
   * that will count under it and did not before (`except`: the campaign being updated). Under
   * the programme's quota lock, held to the commit, so that parallel creates cannot pass it.
   */
  private async quotaLeft(tx: Executor, partnerCardId: number, now: Date, except?: number): Promise<boolean> {
    await repo.lockQuota(tx, partnerCardId);
    return (await repo.countNotEnded(tx, partnerCardId, now, except)) < MAX_LIVE_CAMPAIGNS;
  }

  /** Create in the caller's transaction (the route's Idempotency-Key one). Missing nested fields take the table's defaults. */
  async createCampaign(partnerId: number, input: NewCampaignInput, tx: Executor): Promise<Result<CampaignView>> {
    const errors = await this.fieldErrors(tx, partnerId, input as unknown as Record<string, unknown>, undefined);
    if (Object.keys(errors).length > 0) return fail('VALIDATION', { fields: errors });
    const now = this.deps.clock.now();
    const endsAt = input.ends_at == null ? null : new Date(input.ends_at);
    if (notEnded(endsAt, now) && !(await this.quotaLeft(tx, input.partner_card_id, now))) return tooMany();
    const row = await repo.insert(tx, partnerId, columnsOf(input) as CampaignColumns, now);
    return ok(campaignView(row, now));
  }

  async getCampaign(partnerId: number, id: number): Promise<CampaignView | undefined> {
    const row = await repo.find(this.db, partnerId, id);
    return row && campaignView(row, this.deps.clock.now());
  }

  async listCampaigns(partnerId: number, filter: CampaignListFilter, page: PageWindow): Promise<{ items: CampaignView[]; total: number }> {
    const now = this.deps.clock.now();
    const { rows, total } = await repo.list(this.db, partnerId, filter, now, page.perPage, page.offset);
    return { items: rows.map((row) => campaignView(row, now)), total };
  }

  /** A partial update (nested objects too), checked against the stored campaign under its row lock; answers the whole campaign. */
  async updateCampaign(partnerId: number, id: number, input: CampaignInput): Promise<Result<CampaignView>> {
    return this.db.transaction(async (tx) => {
      const existing = await repo.find(tx, partnerId, id, { lock: true });
      if (!existing) return campaignNotFound();
      const errors = await this.fieldErrors(tx, partnerId, input as unknown as Record<string, unknown>, existing);
      if (Object.keys(errors).length > 0) return fail('VALIDATION', { fields: errors });
      const now = this.deps.clock.now();
      // An update that brings an ended campaign back (ends_at later or cleared) or moves a live
      // one to another programme adds one to that programme's quota; pausing, editing or
      // resuming (is_active) does not — a paused campaign counts already.
      const programme = input.partner_card_id ?? existing.partnerCardId;
      const endsAt = input.ends_at === undefined ? existing.endsAt : input.ends_at === null ? null : new Date(input.ends_at);
      const counted = programme === existing.partnerCardId && notEnded(existing.endsAt, now);
      if (notEnded(endsAt, now) && !counted && !(await this.quotaLeft(tx, programme, now, id))) return tooMany();
      const columns = columnsOf(input);
      const row = await repo.update(tx, partnerId, id, columns, now);
      if (!row) return campaignNotFound();
      if ((columns.limitUses !== undefined && columns.limitUses !== existing.limitUses) || (columns.pointsBudget !== undefined && columns.pointsBudget !== existing.pointsBudget)) {
        await repo.clearLimitShards(tx, id);
      }
      return ok(campaignView(row, now));
    });
  }

  /** Soft delete: gone from the API and from evaluation; earned points keep their campaign id, and returns still give its budget back. */
  deleteCampaign(partnerId: number, id: number): Promise<boolean> {
    return repo.softDelete(this.db, partnerId, id, this.deps.clock.now());
  }
}
