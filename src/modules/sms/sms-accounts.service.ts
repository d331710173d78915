// SMS accounts. This issue needs only opening an account with a balance and senders
// (for the demo seed); the SMS issue adds sending, billing and the admin endpoints.
import type { Executor } from '../../infra/db/index.js';
import { smsAccounts, smsSenders } from './sms.tables.js';

export class SmsAccountsService {
  async open(tx: Executor, partnerId: number, opts: { balance: string; senders: string[] }): Promise<void> {
    await tx.insert(smsAccounts).values({ partnerId, balance: opts.balance }).onConflictDoNothing();
    if (opts.senders.length > 0) {
      await tx
        .insert(smsSenders)
        .values(opts.senders.map((name) => ({ partnerId, name })))
        .onConflictDoNothing();
    }
  }
}
