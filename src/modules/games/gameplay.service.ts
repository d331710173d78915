// Gameplay (DESIGN.md §8): what a till or an app shows (live games, plays left today), the
// play itself and its history. A play's outcome is drawn at the start from the CSPRNG,
// weighted by the configured probabilities (draw.ts), stored, and shown only once the play
// completes. Every transition publishes `status_update {status, progress, reward?}` on the
// public channel `game-session.{session_key}` after its transaction commits (the routes do
// that with what these methods return; the expiry sweep publishes its own).
//
//   start:        game visible → active and in its window → the customer's card (no_card)
//                 → one more play today (429 DAILY_QUOTA_EXCEEDED) → draw → session
//   progress:     started | in_progress → in_progress, or finished when `completed`
//   claim-reward: finished → claimed, once; points through the ledger (type game) or a
//                 coupon (coupons.service.ts), in the same transaction
import type { Static } from 'typebox';
import type { Db, Executor } from '../../infra/db/index.js';
import { randomToken, sha256Hex } from '../../shared/crypto.js';
import { ERRORS, fail, missing, ok, type ErrorName, type Result } from '../../shared/errors.js';
import type { MessageKey, MessageParams } from '../../shared/i18n.js';
import { amountToJson, parseAmount } from '../../shared/money.js';
import type { PageWindow } from '../../shared/pagination.js';
import { iso, type Clock } from '../../shared/time.js';
import type { CouponsService } from '../coupons/coupons.service.js';
import type { LoyaltyCardsService } from '../loyalty-cards/loyalty-cards.service.js';
import type { PartnerCardsService } from '../partner-cards/partner-cards.service.js';
import type { PointsLedger } from '../points/ledger.service.js';
import { cryptoRandom, drawWeighted, type RandomSource } from './draw.js';
import { gameplayRepository as repo, type GameRow, type RewardRow, type SessionOwner, type SessionRow } from './gameplay.repository.js';
import type { SessionStatus } from './gameplay.tables.js';
import type { DiscountType, GameType, RewardType } from './games.tables.js';
import type { PartnerEventSink } from '../webhooks/webhooks.events.js';
import type { Claimed, LiveGame, Progress, Started } from './gameplay.schemas.js';

export const SESSION_TTL_MS = 30 * 60_000;
const DAY_MS = 86_400_000;

/** Publishes an event on a realtime channel (the built-in Pusher server, or an external one). */
export type PublishEvent = (channel: string, event: string, data: Record<string, unknown>) => Promise<void>;

export interface RewardOutcome {
  id: number;
  label: string;
  reward_type: RewardType;
  points?: number;
  coupon?: { title: string; discount_type: DiscountType; discount_value: number };
}

export type LiveGameView = Static<typeof LiveGame>;

export type StartedView = Static<typeof Started>;

export type ProgressView = Static<typeof Progress>;

export type ClaimedView = Static<typeof Claimed>;

export interface HistoryItem {
  session_key: string;
  game: { id: number; name: string; type: GameType };
  status: SessionStatus;
  reward: RewardOutcome | null;
  started_at: string;
  finished_at: string | null;
  claimed_at: string | null;
}

/** A realtime event to publish once the transaction that made it committed. */
export interface SessionEvent {
  channel: string;
  data: { status: SessionStatus; progress: number; reward?: RewardOutcome };
}

export const channelOf = (sessionKey: string) => `game-session.${sessionKey}`;

/** The customer (app or QR-login token) or the partner (API credentials) acting on a game. */
export type GameActor = { kind: 'customer'; customerId: number; partnerScope?: number } | { kind: 'api'; partnerId: number };

function ownerOf(actor: GameActor): SessionOwner {
  return actor.kind === 'api'
    ? { partnerId: actor.partnerId }
    : { customerId: actor.customerId, ...(actor.partnerScope !== undefined ? { partnerId: actor.partnerScope } : {}) };
}

function failOn(error: ErrorName, field: string, key: MessageKey, opts: { params?: MessageParams; meta?: Record<string, unknown>; headers?: Record<string, string> } = {}) {
  return fail<never>(error, {
    message: key,
    ...(opts.params ? { params: opts.params } : {}),
    ...(opts.headers ? { headers: opts.headers } : {}),
    items: [{ field, code: String(ERRORS[error].code), key, ...(opts.params ? { params: opts.params } : {}), ...(opts.meta ? { meta: opts.meta } : {}) }],
  });
}

const sessionNotFound = () => missing('resource.game_session', 'session_key');
const invalidState = (status: SessionStatus, key: MessageKey = 'gameplay.invalid_state') =>
  failOn('INVALID_STATE', 'session_key', key, { params: { status }, meta: { status } });

/** YYYY-MM-DD of the UTC day of `now`. */
export const utcDay = (now: Date) => now.toISOString().slice(0, 10);

/** Seconds from `now` to the next UTC midnight (at least 1). */
export function secondsToUtcMidnight(now: Date): number {
  const next = Math.floor(now.getTime() / DAY_MS) * DAY_MS + DAY_MS;
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

/** A session's status as a client sees it: a live status past its 30 minutes is `expired`. */
export function effectiveStatus(row: Pick<SessionRow, 'status' | 'expiresAt'>, now: Date): SessionStatus {
  const open = row.status === 'started' || row.status === 'in_progress' || row.status === 'finished';
  return open && row.expiresAt.getTime() <= now.getTime() ? 'expired' : row.status;
}

export function rewardOutcome(r: RewardRow): RewardOutcome {
  const out: RewardOutcome = { id: r.id, label: r.label, reward_type: r.rewardType };
  if (r.rewardType === 'points' && r.points !== null) out.points = r.points;
  if (r.rewardType === 'coupon' && r.coupon) {
    out.coupon = { title: r.coupon.title, discount_type: r.coupon.discount_type, discount_value: amountToJson(r.coupon.discount_value) };
  }
  return out;
}

/** "5% off coffee (5% off)", "Free drink (2 EUR off)": what a till shows for a prize coupon. */
function prizeDescription(r: RewardRow): string {
  const c = r.coupon!;
  const value = amountToJson(c.discount_value);
  return `${c.title} (${c.discount_type === 'percent' ? `${value}%` : `${value} EUR`} off)`;
}

const weightOf = (probability: string) => Number(parseAmount(probability) ?? 0n);

export class GameplayService {
  /** The draw's random source: the CSPRNG; tests put a seeded one here. */
  random: RandomSource = cryptoRandom;

  constructor(
    private readonly deps: {
      db: Db;
      clock: Clock;
      cards: LoyaltyCardsService;
      partnerCards: PartnerCardsService;
      ledger: PointsLedger;
      coupons: CouponsService;
      publish: PublishEvent;
      log: { warn(obj: object, msg?: string): void };
      /** Partner events (DESIGN.md §14): game.reward_claimed. */
      events?: PartnerEventSink;
    },
  ) {}

  private get db() {
    return this.deps.db;
  }

  /** Publish after commit; a realtime hiccup never fails the request (clients can poll the history). */
  async publish(event: SessionEvent): Promise<void> {
    try {
      await this.deps.publish(event.channel, 'status_update', event.data as unknown as Record<string, unknown>);
    } catch (err) {
      // The channel name holds the session key, which opens the session: a digest of it only.
      this.deps.log.warn({ err, channel_digest: sha256Hex(event.channel).slice(0, 16) }, 'could not publish a game session event');
    }
  }

  /**
   * Live games (active, in their window): the partner's (API credentials) or those of the
   * partners the customer holds a card of (a QR-login token: its partner's). With a customer,
   * each game says how many plays are left today.
   */
  async listLive(audience: { partnerIds: number[]; customerId?: number }, page: PageWindow): Promise<{ items: LiveGameView[]; total: number }> {
    const now = this.deps.clock.now();
    const { rows, total } = await repo.liveGames(this.db, audience.partnerIds, now, page.perPage, page.offset);
    const ids = rows.map((g) => g.id);
    const rewards = await repo.currentRewards(this.db, ids);
    const plays = audience.customerId === undefined ? undefined : await repo.playsOn(this.db, audience.customerId, ids, utcDay(now));
    const items = rows.map((g) => {
      const view: LiveGameView = {
        id: g.id,
        type: g.type,
        name: g.name,
        description: g.description,
        partner_card_id: g.partnerCardId,
        ends_at: iso(g.endsAt),
        rewards: rewards.filter((r) => r.gameId === g.id).map((r) => ({ id: r.id, label: r.label, reward_type: r.rewardType })),
      };
      if (plays) view.plays_left_today = Math.max(0, g.playsPerCustomerPerDay - (plays.get(g.id) ?? 0));
      return view;
    });
    return { items, total };
  }

  /** Start a play, in the caller's transaction; the event to publish comes back with it. */
  async start(tx: Executor, customer: { customerId: number; partnerScope?: number }, gameId: number): Promise<Result<{ view: StartedView; event: SessionEvent }>> {
    const game = await repo.findGame(tx, gameId);
    if (!game || (customer.partnerScope !== undefined && game.partnerId !== customer.partnerScope)) return missing('resource.game');
    const now = this.deps.clock.now();
    const refused = this.windowRefusal(game, now);
    if (refused) return refused;
    const card = await this.deps.cards.cardFor(tx, customer.customerId, game.partnerId, game.partnerCardId);
    if (!card) return failOn('INVALID_STATE', 'id', 'gameplay.no_card', { meta: { reason: 'no_card' } });
    const rewards = await repo.currentRewards(tx, [game.id]);
    if (rewards.length === 0) return failOn('INVALID_STATE', 'id', 'gameplay.no_rewards', { meta: { reason: 'no_rewards' } });
    if (!(await repo.countPlay(tx, game.id, customer.customerId, utcDay(now), game.playsPerCustomerPerDay))) {
      const seconds = secondsToUtcMidnight(now);
      return failOn('DAILY_QUOTA_EXCEEDED', 'id', 'gameplay.daily_quota', {
        params: { limit: game.playsPerCustomerPerDay, seconds },
        meta: { limit: game.playsPerCustomerPerDay, retry_after: seconds },
        headers: { 'retry-after': String(seconds) },
      });
    }
    const reward = drawWeighted(
      rewards.map((r) => ({ weight: weightOf(r.probability), item: r })),
      this.random,
    );
    const session = await repo.insertSession(tx, {
      sessionKey: randomToken(24),
      partnerId: game.partnerId,
      gameId: game.id,
      customerId: customer.customerId,
      cardId: card.id,
      rewardId: reward.id,
      startedAt: now,
      expiresAt: new Date(now.getTime() + SESSION_TTL_MS),
    });
    const channel = channelOf(session.sessionKey);
    return ok({
      view: { session_key: session.sessionKey, game_id: game.id, status: 'started', channel, expires_at: iso(session.expiresAt) },
      event: { channel, data: { status: 'started', progress: 0 } },
    });
  }

  private windowRefusal(game: GameRow, now: Date): Result<never> | undefined {
    if (!game.isActive) return failOn('INVALID_STATE', 'id', 'gameplay.inactive', { meta: { reason: 'inactive' } });
    if (game.startsAt !== null && game.startsAt.getTime() > now.getTime()) {
      const at = iso(game.startsAt);
      return failOn('INVALID_STATE', 'id', 'gameplay.not_started', { params: { starts_at: at }, meta: { reason: 'not_started', starts_at: at } });
    }
    if (game.endsAt !== null && game.endsAt.getTime() <= now.getTime()) {
      const at = iso(game.endsAt);
      return failOn('INVALID_STATE', 'id', 'gameplay.ended', { params: { ends_at: at }, meta: { reason: 'ended', ends_at: at } });
    }
    return undefined;
  }

  /**
   * Record progress; `completed` finishes the play and reveals the reward. Sending
   * `completed` again on a finished play answers the same (a retry after a lost response).
   */
  async progress(actor: GameActor, key: string, input: { progress: number; completed: boolean }): Promise<Result<{ view: ProgressView; event?: SessionEvent }>> {
    const exec = this.db;
    const owner = ownerOf(actor);
    const now = this.deps.clock.now();
    const row = await repo.transition(
      exec,
      owner,
      key,
      ['started', 'in_progress'],
      now,
      input.completed
        ? { status: 'finished', progress: 100, finishedAt: now }
        : { status: 'in_progress', progress: Math.max(0, Math.min(100, input.progress)) },
    );
    if (row) {
      const view = await this.progressView(exec, row);
      return ok({ view, event: { channel: channelOf(key), data: { ...view } } });
    }
    const current = await repo.findSession(exec, owner, key);
    if (!current) return sessionNotFound();
    const status = effectiveStatus(current, now);
    if (status === 'finished' && input.completed) return ok({ view: await this.progressView(exec, current) });
    return invalidState(status);
  }

  private async progressView(db: Executor, row: SessionRow): Promise<ProgressView> {
    if (row.status !== 'finished') return { status: 'in_progress', progress: row.progress };
    const reward = (await repo.reward(db, row.rewardId))!;
    return { status: 'finished', progress: row.progress, reward: rewardOutcome(reward) };
  }

  /** Claim a finished play's reward, once, in the caller's transaction. */
  async claimReward(tx: Executor, actor: GameActor, key: string): Promise<Result<{ view: ClaimedView; event: SessionEvent }>> {
    const owner = ownerOf(actor);
    const now = this.deps.clock.now();
    const row = await repo.transition(tx, owner, key, ['finished'], now, { status: 'claimed', claimedAt: now });
    if (!row) {
      const current = await repo.findSession(tx, owner, key);
      if (!current) return sessionNotFound();
      const status = effectiveStatus(current, now);
      return invalidState(status, status === 'started' || status === 'in_progress' ? 'gameplay.not_finished' : 'gameplay.invalid_state');
    }
    const reward = (await repo.reward(tx, row.rewardId))!;
    const game = (await repo.findGame(tx, row.gameId))!;
    const view: ClaimedView = { reward: rewardOutcome(reward) };
    if (reward.rewardType === 'points' && reward.points !== null) {
      const credited = await this.deps.ledger.awardGame(tx, row.partnerId, {
        cardId: row.cardId,
        points: reward.points,
        reason: `game #${game.id}: ${game.name}`.slice(0, 255),
      });
      if (!credited.ok) return credited;
      view.transaction = credited.value;
      await repo.setOutcome(tx, row.id, { transactionId: credited.value.id });
    } else if (reward.rewardType === 'coupon' && reward.coupon) {
      const programmeId = await this.deps.cards.programmeOf(tx, row.partnerId, row.cardId);
      const programme = programmeId === undefined ? undefined : await this.deps.partnerCards.findProgramme(row.partnerId, programmeId, tx);
      const coupon = await this.deps.coupons.issue(tx, {
        partnerId: row.partnerId,
        customerId: row.customerId,
        cardId: row.cardId,
        source: {
          kind: 'game',
          gameId: game.id,
          game: {
            name: game.name,
            type: game.type,
            reward_description: prizeDescription(reward),
            discount_type: reward.coupon.discount_type,
            discount_value: reward.coupon.discount_value,
          },
        },
        validityDays: game.couponValidityDays ?? programme?.defaultCouponValidityDays ?? null,
      });
      view.coupon = coupon;
      await repo.setOutcome(tx, row.id, { couponId: coupon.id });
    }
    await this.deps.events?.emit(tx, row.partnerId, 'game.reward_claimed', view);
    return ok({ view, event: { channel: channelOf(key), data: { status: 'claimed', progress: row.progress, reward: view.reward } } });
  }

  async history(customer: { customerId: number; partnerScope?: number }, page: PageWindow): Promise<{ items: HistoryItem[]; total: number }> {
    const now = this.deps.clock.now();
    const owner = { customerId: customer.customerId, ...(customer.partnerScope !== undefined ? { partnerId: customer.partnerScope } : {}) };
    const { rows, total } = await repo.history(this.db, owner, page.perPage, page.offset);
    return {
      items: rows.map(({ session, game, reward }) => ({
        session_key: session.sessionKey,
        game,
        status: effectiveStatus(session, now),
        // Hidden until the play completed.
        reward: session.finishedAt === null ? null : rewardOutcome(reward),
        started_at: iso(session.startedAt),
        finished_at: iso(session.finishedAt),
        claimed_at: iso(session.claimedAt),
      })),
      total,
    };
  }

  /** Mark plays past their 30 minutes expired and announce it; returns how many. */
  async expireDue(limit: number): Promise<number> {
    const rows = await repo.expireDue(this.db, this.deps.clock.now(), limit);
    for (const r of rows) await this.publish({ channel: channelOf(r.sessionKey), data: { status: 'expired', progress: r.progress } });
    return rows.length;
  }
}
