// The composition root's message list: every module's user-facing messages, registered
// once into the catalogue of src/shared/i18n.ts. Imported by src/context.ts, which the
// server, the CLI and the tests all go through.
import { registerMessages } from './shared/i18n.js';
import { realtimeMessages } from './infra/realtime/realtime.messages.js';
import { adminMessages } from './modules/admin/admin.messages.js';
import { commissionMessages } from './modules/commission/commission.messages.js';
import { customersMessages } from './modules/customers/customers.messages.js';
import { gamesMessages } from './modules/games/games.messages.js';
import { partnerCardsMessages } from './modules/partner-cards/partner-cards.messages.js';
import { partnerMessagesMessages } from './modules/partner-messages/partner-messages.messages.js';
import { pointsMessages } from './modules/points/points.messages.js';
import { qrMessages } from './modules/qr-sessions/qr.messages.js';
import { smsMessages } from './modules/sms/sms.messages.js';
import { offersMessages } from './modules/offers/offers.messages.js';
import { couponsMessages } from './modules/coupons/coupons.messages.js';
import { gameplayMessages } from './modules/games/gameplay.messages.js';
import { catalogMessages } from './modules/catalog/catalog.messages.js';
import { shopsMessages } from './modules/shops/shops.messages.js';
import { campaignsMessages } from './modules/campaigns/campaigns.messages.js';
import { tiersMessages } from './modules/tiers/tiers.messages.js';
import { webhooksMessages } from './modules/webhooks/webhooks.messages.js';
import { walletMessages } from './modules/wallet/wallet.messages.js';

export const moduleMessages = [
  smsMessages,
  customersMessages,
  pointsMessages,
  qrMessages,
  partnerCardsMessages,
  gamesMessages,
  realtimeMessages,
  adminMessages,
  commissionMessages,
  partnerMessagesMessages,
  offersMessages,
  couponsMessages,
  gameplayMessages,
  catalogMessages,
  shopsMessages,
  campaignsMessages,
  tiersMessages,
  webhooksMessages,
  walletMessages,
];

registerMessages(...moduleMessages);
