// The composition root: stores and services, without HTTP. Shared by the server, the
// CLI and the tests so that all three wire the same things in the same way.
import type { Redis } from 'ioredis';
import type { Config } from './config.js';
import { openDatabase, type Database } from './infra/db/index.js';
import { connectRedis } from './infra/redis.js';
import { loadOrCreateSetting } from './infra/settings.js';
import { TokenService } from './infra/tokens.js';
import { randomToken } from './shared/crypto.js';
import { AdminService } from './modules/admin/admin.service.js';
import { ApiKeysService } from './modules/api-keys/api-keys.service.js';
import { DemoService } from './modules/demo/demo.service.js';
import { PartnerCardsService } from './modules/partner-cards/partner-cards.service.js';
import { PartnersService } from './modules/partners/partners.service.js';
import { ShopsService } from './modules/shops/shops.service.js';
import { SmsAccountsService } from './modules/sms/sms-accounts.service.js';

export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
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
    demo: DemoService;
  };
  /** Closes what this context opened (not an injected database). */
  close(): Promise<void>;
}

export interface ContextOptions {
  /** Use this database instead of opening one from config (tests); it is not closed. */
  database?: Database;
  /** Connect to Redis when REDIS_URL is set (the CLI does not need it). */
  redis?: boolean;
  log: Logger;
}

export async function createContext(config: Config, opts: ContextOptions): Promise<Context> {
  const database = opts.database ?? (await openDatabase(config));
  try {
    await database.migrate();
    const redis = opts.redis && config.redisUrl ? await connectRedis(config.redisUrl, opts.log) : undefined;
    const jwtSecret = config.jwtSecret ?? (await loadOrCreateSetting(database.db, 'jwt_secret', () => randomToken(48)));
    const tokens = new TokenService(jwtSecret, { access: config.accessTokenTtlSeconds, customer: config.customerTokenTtlSeconds });

    const admin = new AdminService(database.db, tokens);
    const partners = new PartnersService(database.db, tokens);
    const apiKeys = new ApiKeysService(database);
    const shops = new ShopsService(database.db);
    const partnerCards = new PartnerCardsService();
    const smsAccounts = new SmsAccountsService();
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
      services: { admin, partners, apiKeys, shops, partnerCards, smsAccounts, demo },
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
