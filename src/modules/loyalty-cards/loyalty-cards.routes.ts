// Loyalty cards on the Shop interface. Tills (API credentials) look cards up; customers
// (customer JWT) join programmes and see their own cards.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../infra/auth.js';
import type { Idempotency } from '../../infra/idempotency.js';
import { envelopeOf, listWithMeta } from '../../shared/envelope.js';
import { fieldError, notFound, unwrap } from '../../shared/errors.js';
import { pageWindow } from '../../shared/pagination.js';
import { Envelope, errorResponses, IdParam, ListEnvelope, LocaleIdParams, LocaleParams, PageQuery } from '../../shared/schemas.js';
import { CardBalance, CardInfo, CardLookupQuery, CardNumber, LoyaltyCard } from './loyalty-cards.schemas.js';
import { customerOwner, type LoyaltyCardsService } from './loyalty-cards.service.js';

function lookupOf(query: { card_number?: string; card_id?: number }) {
  if (query.card_number === undefined && query.card_id === undefined) throw fieldError('card_number', 'cards.lookup_required');
  return { ...(query.card_id !== undefined ? { cardId: query.card_id } : {}), ...(query.card_number !== undefined ? { cardNumber: query.card_number } : {}) };
}

const CreateCardBody = Type.Object({ partner_card_id: IdParam });

export const loyaltyCardsRoutes: FastifyPluginAsyncTypebox<{ cards: LoyaltyCardsService; idempotency: Idempotency }> = async (
  app,
  { cards, idempotency },
) => {
  app.get(
    '/:locale/shop/loyalty-cards',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['shop'],
        summary: "The partner's loyalty cards",
        params: LocaleParams,
        querystring: Type.Object({
          ...PageQuery.properties,
          user_id: Type.Optional(IdParam),
          partner_card_id: Type.Optional(IdParam),
          card_number: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        }),
        response: { 200: ListEnvelope(LoyaltyCard), ...errorResponses(401, 422, 429) },
      },
    },
    async (req) => {
      const page = pageWindow(req.query);
      const q = req.query;
      const { items, total } = await cards.list(
        { partnerId: principalOf(req, 'api').partnerId },
        {
          ...(q.user_id !== undefined ? { customerId: q.user_id } : {}),
          ...(q.partner_card_id !== undefined ? { partnerCardId: q.partner_card_id } : {}),
          ...(q.card_number !== undefined ? { cardNumber: q.card_number } : {}),
        },
        page,
      );
      return listWithMeta(req, items, page, total);
    },
  );

  app.get(
    '/:locale/shop/loyalty-cards/info',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['shop'],
        summary: 'A scanned card: the card, its holder and the programme rules',
        description: 'Find the card by card_number (what the app shows as QR) or card_id.',
        params: LocaleParams,
        querystring: CardLookupQuery,
        response: { 200: Envelope(CardInfo), ...errorResponses(401, 404, 422, 429) },
      },
    },
    async (req) => {
      const info = await cards.info(principalOf(req, 'api').partnerId, lookupOf(req.query));
      if (!info) throw notFound('resource.loyalty_card', req.query.card_number !== undefined ? 'card_number' : 'card_id');
      return envelopeOf(req, info);
    },
  );

  app.get(
    '/:locale/shop/loyalty-cards/balance',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['shop'],
        summary: "A card's points balance",
        params: LocaleParams,
        querystring: CardLookupQuery,
        response: { 200: Envelope(CardBalance), ...errorResponses(401, 404, 422, 429) },
      },
    },
    async (req) => {
      const balance = await cards.balance({ partnerId: principalOf(req, 'api').partnerId }, lookupOf(req.query));
      if (!balance) throw notFound('resource.loyalty_card', req.query.card_number !== undefined ? 'card_number' : 'card_id');
      return envelopeOf(req, balance);
    },
  );

  app.get(
    '/:locale/shop/loyalty-cards/:id',
    {
      config: { auth: ['customer', 'api'] },
      schema: {
        tags: ['shop'],
        summary: 'One card (API credentials) or a customer\'s cards (customer JWT)',
        description:
          "With API credentials, {id} is a card id of the partner and the card is returned. With a customer JWT, {id} is the customer's own user id and their cards are returned (another user's id is 404).",
        params: LocaleIdParams,
        querystring: PageQuery,
        response: { 200: Type.Union([Envelope(LoyaltyCard), ListEnvelope(LoyaltyCard)]), ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (req) => {
      if (req.principal?.kind === 'customer') {
        const p = principalOf(req, 'customer');
        if (req.params.id !== p.customerId) throw notFound('resource.customer');
        const page = pageWindow(req.query);
        const { items, total } = await cards.list(customerOwner(p), {}, page);
        return listWithMeta(req, items, page, total);
      }
      const card = await cards.get({ partnerId: principalOf(req, 'api').partnerId }, { cardId: req.params.id });
      if (!card) throw notFound('resource.loyalty_card');
      return envelopeOf(req, card);
    },
  );

  const createCard = async (req: FastifyRequest, reply: FastifyReply, cardNumber?: string) => {
    const p = principalOf(req, 'customer');
    const body = req.body as { partner_card_id: number };
    return idempotency.run(req, reply, `customer:${p.customerId}`, async (tx) => ({
      status: 201,
      body: envelopeOf(
        req,
        unwrap(
          await cards.create(tx, p.customerId, {
            partnerCardId: body.partner_card_id,
            ...(cardNumber !== undefined ? { cardNumber } : {}),
            ...(p.partnerId !== undefined ? { partnerScope: p.partnerId } : {}),
          }),
        ),
        'cards.created',
        201,
      ),
    }));
  };

  app.post(
    '/:locale/shop/loyalty-cards',
    {
      config: { auth: 'customer' },
      schema: {
        tags: ['shop'],
        summary: 'Join a card programme',
        description:
          "Issues a card (16 digits, Luhn check digit) in the programme and credits its welcome bonus. One card per programme (409 DUPLICATE_VALUE). A token from a partner's QR login can join only that partner's programmes. Honours Idempotency-Key.",
        params: LocaleParams,
        body: CreateCardBody,
        response: { 201: Envelope(LoyaltyCard), ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (req, reply) => createCard(req, reply),
  );

  app.post(
    '/:locale/shop/loyalty-cards/third-party',
    {
      config: { auth: 'customer' },
      schema: {
        tags: ['shop'],
        summary: 'Attach an existing (third-party) card number',
        description: 'Like joining a programme, but the card keeps a number the customer already holds (unique within the partner). Honours Idempotency-Key.',
        params: LocaleParams,
        body: Type.Object({ partner_card_id: IdParam, card_number: CardNumber }),
        response: { 201: Envelope(LoyaltyCard), ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (req, reply) => createCard(req, reply, req.body.card_number),
  );
};
