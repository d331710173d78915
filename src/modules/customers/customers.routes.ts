// Customer sign-in for the mobile app (/{locale}/app/auth/otp/...) and the customer's own
// account on the Shop interface (/{locale}/shop/auth/me, /profile).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../infra/auth.js';
import { envelopeNoData, envelopeOf } from '../../shared/envelope.js';
import { AppError, notFound, unwrap } from '../../shared/errors.js';
import { DateTime, EmptyEnvelope, Envelope, errorResponses, LocaleParams, Name } from '../../shared/schemas.js';
import type { CustomersService } from './customers.service.js';
import type { OtpService } from './otp.service.js';
import { Customer } from './customers.schemas.js';

const Phone = Type.String({ minLength: 1, maxLength: 32, description: 'Mobile number in E.164 form; the plus sign is optional.' });

const ProfileBody = Type.Object({
  name: Type.Optional(Type.Union([Name(255), Type.Null()])),
  email: Type.Optional(Type.Union([Type.String({ format: 'email', maxLength: 254 }), Type.Null()])),
  birth_date: Type.Optional(Type.Union([Type.String({ format: 'date' }), Type.Null()])),
  language: Type.Optional(Type.Union([Type.Literal('lt'), Type.Literal('en'), Type.Null()])),
});

export const customersRoutes: FastifyPluginAsyncTypebox<{ customers: CustomersService; otp: OtpService }> = async (
  app,
  { customers, otp },
) => {
  app.post(
    '/:locale/app/auth/otp/request',
    {
      schema: {
        tags: ['app'],
        summary: 'Send a sign-in code by SMS',
        description:
          'Sends a 6-digit code valid for 10 minutes. A new code for the same number at most once a minute and 5 times an hour (429 with Retry-After).',
        params: LocaleParams,
        body: Type.Object({ phone: Phone }),
        response: {
          200: Envelope(Type.Object({ phone: Type.String(), expires_at: DateTime, resend_after: Type.Integer({ description: 'seconds' }) })),
          ...errorResponses(400, 422, 429),
        },
      },
    },
    async (req) => envelopeOf(req, unwrap(await otp.request(req.body.phone, req.locale)), 'otp.sent'),
  );

  app.post(
    '/:locale/app/auth/otp/verify',
    {
      schema: {
        tags: ['app'],
        summary: 'Sign in with the code',
        description:
          'Returns a customer JWT (not scoped to a partner) and the customer, created on first sign-in. A wrong code is 401 INVALID_CREDENTIALS with attempts_left; after 5 wrong codes the code is dead (429); an expired code is 401.',
        params: LocaleParams,
        body: Type.Object({ phone: Phone, code: Type.String({ pattern: '^[0-9]{6}$', 'x-message': 'validation.pattern' }) }),
        response: {
          200: Envelope(Type.Object({ token: Type.String(), expires_at: DateTime, user: Customer })),
          ...errorResponses(400, 401, 422, 429),
        },
      },
    },
    async (req) => envelopeOf(req, unwrap(await otp.verify(req.body.phone, req.body.code)), 'auth.logged_in'),
  );

  app.post(
    '/:locale/app/auth/logout',
    {
      config: { auth: 'customer' },
      schema: {
        tags: ['app'],
        summary: 'Sign out',
        description:
          'Revokes the customer token presented (from the app or a QR login): every later request with it is 401 INVALID_CREDENTIALS, on every node. Other tokens of the customer keep working.',
        params: LocaleParams,
        response: { 200: EmptyEnvelope, ...errorResponses(401, 403, 429) },
      },
    },
    async (req) => {
      await otp.signOut(principalOf(req, 'customer').token);
      return envelopeNoData(req, 'auth.logged_out');
    },
  );

  app.get(
    '/:locale/shop/auth/me',
    {
      config: { auth: 'customer' },
      schema: {
        tags: ['shop'],
        summary: 'The signed-in customer',
        params: LocaleParams,
        response: { 200: Envelope(Customer), ...errorResponses(401, 403, 429) },
      },
    },
    async (req) => {
      const customer = await customers.get(principalOf(req, 'customer').customerId);
      if (!customer) throw notFound('resource.customer');
      return envelopeOf(req, customer);
    },
  );

  app.put(
    '/:locale/shop/auth/profile',
    {
      config: { auth: 'customer' },
      schema: {
        tags: ['shop'],
        summary: "Update the customer's profile",
        description:
          "Every field optional; null clears it. The phone number is the account and cannot be changed here. Only with the app's own token: a token from a partner's QR login is 403 INSUFFICIENT_PERMISSIONS.",
        params: LocaleParams,
        body: ProfileBody,
        response: { 200: Envelope(Customer), ...errorResponses(400, 401, 403, 422, 429) },
      },
    },
    async (req) => {
      const c = principalOf(req, 'customer');
      // The profile is the customer's own, seen by every partner: a token held by one
      // partner's till (QR login) may read it but not rewrite it.
      if (c.partnerId !== undefined) throw new AppError('INSUFFICIENT_PERMISSIONS', { message: 'error.profile_scoped_token' });
      const customer = unwrap(await customers.updateProfile(c.customerId, req.body));
      if (!customer) throw notFound('resource.customer');
      return envelopeOf(req, customer, 'customers.profile_updated');
    },
  );
};
