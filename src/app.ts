// The HTTP application, assembled in a fixed order: infrastructure plugins (HTTP core,
// auth + rate limits, metrics, OpenAPI) → module routes. Each plugin is named and
// declares its dependencies, so a wiring mistake fails at boot.
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.js';
import { createContext, type Context } from './context.js';
import type { Database } from './infra/db/index.js';
import authPlugin from './infra/auth.js';
import { AccountStatusCache } from './infra/account-cache.js';
import httpCore, { clientErrorHandler, frameworkErrors, requestLogSerializer } from './infra/http-core.js';
import { proxyTrust } from './infra/client-address.js';
import { Idempotency } from './infra/idempotency.js';
import { stdoutLogDestination } from './infra/log-destination.js';
import { errorLogSerializer } from './infra/log-errors.js';
import metricsPlugin from './infra/metrics.js';
import openapiPlugin from './infra/openapi.js';
import dashboardPlugin from './infra/dashboard.js';
import { RateLimiter, SignInLock } from './infra/rate-limit.js';
import realtimePlugin from './infra/realtime/index.js';
import { loadOrCreateSetting } from './infra/settings.js';
import { randomToken } from './shared/crypto.js';
import type { Clock } from './shared/time.js';
import { adminRoutes } from './modules/admin/admin.routes.js';
import { customersRoutes } from './modules/customers/customers.routes.js';
import { loyaltyCardsRoutes } from './modules/loyalty-cards/loyalty-cards.routes.js';
import { awardsRoutes } from './modules/awards/awards.routes.js';
import { pointsRoutes } from './modules/points/points.routes.js';
import { qrRoutes } from './modules/qr-sessions/qr.routes.js';
import type { MailTuning } from './modules/mail/mail.service.js';
import { adminPartnersRoutes } from './modules/admin/admin-partners.routes.js';
import { commissionRoutes } from './modules/commission/commission.routes.js';
import { partnerMessagesRoutes } from './modules/partner-messages/partner-messages.routes.js';
import { apiKeysRoutes } from './modules/api-keys/api-keys.routes.js';
import { partnerDataRoutes } from './modules/partners/partner-data.routes.js';
import { gamesRoutes } from './modules/games/games.routes.js';
import { partnerCardsRoutes } from './modules/partner-cards/partner-cards.routes.js';
import { partnersRoutes } from './modules/partners/partners.routes.js';
import { shopsRoutes } from './modules/shops/shops.routes.js';
import { catalogRoutes } from './modules/catalog/catalog.routes.js';
import type { ImportedOffers } from './modules/catalog/imported-offers.js';
import { xmlImportRoutes } from './modules/catalog/xml-import.routes.js';
import type { WebhooksTuning } from './modules/webhooks/webhooks.service.js';
import { webhooksRoutes } from './modules/webhooks/webhooks.routes.js';
import { smsAccountsRoutes } from './modules/sms/sms-accounts.routes.js';
import { smsRoutes } from './modules/sms/sms.routes.js';
import { SystemService } from './modules/system/system.service.js';
import { systemRoutes } from './modules/system/system.routes.js';
import { offersRoutes } from './modules/offers/offers.routes.js';
import { campaignsRoutes } from './modules/campaigns/campaigns.routes.js';
import { CampaignsService } from './modules/campaigns/campaigns.service.js';
import { couponsRoutes } from './modules/coupons/coupons.routes.js';
import { gameplayRoutes } from './modules/games/gameplay.routes.js';
import { tiersRoutes } from './modules/tiers/tiers.routes.js';
import { walletRoutes } from './modules/wallet/wallet.routes.js';
import { lazySerializerFactory } from './infra/schema-compilers.js';

export interface BuildOptions {
  /** Injected database (tests); otherwise opened from config. */
  database?: Database;
  /** Run background workers (SMS dispatch); default true. */
  workers?: boolean;
  /** Webhook worker tuning (tests: a fast retry schedule). */
  webhooks?: WebhooksTuning;
  /** "Now" for the ledger and sign-in codes (tests: a clock they move). */
  clock?: Clock;
  /** Mail worker tuning (tests: a fast retry schedule). */
  mail?: MailTuning;
  /** Where log lines go instead of standard output (tests that read the log). */
  logStream?: { write(line: string): void };
  /** Import-sourced offers of discounted products (tests: a recording implementation). */
  importedOffers?: ImportedOffers;
  /** Called when SMS are queued (a cluster worker without the background jobs tells the one with them). */
  smsQueued?: () => void;
}

export interface App {
  fastify: FastifyInstance;
  context: Context;
}

export async function buildApp(config: Config, opts: BuildOptions = {}): Promise<App> {
  const fastify = Fastify({
    logger: {
      level: config.logLevel,
      stream: opts.logStream ?? stdoutLogDestination(),
      // Credentials never reach the logs. A request is logged through the `req` serializer
      // below, which keeps no header at all; headers logged by themselves (`{ headers }`)
      // have their credentials censored. Not `req.headers.*`: pino would run redaction on
      // every request log line (4 % of a cheap request's CPU) for fields the serializer has
      // already dropped. Explicit paths only: a wildcard redacts every line.
      redact: {
        paths: ['headers.authorization', 'headers["x-api-secret"]', 'headers.cookie'],
        censor: '[redacted]',
      },
      // A request is its route pattern, never its path or query string: paths hold QR session
      // ids, game session keys and phone numbers; query strings hold signatures (the events
      // API's auth_signature) and customers' data. Only allow-listed path parameters, no
      // headers. An error is its type, message, code and stack, never the values it carried
      // (a failed query's parameters). docs/operations.md "Logs".
      serializers: { req: requestLogSerializer, err: errorLogSerializer },
    },
    genReqId: () => randomUUID(),
    // One line per request, written by http-core when the response has gone (method, route,
    // status, time): Fastify's own pair of lines doubled the logging cost of a cheap request.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    bodyLimit: config.bodyLimit,
    // The same trust function the WebSocket upgrades use (infra/client-address.ts), so both
    // see the same client address; undefined = no proxy (Fastify's default).
    trustProxy: proxyTrust(config.trustProxy) || undefined,
    // The schemas bound the input; keep parameters from becoming a resource sink.
    routerOptions: { maxParamLength: 200 },
    // An undecodable path or an over-long parameter gets the error envelope too.
    frameworkErrors,
    clientErrorHandler,
    // Response serializers compiled on first use, once per process (infra/schema-compilers.ts).
    schemaController: { compilersFactory: { buildSerializer: lazySerializerFactory } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  const context = await createContext(config, {
    redis: true,
    log: fastify.log,
    ...(opts.database ? { database: opts.database } : {}),
    ...(opts.webhooks ? { webhooks: opts.webhooks } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.mail ? { mail: opts.mail } : {}),
    ...(opts.importedOffers ? { importedOffers: opts.importedOffers } : {}),
    ...(opts.smsQueued ? { smsQueued: opts.smsQueued } : {}),
  });
  fastify.addHook('onClose', async () => context.close());

  const { services } = context;
  await services.apiKeys.start();
  // Bearer requests: whether the token's account may still act, per node (infra/account-cache.ts).
  const accounts = new AccountStatusCache(context.database, {
    admin: (id) => services.admin.exists(id),
    partner: (id) => services.partners.isActive(id),
    customer: (id) => services.customers.exists(id),
  });
  await accounts.start();
  await context.tokens.revocations?.start();
  let migrated = true;
  const system = new SystemService({
    database: context.database,
    redis: context.redis,
    version: config.version,
    migrated: () => migrated,
  });
  const idempotency = new Idempotency(
    context.database.db,
    await loadOrCreateSetting(context.database.db, 'idempotency_fingerprint_key', () => randomToken(32)),
  );
  const rateLimiter = new RateLimiter({ redis: context.redis, prefix: config.redisKeyPrefix });
  const signInLock = new SignInLock({
    redis: context.redis,
    prefix: config.redisKeyPrefix,
    ...config.rateLimit.signInLock,
    disabled: config.rateLimit.disabled,
  });

  await fastify.register(httpCore, { bodyLimit: config.bodyLimit });
  await fastify.register(authPlugin, {
    tokens: context.tokens,
    apiKeys: services.apiKeys,
    accounts: {
      admin: (id) => accounts.isActive('admin', id),
      partner: (id) => accounts.isActive('partner', id),
      customer: (id) => accounts.isActive('customer', id),
    },
    rateLimiter,
    rateLimit: config.rateLimit,
  });
  if (config.metricsEnabled) {
    await fastify.register(metricsPlugin, { poolStats: () => context.database.poolStats(), token: config.metricsToken });
    // Here, where /metrics is served (not in context.ts, which the CLI shares).
    if (config.env === 'production' && config.metricsToken === undefined) {
      fastify.log.warn(
        { setting: 'METRICS_TOKEN' },
        'METRICS_TOKEN is not set: /metrics is public (per-route request counts of every partner); set it, or METRICS_ENABLED=false',
      );
    }
  }
  await fastify.register(openapiPlugin, { version: config.version });
  await fastify.register(dashboardPlugin);

  await fastify.register(realtimePlugin, { realtime: context.realtime, config });

  await fastify.register(systemRoutes, { system });
  await fastify.register(adminRoutes, { admin: services.admin, partners: services.partners, idempotency, signInLock });
  await fastify.register(adminPartnersRoutes, { stats: services.adminStats, partners: services.partners, mail: services.mail, idempotency });
  await fastify.register(commissionRoutes, { commission: services.commission, partners: services.partners });
  await fastify.register(partnerMessagesRoutes, {
    messages: services.partnerMessages,
    partners: services.partners,
    limits: { maxBytes: config.files.maxBytes, maxFiles: config.files.maxFiles },
  });
  await fastify.register(partnersRoutes, { partners: services.partners, signInLock });
  await fastify.register(apiKeysRoutes, { apiKeys: services.apiKeys });
  await fastify.register(shopsRoutes, { shops: services.shops, cards: services.loyaltyCards, idempotency });
  await fastify.register(partnerCardsRoutes, { cards: services.partnerCards, idempotency, bodyLimit: config.bodyLimit });
  await fastify.register(gamesRoutes, { games: services.games, idempotency });
  await fastify.register(smsRoutes, { sms: services.sms, idempotency });
  await fastify.register(smsAccountsRoutes, { accounts: services.smsAccounts, sms: services.sms, partners: services.partners });
  await fastify.register(webhooksRoutes, { webhooks: services.webhooks, rateLimiter, rateLimitDisabled: config.rateLimit.disabled });
  await fastify.register(customersRoutes, { customers: services.customers, otp: services.otp });
  await fastify.register(loyaltyCardsRoutes, { cards: services.loyaltyCards, idempotency });
  await fastify.register(awardsRoutes, { awards: services.awards, idempotency });
  await fastify.register(pointsRoutes, { ledger: services.ledger, points: services.points, cards: services.loyaltyCards, idempotency });
  await fastify.register(qrRoutes, { login: services.qrLogin, card: services.qrCard, appLink: services.appLink, idempotency });
  await fastify.register(catalogRoutes, { catalog: services.catalog });
  await fastify.register(xmlImportRoutes, { imports: services.xmlImports, idempotency });
  await fastify.register(partnerDataRoutes, {
    partners: services.partners,
    customers: services.customers,
    cards: services.loyaltyCards,
    points: services.points,
    ledger: services.ledger,
    stats: services.adminStats,
  });
  await fastify.register(offersRoutes, { offers: services.offers, idempotency });
  const campaigns = new CampaignsService({ db: context.database.db, clock: context.clock, shops: services.shops, partnerCards: services.partnerCards, catalog: services.catalog, tiers: services.tiers });
  await fastify.register(campaignsRoutes, { campaigns, idempotency });
  await fastify.register(couponsRoutes, { coupons: services.coupons, idempotency });
  await fastify.register(tiersRoutes, { tiers: services.tiers, cards: services.loyaltyCards, idempotency });
  await fastify.register(walletRoutes, { wallet: services.wallet, rateLimiter, rateLimitDisabled: config.rateLimit.disabled });
  // The wallet's crypto worker threads end with the app, whether or not the background workers run.
  fastify.addHook('onClose', async () => services.wallet.close());
  services.wallet.listeningPort = () => (fastify.server.address() as { port?: number } | null)?.port;
  await fastify.register(gameplayRoutes, {
    gameplay: services.gameplay,
    idempotency,
    tokens: context.tokens,
    customerExists: (id) => services.customers.exists(id),
    partnerIdsOf: (customerId) => services.loyaltyCards.partnerIdsOf(customerId),
  });

  fastify.addHook('preClose', async () => {
    migrated = false;
  });
  // Background workers: SMS dispatch, the webhook outbox and the mail outbox. onClose hooks run last-added
  // first, after the server stopped accepting and in-flight requests finished: the workers
  // stop before the store (whose hook was added first) closes.
  const workers = opts.workers ?? true;
  if (workers) {
    fastify.addHook('onClose', async () => services.webhooks.stop());
    fastify.addHook('onClose', async () => services.mail.stop());
    fastify.addHook('onClose', async () => context.workers.smsDispatcher.stop());
    fastify.addHook('onClose', async () => context.workers.expirySweeper.stop());
    fastify.addHook('onClose', async () => context.workers.tierSweeper.stop());
    fastify.addHook('onClose', async () => context.workers.qrExpiry.stop());
    fastify.addHook('onClose', async () => context.workers.gameSessionExpiry.stop());
    fastify.addHook('onClose', async () => context.workers.walletUpdates.stop());
    fastify.addHook('onClose', async () => services.xmlImports.stop());
  }
  await fastify.ready();
  if (workers) {
    await context.workers.smsDispatcher.start();
    await services.webhooks.start();
    context.workers.expirySweeper.start();
    context.workers.tierSweeper.start();
    context.workers.qrExpiry.start();
    context.workers.gameSessionExpiry.start();
    context.workers.walletUpdates.start();
    await services.mail.start();
    await services.xmlImports.start();
  }
  return { fastify, context };
}
