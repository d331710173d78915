// Prometheus metrics: requests by route and status, a latency histogram and the database
// pool. Each app instance has its own registry (tests run several at once).
// This plugin counts and exposes `app.metrics`; the `/metrics` route itself is declared
// with the other operational routes (modules/system), after the OpenAPI plugin, which
// only documents routes registered after it.
//
// The exposition shows per-route request counts across every tenant, so METRICS_TOKEN can
// close it: /metrics then answers only `Authorization: Bearer <METRICS_TOKEN>` (what a
// Prometheus scrape config's `authorization.credentials` sends), 401 in the error envelope
// otherwise. Unset, /metrics is public and production start warns (context.ts).
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { sha256 } from '../shared/crypto.js';
import { AppError } from '../shared/errors.js';
import type { PoolStats } from './db/index.js';

export interface MetricsExposition {
  contentType: string;
  render(): Promise<string>;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Present when metrics are enabled (METRICS_ENABLED). */
    metrics: MetricsExposition;
  }
}

export interface MetricsOptions {
  poolStats: () => PoolStats | undefined;
  /** METRICS_TOKEN: the bearer token /metrics requires; undefined = public. */
  token: string | undefined;
}

/** The route the token guards (declared in modules/system; HEAD shares its pattern). */
const METRICS_ROUTE = '/metrics';

async function metricsPlugin(app: FastifyInstance, opts: MetricsOptions) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route pattern',
    labelNames: ['route', 'method'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const pool = new Gauge({
    name: 'db_pool_connections',
    help: 'Database pool connections by state (PostgreSQL only)',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const s = opts.poolStats();
      if (!s) return;
      this.set({ state: 'total' }, s.total);
      this.set({ state: 'idle' }, s.idle);
      this.set({ state: 'waiting' }, s.waiting);
    },
  });
  void pool;

  // Label children are looked up once per (route, method, status) and kept: resolving label
  // objects on every response is a measurable share of a cheap request.
  const counters = new Map<string, ReturnType<typeof requests.labels>>();
  const histograms = new Map<string, ReturnType<typeof duration.labels>>();
  app.addHook('onResponse', (req, reply, done) => {
    // The route pattern, never the raw URL: ids and junk paths must not explode the labels.
    const route = req.routeOptions.url ?? 'unmatched';
    const timing = `${req.method} ${route}`;
    const key = `${reply.statusCode} ${timing}`;
    let counter = counters.get(key);
    if (!counter) counters.set(key, (counter = requests.labels({ route, method: req.method, status: String(reply.statusCode) })));
    let histogram = histograms.get(timing);
    if (!histogram) histograms.set(timing, (histogram = duration.labels({ route, method: req.method })));
    counter.inc();
    histogram.observe(reply.elapsedTime / 1000);
    done();
  });

  if (opts.token !== undefined) {
    // Digests of equal length, compared in constant time: neither the token's length nor
    // its first differing byte shows in the answer time.
    const expected = sha256(opts.token);
    const challenge = { 'www-authenticate': 'Bearer realm="metrics"' };
    app.addHook('onRequest', async (req) => {
      if (req.routeOptions.url !== METRICS_ROUTE) return;
      const header = req.headers.authorization;
      if (header === undefined || header.trim() === '') throw new AppError('MISSING_AUTHENTICATION', { headers: challenge });
      const given = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
      if (given === undefined) throw new AppError('INVALID_TOKEN_FORMAT', { headers: challenge });
      if (!timingSafeEqual(sha256(given), expected)) throw new AppError('INVALID_TOKEN', { headers: challenge });
    });
  }

  app.decorate('metrics', {
    contentType: registry.contentType,
    render: () => registry.metrics(),
  } satisfies MetricsExposition);
}

export default fp(metricsPlugin, { name: 'metrics', dependencies: ['http-core'], fastify: '5.x' });
