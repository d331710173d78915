// /{locale}/partners/cards (partner JWT): the spec's "Partner cards" endpoints. Create and
// update take `attachValidation` so that the schema's problems and the service's rules
// (language keys, image bytes, decimals, min ≤ max, own shops) come back in one 422.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { principalOf } from '../../infra/auth.js';
import { binaryBooleansInQuery, bodySchemaErrors, rejectInvalidBody } from '../../infra/http-core.js';
import type { Idempotency } from '../../infra/idempotency.js';
import { envelopeNoData, envelopeOf, listWithPagination } from '../../shared/envelope.js';
import { notFound, unwrap } from '../../shared/errors.js';
import { pageWindow } from '../../shared/pagination.js';
import { hasOwn, isPlainObject } from '../../shared/validation.js';
import { EmptyEnvelope, Envelope, errorResponses, LocaleIdParams, LocaleParams, PaginatedEnvelope } from '../../shared/schemas.js';
import { dataUriMaxLength, IMAGE_LIMITS } from './card-images.js';
import {
  CardListItem,
  CreateCardBody,
  CreatedCard,
  ListCardsQuery,
  MAX_SHOP_IDS,
  PartnerCard,
  TEXT_LIMITS,
  UpdateCardBody,
  UpdatedCard,
} from './partner-cards.schemas.js';
import type { CardInput, NewCardInput, PartnerCardsService } from './partner-cards.service.js';

/**
 * The largest legal card body, so that the route's body limit never refuses one: texts at
 * the worst JSON encoding (an astral character escaped as two \\uXXXX, 12 bytes), both
 * images at their limit, every shop id, and room for the numbers and formatting.
 */
export const CARD_BODY_LIMIT =
  2 * TEXT_LIMITS.languages * (8 + TEXT_LIMITS.textChars * 12) +
  2 * (8 + TEXT_LIMITS.titleChars * 12) +
  dataUriMaxLength(IMAGE_LIMITS.logo) +
  dataUriMaxLength(IMAGE_LIMITS.background_image) +
  MAX_SHOP_IDS * 12 +
  64 * 1024;

const DEPRECATED_FIELD = 'default_coupon_validity_days';


/**
 * The deprecation made visible (spec: "default_coupon_validity_days is deprecated on
 * cards"): a request that sends the field gets `Deprecation: true` and a link to the docs.
 * Runs before validation, which fills in defaults and would make every create "send" it.
 */
async function flagDeprecatedField(req: FastifyRequest, reply: FastifyReply) {
  if (isPlainObject(req.body) && hasOwn(req.body, DEPRECATED_FIELD)) {
    reply.header('deprecation', 'true');
    reply.header('link', '</docs>; rel="deprecation"; type="text/html"');
  }
}

const bodyObject = (body: unknown): Record<string, unknown> => (isPlainObject(body) ? body : {});

const DEPRECATION_NOTE = `\`${DEPRECATED_FIELD}\` is deprecated (coupon validity is set per game); a request that sends it gets the response header \`Deprecation: true\`.`;

export const partnerCardsRoutes: FastifyPluginAsyncTypebox<{
  cards: PartnerCardsService;
  idempotency: Idempotency;
  /** The server's default body limit; the card routes take at least CARD_BODY_LIMIT. */
  bodyLimit: number;
}> = async (app, { cards, idempotency, bodyLimit }) => {
  const cardBodyLimit = Math.max(bodyLimit, CARD_BODY_LIMIT);

  app.post(
    '/:locale/partners/cards',
    {
      config: { auth: 'partner' },
      bodyLimit: cardBodyLimit,
      attachValidation: true,
      preValidation: flagDeprecatedField,
      schema: {
        tags: ['partners'],
        summary: 'Create a partner card programme',
        description: `Omitted optional fields take their defaults (see each property). Honours Idempotency-Key. ${DEPRECATION_NOTE}`,
        params: LocaleParams,
        body: CreateCardBody,
        response: { 201: Envelope(CreatedCard), ...errorResponses(400, 401, 403, 409, 422, 429) },
      },
    },
    async (req, reply) => {
      const { partnerId } = principalOf(req, 'partner');
      if (req.validationError) {
        const schemaErrors = bodySchemaErrors(req);
        rejectInvalidBody(schemaErrors, unwrap(await cards.problems(partnerId, bodyObject(req.body))));
      }
      return idempotency.respond(req, reply, `partner:${partnerId}`, { message: 'partner_cards.created' }, (tx) => cards.createCard(partnerId, req.body as NewCardInput, tx));
    },
  );

  app.get(
    '/:locale/partners/cards',
    {
      config: { auth: 'partner' },
      preValidation: binaryBooleansInQuery('is_active'),
      schema: {
        tags: ['partners'],
        summary: "List the partner's card programmes",
        description: 'Ordered by id. `pagination` gives current_page, per_page (default 20, at most 100), total and last_page.',
        params: LocaleParams,
        querystring: ListCardsQuery,
        response: { 200: PaginatedEnvelope(CardListItem), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const page = pageWindow(req.query);
      const { is_active: isActive, shop_id: shopId } = req.query;
      const { items, total } = await cards.listCards(principalOf(req, 'partner').partnerId, { isActive, shopId }, page);
      return listWithPagination(req, items, page, total);
    },
  );

  app.get(
    '/:locale/partners/cards/:id',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'One card programme, every field',
        params: LocaleIdParams,
        response: { 200: Envelope(PartnerCard), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      const card = await cards.getCard(principalOf(req, 'partner').partnerId, req.params.id);
      if (!card) throw notFound('resource.partner_card');
      return envelopeOf(req, card);
    },
  );

  app.put(
    '/:locale/partners/cards/:id',
    {
      config: { auth: 'partner' },
      bodyLimit: cardBodyLimit,
      attachValidation: true,
      preValidation: flagDeprecatedField,
      schema: {
        tags: ['partners'],
        summary: 'Update a card programme (every field optional)',
        description: `Only the fields sent change; title, description, terms_conditions, card_design and shop_ids are replaced as a whole (a title needs both en and lt). \`data\` is the fields sent, as stored, plus updated_at. ${DEPRECATION_NOTE}`,
        params: LocaleIdParams,
        body: UpdateCardBody,
        response: { 200: Envelope(UpdatedCard), ...errorResponses(400, 401, 403, 404, 422, 429) },
      },
    },
    async (req) => {
      const { partnerId } = principalOf(req, 'partner');
      if (req.validationError) {
        const schemaErrors = bodySchemaErrors(req);
        rejectInvalidBody(schemaErrors, unwrap(await cards.problems(partnerId, bodyObject(req.body), req.params.id)));
      }
      const updated = unwrap(await cards.updateCard(partnerId, req.params.id, req.body as CardInput));
      return envelopeOf(req, updated, 'partner_cards.updated');
    },
  );

  app.delete(
    '/:locale/partners/cards/:id',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Delete a card programme',
        description:
          'A soft delete: the programme becomes inactive and disappears from this API (later GET, PUT and DELETE are 404); customers\' cards in it keep their points history.',
        params: LocaleIdParams,
        response: { 200: EmptyEnvelope, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      if (!(await cards.deleteCard(principalOf(req, 'partner').partnerId, req.params.id))) throw notFound('resource.partner_card');
      return envelopeNoData(req, 'partner_cards.deleted');
    },
  );
};
