// Every table, for drizzle-kit to generate migrations (drizzle.config.ts). This is the
// composition root's list: each module owns its tables and hands them over here, so that
// infra/ and shared/ know no module's tables.
export * from './infra/db/infra.tables.js';
export * from './modules/admin/admin.tables.js';
export * from './modules/partners/partners.tables.js';
export * from './modules/api-keys/api-keys.tables.js';
export * from './modules/shops/shops.tables.js';
export * from './modules/partner-cards/partner-cards.tables.js';
export * from './modules/games/games.tables.js';
export * from './modules/sms/sms.tables.js';
export * from './modules/webhooks/webhooks.tables.js';
export * from './modules/customers/customers.tables.js';
export * from './modules/loyalty-cards/loyalty-cards.tables.js';
export * from './modules/points/points.tables.js';
export * from './modules/qr-sessions/qr.tables.js';
export * from './modules/mail/mail.tables.js';
export * from './modules/commission/commission.tables.js';
export * from './modules/partner-messages/partner-messages.tables.js';
export * from './modules/offers/offers.tables.js';
export * from './modules/coupons/coupons.tables.js';
export * from './modules/games/gameplay.tables.js';
export * from './modules/catalog/catalog.tables.js';
export * from './modules/campaigns/campaigns.tables.js';
export * from './modules/tiers/tiers.tables.js';
export * from './modules/wallet/wallet.tables.js';
