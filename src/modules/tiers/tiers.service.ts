// Tiers of a card programme (DESIGN.md §13): the CRUD (partner JWT), the tier fields every
// card view adds, and a card's tier history. The ledger moves a card's tier state
// (src/modules/points/tier-ledger.ts); this module only shows it — from the card's stored columns, never a
// recount — and bumps the programme's tiers_version on every change of its tiers, so that
// the background job re-evaluates the programme's cards (`onTiersChanged` wakes it).
import type { Static } from 'typebox';
import { isUniqueViolation, type Db, type Executor } from '../../infra/db/index.js';
import { fail, failOn, missing, ok, type FieldErrors, type Result } from '../../shared/errors.js';
import { amountToJson, formatAmount, parseAmount } from '../../shared/money.js';
import type { PageWindow } from '../../shared/pagination.js';
import { iso, type Clock } from '../../shared/time.js';
import { addFieldError } from '../../shared/validation.js';
import { nextTier, textToUnits, unitsToNumber, type TierDef } from './tier-rules.js';
import { tiersCrudRepository as crud, type ProgrammeTiers, type TierColumns } from './tiers-crud.repository.js';
import { tiersRepository, type TierHistoryRow, type TierRow } from './tiers.repository.js';
import { CardTierFields, CreateTierBody, MAX_TIERS, Tier, TierHistoryItem, TierSummary, UpdateTierBody } from './tiers.schemas.js';

export type TierView = Static<typeof Tier>;
export type TierHistoryView = Static<typeof TierHistoryItem>;
export type TierSummaryView = Static<typeof TierSummary>;
export type NewTierInput = Static<typeof CreateTierBody>;
export type TierInput = Static<typeof UpdateTierBody>;
/** What every card view adds (DESIGN.md §13). */
export type CardTierView = Static<typeof CardTierFields>;

/** The columns of a loyalty card a tier view is built from. */
export interface CardTierColumns {
  partnerCardId: number;
  tierId: number | null;
  /** numeric text, 4 decimals */
  tierValue: string;
  tierKeepUntil: Date | null;
}

/**
 * A card's tier view from its stored state and its programme's tiers. A tier id no longer
 * among the programme's tiers (deleted, not yet re-evaluated) shows as no tier. `next` is
 * the lowest tier above both the value and the tier held: a tier kept from an earlier window
 * (value below its threshold) is not followed by a lower one.
 */
export function tierView(card: CardTierColumns, programme: ProgrammeTiers | undefined): CardTierView {
  const tiers = programme?.tiers ?? [];
  const held = card.tierId === null ? undefined : tiers.find((t) => t.id === card.tierId);
  const valueUnits = textToUnits(card.tierValue);
  const above = tiers.filter((t) => held === undefined || t.threshold > held.threshold).map((t) => ({ ...t, multiplierHundredths: 100n }) satisfies TierDef);
  const next = nextTier(above, valueUnits);
  return {
    tier: held ? { id: held.id, name: held.name, color: held.color } : null,
    tier_progress: {
      basis: programme?.basis ?? 'points_earned',
      window: programme?.window ?? 'rolling_12_months',
      value: unitsToNumber(valueUnits),
      next: next && { id: next.tier.id, name: next.tier.name, threshold: next.tier.threshold, remaining: unitsToNumber(next.remainingUnits) },
      keep_until: held ? iso(card.tierKeepUntil) : null,
    },
  };
}

export function tierResource(row: TierRow): TierView {
  return {
    id: row.id,
    name: row.name,
    threshold: row.threshold,
    earn_multiplier: amountToJson(row.earnMultiplier),
    benefits: row.benefits,
    color: row.color,
  };
}

function historyView(row: TierHistoryRow): TierHistoryView {
  const side = (id: number | null, name: { en: string; lt: string } | null) => (name === null ? null : { id, name });
  return { from: side(row.fromTierId, row.fromName), to: side(row.toTierId, row.toName), reason: row.reason, at: iso(row.at) };
}

/** A JSON number written with at most `places` decimals. */
function hasAtMostDecimals(value: number, places: number): boolean {
  const m = /^\d+(?:\.(\d+))?$/.exec(String(value));
  return m !== null && (m[1] ?? '').length <= places;
}

/** The checks a schema cannot make, on a body that may also have failed the schema. */
export function tierRuleErrors(body: Record<string, unknown>): FieldErrors {
  const errors: FieldErrors = {};
  const m = body.earn_multiplier;
  if (typeof m === 'number' && m >= 1 && m <= 10 && !hasAtMostDecimals(m, 2)) addFieldError(errors, 'earn_multiplier', 'validation.decimal_places', { limit: 2 });
  return errors;
}

function columnsOf(input: TierInput): Partial<TierColumns> {
  const out: Partial<TierColumns> = {};
  if (input.name !== undefined) out.name = { en: input.name.en.trim(), lt: input.name.lt.trim() };
  if (input.threshold !== undefined) out.threshold = input.threshold;
  if (input.earn_multiplier !== undefined) out.earnMultiplier = formatAmount(parseAmount(input.earn_multiplier)!);
  if (input.benefits !== undefined) out.benefits = input.benefits === null ? null : { en: input.benefits.en.trim(), lt: input.benefits.lt.trim() };
  if (input.color !== undefined) out.color = input.color === null ? null : input.color;
  return out;
}

const programmeNotFound = () => missing('resource.partner_card');
const tierNotFound = () => missing('resource.tier', 'tier_id');
const thresholdTaken = () => failOn('DUPLICATE_VALUE', 'threshold', 'tiers.threshold_taken');
const tooMany = () => failOn('QUOTA_EXCEEDED', 'tiers', 'tiers.too_many', { params: { limit: MAX_TIERS }, meta: { limit: MAX_TIERS } });

export class TiersService {
  constructor(
    private readonly deps: {
      db: Db;
      clock: Clock;
      /** Tiers changed (committed): wakes the background re-evaluation of the programme's cards. */
      onTiersChanged: () => void;
    },
  ) {}

  private get db() {
    return this.deps.db;
  }

  /** After a committed create (the route's Idempotency-Key transaction commits after the service returns). */
  tiersChanged(): void {
    this.deps.onTiersChanged();
  }

  async listTiers(partnerId: number, partnerCardId: number): Promise<Result<TierView[]>> {
    if (!(await crud.programmeExists(this.db, partnerId, partnerCardId))) return programmeNotFound();
    return ok((await crud.list(this.db, partnerId, partnerCardId)).map(tierResource));
  }

  /** Which of `ids` are tiers of the partner's programme `partnerCardId` (the campaigns module checks tier_ids with it). */
  programmeTierIds(partnerId: number, partnerCardId: number, ids: readonly number[], tx: Executor = this.db): Promise<number[]> {
    return crud.idsInProgramme(tx, partnerId, partnerCardId, ids);
  }

  /** Rule problems of a body that failed the schema; with `id`, checks the tier exists first (404 wins). */
  async problems(partnerId: number, partnerCardId: number, body: Record<string, unknown>, id?: number): Promise<Result<FieldErrors>> {
    if (!(await crud.programmeExists(this.db, partnerId, partnerCardId))) return programmeNotFound();
    if (id !== undefined && !(await crud.find(this.db, partnerId, partnerCardId, id))) return tierNotFound();
    return ok(tierRuleErrors(body));
  }

  /** Create in the caller's transaction (the route's Idempotency-Key one); the caller calls tiersChanged() after it commits. */
  async createTier(partnerId: number, partnerCardId: number, input: NewTierInput, tx: Executor): Promise<Result<TierView>> {
    if (!(await crud.lockProgramme(tx, partnerId, partnerCardId))) return programmeNotFound();
    const errors = tierRuleErrors(input as unknown as Record<string, unknown>);
    if (Object.keys(errors).length > 0) return fail('VALIDATION', { fields: errors });
    if ((await crud.count(tx, partnerCardId)) >= MAX_TIERS) return tooMany();
    const row = await crud.insert(tx, partnerId, partnerCardId, columnsOf(input) as TierColumns, this.deps.clock.now());
    if (!row) return thresholdTaken();
    await tiersRepository.bumpVersion(tx, partnerCardId);
    return ok(tierResource(row));
  }

  async updateTier(partnerId: number, partnerCardId: number, id: number, input: TierInput): Promise<Result<TierView>> {
    let result: Result<TierView>;
    try {
      result = await this.db.transaction(async (tx) => {
        if (!(await crud.lockProgramme(tx, partnerId, partnerCardId))) return programmeNotFound();
        const existing = await crud.find(tx, partnerId, partnerCardId, id);
        if (!existing) return tierNotFound();
        const errors = tierRuleErrors(input as unknown as Record<string, unknown>);
        if (Object.keys(errors).length > 0) return fail('VALIDATION', { fields: errors });
        const fields = columnsOf(input);
        if (Object.keys(fields).length === 0) return ok(tierResource(existing));
        // The unique index refuses a taken threshold (the transaction then rolls back).
        const row = (await crud.update(tx, partnerId, partnerCardId, id, fields, this.deps.clock.now()))!;
        await tiersRepository.bumpVersion(tx, partnerCardId);
        return ok(tierResource(row));
      });
    } catch (err) {
      if (isUniqueViolation(err)) return thresholdTaken();
      throw err;
    }
    if (result.ok && Object.keys(columnsOf(input)).length > 0) this.tiersChanged();
    return result;
  }

  async deleteTier(partnerId: number, partnerCardId: number, id: number): Promise<Result<void>> {
    const result = await this.db.transaction(async (tx): Promise<Result<void>> => {
      if (!(await crud.lockProgramme(tx, partnerId, partnerCardId))) return programmeNotFound();
      if (!(await crud.delete(tx, partnerId, partnerCardId, id))) return tierNotFound();
      await tiersRepository.bumpVersion(tx, partnerCardId);
      return ok(undefined);
    });
    if (result.ok) this.tiersChanged();
    return result;
  }

  /**
   * The tier views of cards, in their order, with one lookup of their programmes' tiers and
   * settings (`db`: the caller's transaction when the cards were just written in it).
   */
  async cardViews(cards: readonly CardTierColumns[], db: Executor = this.db): Promise<CardTierView[]> {
    const programmes = await crud.forViews(db, [...new Set(cards.map((c) => c.partnerCardId))]);
    return cards.map((c) => tierView(c, programmes.get(c.partnerCardId)));
  }

  /** One card's tier view (e.g. for a `card.tier_changed` event). */
  async cardView(card: CardTierColumns, db: Executor = this.db): Promise<CardTierView> {
    return (await this.cardViews([card], db))[0]!;
  }

  /** The card's tier moves, newest first; the caller has checked the card is the caller's. */
  async history(cardId: number, page: PageWindow): Promise<{ items: TierHistoryView[]; total: number }> {
    const { rows, total } = await tiersRepository.history(this.db, cardId, page.perPage, page.offset);
    return { items: rows.map(historyView), total };
  }

  /**
   * Cards per tier of each of the partner's live programmes that have tiers (the Overview
   * chart): every tier, with 0 where no card holds it, and the cards without one. A card still
   * pointing at a deleted tier (re-evaluation pending) counts as without one, as its view shows.
   */
  async summary(partnerId: number): Promise<TierSummaryView[]> {
    const [ladders, counts] = await Promise.all([crud.ladders(this.db, partnerId), tiersRepository.cardsPerTier(this.db, partnerId)]);
    const key = (programme: number, tier: number | null) => `${programme}:${tier ?? ''}`;
    const cards = new Map<string, number>();
    for (const c of counts) cards.set(key(c.partnerCardId, c.tierId), (cards.get(key(c.partnerCardId, c.tierId)) ?? 0) + c.cards);
    return ladders.map((p) => ({
      partner_card_id: p.id,
      title: p.title,
      tiers: [
        { tier_id: null, name: null, color: null, cards: cards.get(key(p.id, null)) ?? 0 },
        ...p.tiers.map((t) => ({ tier_id: t.id, name: t.name, color: t.color, cards: cards.get(key(p.id, t.id)) ?? 0 })),
      ],
    }));
  }
}
