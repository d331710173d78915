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

export interface DemoCredentials {
  admin: { email: string; password: string | null };
  partner: { id: number; name: string; email: string; password: string };
  api_key: { key: string; secret: string };
  shop: { id: number; name: string };
  partner_card: { id: number };
  sms: { sender: string; balance_eur: string };
  test_customer: { phone: string; otp_code: string } | null;
}

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
      const credentials: DemoCredentials = {
        admin: { email: adminEmail, password: adminPassword },
        partner: { id: partner.id, name: partner.name, email: partner.email, password: partnerPassword },
        api_key: { key: apiKey.key, secret: apiKey.secret },
        shop: { id: shop.id, name: shop.name },
        partner_card: { id: card.id },
        sms: { sender: 'DemoShop', balance_eur: '10.0000' },
        test_customer: phone && code ? { phone, otp_code: code } : null,
      };
      return credentials;
    });
    return result;
  }
}
