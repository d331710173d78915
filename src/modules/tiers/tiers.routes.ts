// Tiers (DESIGN.md §13): the tier CRUD of a card programme at
// /{locale}/partners/cards/{id}/tiers (partner JWT), and a card's tier history at
// /{locale}/shop/loyalty-cards/{id}/tier-history (customer JWT for its own cards, or API
// credentials for the partner's; the console's partner JWT at
// /{locale}/partners/loyalty-cards/{id}/tier-history), and the Overview's cards per tier at
// /{locale}/partners/tiers/summary. Another partner's programme, a deleted one, a tier of
// another programme, or another's card: 404.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../infra/auth.js';
import { bodySchemaErrors, rejectInvalidBody } from '../../infra/http-core.js';
import type { Idempotency } from '../../infra/idempotency.js';
import { envelopeNoData, envelopeOf, listWithMeta } from '../../shared/envelope.js';
import { notFound, unwrap } from '../../shared/errors.js';
import { pageWindow } from '../../shared/pagination.js';
import { EmptyEnvelope, Envelope, errorResponses, IdParam, ListEnvelope, LocaleIdParams, LocaleParam, LocaleParams, PageQuery } from '../../shared/schemas.js';
import { isPlainObject } from '../../shared/validation.js';
import type { CardOwner } from '../loyalty-cards/loyalty-cards.repository.js';
import { customerOwner, type LoyaltyCardsService } from '../loyalty-cards/loyalty-cards.service.js';
import { CreateTierBody, MAX_TIERS, Tier, TierHistoryItem, TierSummary, UpdateTierBody } from './tiers.schemas.js';
import type { NewTierInput, TierInput, TiersService } from './tiers.service.js';

const TierParams = Type.Object({ locale: LocaleParam, id: IdParam, tier_id: IdParam });
const bodyObject = (body: unknown): Record<string, unknown> => (isPlainObject(body) ? body : {});

const RULES = `threshold is unique in the programme (409 DUPLICATE_VALUE on threshold); a programme has at most ${MAX_TIERS} tiers (422 QUOTA_EXCEEDED). Every change re-evaluates the programme's cards in the background (history reason tiers_changed); the API never waits for it.`;

export const tiersRoutes: FastifyPluginAsyncTypebox<{ tiers: TiersService; cards: LoyaltyCardsService; idempotency: Idempotency }> = async (
  app,
  { tiers, cards, idempotency },
) => {
  app.get(
    '/:locale/partners/cards/:id/tiers',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: "The programme's tiers",
        description: `Lowest threshold first (at most ${MAX_TIERS}, no pagination). Another partner's programme, or a deleted one, is 404.`,
        params: LocaleIdParams,
        response: { 200: Envelope(Type.Array(Tier)), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => envelopeOf(req, unwrap(await tiers.listTiers(principalOf(req, 'partner').partnerId, req.params.id))),
  );

  app.post(
    '/:locale/partners/cards/:id/tiers',
    {
      config: { auth: 'partner' },
      attachValidation: true,
      schema: {
        tags: ['partners'],
        summary: 'Add a tier',
        description: `earn_multiplier defaults to 1, benefits and color to null. ${RULES} Honours Idempotency-Key.`,
        params: LocaleIdParams,
        body: CreateTierBody,
        response: { 201: Envelope(Tier), ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (req, reply) => {
      const { partnerId } = principalOf(req, 'partner');
      if (req.validationError) rejectInvalidBody(bodySchemaErrors(req), unwrap(await tiers.problems(partnerId, req.params.id, bodyObject(req.body))));
      const out = await idempotency.run(req, reply, `partner:${partnerId}`, async (tx) => ({
        status: 201,
        body: envelopeOf(req, unwrap(await tiers.createTier(partnerId, req.params.id, req.body as NewTierInput, tx)), 'tiers.created', 201),
      }));
      // Committed by now: wake the re-evaluation (a replay wakes it again, which is harmless).
      tiers.tiersChanged();
      return out;
    },
  );

  app.put(
    '/:locale/partners/cards/:id/tiers/:tier_id',
    {
      config: { auth: 'partner' },
      attachValidation: true,
      schema: {
        tags: ['partners'],
        summary: 'Update a tier (any subset of the fields)',
        description: `Only the fields sent change; \`data\` is the whole tier. A tier of another programme is 404. ${RULES}`,
        params: TierParams,
        body: UpdateTierBody,
        response: { 200: Envelope(Tier), ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (req) => {
      const { partnerId } = principalOf(req, 'partner');
      const { id, tier_id: tierId } = req.params;
      if (req.validationError) rejectInvalidBody(bodySchemaErrors(req), unwrap(await tiers.problems(partnerId, id, bodyObject(req.body), tierId)));
      return envelopeOf(req, unwrap(await tiers.updateTier(partnerId, id, tierId, req.body as TierInput)), 'tiers.updated');
    },
  );

  app.delete(
    '/:locale/partners/cards/:id/tiers/:tier_id',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Delete a tier',
        description:
          "Cards holding it move to what the remaining thresholds give, in the background (reason tiers_changed); until then they show no tier. Their history keeps the tier's name (with id null).",
        params: TierParams,
        response: { 200: EmptyEnvelope, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      unwrap(await tiers.deleteTier(principalOf(req, 'partner').partnerId, req.params.id, req.params.tier_id));
      return envelopeNoData(req, 'tiers.deleted');
    },
  );

  app.get(
    '/:locale/shop/loyalty-cards/:id/tier-history',
    {
      config: { auth: ['customer', 'api'] },
      schema: {
        tags: ['shop'],
        summary: "A card's tier history",
        description:
          "Newest first, with `meta` pagination. With a customer JWT, the customer's own cards (a QR-login token: that partner's only); with API credentials, the partner's cards; any other card is 404. `from`/`to` carry the tier's name as it was then; `id` is null once that tier has been deleted.",
        params: LocaleIdParams,
        querystring: PageQuery,
        response: { 200: ListEnvelope(TierHistoryItem), ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (req) => {
      const owner: CardOwner = req.principal?.kind === 'customer' ? customerOwner(principalOf(req, 'customer')) : { partnerId: principalOf(req, 'api').partnerId };
      return history(req, owner, req.params.id, req.query);
    },
  );

  // The console's door to the same history: it signs in with the partner JWT, which the shop
  // route (till and app credentials) does not take.
  app.get(
    '/:locale/partners/loyalty-cards/:id/tier-history',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: "A card's tier history (the console)",
        description: "As `shop/loyalty-cards/{id}/tier-history` with API credentials: newest first, with `meta` pagination; a card of another partner's programme is 404.",
        params: LocaleIdParams,
        querystring: PageQuery,
        response: { 200: ListEnvelope(TierHistoryItem), ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (req) => history(req, { partnerId: principalOf(req, 'partner').partnerId }, req.params.id, req.query),
  );

  app.get(
    '/:locale/partners/tiers/summary',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Cards per tier of each programme',
        description:
          "The partner's programmes that have tiers (deleted ones left out), by id: for each, the cards without a tier and the cards holding each tier, lowest threshold first (0 where none). Counts are the cards' stored tiers; a card still on a deleted tier (re-evaluation pending) counts as without one.",
        params: LocaleParams,
        response: { 200: Envelope(Type.Array(TierSummary)), ...errorResponses(401, 403, 429) },
      },
    },
    async (req) => envelopeOf(req, await tiers.summary(principalOf(req, 'partner').partnerId)),
  );

  async function history(req: FastifyRequest, owner: CardOwner, cardId: number, query: { page?: number; per_page?: number }) {
    if (!(await cards.owns(owner, cardId))) throw notFound('resource.loyalty_card');
    const page = pageWindow(query);
    const { items, total } = await tiers.history(cardId, page);
    return listWithMeta(req, items, page, total);
  }
};
