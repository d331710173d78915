// /{locale}/partners/games (partner JWT): game configuration. Create and update take
// `attachValidation` so that the schema's problems and the service's rules (probability
// sum, reward types, window, own card) come back in one 422.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../infra/auth.js';
import { binaryBooleansInQuery, bodySchemaErrors, rejectInvalidBody } from '../../infra/http-core.js';
import type { Idempotency } from '../../infra/idempotency.js';
import { envelopeOf, listWithMeta } from '../../shared/envelope.js';
import { notFound, unwrap } from '../../shared/errors.js';
import { pageWindow } from '../../shared/pagination.js';
import { Envelope, errorResponses, ListEnvelope, LocaleIdParams, LocaleParams } from '../../shared/schemas.js';
import { isPlainObject } from '../../shared/validation.js';
import { CreateGameBody, Game, ListGamesQuery, UpdateGameBody } from './games.schemas.js';
import type { GameInput, GamesService, NewGameInput } from './games.service.js';

const bodyObject = (body: unknown): Record<string, unknown> => (isPlainObject(body) ? body : {});

export const gamesRoutes: FastifyPluginAsyncTypebox<{ games: GamesService; idempotency: Idempotency }> = async (app, { games, idempotency }) => {
  app.post(
    '/:locale/partners/games',
    {
      config: { auth: 'partner' },
      attachValidation: true,
      schema: {
        tags: ['partners'],
        summary: 'Create a game (configuration)',
        description: 'Rewards are drawn by probability; their probabilities must add up to exactly 1. Honours Idempotency-Key.',
        params: LocaleParams,
        body: CreateGameBody,
        response: { 201: Envelope(Game), ...errorResponses(400, 401, 403, 409, 422, 429) },
      },
    },
    async (req, reply) => {
      const { partnerId } = principalOf(req, 'partner');
      if (req.validationError) {
        const schemaErrors = bodySchemaErrors(req);
        rejectInvalidBody(schemaErrors, unwrap(await games.problems(partnerId, bodyObject(req.body))));
      }
      return idempotency.respond(req, reply, `partner:${partnerId}`, { message: 'games.created' }, (tx) => games.createGame(partnerId, req.body as NewGameInput, tx));
    },
  );

  app.get(
    '/:locale/partners/games',
    {
      config: { auth: 'partner' },
      preValidation: binaryBooleansInQuery('is_active'),
      schema: {
        tags: ['partners'],
        summary: "List the partner's games",
        description: 'Ordered by id, with `meta` pagination.',
        params: LocaleParams,
        querystring: ListGamesQuery,
        response: { 200: ListEnvelope(Game), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const page = pageWindow(req.query);
      const { items, total } = await games.listGames(principalOf(req, 'partner').partnerId, { isActive: req.query.is_active }, page);
      return listWithMeta(req, items, page, total);
    },
  );

  app.get(
    '/:locale/partners/games/:id',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'One game',
        params: LocaleIdParams,
        response: { 200: Envelope(Game), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      const game = await games.getGame(principalOf(req, 'partner').partnerId, req.params.id);
      if (!game) throw notFound('resource.game');
      return envelopeOf(req, game);
    },
  );

  app.put(
    '/:locale/partners/games/:id',
    {
      config: { auth: 'partner' },
      attachValidation: true,
      schema: {
        tags: ['partners'],
        summary: 'Update a game (every field optional)',
        description: 'Only the fields sent change; rewards, when sent, replace the current ones (and must add up to 1). `data` is the whole game.',
        params: LocaleIdParams,
        body: UpdateGameBody,
        response: { 200: Envelope(Game), ...errorResponses(400, 401, 403, 404, 422, 429) },
      },
    },
    async (req) => {
      const { partnerId } = principalOf(req, 'partner');
      if (req.validationError) {
        const schemaErrors = bodySchemaErrors(req);
        rejectInvalidBody(schemaErrors, unwrap(await games.problems(partnerId, bodyObject(req.body), req.params.id)));
      }
      return envelopeOf(req, unwrap(await games.updateGame(partnerId, req.params.id, req.body as GameInput)), 'games.updated');
    },
  );
};
