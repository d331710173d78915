import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../infra/auth.js';
import type { Idempotency } from '../../infra/idempotency.js';
import type { SignInLock } from '../../infra/rate-limit.js';
import { envelopeNoData, envelopeOf, listWithMeta } from '../../shared/envelope.js';
import { notFound, unwrap } from '../../shared/errors.js';
import { pageWindow } from '../../shared/pagination.js';
import { DateTime, EmptyEnvelope, Envelope, errorResponses, ListEnvelope, LocaleIdParams, LocaleParams, PageQuery } from '../../shared/schemas.js';
import { ChangePasswordBody, CreatePartnerBody, LoginBody, Partner, SetPasswordBody } from '../partners/partners.schemas.js';
import { isWrongCurrentPassword, type PartnersService } from '../partners/partners.service.js';
import { Admin } from './admin.schemas.js';
import type { AdminService } from './admin.service.js';

export const adminRoutes: FastifyPluginAsyncTypebox<{
  admin: AdminService;
  partners: PartnersService;
  idempotency: Idempotency;
  signInLock: SignInLock;
}> = async (app, { admin, partners, idempotency, signInLock }) => {
  app.post(
    '/:locale/admin/auth/login',
    {
      schema: {
        tags: ['admin'],
        summary: 'Administrator login',
        params: LocaleParams,
        body: LoginBody,
        response: {
          200: Envelope(Type.Object({ token: Type.String(), expires_at: DateTime, admin: Admin })),
          ...errorResponses(400, 401, 422, 429),
        },
      },
    },
    async (req) => {
      const { email, password } = req.body;
      const result = await signInLock.attempt('admin', email, () => admin.login(email, password));
      return envelopeOf(req, unwrap(result), 'auth.logged_in');
    },
  );

  app.post(
    '/:locale/admin/auth/logout',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Administrator sign-out',
        description: 'Revokes the admin token presented: every later request with it is 401 INVALID_CREDENTIALS, on every node.',
        params: LocaleParams,
        response: { 200: EmptyEnvelope, ...errorResponses(401, 403, 429) },
      },
    },
    async (req) => {
      await admin.signOut(principalOf(req, 'admin').token);
      return envelopeNoData(req, 'auth.logged_out');
    },
  );

  app.post(
    '/:locale/admin/auth/password',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: "Change the administrator's own password",
        description:
          'Every token of this admin issued before the change is revoked, the one used here too; the response carries a fresh token. A wrong current_password is 422 with a field error.',
        params: LocaleParams,
        body: ChangePasswordBody,
        response: {
          200: Envelope(Type.Object({ token: Type.String(), expires_at: DateTime, admin: Admin })),
          ...errorResponses(400, 401, 403, 422, 429),
        },
      },
    },
    async (req) => {
      const { adminId } = principalOf(req, 'admin');
      const changed = await admin.changePassword(adminId, req.body.current_password, req.body.new_password, (email, change) =>
        signInLock.attempt('admin', email, change, isWrongCurrentPassword),
      );
      return envelopeOf(req, unwrap(changed), 'auth.password_changed');
    },
  );

  app.put(
    '/:locale/admin/partners/:id/password',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: "Reset a partner's password",
        description: "Sets the partner's password and revokes every partner token issued before it (API keys are not affected).",
        params: LocaleIdParams,
        body: SetPasswordBody,
        response: { 200: Envelope(Partner), ...errorResponses(400, 401, 403, 404, 422, 429) },
      },
    },
    async (req) => {
      const partner = await partners.setPassword(req.params.id, req.body.password);
      if (!partner) throw notFound('resource.partner');
      return envelopeOf(req, partner, 'auth.password_changed');
    },
  );

  app.post(
    '/:locale/admin/partners',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Create a partner',
        description: 'Creates a partner account that can log in with the given e-mail and password. Honours Idempotency-Key.',
        params: LocaleParams,
        body: CreatePartnerBody,
        response: { 201: Envelope(Partner), ...errorResponses(400, 401, 403, 409, 422, 429) },
      },
    },
    async (req, reply) => {
      const { adminId } = principalOf(req, 'admin');
      return idempotency.respond(req, reply, `admin:${adminId}`, { message: 'ok.created' }, (tx) => partners.create(req.body, tx));
    },
  );

  app.get(
    '/:locale/admin/partners',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'List partners',
        params: LocaleParams,
        querystring: PageQuery,
        response: { 200: ListEnvelope(Partner), ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (req) => {
      const page = pageWindow(req.query);
      const { items, total } = await partners.list(page);
      return listWithMeta(req, items, page, total);
    },
  );

  app.get(
    '/:locale/admin/partners/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'One partner',
        params: LocaleIdParams,
        response: { 200: Envelope(Partner), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (req) => {
      const partner = await partners.get(req.params.id);
      if (!partner) throw notFound('resource.partner');
      return envelopeOf(req, partner);
    },
  );
};
