// Demo data for a first look: on an empty database, one of everything an integrator
// needs to make a first call, with the credentials returned once to be printed.
import { sql } from 'drizzle-orm';
import type { Database } from '../../infra/db/index.js';
import { randomToken } from '../../shared/crypto.js';
import type { AdminService } from '../admin/admin.service.js';
import type { ApiKeysService } from '../api-keys/api-keys.service.js';
import type { PartnerCardsService } from '../partner-cards/partner-cards.service.js';
import type { PartnersService } from '../partners/partners.service.js';
import type { ShopsService } from '../shops/shops.service.js';
import type { SmsAccountsService } from '../sms/sms-accounts.service.js';
import type { CustomersService } from '../customers/customers.service.js';
import type { GamesService } from '../games/games.service.js';
import type { LoyaltyCardsService } from '../loyalty-cards/loyalty-cards.service.js';
import type { OffersService } from '../offers/offers.service.js';

export interface DemoCredentials {
  admin: { email: string; password: string | null };
  partner: { id: number; name: string; email: string; password: string };
  api_key: { key: string; secret: string };
  shop: { id: number; name: string };
  partner_card: { id: number };
  sms: { sender: string; balance_eur: string };
  test_customer: { phone: string; otp_code: string } | null;
  /** Engagement demo data (absent in credentials saved by earlier versions). */
  offer?: { id: number; title: string };
  game?: { id: number; name: string };
  coupon?: { id: number; code: string; customer_phone: string };
}

/** Used for the demo coupon's holder when no test phone is configured. */
const DEMO_CUSTOMER_PHONE = '+37060000000';

const SEED_LOCK_KEY = 7_334_201_002;

export class DemoService {
  constructor(
    private readonly deps: {
      database: Database;
      admin: AdminService;
      partners: PartnersService;
      apiKeys: ApiKeysService;
      shops: ShopsService;
      partnerCards: PartnerCardsService;
      smsAccounts: SmsAccountsService;
      customers: CustomersService;
      loyaltyCards: LoyaltyCardsService;
      offers: OffersService;
      games: GamesService;
      configuredAdmin: { email: string } | undefined;
      testPhones: Record<string, string>;
    },
  ) {}

  /** Seed if no partner exists yet; returns undefined when the database was not empty. */
  async seedIfEmpty(): Promise<DemoCredentials | undefined> {
    const d = this.deps;
    const adminPassword = d.configuredAdmin ? null : randomToken(12);
    const adminEmail = d.configuredAdmin?.email ?? 'admin@loyalty.local';
    const partnerPassword = randomToken(12);
    const result = await d.database.db.transaction(async (tx) => {
      // Nodes starting together: one seeds, the others then see a partner and skip.
      await tx.execute(sql`select pg_advisory_xact_lock(${SEED_LOCK_KEY})`);
      if ((await d.partners.count(tx)) > 0) return undefined;

      if (adminPassword !== null) await d.admin.ensure({ email: adminEmail, password: adminPassword, name: 'Demo administrator' }, tx);
      const created = await d.partners.create({ name: 'Demo Shop', email: 'partner@loyalty.local', password: partnerPassword }, tx);
      if (!created.ok) throw new Error('demo partner could not be created');
      const partner = created.value;
      const apiKey = await d.apiKeys.create(partner.id, 'Demo till', tx);
      const shop = await d.shops.create(partner.id, { name: 'Demo Shop Vilnius', address: 'Gedimino pr. 1', city: 'Vilnius', lat: 54.687157, lng: 25.279652 }, tx);
      const card = await d.partnerCards.create(tx, partner.id, {
        title: { en: 'Demo Shop loyalty card', lt: 'Demo Shop lojalumo kortelė' },
        description: { en: 'Earn a point for every euro.', lt: 'Už kiekvieną eurą – taškas.' },
        termsConditions: { en: 'Points expire after one year.', lt: 'Taškai galioja vienus metus.' },
        cardDesign: { text_color: '#FFFFFF', background_color: '#1E3A8A', qr_color: '#000000', qr_background_color: '#FFFFFF' },
        shopIds: [shop.id],
        initialBonusPoints: 50,
        pointsRedemptionEnabled: true,
      });
      await d.smsAccounts.open(tx, partner.id, { balance: '10.0000', senders: ['DemoShop'] });
      const [phone, code] = Object.entries(d.testPhones)[0] ?? [];

      // Engagement: an offer, a game, and a coupon of the offer held by the test customer, so
      // that a till can verify and redeem a real coupon at once (README quick start).
      const holder = await d.customers.findOrCreateByPhone(tx, phone ?? DEMO_CUSTOMER_PHONE);
      const holderCard = await d.loyaltyCards.create(tx, holder.id, { partnerCardId: card.id });
      if (!holderCard.ok) throw new Error('demo card could not be created');
      const offer = await d.offers.createOffer(
        partner.id,
        {
          title: 'Free coffee',
          description: 'Any coffee, any size, for 20 points.',
          discount_type: 'gift',
          reward_details: 'One coffee of your choice',
          points_cost: 20,
          partner_card_id: card.id,
          featured: true,
          max_claims_per_customer: 5,
          coupon_validity_days: 30,
        },
        tx,
      );
      if (!offer.ok) throw new Error('demo offer could not be created');
      const game = await d.games.createGame(
        partner.id,
        {
          type: 'spin_wheel',
          name: 'Demo wheel',
          partner_card_id: card.id,
          plays_per_customer_per_day: 3,
          coupon_validity_days: 14,
          rewards: [
            { label: '10 points', probability: 0.5, reward_type: 'points', points: 10 },
            { label: '10% off', probability: 0.3, reward_type: 'coupon', coupon: { title: '10% off your purchase', discount_type: 'percent', discount_value: 10 } },
            { label: 'Try again', probability: 0.2, reward_type: 'none' },
          ],
        },
        tx,
      );
      if (!game.ok) throw new Error('demo game could not be created');
      const claimed = await d.offers.claim(tx, { customerId: holder.id }, offer.value.id);
      if (!claimed.ok) throw new Error('demo coupon could not be claimed');

      const credentials: DemoCredentials = {
        admin: { email: adminEmail, password: adminPassword },
        partner: { id: partner.id, name: partner.name, email: partner.email, password: partnerPassword },
        api_key: { key: apiKey.key, secret: apiKey.secret },
        shop: { id: shop.id, name: shop.name },
        partner_card: { id: card.id },
        sms: { sender: 'DemoShop', balance_eur: '10.0000' },
        test_customer: phone && code ? { phone, otp_code: code } : null,
        offer: { id: offer.value.id, title: offer.value.title },
        game: { id: game.value.id, name: game.value.name },
        coupon: { id: claimed.value.coupon.id, code: claimed.value.coupon.code, customer_phone: holder.phone },
      };
      return credentials;
    });
    return result;
  }
}
