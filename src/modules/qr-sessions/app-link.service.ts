// send-app-link: a till sends the customer a link to the mobile app by SMS, through the
// partner's own SMS account (its approved sender, its balance).
import type { Executor } from '../../infra/db/index.js';
import { fail, type Result } from '../../shared/errors.js';
import { t, type Locale } from '../../shared/i18n.js';
import { normalisePhone } from '../../shared/phone.js';
import type { PartnersService } from '../partners/partners.service.js';
import type { SmsAccountsService } from '../sms/sms-accounts.service.js';
import type { SendResult, SmsService } from '../sms/sms.service.js';

export class AppLinkService {
  constructor(
    private readonly deps: { sms: SmsService; accounts: SmsAccountsService; partners: PartnersService; downloadUrl: string },
  ) {}

  async send(tx: Executor, partnerId: number, input: { phone: string; source?: string }, locale: Locale): Promise<Result<SendResult>> {
    if (!normalisePhone(input.phone)) return fail('VALIDATION', { fields: { phone: [{ key: 'sms.invalid_destination' }] } });
    const source = input.source ?? (await this.deps.accounts.senders(partnerId, tx))[0];
    if (source === undefined) return fail('VALIDATION', { fields: { source: [{ key: 'qr.no_sender' }] } });
    // Inside the caller's transaction: on PGlite a query beside it would wait for it forever.
    const partner = await this.deps.partners.get(partnerId, tx);
    const message = t(locale, 'qr.app_link_text', { partner: partner?.name ?? '', url: this.deps.downloadUrl });
    return this.deps.sms.send(partnerId, { source, destination: input.phone, message }, tx);
  }

  queuedCommitted(): void {
    this.deps.sms.queuedCommitted();
  }
}
