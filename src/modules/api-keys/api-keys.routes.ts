import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../infra/auth.js';
import { envelopeNoData, envelopeOf, listWithMeta } from '../../shared/envelope.js';
import { notFound } from '../../shared/errors.js';
import { pageWindow } from '../../shared/pagination.js';
import { DateTime, EmptyEnvelope, Name, Envelope, errorResponses, ListEnvelope, LocaleIdParams, LocaleParams, PageQuery } from '../../shared/schemas.js';
import { ApiKey } from './api-keys.schemas.js';
import type { ApiKeysService } from './api-keys.service.js';

const NewApiKey = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  key: Type.String(),
  secret: Type.String({ description: 'Shown only in this response; store it on your server.' }),
  created_at: DateTime,
});

export const apiKeysRoutes: FastifyPluginAsyncTypebox<{ apiKeys: ApiKeysService }> = async (app, { apiKeys }) => {
  app.post(
    '/:locale/partners/api-keys',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Issue API credentials',
        description: 'Returns the key and its secret. The secret is stored only as a hash and cannot be shown again.',
        params: LocaleParams,
        body: Type.Object({ name: Name(100) }),
        response: { 201: Envelope(NewApiKey), ...errorResponses(400, 401, 403, 422, 429) },
      },
    },
    async (req, reply) => {
      const created = await apiKeys.create(principalOf(req, 'partner').partnerId, req.body.name);
      reply.code(201);
      return envelopeOf(req, created, 'api_keys.created', 201);
    },
  );

  app.get(
    '/:locale/partners/api-keys',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'List active API keys (no secrets)',
        params: LocaleParams,
        querystring: PageQuery,
        response: { 200: ListEnvelope(ApiKey), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const page = pageWindow(req.query);
      const { items, total } = await apiKeys.list(principalOf(req, 'partner').partnerId, page);
      return listWithMeta(req, items, page, total);
    },
  );

  app.delete(
    '/:locale/partners/api-keys/:id',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Revoke an API key',
        description: 'Takes effect immediately on every node.',
        params: LocaleIdParams,
        response: { 200: EmptyEnvelope, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      if (!(await apiKeys.revoke(principalOf(req, 'partner').partnerId, req.params.id))) throw notFound('resource.api_key');
      return envelopeNoData(req, 'api_keys.revoked');
    },
  );
};
