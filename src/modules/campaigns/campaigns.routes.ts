// Campaigns CRUD (DESIGN.md §12) at /{locale}/partners/campaigns, with the partner's JWT.
// Another partner's campaign, or a deleted one, is 404; the partner's programme, shops,
// products and categories are checked (422 on that field).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../infra/auth.js';
import { binaryBooleansInQuery, bodySchemaErrors, rejectInvalidBody } from '../../infra/http-core.js';
import type { Idempotency } from '../../infra/idempotency.js';
import { envelopeNoData, envelopeOf, listWithMeta } from '../../shared/envelope.js';
import { notFound, unwrap } from '../../shared/errors.js';
import { pageWindow } from '../../shared/pagination.js';
import { EmptyEnvelope, Envelope, errorResponses, ListEnvelope, LocaleIdParams, LocaleParams } from '../../shared/schemas.js';
import { isPlainObject } from '../../shared/validation.js';
import { Campaign, CreateCampaignBody, ListCampaignsQuery, UpdateCampaignBody } from './campaigns.schemas.js';
import type { CampaignInput, CampaignsService, NewCampaignInput } from './campaigns.service.js';

const Deleted = Type.Object(EmptyEnvelope.properties, {
  examples: [{ success: true, code: 200, message: 'Campaign deleted', request_id: '6f1c2d3e-0000-4000-8000-000000000000' }],
});

const bodyObject = (body: unknown): Record<string, unknown> => (isPlainObject(body) ? body : {});

const RULES =
  'Validation problems come back together as one 422 with dotted field paths (effect.value, schedule.to_time, conditions.product_ids …). partner_card_id, shop_ids, conditions.product_ids and conditions.category_ids must be the partner\'s, and tier_ids tiers of the campaign\'s programme (else 422 on that field); each list holds at most 1,000 entries. A programme has at most 100 campaigns that have not ended (ends_at unset or later than now; paused and exhausted ones count, deleted ones do not): creating the 101st, or an update that brings an ended campaign back or moves one to a full programme, is 422 QUOTA_EXCEEDED on partner_card_id, meta {limit}.';

export const campaignsRoutes: FastifyPluginAsyncTypebox<{ campaigns: CampaignsService; idempotency: Idempotency }> = async (app, { campaigns, idempotency }) => {
  app.post(
    '/:locale/partners/campaigns',
    {
      config: { auth: 'partner' },
      attachValidation: true,
      schema: {
        tags: ['partners'],
        summary: 'Create a campaign',
        description: `Points on top of the programme's base rule for the awards it applies to. schedule, conditions and limits may be left out or sent in part: missing fields take their defaults. ${RULES} Honours Idempotency-Key.`,
        params: LocaleParams,
        body: CreateCampaignBody,
        response: { 201: Envelope(Campaign), ...errorResponses(400, 401, 403, 409, 422, 429) },
      },
    },
    async (req, reply) => {
      const { partnerId } = principalOf(req, 'partner');
      if (req.validationError) rejectInvalidBody(bodySchemaErrors(req), unwrap(await campaigns.problems(partnerId, bodyObject(req.body))));
      return idempotency.respond(req, reply, `partner:${partnerId}`, { message: 'campaigns.created' }, (tx) => campaigns.createCampaign(partnerId, req.body as NewCampaignInput, tx));
    },
  );

  app.get(
    '/:locale/partners/campaigns',
    {
      config: { auth: 'partner' },
      preValidation: binaryBooleansInQuery('is_active'),
      schema: {
        tags: ['partners'],
        summary: "List the partner's campaigns",
        description: 'Ordered by id, with `meta` pagination; filters partner_card_id, is_active and status (as it is now).',
        params: LocaleParams,
        querystring: ListCampaignsQuery,
        response: { 200: ListEnvelope(Campaign), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const page = pageWindow(req.query);
      const { items, total } = await campaigns.listCampaigns(
        principalOf(req, 'partner').partnerId,
        { partnerCardId: req.query.partner_card_id, isActive: req.query.is_active, status: req.query.status },
        page,
      );
      return listWithMeta(req, items, page, total);
    },
  );

  app.get(
    '/:locale/partners/campaigns/:id',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'One campaign',
        description: "Another partner's campaign, or a deleted one, is 404.",
        params: LocaleIdParams,
        response: { 200: Envelope(Campaign), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      const campaign = await campaigns.getCampaign(principalOf(req, 'partner').partnerId, req.params.id);
      if (!campaign) throw notFound('resource.campaign');
      return envelopeOf(req, campaign);
    },
  );

  app.put(
    '/:locale/partners/campaigns/:id',
    {
      config: { auth: 'partner' },
      attachValidation: true,
      schema: {
        tags: ['partners'],
        summary: 'Update a campaign (any subset of the fields)',
        description: `Only the fields sent change, inside schedule, conditions, effect and limits too; \`data\` is the whole campaign. The campaign as it will be is checked (a to_time sent alone must fit the stored from_time; an effect type sent alone, the stored value). uses_count and points_awarded are not changed: lowering points_budget to what was given makes the campaign exhausted. ${RULES}`,
        params: LocaleIdParams,
        body: UpdateCampaignBody,
        response: { 200: Envelope(Campaign), ...errorResponses(400, 401, 403, 404, 422, 429) },
      },
    },
    async (req) => {
      const { partnerId } = principalOf(req, 'partner');
      if (req.validationError) rejectInvalidBody(bodySchemaErrors(req), unwrap(await campaigns.problems(partnerId, bodyObject(req.body), req.params.id)));
      return envelopeOf(req, unwrap(await campaigns.updateCampaign(partnerId, req.params.id, req.body as CampaignInput)), 'campaigns.updated');
    },
  );

  app.delete(
    '/:locale/partners/campaigns/:id',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Delete a campaign',
        description: 'It stops applying and is gone from the API (404 afterwards). Points already earned keep it in their breakdown, and a return still gives its budget back.',
        params: LocaleIdParams,
        response: { 200: Deleted, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      if (!(await campaigns.deleteCampaign(principalOf(req, 'partner').partnerId, req.params.id))) throw notFound('resource.campaign');
      return envelopeNoData(req, 'campaigns.deleted');
    },
  );
};
