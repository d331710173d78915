import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../infra/auth.js';
import type { SignInLock } from '../../infra/rate-limit.js';
import { envelopeNoData, envelopeOf } from '../../shared/envelope.js';
import { notFound, unwrap } from '../../shared/errors.js';
import { EmptyEnvelope, Envelope, errorResponses, LocaleParams } from '../../shared/schemas.js';
import { ChangePasswordBody, LoginBody, Partner, PartnerLoginData } from './partners.schemas.js';
import { isWrongCurrentPassword, type PartnersService } from './partners.service.js';

export const partnersRoutes: FastifyPluginAsyncTypebox<{ partners: PartnersService; signInLock: SignInLock }> = async (
  app,
  { partners, signInLock },
) => {
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
    async (req) => {
      const { email, password } = req.body;
      const result = await signInLock.attempt('partner', email, () => partners.login(email, password));
      return envelopeOf(req, unwrap(result), 'auth.logged_in');
    },
  );

  app.post(
    '/:locale/partners/auth/logout',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Partner sign-out',
        description:
          'Revokes the partner token presented: every later request with it is 401 INVALID_CREDENTIALS, on every node. Other tokens of the partner (another browser) and its API keys keep working.',
        params: LocaleParams,
        response: { 200: EmptyEnvelope, ...errorResponses(401, 403, 429) },
      },
    },
    async (req) => {
      await partners.signOut(principalOf(req, 'partner').token);
      return envelopeNoData(req, 'auth.logged_out');
    },
  );

  app.post(
    '/:locale/partners/auth/password',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['partners'],
        summary: 'Change the partner password',
        description:
          'Every partner token issued before the change is revoked, the one used here too; the response carries a fresh token to use from now on. A wrong current_password is 422 with a field error.',
        params: LocaleParams,
        body: ChangePasswordBody,
        response: { 200: Envelope(PartnerLoginData), ...errorResponses(400, 401, 403, 422, 429) },
      },
    },
    async (req) => {
      const { partnerId } = principalOf(req, 'partner');
      const changed = await partners.changePassword(partnerId, req.body.current_password, req.body.new_password, (email, change) =>
        signInLock.attempt('partner', email, change, isWrongCurrentPassword),
      );
      return envelopeOf(req, unwrap(changed), 'auth.password_changed');
    },
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
