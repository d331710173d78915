// SMS accounts: a prepaid EUR balance, a price per part by destination country (platform
// defaults from config, overridable per account by an admin), approved sender names and the
// transliteration setting. Every balance change is a ledger row written in the same
// transaction as the change.
import type { Static } from 'typebox';
import { and, asc, count, eq, inArray, sql } from 'drizzle-orm';
import { executePrepared, isDatabaseUnavailable, type Db, type Executor } from '../../infra/db/index.js';
import { amountToJson, formatAmount, parseAmount } from '../../shared/money.js';
import type { PageWindow } from '../../shared/pagination.js';
import { KeyedBatches } from '../../shared/keyed-batches.js';
import { partners } from '../partners/partners.tables.js';
import { smsAccountLedger, smsAccounts, smsMessages, smsSenders, smsStatusEvents } from './sms.tables.js';
import type { SmsAccount } from './sms.schemas.js';

/** A message as `chargeAndQueue` writes it (the columns a send sets; the rest take their defaults). */
export type QueuedMessage = Required<
  Pick<
    typeof smsMessages.$inferInsert,
    'id' | 'partnerId' | 'source' | 'destination' | 'country' | 'body' | 'encoding' | 'transliterated' | 'parts' | 'pricePerPart' | 'cost' | 'receipt' | 'marketingConsent' | 'carrier'
  >
> & { scheduledAt: Date | null; validityAt: Date | null; receiptUrl: string | null; nextAttemptAt: Date; createdAt: Date };

export type SmsAccountView = Static<typeof SmsAccount>;

export interface PriceTable {
  /** ISO country code → price per part, as exact decimal text ("0.0290"); "*" = others. */
  [country: string]: string;
}

export type ChargeResult = { ok: true } | { ok: false; balance: string };

interface Charge {
  amount: bigint;
  m: QueuedMessage;
}

/** Sends of one partner charged in one statement at most. */
const MAX_CHARGE_BATCH = 100;

export class SmsAccountsService {
  /** Per partner: sends waiting for the charge statement in flight. */
  private readonly charges = new KeyedBatches<number, Charge, ChargeResult>(MAX_CHARGE_BATCH, {
    // All in one statement when the balance covers them all; otherwise — or should that
    // statement fail — each alone, in the order they came, exactly as if they had not waited
    // (the first that does not fit is refused, a later cheaper one may still fit). With the
    // store unreachable they all fail at once, not one timeout after another.
    together: async (partnerId, charges) => ((await this.chargeAll(this.db, partnerId, charges)) ? charges.map(() => ({ ok: true })) : undefined),
    alone: (partnerId, c) => this.chargeOne(this.db, partnerId, c.amount, c.m),
    failsAll: isDatabaseUnavailable,
  });

  constructor(
    private readonly db: Db,
    private readonly defaultPrices: PriceTable,
  ) {}

  /** Open an account (idempotent) with an optional starting balance and senders; used by the demo seed. */
  async open(tx: Executor, partnerId: number, opts: { balance: string; senders: string[] }): Promise<void> {
    const inserted = await tx.insert(smsAccounts).values({ partnerId, balance: opts.balance }).onConflictDoNothing().returning();
    if (inserted.length > 0 && (parseAmount(opts.balance) ?? 0n) > 0n) {
      await tx.insert(smsAccountLedger).values({ partnerId, kind: 'top_up', amount: opts.balance, balanceAfter: opts.balance });
    }
    if (opts.senders.length > 0) {
      await tx
        .insert(smsSenders)
        .values(opts.senders.map((name) => ({ partnerId, name })))
        .onConflictDoNothing();
    }
  }

  private async ensure(tx: Executor, partnerId: number) {
    await tx.insert(smsAccounts).values({ partnerId }).onConflictDoNothing();
  }

  async view(partnerId: number, tx: Executor = this.db): Promise<SmsAccountView> {
    const [account] = await tx.select().from(smsAccounts).where(eq(smsAccounts.partnerId, partnerId));
    const senders = await this.senders(partnerId, tx);
    return this.toView(partnerId, account, senders);
  }

  private toView(
    partnerId: number,
    account: typeof smsAccounts.$inferSelect | undefined,
    senders: string[],
  ): SmsAccountView {
    const prices: Record<string, number> = {};
    for (const [cc, price] of Object.entries({ ...this.defaultPrices, ...(account?.prices ?? {}) })) prices[cc] = amountToJson(price);
    return {
      partner_id: partnerId,
      balance: amountToJson(account?.balance ?? '0'),
      currency: 'EUR',
      senders,
      prices,
      transliterate: account?.transliterate ?? false,
    };
  }

  /**
   * Every partner's account, by partner id: a partner that has never sent or been topped up
   * has no row yet and shows the defaults (balance 0, the default prices), so an admin can
   * top up a partner it has just created.
   */
  async list(page: PageWindow): Promise<{ items: SmsAccountView[]; total: number }> {
    const rows = await this.db
      .select({ partnerId: partners.id, account: smsAccounts })
      .from(partners)
      .leftJoin(smsAccounts, eq(smsAccounts.partnerId, partners.id))
      .orderBy(asc(partners.id))
      .limit(page.perPage)
      .offset(page.offset);
    const [total] = await this.db.select({ n: count() }).from(partners);
    const ids = rows.map((r) => r.partnerId);
    const sendersOf = new Map<number, string[]>();
    if (ids.length > 0) {
      const names = await this.db
        .select({ partnerId: smsSenders.partnerId, name: smsSenders.name })
        .from(smsSenders)
        .where(inArray(smsSenders.partnerId, ids))
        .orderBy(asc(smsSenders.partnerId), asc(smsSenders.name));
      for (const { partnerId, name } of names) sendersOf.set(partnerId, [...(sendersOf.get(partnerId) ?? []), name]);
    }
    const items = rows.map((r) => this.toView(r.partnerId, r.account ?? undefined, sendersOf.get(r.partnerId) ?? []));
    return { items, total: total?.n ?? 0 };
  }

  async senders(partnerId: number, tx: Executor = this.db): Promise<string[]> {
    const rows = await tx.select({ name: smsSenders.name }).from(smsSenders).where(eq(smsSenders.partnerId, partnerId)).orderBy(asc(smsSenders.name));
    return rows.map((r) => r.name);
  }

  async isApprovedSender(partnerId: number, name: string, tx: Executor = this.db): Promise<boolean> {
    const [row] = await tx.select({ name: smsSenders.name }).from(smsSenders).where(and(eq(smsSenders.partnerId, partnerId), eq(smsSenders.name, name)));
    return row !== undefined;
  }

  /** Price per part (exact decimal text) for a destination country from a price table. */
  static priceIn(prices: PriceTable, country: string): string {
    return prices[country] ?? prices['*'] ?? '0';
  }

  async topUp(partnerId: number, amount: bigint): Promise<SmsAccountView> {
    return this.db.transaction(async (tx) => {
      await this.ensure(tx, partnerId);
      const [row] = await tx
        .update(smsAccounts)
        .set({ balance: sql`${smsAccounts.balance} + ${formatAmount(amount)}::numeric`, updatedAt: new Date() })
        .where(eq(smsAccounts.partnerId, partnerId))
        .returning({ balance: smsAccounts.balance });
      await tx.insert(smsAccountLedger).values({ partnerId, kind: 'top_up', amount: formatAmount(amount), balanceAfter: row!.balance });
      return this.view(partnerId, tx);
    });
  }

  /** Set or clear (null) per-country price overrides and/or the transliteration default. */
  async configure(
    partnerId: number,
    changes: { prices?: Record<string, string | null>; transliterate?: boolean },
  ): Promise<SmsAccountView> {
    return this.db.transaction(async (tx) => {
      await this.ensure(tx, partnerId);
      const [account] = await tx.select().from(smsAccounts).where(eq(smsAccounts.partnerId, partnerId)).for('update');
      const prices = { ...(account?.prices ?? {}) };
      for (const [cc, price] of Object.entries(changes.prices ?? {})) {
        if (price === null) delete prices[cc];
        else prices[cc] = price;
      }
      await tx
        .update(smsAccounts)
        .set({ prices, ...(changes.transliterate !== undefined ? { transliterate: changes.transliterate } : {}), updatedAt: new Date() })
        .where(eq(smsAccounts.partnerId, partnerId));
      return this.view(partnerId, tx);
    });
  }

  /** Returns false if the sender was already approved. */
  async approveSender(partnerId: number, name: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      await this.ensure(tx, partnerId);
      const rows = await tx.insert(smsSenders).values({ partnerId, name }).onConflictDoNothing().returning();
      return rows.length > 0;
    });
  }

  async revokeSender(partnerId: number, name: string): Promise<boolean> {
    const rows = await this.db
      .delete(smsSenders)
      .where(and(eq(smsSenders.partnerId, partnerId), eq(smsSenders.name, name)))
      .returning();
    return rows.length > 0;
  }

  /**
   * Charge `amount` for a message in the caller's transaction: one conditional UPDATE
   * (balance >= amount) takes the row lock, checks and reduces the balance at once, so
   * concurrent sends can never overdraw. Callers make it the last write before commit to
   * keep the lock short. When the balance is too low nothing changes and the balance is
   * returned for the error's meta.
   */
  async charge(
    tx: Executor,
    partnerId: number,
    amount: bigint,
    messageId: string,
  ): Promise<{ ok: true } | { ok: false; balance: string }> {
    const text = formatAmount(amount);
    const [row] = await tx
      .update(smsAccounts)
      .set({ balance: sql`${smsAccounts.balance} - ${text}::numeric`, updatedAt: sql`now()` })
      .where(and(eq(smsAccounts.partnerId, partnerId), sql`${smsAccounts.balance} >= ${text}::numeric`))
      .returning({ balance: smsAccounts.balance });
    if (!row) {
      const [account] = await tx.select({ balance: smsAccounts.balance }).from(smsAccounts).where(eq(smsAccounts.partnerId, partnerId));
      return { ok: false, balance: formatAmount(parseAmount(account?.balance ?? '0') ?? 0n) };
    }
    await tx.insert(smsAccountLedger).values({ partnerId, kind: 'charge', amount: formatAmount(-amount), balanceAfter: row.balance, messageId });
    return { ok: true };
  }

  /**
   * What a send needs to know, in one read without a lock: whether `source` is an approved
   * sender of the partner, and the account's transliteration default and prices.
   */
  async sendContext(partnerId: number, source: string, exec: Executor = this.db): Promise<{ approved: boolean; transliterate: boolean; prices: PriceTable }> {
    const rows = await executePrepared<{ approved: boolean; prices: PriceTable | null; transliterate: boolean | null }>(exec, sql`
      select exists (select 1 from ${smsSenders} where ${smsSenders.partnerId} = ${partnerId} and ${smsSenders.name} = ${source}) as approved,
             a.prices, a.transliterate
      from (select 1) one
      left join ${smsAccounts} a on a.partner_id = ${partnerId}`);
    const row = rows[0]!; // (select 1) left join: always one row
    return { approved: row.approved, transliterate: row.transliterate ?? false, prices: { ...this.defaultPrices, ...(row.prices ?? {}) } };
  }

  /**
   * Charge `amount` and queue the message: the balance update, the message, its `queued`
   * event and the ledger line are written together or not at all (nothing when the balance
   * is too low). In a caller's transaction, one statement there. Outside one (`exec` is the
   * database), sends of one partner share statements: while one is in flight, the sends that
   * arrive wait and then go together (`charges`), since each statement holds the account
   * row until its commit — one at a time per partner, one fsync each.
   */
  chargeAndQueue(exec: Executor, partnerId: number, amount: bigint, m: QueuedMessage): Promise<ChargeResult> {
    if (exec !== this.db) return this.chargeOne(exec, partnerId, amount, m);
    return this.charges.submit(partnerId, { amount, m });
  }

  /**
   * Messages charged and queued in ONE statement (the account row is locked only while it
   * runs, until its commit): one balance update by their sum, then a message, its `queued`
   * event and a ledger line each, `balance_after` chained in their order. False, and nothing
   * written, when the balance does not cover the sum.
   */
  private async chargeAll(exec: Executor, partnerId: number, charges: Charge[]): Promise<boolean> {
    const total = formatAmount(charges.reduce((sum, c) => sum + c.amount, 0n));
    const at = (d: Date | null) => (d === null ? null : d.toISOString());
    const rows = JSON.stringify(
      charges.map(({ m, amount }, n) => ({
        n,
        id: m.id,
        source: m.source,
        destination: m.destination,
        country: m.country,
        body: m.body,
        encoding: m.encoding,
        transliterated: m.transliterated,
        parts: m.parts,
        price_per_part: m.pricePerPart,
        cost: m.cost,
        charge: formatAmount(amount),
        scheduled_at: at(m.scheduledAt),
        validity_at: at(m.validityAt),
        receipt: m.receipt,
        receipt_url: m.receiptUrl,
        marketing_consent: m.marketingConsent,
        carrier: m.carrier,
        next_attempt_at: at(m.nextAttemptAt),
        created_at: at(m.createdAt),
      })),
    );
    const charged = await executePrepared<{ balance: string }>(exec, sql`
      with input as (
        select * from jsonb_to_recordset(${rows}::jsonb) as v(n int, id text, source text, destination text, country text,
          body text, encoding text, transliterated boolean, parts int, price_per_part numeric, cost numeric, charge numeric,
          scheduled_at timestamptz, validity_at timestamptz, receipt boolean, receipt_url text, marketing_consent boolean,
          carrier text, next_attempt_at timestamptz, created_at timestamptz)
      ), charged as (
        update ${smsAccounts} set balance = balance - ${total}::numeric, updated_at = now()
        where partner_id = ${partnerId} and balance >= ${total}::numeric
        returning balance
      ), msg as (
        insert into ${smsMessages} (id, partner_id, source, destination, country, body, encoding, transliterated, parts,
          price_per_part, cost, scheduled_at, validity_at, receipt, receipt_url, marketing_consent, carrier, next_attempt_at, created_at)
        select v.id, ${partnerId}, v.source, v.destination, v.country, v.body, v.encoding, v.transliterated, v.parts,
          v.price_per_part, v.cost, v.scheduled_at, v.validity_at, v.receipt, v.receipt_url, v.marketing_consent, v.carrier,
          v.next_attempt_at, v.created_at
        from input v, charged order by v.n
        returning id, created_at
      ), queued as (
        insert into ${smsStatusEvents} (message_id, status, at) select id, 'queued', created_at from msg
      ), ledger as (
        insert into ${smsAccountLedger} (partner_id, kind, amount, balance_after, message_id)
        select ${partnerId}, 'charge', -v.charge, c.balance + ${total}::numeric - sum(v.charge) over (order by v.n), v.id
        from input v, charged c order by v.n
      )
      select balance from charged`);
    return charged.length > 0;
  }

  /** One message (`chargeAll` of one); when the balance is too low, what it was. */
  private async chargeOne(exec: Executor, partnerId: number, amount: bigint, m: QueuedMessage): Promise<ChargeResult> {
    if (await this.chargeAll(exec, partnerId, [{ amount, m }])) return { ok: true };
    const [account] = await exec.select({ balance: smsAccounts.balance }).from(smsAccounts).where(eq(smsAccounts.partnerId, partnerId));
    return { ok: false, balance: formatAmount(parseAmount(account?.balance ?? '0') ?? 0n) };
  }

  /** What a send needs to know of the account, read without a lock. */
  async sendSettings(partnerId: number, tx: Executor = this.db): Promise<{ transliterate: boolean; prices: PriceTable }> {
    const [account] = await tx
      .select({ prices: smsAccounts.prices, transliterate: smsAccounts.transliterate })
      .from(smsAccounts)
      .where(eq(smsAccounts.partnerId, partnerId));
    return { transliterate: account?.transliterate ?? false, prices: { ...this.defaultPrices, ...(account?.prices ?? {}) } };
  }

  /** Give a message's charge back, once: the ledger's unique (message, kind) makes a second refund a no-op. */
  async refund(tx: Executor, partnerId: number, amount: bigint, messageId: string): Promise<boolean> {
    const [account] = await tx
      .select({ balance: smsAccounts.balance })
      .from(smsAccounts)
      .where(eq(smsAccounts.partnerId, partnerId))
      .for('update');
    if (!account) return false;
    const after = formatAmount((parseAmount(account.balance) ?? 0n) + amount);
    const inserted = await tx
      .insert(smsAccountLedger)
      .values({ partnerId, kind: 'refund', amount: formatAmount(amount), balanceAfter: after, messageId })
      .onConflictDoNothing()
      .returning({ id: smsAccountLedger.id });
    if (inserted.length === 0) return false;
    await tx.update(smsAccounts).set({ balance: after, updatedAt: new Date() }).where(eq(smsAccounts.partnerId, partnerId));
    return true;
  }
}
