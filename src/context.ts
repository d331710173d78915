// The composition root: stores and services, without HTTP. Shared by the server, the
// CLI and the tests so that all three wire the same things in the same way.
import { randomBytes, randomInt } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Config } from './config.js';
import './messages.js';
import { openDatabase, type Database } from './infra/db/index.js';
import { IntervalJob } from './infra/interval-job.js';
import { createRealtime, type Realtime } from './infra/realtime/realtime.js';
import { connectRedis } from './infra/redis.js';
import { loadOrCreateSetting } from './infra/settings.js';
import { TokenRevocations, TokenService } from './infra/tokens.js';
import { LocalFileStore } from './infra/files.js';
import { MailService, type MailTuning } from './modules/mail/mail.service.js';
import { WebhooksService, type WebhooksTuning } from './modules/webhooks/webhooks.service.js';
import { randomToken } from './shared/crypto.js';
import { AdminStatsService } from './modules/admin/admin-stats.service.js';
import { AdminService } from './modules/admin/admin.service.js';
import { CustomersService } from './modules/customers/customers.service.js';
import { OtpService } from './modules/customers/otp.service.js';
import { LoyaltyCardsService } from './modules/loyalty-cards/loyalty-cards.service.js';
import { AwardsEngine, purchaseDetails } from './modules/awards/awards.service.js';
import { PointsLedger } from './modules/points/ledger.service.js';
import { PointsService } from './modules/points/points.service.js';
import { AppLinkService } from './modules/qr-sessions/app-link.service.js';
import { QrCardService } from './modules/qr-sessions/qr-card.service.js';
import { QrLoginService, type PublishEvent } from './modules/qr-sessions/qr-login.service.js';
import { CommissionService } from './modules/commission/commission.service.js';
import { PartnerMessagesService } from './modules/partner-messages/partner-messages.service.js';
import { ApiKeysService } from './modules/api-keys/api-keys.service.js';
import { DemoService } from './modules/demo/demo.service.js';
import { GamesService } from './modules/games/games.service.js';
import { PartnerCardsService } from './modules/partner-cards/partner-cards.service.js';
import { PartnersService } from './modules/partners/partners.service.js';
import { ShopsService } from './modules/shops/shops.service.js';
import { CatalogService } from './modules/catalog/catalog.service.js';
import type { ImportedOffers } from './modules/catalog/imported-offers.js';
import { importedOffers } from './modules/offers/imported-offers.js';
import { XmlImportService } from './modules/catalog/xml-import.service.js';
import { createCarrier } from './modules/sms/carriers/index.js';
import { SmsDispatcher } from './modules/sms/dispatcher.js';
import { SmsAccountsService } from './modules/sms/sms-accounts.service.js';
import { SmsLifecycle, statusEvent } from './modules/sms/sms-lifecycle.js';
import { SmsService } from './modules/sms/sms.service.js';
import { CouponsService } from './modules/coupons/coupons.service.js';
import { OffersService } from './modules/offers/offers.service.js';
import { GameplayService } from './modules/games/gameplay.service.js';
import { TiersService } from './modules/tiers/tiers.service.js';
import { secretsKeySource } from './modules/wallet/secret-box.js';
import { WalletService } from './modules/wallet/wallet.service.js';
import { systemClock, type Clock } from './shared/time.js';
import type { Logger } from './shared/logger.js';

export type { Logger } from './shared/logger.js';

export interface Context {
  config: Config;
  database: Database;
  redis: Redis | undefined;
  tokens: TokenService;
  /** Realtime publisher: context.realtime.publish(channel, event, data) (src/infra/realtime). */
  realtime: Realtime;
  services: {
    admin: AdminService;
    partners: PartnersService;
    apiKeys: ApiKeysService;
    shops: ShopsService;
    partnerCards: PartnerCardsService;
    games: GamesService;
    smsAccounts: SmsAccountsService;
    sms: SmsService;
    demo: DemoService;
    /** Outgoing webhooks: enqueue(tx, event) in any module; the worker is started by app.ts. */
    webhooks: WebhooksService;
    customers: CustomersService;
    otp: OtpService;
    loyaltyCards: LoyaltyCardsService;
    ledger: PointsLedger;
    /** The engine (src/modules/awards/): what a purchase earns, its preview, returns and reversals. */
    awards: AwardsEngine;
    points: PointsService;
    qrLogin: QrLoginService;
    qrCard: QrCardService;
    appLink: AppLinkService;
    adminStats: AdminStatsService;
    commission: CommissionService;
    partnerMessages: PartnerMessagesService;
    /** Outgoing e-mail: enqueue(tx, mail) in any module; the worker is started by app.ts. */
    mail: MailService;
    coupons: CouponsService;
    offers: OffersService;
    gameplay: GameplayService;
    /** The partner's products and categories (filled by XML imports). */
    catalog: CatalogService;
    /** XML feed imports and feed subscriptions; its worker is started by app.ts. */
    xmlImports: XmlImportService;
    /** Tiers of card programmes (CRUD, the tier on card views, history). */
    tiers: TiersService;
    /** Wallet passes (Apple, Google): configuration, passes, PassKit web service, updates. */
    wallet: WalletService;
  };
  /** Background work (SMS dispatch, points expiry); started by the server, not by the CLI. */
  workers: {
    smsDispatcher: SmsDispatcher;
    expirySweeper: IntervalJob;
    tierSweeper: IntervalJob;
    qrExpiry: IntervalJob;
    gameSessionExpiry: IntervalJob;
    walletUpdates: IntervalJob;
  };
  clock: Clock;
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
  /** "Now" for the ledger and sign-in codes (tests move it instead of waiting). */
  clock?: Clock;
  /** Mail worker tuning (tests: a fast retry schedule). */
  mail?: MailTuning;
  /** Import-sourced offers of discounted products (the offers module's implementation). */
  importedOffers?: ImportedOffers;
  /** Called when SMS are queued, besides waking this process's dispatcher (a cluster worker without the jobs). */
  smsQueued?: () => void;
}

/**
 * The built-in server's app id, key and secret: from config, else generated once and kept
 * in system_settings, so every node on one database accepts the same signatures.
 */
async function realtimeApp(database: Database, config: Config) {
  const { app } = config.realtime;
  const db = database.db;
  return {
    id: app.id ?? (await loadOrCreateSetting(db, 'realtime_app_id', () => String(randomInt(100_000, 1_000_000_000)))),
    key: app.key ?? (await loadOrCreateSetting(db, 'realtime_app_key', () => randomBytes(10).toString('hex'))),
    secret: app.secret ?? (await loadOrCreateSetting(db, 'realtime_app_secret', () => randomBytes(24).toString('hex'))),
  };
}

/**
 * In production an operator should know which secrets the service made up for itself (kept
 * in the database's system_settings, shared by every node): they work, but nobody rotates,
 * escrows or audits them until they are set explicitly.
 */
function warnAboutGeneratedSecrets(config: Config, log: Logger): void {
  if (config.env !== 'production') return;
  const generated: string[] = [];
  if (!config.jwtSecret) generated.push('JWT_SECRET');
  if (config.realtime.driver === 'builtin' && !config.realtime.app.secret) generated.push('REALTIME_APP_KEY/REALTIME_APP_SECRET');
  if (generated.length > 0) {
    log.warn(
      { generated },
      `using generated secrets kept in the database for ${generated.join(', ')}; set them explicitly to manage and rotate them`,
    );
  }
}

export async function createContext(config: Config, opts: ContextOptions): Promise<Context> {
  const database = opts.database ?? (await openDatabase(config, opts.log));
  try {
    await database.migrate();
    const redis = opts.redis && config.redisUrl ? await connectRedis(config.redisUrl, opts.log) : undefined;
    const jwtSecret = config.jwtSecret ?? (await loadOrCreateSetting(database.db, 'jwt_secret', () => randomToken(48)));
    warnAboutGeneratedSecrets(config, opts.log);
    const tokens = new TokenService(
      jwtSecret,
      { access: config.accessTokenTtlSeconds, customer: config.customerTokenTtlSeconds, qrCustomer: config.qrCustomerTokenTtlSeconds },
      new TokenRevocations(database),
    );
    const realtime = createRealtime(config.realtime, config.realtime.driver === 'builtin' ? await realtimeApp(database, config) : undefined, {
      // The Redis fan-out runs where sockets are served (the app), not in the CLI.
      redis: opts.redis ? redis : undefined,
      redisUrl: config.redisUrl,
      prefix: config.redisKeyPrefix,
      log: opts.log,
    });

    const webhooks = new WebhooksService(database, {
      allowPrivateUrls: config.allowPrivateUrls,
      timeoutMs: config.webhookTimeoutMs,
      log: opts.log,
      ...opts.webhooks,
    });
    const clock = opts.clock ?? systemClock;
    const admin = new AdminService(database.db, tokens);
    const partners = new PartnersService(database.db, tokens);
    const apiKeys = new ApiKeysService(database);
    const shops = new ShopsService(database.db, clock);
    // Tiers or tier settings changed (committed): `notify` wakes the job that re-evaluates the programme's cards.
    const tierChanges: { notify(): void } = { notify: () => undefined };
    const partnerCards = new PartnerCardsService(database.db, shops, { onTierSettingsChanged: () => tierChanges.notify() });
    const tiers = new TiersService({ db: database.db, clock, onTiersChanged: () => tierChanges.notify() });
    const games = new GamesService(database.db, partnerCards);
    const smsAccounts = new SmsAccountsService(database.db, config.sms.prices);
    // Delivery receipts are queued as webhooks in the transaction of each status change; once
    // it has committed, the change is announced on the partner's private channel (the console).
    const smsLifecycle = new SmsLifecycle(smsAccounts, webhooks, (rows) => {
      const events = rows
        .filter((row) => row.partnerId !== null)
        .map((row) => ({ channel: `private-partner.${row.partnerId}`, event: 'sms.status', data: statusEvent(row) }));
      // A batch of at most 10 events (Pusher's limit) goes out as one message between nodes.
      for (let i = 0; i < events.length; i += 10) {
        realtime
          .publishBatch(events.slice(i, i + 10))
          .catch((err: unknown) => opts.log?.warn({ err, messages: events.length }, 'sms.status events not published'));
      }
    }, webhooks.events);
    const carrier = createCarrier(config, database, systemClock, opts.log);
    const smsDispatcher = new SmsDispatcher(database, carrier, smsLifecycle, systemClock, {
      pollMs: config.sms.dispatchPollMs,
      batchSize: 50,
      inDoubtAfterMs: config.sms.inDoubtAfterMs,
      defaultValidityMs: config.sms.defaultValidityMinutes * 60_000,
      receiptIdFormat: config.sms.carrier === 'smpp' ? config.sms.smppReceiptIdFormat : 'same',
      retryBackoffMs: [5_000, 15_000, 60_000, 300_000],
      log: opts.log,
    });
    const sms = new SmsService({
      db: database.db,
      accounts: smsAccounts,
      lifecycle: smsLifecycle,
      checkUrl: webhooks.checkUrl,
      carrierName: carrier.name,
      systemSender: config.sms.systemSender,
      onQueued: () => {
        smsDispatcher.wake();
        opts.smsQueued?.();
      },
    });
    const customers = new CustomersService(database.db, clock);
    const otp = new OtpService({
      db: database.db,
      sms,
      customers,
      tokens,
      clock,
      hashKey: await loadOrCreateSetting(database.db, 'otp_hash_key', () => randomToken(32)),
      testPhones: config.appTestPhones,
    });
    const ledger = new PointsLedger(database.db, clock, webhooks.events);
    const loyaltyCards = new LoyaltyCardsService({ db: database.db, partnerCards, customers, ledger, tiers, events: webhooks.events });
    ledger.cardView = (tx, partnerId, cardId) => loyaltyCards.viewIn(tx, partnerId, cardId);
    const awards = new AwardsEngine(database.db, clock, ledger, webhooks.events);
    const points = new PointsService({ db: database.db, ledger, cards: loyaltyCards, purchaseDetails });
    const expirySweeper = new IntervalJob('points-expiry', () => ledger.sweepExpired(200, opts.log), {
      intervalMs: config.points.expirySweepMs,
      batchSize: 200,
      log: opts.log,
    });
    // Tier work of time (values out of their window, kept tiers ended) and the re-evaluation
    // after tiers changed (DESIGN.md §13), in the background on every node, as often as expiry.
    const tierSweeper = new IntervalJob('tiers', async () => (await ledger.reevaluateTiers(100)) + (await ledger.sweepTiers(100, opts.log)), {
      intervalMs: config.points.expirySweepMs,
      batchSize: 100,
      log: opts.log,
    });
    tierChanges.notify = () => void tierSweeper.runOnce();
    const publish: PublishEvent = (channel, event, data) => realtime.publish(channel, event, data);
    const qrDeps = { db: database.db, clock, appLinkBase: config.appLinkBase, publish, shops, partners, log: opts.log };
    const qrLogin = new QrLoginService({ ...qrDeps, tokens, customers, cards: loyaltyCards });
    const qrCard = new QrCardService({ ...qrDeps, cards: loyaltyCards });
    const qrExpiry = new IntervalJob('qr-expiry', async () => (await qrLogin.expireDue(100)) + (await qrCard.expireDue(100)), {
      intervalMs: config.qrExpirySweepMs,
      batchSize: 100,
      log: opts.log,
    });
    const coupons = new CouponsService({ db: database.db, clock, appLinkBase: config.appLinkBase, tiers, events: webhooks.events });
    const offers = new OffersService({ db: database.db, clock, shops, partnerCards, cards: loyaltyCards, ledger, coupons, events: webhooks.events });
    const gameplay = new GameplayService({
      db: database.db,
      clock,
      cards: loyaltyCards,
      partnerCards,
      ledger,
      coupons,
      publish,
      log: opts.log,
      events: webhooks.events,
    });
    const gameSessionExpiry = new IntervalJob('game-session-expiry', () => gameplay.expireDue(100), {
      intervalMs: config.gameSessionExpirySweepMs,
      batchSize: 100,
      log: opts.log,
    });
    const wallet = new WalletService({
      db: database.db,
      clock,
      secrets: secretsKeySource({ configured: config.wallet.secretsKey, embedded: database.kind === 'pglite', dataDir: config.dataDir }),
      cards: loyaltyCards,
      coupons,
      publicBaseUrl: config.publicBaseUrl,
      apnsUrl: config.wallet.apnsUrl,
      apnsCaFile: config.wallet.apnsCaFile,
      googleWalletApiUrl: config.wallet.googleWalletApiUrl,
      log: opts.log,
    });
    // Pushes to Apple Wallet and patches of Google objects after cards changed (DESIGN.md §15).
    const walletUpdates = new IntervalJob('wallet-updates', async () => (await wallet.pushUpdates(50)) + (await wallet.patchGoogleObjects(50)), {
      intervalMs: 2_000,
      batchSize: 50,
      log: opts.log,
    });
    const appLink = new AppLinkService({ sms, accounts: smsAccounts, partners, downloadUrl: config.appDownloadUrl });
    const adminStats = new AdminStatsService(database.db, systemClock);
    const commission = new CommissionService(database.db, systemClock);
    const partnerMessages = new PartnerMessagesService(database.db, new LocalFileStore(config.files.dir));
    const mail = new MailService(database, config, { log: opts.log, ...opts.mail });
    const catalog = new CatalogService(database.db);
    const xmlImports = new XmlImportService({
      database,
      fileStore: new LocalFileStore(config.xmlImport.dir),
      offers: opts.importedOffers ?? importedOffers,
      publish: (channel, event, data) => realtime.publish(channel, event, data),
      maxBytes: config.xmlImport.maxBytes,
      timeoutMs: config.xmlImport.timeoutMs,
      leaseMs: config.xmlImport.leaseMs,
      concurrency: config.xmlImport.concurrency,
      pollIntervalMs: config.xmlImport.pollMs,
      allowPrivateUrls: config.allowPrivateUrls,
      log: opts.log,
      events: webhooks.events,
    });
    const demo = new DemoService({
      database,
      admin,
      partners,
      apiKeys,
      shops,
      partnerCards,
      smsAccounts,
      customers,
      loyaltyCards,
      offers,
      games,
      configuredAdmin: config.admin,
      testPhones: config.appTestPhones,
    });
    if (config.admin) {
      const { created } = await admin.ensure({ email: config.admin.email, password: config.admin.password });
      if (created) opts.log.info({ email: config.admin.email }, 'admin created from LOYALTY_ADMIN_EMAIL');
    }
    await realtime.start();
    return {
      config,
      database,
      redis,
      tokens,
      realtime,
      services: {
        admin,
        partners,
        apiKeys,
        shops,
        partnerCards,
        games,
        smsAccounts,
        sms,
        demo,
        webhooks,
        customers,
        otp,
        loyaltyCards,
        ledger,
        awards,
        points,
        qrLogin,
        qrCard,
        appLink,
        adminStats,
        commission,
        partnerMessages,
        mail,
        coupons,
        offers,
        gameplay,
        catalog,
        xmlImports,
        tiers,
        wallet,
      },
      workers: { smsDispatcher, expirySweeper, tierSweeper, qrExpiry, gameSessionExpiry, walletUpdates },
      clock,
      close: async () => {
        await realtime.close();
        if (redis) await redis.quit().catch(() => redis.disconnect());
        if (!opts.database) await database.close();
      },
    };
  } catch (err) {
    if (!opts.database) await database.close().catch(() => undefined);
    throw err;
  }
}
