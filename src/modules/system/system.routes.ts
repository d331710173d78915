import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../infra/auth.js';
import { envelopeOf } from '../../shared/envelope.js';
import { Envelope, errorResponses, LocaleParams } from '../../shared/schemas.js';
import type { SystemService } from './system.service.js';

const Check = Type.Union([Type.Literal('ok'), Type.Literal('error'), Type.Literal('disabled')]);
const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  version: Type.String(),
  checks: Type.Object({ database: Check, redis: Check }),
});

const Probe = Type.Object({ status: Type.String() });

export const systemRoutes: FastifyPluginAsyncTypebox<{ system: SystemService }> = async (app, { system }) => {
  app.post(
    '/:locale/shop/validate-credentials',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['shop'],
        summary: 'Verify API credentials',
        // No body schema: none is needed, and an empty body, `{}` or any JSON object is accepted.
        description: 'No body is needed (an empty JSON object is accepted). Answers 200 with the partner the credentials belong to.',
        params: LocaleParams,
        response: {
          200: Envelope(
            Type.Object({ valid: Type.Literal(true), partner: Type.Object({ id: Type.Integer(), name: Type.String() }) }),
          ),
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (req) => {
      const p = principalOf(req, 'api');
      return envelopeOf(req, { valid: true as const, partner: { id: p.partnerId, name: p.partnerName } }, 'auth.credentials_valid');
    },
  );

  for (const url of ['/:locale/shop/system/health', '/:locale/shop/health']) {
    app.get(
      url,
      {
        config: { auth: 'api' },
        schema: {
          tags: ['shop'],
          summary: 'Service health',
          description: 'Status, version and the state of the database and Redis. `degraded` means a dependency is failing.',
          params: LocaleParams,
          response: { 200: Envelope(Health), ...errorResponses(401, 429) },
        },
      },
      async (req) => {
        const report = await system.health();
        return envelopeOf(req, report, report.status === 'ok' ? 'health.ok' : 'health.degraded');
      },
    );
  }

  app.get(
    '/healthz',
    {
      config: { rateLimit: false },
      schema: { tags: ['operations'], summary: 'Liveness probe (no credentials)', response: { 200: Probe } },
    },
    async () => ({ status: 'ok' }),
  );

  // Counted and rendered by the metrics plugin (infra/metrics.ts) when METRICS_ENABLED.
  if (app.hasDecorator('metrics')) {
    app.get(
      '/metrics',
      {
        config: { rateLimit: false },
        schema: {
          tags: ['operations'],
          summary: 'Prometheus metrics',
          description: 'Requests by route pattern and status, latency histogram, database pool (PostgreSQL), process metrics.',
          produces: ['text/plain'],
          response: { 200: { type: 'string', description: 'Prometheus text exposition format' } },
        },
      },
      async (_req, reply) => {
        reply.type(app.metrics.contentType);
        return app.metrics.render();
      },
    );
  }

  app.get(
    '/readyz',
    {
      config: { rateLimit: false },
      schema: {
        tags: ['operations'],
        summary: 'Readiness probe: database reachable and migrations applied',
        response: { 200: Probe, 503: Probe },
      },
    },
    async (_req, reply) => {
      const ready = await system.ready();
      reply.code(ready ? 200 : 503);
      return { status: ready ? 'ready' : 'not_ready' };
    },
  );
};
