// The composition root: stores and services, without HTTP. Shared by the server, the
// CLI and the tests so that all three wire the same things in the same way.
import type { Redis } from 'ioredis';
import type { Config } from './config.js';
import { openDatabase, type Database } from './infra/db/index.js';
import { connectRedis } from './infra/redis.js';
import { loadOrCreateSetting } from './infra/settings.js';
import { TokenService } from './infra/tokens.js';
import { LocalFileStore } from './infra/files.js';
import { MailService, type MailTuning } from './infra/mail/mail.service.js';
import { WebhooksService, type WebhooksTuning } from './infra/webhooks/webhooks.service.js';
import { randomToken } from './shared/crypto.js';
import { AdminStatsService } from './modules/admin/admin-stats.service.js';
import { AdminService } from './modules/admin/admin.service.js';
import { CommissionService } from './modules/commission/commission.service.js';
import { PartnerMessagesService } from './modules/partner-messages/partner-messages.service.js';
import { ApiKeysService } from './modules/api-keys/api-keys.service.js';
import { DemoService } from './modules/demo/demo.service.js';
import { PartnerCardsService } from './modules/partner-cards/partner-cards.service.js';
import { PartnersService } from './modules/partners/partners.service.js';
import { ShopsService } from './modules/shops/shops.service.js';
import { createCarrier } from './modules/sms/carriers/index.js';
import { SmsDispatcher } from './modules/sms/dispatcher.js';
import { SmsAccountsService } from './modules/sms/sms-accounts.service.js';
import { SmsLifecycle } from './modules/sms/sms-lifecycle.js';
import { SmsService } from './modules/sms/sms.service.js';
import { systemClock } from './shared/time.js';

export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface Context {
  config: Config;
  database: Database;
  redis: Redis | undefined;
  tokens: TokenService;
  services: {
    admin: AdminService;
    partners: PartnersService;
    apiKeys: ApiKeysService;
    shops: ShopsService;
    partnerCards: PartnerCardsService;
    smsAccounts: SmsAccountsService;
    sms: SmsService;
    demo: DemoService;
    /** Outgoing webhooks: enqueue(tx, event) in any module; the worker is started by app.ts. */
    webhooks: WebhooksService;
    adminStats: AdminStatsService;
    commission: CommissionService;
    partnerMessages: PartnerMessagesService;
    /** Outgoing e-mail: enqueue(tx, mail) in any module; the worker is started by app.ts. */
    mail: MailService;
  };
  /** Background work (SMS dispatch); started by the server, not by the CLI. */
  workers: { smsDispatcher: SmsDispatcher };
  /** Closes what this context opened (not an injected database). */
  close(): Promise<void>;
}

export interface ContextOptions {
  /** Use this database instead of opening one from config (tests); it is not closed. */
  database?: Database;
  /** Connect to Redis when REDIS_URL is set (the CLI does not need it). */
  redis?: boolean;
  log: Logger;
  /** Webhook worker tuning (tests: a fast retry schedule). */
  webhooks?: WebhooksTuning;
  /** Mail worker tuning (tests: a fast retry schedule). */
  mail?: MailTuning;
}

export async function createContext(config: Config, opts: ContextOptions): Promise<Context> {
  const database = opts.database ?? (await openDatabase(config));
  try {
    await database.migrate();
    const redis = opts.redis && config.redisUrl ? await connectRedis(config.redisUrl, opts.log) : undefined;
    const jwtSecret = config.jwtSecret ?? (await loadOrCreateSetting(database.db, 'jwt_secret', () => randomToken(48)));
    const tokens = new TokenService(jwtSecret, { access: config.accessTokenTtlSeconds, customer: config.customerTokenTtlSeconds });

    const webhooks = new WebhooksService(database, {
      allowPrivateUrls: config.allowPrivateUrls,
      timeoutMs: config.webhookTimeoutMs,
      log: opts.log,
      ...opts.webhooks,
    });
    const admin = new AdminService(database.db, tokens);
    const partners = new PartnersService(database.db, tokens);
    const apiKeys = new ApiKeysService(database);
    const shops = new ShopsService(database.db);
    const partnerCards = new PartnerCardsService();
    const smsAccounts = new SmsAccountsService(database.db, config.sms.prices);
    // Delivery receipts are queued as webhooks in the transaction of each status change.
    const smsLifecycle = new SmsLifecycle(smsAccounts, webhooks);
    const carrier = createCarrier(config, database, systemClock, opts.log);
    const smsDispatcher = new SmsDispatcher(database, carrier, smsLifecycle, systemClock, {
      pollMs: config.sms.dispatchPollMs,
      batchSize: 50,
      inDoubtAfterMs: config.sms.inDoubtAfterMs,
      retryBackoffMs: [5_000, 15_000, 60_000, 300_000],
      log: opts.log,
    });
    const sms = new SmsService({
      db: database.db,
      accounts: smsAccounts,
      lifecycle: smsLifecycle,
      checkUrl: webhooks.checkUrl,
      carrierName: carrier.name,
      onQueued: () => smsDispatcher.wake(),
    });
    const adminStats = new AdminStatsService(database.db, systemClock);
    const commission = new CommissionService(database.db, systemClock);
    const partnerMessages = new PartnerMessagesService(database.db, new LocalFileStore(config.files.dir));
    const mail = new MailService(database, config, { log: opts.log, ...opts.mail });
    const demo = new DemoService({
      database,
      admin,
      partners,
      apiKeys,
      shops,
      partnerCards,
      smsAccounts,
      configuredAdmin: config.admin,
      testPhones: config.appTestPhones,
    });
    if (config.admin) {
      const { created } = await admin.ensure({ email: config.admin.email, password: config.admin.password });
      if (created) opts.log.info({ email: config.admin.email }, 'admin created from LOYALTY_ADMIN_EMAIL');
    }
    return {
      config,
      database,
      redis,
      tokens,
      services: {
        admin,
        partners,
        apiKeys,
        shops,
        partnerCards,
        smsAccounts,
        sms,
        demo,
        webhooks,
        adminStats,
        commission,
        partnerMessages,
        mail,
      },
      workers: { smsDispatcher },
      close: async () => {
        if (redis) await redis.quit().catch(() => redis.disconnect());
        if (!opts.database) await database.close();
      },
    };
  } catch (err) {
    if (!opts.database) await database.close().catch(() => undefined);
    throw err;
  }
}
