// Games at the till and in the app (DESIGN.md §8): the live games, a play (start, progress,
// claim-reward) and the customer's history. Each change of a play is published as
// `status_update` on `game-session.{session_key}` once its transaction committed (a replayed
// Idempotency-Key publishes nothing: nothing happened).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../infra/auth.js';
import type { Idempotency } from '../../infra/idempotency.js';
import type { TokenService } from '../../infra/tokens.js';
import { envelopeOf, listWithMeta } from '../../shared/envelope.js';
import { AppError, unwrap } from '../../shared/errors.js';
import { pageWindow } from '../../shared/pagination.js';
import { Envelope, errorResponses, ListEnvelope, LocaleIdParams, LocaleParam, LocaleParams, PageQuery } from '../../shared/schemas.js';
import { Claimed, GamesQuery, HistoryItem, LiveGame, Progress, ProgressBody, SessionKeyParam, Started } from './gameplay.schemas.js';
import type { GameActor, GameplayService, SessionEvent } from './gameplay.service.js';

const SessionParams = Type.Object({ locale: LocaleParam, sessionKey: SessionKeyParam });

function actorOf(req: FastifyRequest): GameActor {
  if (req.principal?.kind === 'customer') {
    const c = principalOf(req, 'customer');
    return { kind: 'customer', customerId: c.customerId, ...(c.partnerId !== undefined ? { partnerScope: c.partnerId } : {}) };
  }
  return { kind: 'api', partnerId: principalOf(req, 'api').partnerId };
}

const scopeOf = (actor: GameActor) => (actor.kind === 'api' ? `partner:${actor.partnerId}` : `customer:${actor.customerId}`);

export const gameplayRoutes: FastifyPluginAsyncTypebox<{
  gameplay: GameplayService;
  idempotency: Idempotency;
  tokens: TokenService;
  customerExists: (id: number) => Promise<boolean>;
  partnerIdsOf: (customerId: number) => Promise<number[]>;
}> = async (app, { gameplay, idempotency, tokens, customerExists, partnerIdsOf }) => {
  /**
   * A POS with a signed-in customer sends its API credentials and the customer's token: the
   * credentials decide (auth plugin), and the token, when valid, says who plays.
   */
  async function customerAlongside(req: FastifyRequest, partnerId: number): Promise<number | undefined> {
    const header = req.headers.authorization;
    if (header === undefined) return undefined;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw new AppError('INVALID_TOKEN_FORMAT');
    const result = await tokens.verify(match[1]!);
    if (!result.ok) throw new AppError(result.reason === 'expired' ? 'EXPIRED_TOKEN' : result.reason === 'malformed' ? 'INVALID_TOKEN_FORMAT' : 'INVALID_TOKEN');
    const { claims } = result;
    if (claims.kind !== 'customer' || (claims.partnerId !== undefined && claims.partnerId !== partnerId)) throw new AppError('INSUFFICIENT_PERMISSIONS');
    if (!(await customerExists(claims.subject))) throw new AppError('INVALID_TOKEN');
    return claims.subject;
  }

  async function publishAfter<B>(run: (remember: (e: SessionEvent | undefined) => void) => Promise<B>): Promise<B> {
    let event: SessionEvent | undefined;
    const body = await run((e) => {
      event = e;
    });
    if (event) await gameplay.publish(event);
    return body;
  }

  app.get(
    '/:locale/shop/games',
    {
      config: { auth: ['customer', 'api'] },
      schema: {
        tags: ['shop'],
        summary: 'Live games',
        description:
          "Active games in their window: the partner's (API credentials) or those of every partner the customer holds a card of (customer token; a QR-login token: its partner's). plays_left_today only with a customer token (alone, or beside the API credentials). Ordered by id, `meta` pagination.",
        params: LocaleParams,
        querystring: GamesQuery,
        response: { 200: ListEnvelope(LiveGame), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const page = pageWindow(req.query);
      let audience: { partnerIds: number[]; customerId?: number };
      if (req.principal?.kind === 'customer') {
        const c = principalOf(req, 'customer');
        audience = { partnerIds: c.partnerId !== undefined ? [c.partnerId] : await partnerIdsOf(c.customerId), customerId: c.customerId };
      } else {
        const { partnerId } = principalOf(req, 'api');
        const customerId = await customerAlongside(req, partnerId);
        audience = { partnerIds: [partnerId], ...(customerId !== undefined ? { customerId } : {}) };
      }
      const { items, total } = await gameplay.listLive(audience, page);
      return listWithMeta(req, items, page, total);
    },
  );

  app.post(
    '/:locale/shop/games/:id/start',
    {
      config: { auth: 'customer' },
      schema: {
        tags: ['shop'],
        summary: 'Start a play',
        description:
          "The outcome is drawn now (CSPRNG, weighted by the game's probabilities) and revealed when the play completes. Subscribe to `channel` for status_update events. Sessions expire after 30 minutes. Over plays_per_customer_per_day (UTC days) → 429 DAILY_QUOTA_EXCEEDED with Retry-After (seconds to the next UTC midnight); inactive, not started or ended → 409 INVALID_STATE {reason}; no card in the game's programme (or, for a game without one, in any of the partner's) → 409 INVALID_STATE {reason: no_card}. Honours Idempotency-Key.",
        params: LocaleIdParams,
        response: { 201: Envelope(Started), ...errorResponses(401, 403, 404, 409, 422, 429) },
      },
    },
    async (req, reply) => {
      const c = principalOf(req, 'customer');
      const customer = { customerId: c.customerId, ...(c.partnerId !== undefined ? { partnerScope: c.partnerId } : {}) };
      return publishAfter((remember) =>
        idempotency.run(req, reply, `customer:${c.customerId}`, async (tx) => {
          const started = unwrap(await gameplay.start(tx, customer, req.params.id));
          remember(started.event);
          return { status: 201, body: envelopeOf(req, started.view, 'gameplay.started', 201) };
        }),
      );
    },
  );

  app.post(
    '/:locale/shop/games/sessions/:sessionKey/progress',
    {
      config: { auth: ['customer', 'api'] },
      schema: {
        tags: ['shop'],
        summary: 'Report the progress of a play',
        description:
          "completed: true finishes the play and reveals the reward (`reward`); sending it again answers the same. The customer who plays, or the game's partner (API credentials). A claimed, expired or (without completed) finished play → 409 INVALID_STATE {status}.",
        params: SessionParams,
        body: ProgressBody,
        response: { 200: Envelope(Progress), ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (req) =>
      publishAfter(async (remember) => {
        const result = unwrap(await gameplay.progress(actorOf(req), req.params.sessionKey, { progress: req.body.progress, completed: req.body.completed ?? false }));
        remember(result.event);
        return envelopeOf(req, result.view, 'gameplay.progressed');
      }),
  );

  app.post(
    '/:locale/shop/games/sessions/:sessionKey/claim-reward',
    {
      config: { auth: ['customer', 'api'] },
      schema: {
        tags: ['shop'],
        summary: "Claim a finished play's reward",
        description:
          'Exactly once: points go through the ledger (type game) to the card the play started with, a coupon is issued by the coupon rules (validity: the game\'s coupon_validity_days, else the programme\'s default_coupon_validity_days, else never); a losing segment claims to {reward} alone. Before completion → 409 INVALID_STATE {status}; a second claim → 409 INVALID_STATE {status: claimed}. Honours Idempotency-Key.',
        params: SessionParams,
        response: { 200: Envelope(Claimed), ...errorResponses(401, 403, 404, 409, 422, 429) },
      },
    },
    async (req, reply) => {
      const actor = actorOf(req);
      return publishAfter((remember) =>
        idempotency.run(req, reply, scopeOf(actor), async (tx) => {
          const claimed = unwrap(await gameplay.claimReward(tx, actor, req.params.sessionKey));
          remember(claimed.event);
          return { status: 200, body: envelopeOf(req, claimed.view, 'gameplay.claimed') };
        }),
      );
    },
  );

  app.get(
    '/:locale/shop/user/games/history',
    {
      config: { auth: 'customer' },
      schema: {
        tags: ['shop'],
        summary: "The customer's plays, newest first",
        description: 'A QR-login token shows its partner\'s games only. reward is null until the play completed.',
        params: LocaleParams,
        querystring: Type.Object({ ...PageQuery.properties }),
        response: { 200: ListEnvelope(HistoryItem), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const c = principalOf(req, 'customer');
      const page = pageWindow(req.query);
      const { items, total } = await gameplay.history({ customerId: c.customerId, ...(c.partnerId !== undefined ? { partnerScope: c.partnerId } : {}) }, page);
      return listWithMeta(req, items, page, total);
    },
  );
};
