// Every table, for Drizzle's typed queries and for drizzle-kit to generate migrations.
// Each module owns its tables; only this file and the module itself import them.
export * from './infra.tables.js';
export * from '../../modules/admin/admin.tables.js';
export * from '../../modules/partners/partners.tables.js';
export * from '../../modules/api-keys/api-keys.tables.js';
export * from '../../modules/shops/shops.tables.js';
export * from '../../modules/partner-cards/partner-cards.tables.js';
export * from '../../modules/games/games.tables.js';
export * from '../../modules/sms/sms.tables.js';
export * from '../webhooks/webhooks.tables.js';
export * from '../../modules/customers/customers.tables.js';
export * from '../../modules/loyalty-cards/loyalty-cards.tables.js';
export * from '../../modules/points/points.tables.js';
export * from '../../modules/qr-sessions/qr.tables.js';
export * from '../mail/mail.tables.js';
export * from '../../modules/commission/commission.tables.js';
export * from '../../modules/partner-messages/partner-messages.tables.js';
