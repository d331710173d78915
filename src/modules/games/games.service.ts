// Game configuration: the rules a schema cannot state (exact probability sum, decimal
// places, reward-type fields, the time window, the partner's own card), transactions and
// the view. Gameplay (drawing a reward, limits per customer) comes in a later module.
import type { Static } from 'typebox';
import type { Db, Executor } from '../../infra/db/index.js';
import { fail, missing, ok, type FieldErrors, type Result } from '../../shared/errors.js';
import { amountToJson, formatAmount, parseAmount } from '../../shared/money.js';
import type { PageWindow } from '../../shared/pagination.js';
import { iso } from '../../shared/time.js';
import { addFieldError, hasOwn, isPlainObject } from '../../shared/validation.js';
import type { PartnerCardsService } from '../partner-cards/partner-cards.service.js';
import { gamesRepository as repo, type GameColumns, type GameRow, type RewardColumns, type RewardRow } from './games.repository.js';
import { REWARD_TYPES, type DiscountType, type GameType, type RewardType } from './games.tables.js';
import type { Game, RewardOut } from './games.schemas.js';

export interface RewardInput {
  label: string;
  probability: number;
  reward_type: RewardType;
  points?: number | null;
  coupon?: { title: string; discount_type: DiscountType; discount_value: number } | null;
}

/** A request body after the schema (create: defaults filled in; update: only what was sent). */
export interface GameInput {
  partner_card_id?: number | null;
  type?: GameType;
  name?: string;
  description?: string | null;
  is_active?: boolean;
  starts_at?: string | null;
  ends_at?: string | null;
  rewards?: RewardInput[];
  coupon_validity_days?: number | null;
  plays_per_customer_per_day?: number;
}
export type NewGameInput = GameInput & Required<Pick<GameInput, 'type' | 'name' | 'rewards'>>;

export type RewardView = Static<typeof RewardOut>;

export type GameView = Static<typeof Game>;

/** Probabilities are exact ten-thousandths (src/shared/money.ts units): 1 = 10000. */
const CERTAIN = 10_000n;
/** What timestamp columns and every client can hold. */
const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(10000, 0, 1);

const isSet = (v: unknown) => v !== undefined && v !== null;

function rewardErrors(errors: FieldErrors, rewards: unknown[]): void {
  let sum = 0n;
  let summable = true;
  rewards.forEach((reward, i) => {
    if (!isPlainObject(reward)) {
      summable = false;
      return;
    }
    const at = `rewards.${i}`;
    const p = reward.probability;
    const units = typeof p === 'number' && p > 0 && p <= 1 ? parseAmount(p) : undefined;
    if (units === undefined) {
      summable = false;
      if (typeof p === 'number' && p > 0 && p <= 1) addFieldError(errors, `${at}.probability`, 'validation.decimal_places', { limit: 4 });
    } else {
      sum += units;
    }
    const type = reward.reward_type;
    if (!(REWARD_TYPES as readonly unknown[]).includes(type)) return;
    if (type === 'points' && !isSet(reward.points)) addFieldError(errors, `${at}.points`, 'games.required_for_reward_type', { type: 'points' });
    if (type !== 'points' && isSet(reward.points)) addFieldError(errors, `${at}.points`, 'games.only_for_reward_type', { type: 'points' });
    if (type === 'coupon' && !isSet(reward.coupon)) addFieldError(errors, `${at}.coupon`, 'games.required_for_reward_type', { type: 'coupon' });
    if (type !== 'coupon' && isSet(reward.coupon)) addFieldError(errors, `${at}.coupon`, 'games.only_for_reward_type', { type: 'coupon' });
    const coupon = reward.coupon;
    if (isPlainObject(coupon) && typeof coupon.discount_value === 'number' && coupon.discount_value > 0) {
      const value = coupon.discount_value;
      if (parseAmount(value) === undefined) addFieldError(errors, `${at}.coupon.discount_value`, 'validation.decimal_places', { limit: 4 });
      else if (coupon.discount_type === 'percent' && value > 100) addFieldError(errors, `${at}.coupon.discount_value`, 'games.percent_over_100');
    }
  });
  // Exact decimal arithmetic: 0.1 + 0.2 + 0.7 is 1 here, as the partner meant.
  if (summable && rewards.length > 0 && sum !== CERTAIN) {
    addFieldError(errors, 'rewards', 'games.probability_sum', { sum: amountToJson(formatAmount(sum)) });
  }
}

/** A date-time the schema accepted as text → ms, or undefined when PostgreSQL could not hold it. */
function instant(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) && ms >= EARLIEST && ms < LATEST ? ms : undefined;
}

/** The checks a schema cannot make, on a body that may also have failed the schema. */
function ruleErrors(body: Record<string, unknown>, existing: GameRow | undefined): FieldErrors {
  const errors: FieldErrors = {};
  if (Array.isArray(body.rewards)) rewardErrors(errors, body.rewards);
  for (const field of ['starts_at', 'ends_at'] as const) {
    if (typeof body[field] === 'string' && instant(body[field]) === undefined) {
      addFieldError(errors, field, 'validation.format', { format: 'date-time (1970 to 9999)' });
    }
  }
  if (hasOwn(body, 'starts_at') || hasOwn(body, 'ends_at')) {
    const starts = hasOwn(body, 'starts_at') ? instant(body.starts_at) : existing?.startsAt?.getTime();
    const ends = hasOwn(body, 'ends_at') ? instant(body.ends_at) : existing?.endsAt?.getTime();
    if (starts !== undefined && ends !== undefined && ends <= starts) addFieldError(errors, 'ends_at', 'games.ends_before_starts');
  }
  return errors;
}

const exact = (value: number) => formatAmount(parseAmount(value)!);

function rewardColumns(reward: RewardInput): RewardColumns {
  return {
    label: reward.label.trim(),
    probability: exact(reward.probability),
    rewardType: reward.reward_type,
    points: reward.reward_type === 'points' ? (reward.points ?? null) : null,
    coupon:
      reward.reward_type === 'coupon' && reward.coupon
        ? { title: reward.coupon.title.trim(), discount_type: reward.coupon.discount_type, discount_value: exact(reward.coupon.discount_value) }
        : null,
  };
}

function columnsOf(input: GameInput): Partial<GameColumns> {
  const out: Partial<GameColumns> = {};
  if (input.partner_card_id !== undefined) out.partnerCardId = input.partner_card_id;
  if (input.type !== undefined) out.type = input.type;
  if (input.name !== undefined) out.name = input.name.trim();
  if (input.description !== undefined) out.description = input.description;
  if (input.is_active !== undefined) out.isActive = input.is_active;
  if (input.starts_at !== undefined) out.startsAt = input.starts_at === null ? null : new Date(input.starts_at);
  if (input.ends_at !== undefined) out.endsAt = input.ends_at === null ? null : new Date(input.ends_at);
  if (input.coupon_validity_days !== undefined) out.couponValidityDays = input.coupon_validity_days;
  if (input.plays_per_customer_per_day !== undefined) out.playsPerCustomerPerDay = input.plays_per_customer_per_day;
  return out;
}

function rewardView(row: RewardRow): RewardView {
  return {
    id: row.id,
    label: row.label,
    probability: amountToJson(row.probability),
    reward_type: row.rewardType,
    points: row.points,
    coupon: row.coupon
      ? { title: row.coupon.title, discount_type: row.coupon.discount_type, discount_value: amountToJson(row.coupon.discount_value) }
      : null,
  };
}

function gameView(row: GameRow, rewards: RewardRow[]): GameView {
  return {
    id: row.id,
    partner_card_id: row.partnerCardId,
    type: row.type,
    name: row.name,
    description: row.description,
    is_active: row.isActive,
    starts_at: iso(row.startsAt),
    ends_at: iso(row.endsAt),
    rewards: rewards.map(rewardView),
    coupon_validity_days: row.couponValidityDays,
    plays_per_customer_per_day: row.playsPerCustomerPerDay,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

const isRowId = (id: unknown): id is number => Number.isInteger(id) && (id as number) >= 1 && (id as number) <= 2147483647;

export class GamesService {
  constructor(
    private readonly db: Db,
    private readonly cards: PartnerCardsService,
  ) {}

  /**
   * Every rule problem of a body (which may have failed the schema too), for a create or —
   * with `id` — an update of that game. Fails with not-found when the game is not the partner's.
   */
  async problems(partnerId: number, body: Record<string, unknown>, id?: number): Promise<Result<FieldErrors>> {
    let existing: GameRow | undefined;
    if (id !== undefined) {
      existing = await repo.find(this.db, partnerId, id);
      if (!existing) return missing('resource.game');
    }
    return ok(await this.fieldErrors(this.db, partnerId, body, existing));
  }

  private async fieldErrors(tx: Executor, partnerId: number, body: Record<string, unknown>, existing: GameRow | undefined): Promise<FieldErrors> {
    const errors = ruleErrors(body, existing);
    const cardId = body.partner_card_id;
    if (Number.isInteger(cardId)) {
      const programme = isRowId(cardId) ? await this.cards.findProgramme(partnerId, cardId, tx) : undefined;
      if (!programme || programme.deleted) addFieldError(errors, 'partner_card_id', 'games.card_not_owned');
    }
    return errors;
  }

  async createGame(partnerId: number, input: NewGameInput, tx: Executor): Promise<Result<GameView>> {
    const errors = await this.fieldErrors(tx, partnerId, input as unknown as Record<string, unknown>, undefined);
    if (Object.keys(errors).length > 0) return fail('VALIDATION', { fields: errors });
    const row = await repo.insert(tx, partnerId, columnsOf(input) as GameColumns);
    await repo.replaceRewards(tx, partnerId, row.id, input.rewards.map(rewardColumns));
    return ok(gameView(row, await repo.rewards(tx, partnerId, [row.id])));
  }

  async getGame(partnerId: number, id: number): Promise<GameView | undefined> {
    const row = await repo.find(this.db, partnerId, id);
    return row && gameView(row, await repo.rewards(this.db, partnerId, [id]));
  }

  async listGames(partnerId: number, filter: { isActive?: boolean }, page: PageWindow): Promise<{ items: GameView[]; total: number }> {
    const { rows, total } = await repo.list(this.db, partnerId, filter, page.perPage, page.offset);
    const rewards = await repo.rewards(this.db, partnerId, rows.map((r) => r.id));
    return { items: rows.map((row) => gameView(row, rewards.filter((r) => r.gameId === row.id))), total };
  }

  /** A partial update; rewards, when sent, replace the current ones. Answers the whole game. */
  async updateGame(partnerId: number, id: number, input: GameInput): Promise<Result<GameView>> {
    return this.db.transaction(async (tx) => {
      // Locked: the window check and the rewards replacement see the row they change.
      const existing = await repo.find(tx, partnerId, id, { forUpdate: true });
      if (!existing) return missing('resource.game');
      const errors = await this.fieldErrors(tx, partnerId, input as unknown as Record<string, unknown>, existing);
      if (Object.keys(errors).length > 0) return fail('VALIDATION', { fields: errors });
      const row = (await repo.update(tx, partnerId, id, columnsOf(input)))!;
      if (input.rewards !== undefined) await repo.replaceRewards(tx, partnerId, id, input.rewards.map(rewardColumns));
      return ok(gameView(row, await repo.rewards(tx, partnerId, [id])));
    });
  }
}
