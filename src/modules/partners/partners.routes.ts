import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../infra/auth.js';
import { envelopeOf } from '../../shared/envelope.js';
import { notFound, unwrap } from '../../shared/errors.js';
import { Envelope, errorResponses, LocaleParams } from '../../shared/schemas.js';
import { LoginBody, Partner, PartnerLoginData } from './partners.schemas.js';
import type { PartnersService } from './partners.service.js';

export const partnersRoutes: FastifyPluginAsyncTypebox<{ partners: PartnersService }> = async (app, { partners }) => {
  app.post(
    '/:locale/partners/auth/login',
    {
      schema: {
        tags: ['partners'],
        summary: 'Partner login',
        description: 'Exchange the partner e-mail and password for a partner JWT.',
        params: LocaleParams,
        body: LoginBody,
        response: { 200: Envelope(PartnerLoginData), ...errorResponses(400, 401, 422, 429) },
      },
    },
    async (req) => envelopeOf(req, unwrap(await partners.login(req.body.email, req.body.password)), 'auth.logged_in'),
  );

  app.get(
    '/:locale/partners/auth/me',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'The signed-in partner',
        params: LocaleParams,
        response: { 200: Envelope(Partner), ...errorResponses(401, 403, 429) },
      },
    },
    async (req) => {
      const partner = await partners.get(principalOf(req, 'partner').partnerId);
      if (!partner) throw notFound('resource.partner');
      return envelopeOf(req, partner);
    },
  );
};
