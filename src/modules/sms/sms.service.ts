// Sending, status and consent: the rules of the spec's SMS section and DESIGN.md §4.
// A send is validated completely first (all field errors in one 422), then the sender is
// checked (2001), then — in one transaction — the account is charged, the message queued
// and consent registered. The committed row is the queue (see dispatcher.ts).
import { and, count, desc, eq } from 'drizzle-orm';
import type { Db, Executor } from '../../infra/db/index.js';
import { randomToken } from '../../shared/crypto.js';
import { fail, ok, type FieldErrors, type Result } from '../../shared/errors.js';
import type { MessageKey, MessageParams } from '../../shared/i18n.js';
import { amountToJson, formatAmount, parseAmount } from '../../shared/money.js';
import type { PageWindow } from '../../shared/pagination.js';
import { iso, systemClock, type Clock } from '../../shared/time.js';
import { normalisePhone, type NormalisedPhone } from '../../shared/phone.js';
import { SmsAccountsService } from './sms-accounts.service.js';
import { statusView, type SmsLifecycle, type SmsMessageRow } from './sms-lifecycle.js';

export { statusView };
import { characterCount, layout, type SmsEncoding } from './sms-text.js';
import { smsConsentHistory, smsConsents, smsMessages } from './sms.tables.js';
import { transliterate } from './transliterate.js';

export const MAX_MESSAGE_CHARACTERS = 1600;
export const MAX_VALIDITY_MINUTES = 10080;

export interface SendInput {
  source: string;
  destination: string;
  message: string;
  receipt?: boolean;
  receiptURL?: string;
  scheduled?: string;
  validity?: string;
  validityMinutes?: number;
  marketing_consent?: boolean;
  client_ip?: string;
  client_user_agent?: string;
  consent_page_url?: string;
  transliterate?: boolean;
}

export interface SendResult {
  message_id: string;
  source: string;
  destination: string;
  status: 'queued';
  parts: number;
  cost: { amount: number; currency: 'EUR'; parts_charged: number };
  scheduled: string | null;
  validity: string | null;
  marketing_consent_registered: boolean;
  /** Reported in response headers, not in the spec's body. */
  encoding: SmsEncoding;
  transliterated: boolean;
}

export interface ConsentInput {
  phone_number: string;
  consent_given: boolean;
  consent_source?: string;
  client_ip?: string;
  client_user_agent?: string;
  consent_page_url?: string;
}

export interface ConsentRecord {
  phone_number: string;
  consent_given: boolean;
  consent_source: string;
  consent_date?: string;
  revoked_at?: string;
}

/** Checks a receipt URL before it is accepted (public address unless allowed). */
export type UrlCheck = (url: string) => Promise<{ ok: true } | { ok: false; reason: string }>;

class FieldErrorsBuilder {
  readonly errors: FieldErrors = {};
  add(field: string, key: MessageKey, params?: MessageParams) {
    (this.errors[field] ??= []).push({ key, params });
  }
  get empty() {
    return Object.keys(this.errors).length === 0;
  }
}

function parseDate(value: string): Date | undefined {
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

export function historyView(row: SmsMessageRow) {
  return {
    ...statusView(row),
    message: row.body,
    parts: row.parts,
    encoding: row.encoding,
    transliterated: row.transliterated,
    created_at: iso(row.createdAt),
    expired_at: iso(row.expiredAt),
    refunded: row.refundedAt !== null,
  };
}

function consentView(row: typeof smsConsents.$inferSelect): ConsentRecord {
  return {
    phone_number: row.phone,
    consent_given: row.consentGiven,
    consent_source: row.consentSource,
    ...(row.consentGiven && row.consentDate ? { consent_date: iso(row.consentDate) } : {}),
    ...(!row.consentGiven && row.revokedAt ? { revoked_at: iso(row.revokedAt) } : {}),
  };
}

/** Carries a refusal out of a transaction it must roll back. */
class RolledBack extends Error {
  constructor(readonly result: Result<never>) {
    super('rolled back');
  }
}

export class SmsService {
  constructor(
    private readonly deps: {
      db: Db;
      accounts: SmsAccountsService;
      lifecycle: SmsLifecycle;
      checkUrl: UrlCheck;
      carrierName: string;
      /** Sender name of the platform's own messages. */
      systemSender: string;
      clock?: Clock;
      /** Called after a send commits, to wake the local dispatcher. */
      onQueued?: () => void;
    },
  ) {}

  private get clock() {
    return this.deps.clock ?? systemClock;
  }

  /**
   * Everything about a send that can be checked before touching the account. Tolerates
   * wrongly typed fields (it skips them), so that the route can report these errors together
   * with the schema's in one 422.
   */
  async validateSend(input: SendInput): Promise<Result<{ destination: NormalisedPhone; scheduled: Date | null; validity: Date | null }>> {
    const e = new FieldErrorsBuilder();
    const now = this.clock.now();
    const destination = typeof input.destination === 'string' ? normalisePhone(input.destination) : undefined;
    if (typeof input.destination === 'string' && !destination) e.add('destination', 'sms.invalid_destination');
    if (typeof input.message === 'string' && characterCount(input.message) > MAX_MESSAGE_CHARACTERS) {
      e.add('message', 'validation.max_length', { limit: MAX_MESSAGE_CHARACTERS });
    }
    if (input.receipt === true && !input.receiptURL) e.add('receiptURL', 'sms.receipt_url_required');
    if (typeof input.receiptURL === 'string' && input.receiptURL !== '') {
      let parsed: URL | undefined;
      try {
        parsed = new URL(input.receiptURL);
      } catch {
        parsed = undefined;
      }
      if (!parsed || !['http:', 'https:'].includes(parsed.protocol)) e.add('receiptURL', 'validation.format', { format: 'URL' });
      else {
        const check = await this.deps.checkUrl(input.receiptURL);
        if (!check.ok) e.add('receiptURL', 'sms.receipt_url_private', { reason: check.reason });
      }
    }
    let scheduled: Date | null = null;
    if (typeof input.scheduled === 'string') {
      const d = parseDate(input.scheduled);
      if (!d) e.add('scheduled', 'validation.format', { format: 'date-time' });
      else if (d.getTime() <= now.getTime()) e.add('scheduled', 'sms.scheduled_in_past');
      else scheduled = d;
    }
    let validity: Date | null = null;
    if (input.validity !== undefined && input.validityMinutes !== undefined) {
      e.add('validityMinutes', 'sms.validity_both');
    } else if (typeof input.validity === 'string') {
      const d = parseDate(input.validity);
      if (!d) e.add('validity', 'validation.format', { format: 'date-time' });
      else if (d.getTime() <= (scheduled ?? now).getTime()) e.add('validity', 'sms.validity_in_past');
      else validity = d;
    } else if (Number.isInteger(input.validityMinutes) && input.validityMinutes! >= 1 && input.validityMinutes! <= MAX_VALIDITY_MINUTES) {
      // Counted from the scheduled time when there is one: the message may not be sent earlier.
      validity = new Date((scheduled ?? now).getTime() + input.validityMinutes! * 60_000);
    }
    if (typeof input.consent_page_url === 'string' && !isUrl(input.consent_page_url)) {
      e.add('consent_page_url', 'validation.format', { format: 'URL' });
    }
    if (!e.empty) return fail('SMS_VALIDATION', { fields: e.errors });
    return ok({ destination: destination!, scheduled, validity });
  }

  /** The service's field errors for a body that may also have failed the schema. */
  async sendFieldErrors(input: SendInput): Promise<FieldErrors> {
    const result = await this.validateSend(input);
    return result.ok ? {} : (result.failure.options?.fields ?? {});
  }

  consentFieldErrors(input: ConsentInput): FieldErrors {
    const result = this.validateConsent(input);
    return result.ok ? {} : (result.failure.options?.fields ?? {});
  }

  /**
   * Validate, charge and queue. On the hot path (no Idempotency-Key, no consent to record) this
   * is two statements and no explicit transaction: a read of the sender and the account's
   * settings, then one statement that charges, queues and records together or not at all, so
   * the account row stays locked only for that statement. Inside the caller's transaction
   * (`inTransaction`) a failed Result must roll it back: callers throw it (`unwrap`).
   */
  async send(partnerId: number, input: SendInput, exec: Executor, inTransaction = true): Promise<Result<SendResult>> {
    if (!inTransaction && input.marketing_consent === true) {
      // The consent is written with the message: both in one transaction.
      return this.deps.db.transaction(async (tx) => {
        const result = await this.send(partnerId, input, tx, true);
        if (!result.ok) throw new RolledBack(result);
        return result;
      }).catch((err: unknown) => {
        if (err instanceof RolledBack) return err.result;
        throw err;
      });
    }
    const checked = await this.validateSend(input);
    if (!checked.ok) return checked;
    const { destination, scheduled, validity } = checked.value;

    const account = await this.deps.accounts.sendContext(partnerId, input.source, exec);
    if (!account.approved) {
      const senders = await this.deps.accounts.senders(partnerId, exec);
      return fail('SENDER_NOT_APPROVED', {
        params: { senders: senders.length > 0 ? senders.join(', ') : '—' },
      });
    }
    const wantsTransliteration = input.transliterate ?? account.transliterate;
    const text = wantsTransliteration ? transliterate(input.message) : { text: input.message, changed: false };
    const shape = layout(text.text);
    const price = parseAmount(SmsAccountsService.priceIn(account.prices, destination.country)) ?? 0n;
    const cost = price * BigInt(shape.parts);

    const id = `msg_${randomToken(16)}`;
    const now = this.clock.now();
    const charged = await this.deps.accounts.chargeAndQueue(exec, partnerId, cost, {
      id,
      partnerId,
      source: input.source,
      destination: destination.e164,
      country: destination.country,
      body: text.text,
      encoding: shape.encoding,
      transliterated: text.changed,
      parts: shape.parts,
      pricePerPart: formatAmount(price),
      cost: formatAmount(cost),
      scheduledAt: scheduled,
      validityAt: validity,
      receipt: input.receipt === true,
      receiptUrl: input.receipt === true ? (input.receiptURL ?? null) : null,
      marketingConsent: input.marketing_consent === true,
      carrier: this.deps.carrierName,
      nextAttemptAt: scheduled ?? now,
      createdAt: now,
    });
    if (!charged.ok) {
      const meta = { balance: amountToJson(charged.balance), required: amountToJson(formatAmount(cost)) };
      return fail('QUOTA_EXCEEDED', {
        items: [{ field: 'balance', code: 'QUOTA_EXCEEDED', key: 'sms.balance_too_low', params: { balance: meta.balance, required: meta.required }, meta }],
      });
    }

    let consentRegistered = false;
    if (input.marketing_consent === true) {
      await this.recordConsent(exec, partnerId, destination.e164, {
        consent_given: true,
        consent_source: 'api',
        client_ip: input.client_ip,
        client_user_agent: input.client_user_agent,
        consent_page_url: input.consent_page_url,
        messageId: id,
      });
      consentRegistered = true;
    }
    return ok({
      message_id: id,
      source: input.source,
      destination: destination.e164,
      status: 'queued',
      parts: shape.parts,
      cost: { amount: amountToJson(formatAmount(cost)), currency: 'EUR', parts_charged: shape.parts },
      scheduled: iso(scheduled),
      validity: iso(validity),
      marketing_consent_registered: consentRegistered,
      encoding: shape.encoding,
      transliterated: text.changed,
    });
  }

  /**
   * Queue one of the platform's own messages (a sign-in code) in the caller's transaction:
   * sent from the system sender, charged to nobody, invisible to every partner.
   */
  async sendSystem(tx: Executor, destination: NormalisedPhone, message: string): Promise<string> {
    const shape = layout(message);
    const id = `msg_${randomToken(16)}`;
    const now = this.clock.now();
    const [row] = await tx
      .insert(smsMessages)
      .values({
        id,
        partnerId: null,
        source: this.deps.systemSender,
        destination: destination.e164,
        country: destination.country,
        body: message,
        encoding: shape.encoding,
        parts: shape.parts,
        pricePerPart: '0',
        cost: '0',
        carrier: this.deps.carrierName,
        nextAttemptAt: now,
        createdAt: now,
      })
      .returning();
    await this.deps.lifecycle.queued(tx, row!);
    return id;
  }

  /** Wake the dispatcher once the send has committed. */
  queuedCommitted(): void {
    this.deps.onQueued?.();
  }

  async status(partnerId: number, messageId: string): Promise<SmsMessageRow | undefined> {
    if (messageId.length > 100) return undefined;
    const [row] = await this.deps.db
      .select()
      .from(smsMessages)
      .where(and(eq(smsMessages.id, messageId), eq(smsMessages.partnerId, partnerId)));
    return row;
  }

  async history(partnerId: number, page: PageWindow): Promise<{ items: SmsMessageRow[]; total: number }> {
    const where = eq(smsMessages.partnerId, partnerId);
    const items = await this.deps.db
      .select()
      .from(smsMessages)
      .where(where)
      .orderBy(desc(smsMessages.createdAt), desc(smsMessages.id))
      .limit(page.perPage)
      .offset(page.offset);
    const [total] = await this.deps.db.select({ n: count() }).from(smsMessages).where(where);
    return { items, total: total?.n ?? 0 };
  }

  validateConsent(input: ConsentInput): Result<string> {
    const e = new FieldErrorsBuilder();
    const phone = typeof input.phone_number === 'string' ? normalisePhone(input.phone_number) : undefined;
    if (typeof input.phone_number === 'string' && !phone) e.add('phone_number', 'sms.invalid_phone');
    if (typeof input.consent_page_url === 'string' && !isUrl(input.consent_page_url)) {
      e.add('consent_page_url', 'validation.format', { format: 'URL' });
    }
    // A phone_number that is not a string was refused by the schema; report only what is ours.
    if (!e.empty || !phone) return fail('SMS_VALIDATION', { fields: e.errors });
    return ok(phone.e164);
  }

  async setConsent(partnerId: number, input: ConsentInput): Promise<Result<ConsentRecord>> {
    const phone = this.validateConsent(input);
    if (!phone.ok) return phone;
    const record = await this.deps.db.transaction((tx) => this.recordConsent(tx, partnerId, phone.value, input));
    return ok(record);
  }

  private async recordConsent(
    tx: Executor,
    partnerId: number,
    phone: string,
    input: Omit<ConsentInput, 'phone_number'> & { messageId?: string },
  ): Promise<ConsentRecord> {
    const now = this.clock.now();
    const source = input.consent_source ?? 'api';
    const values = {
      partnerId,
      phone,
      consentGiven: input.consent_given,
      consentSource: source,
      consentDate: input.consent_given ? now : null,
      revokedAt: input.consent_given ? null : now,
      updatedAt: now,
    };
    const [row] = await tx
      .insert(smsConsents)
      .values(values)
      .onConflictDoUpdate({
        target: [smsConsents.partnerId, smsConsents.phone],
        // Opting in again keeps nothing of the revocation; revoking keeps when consent was given.
        set: input.consent_given
          ? { consentGiven: true, consentSource: source, consentDate: now, revokedAt: null, updatedAt: now }
          : { consentGiven: false, consentSource: source, revokedAt: now, updatedAt: now },
      })
      .returning();
    await tx.insert(smsConsentHistory).values({
      partnerId,
      phone,
      consentGiven: input.consent_given,
      consentSource: source,
      clientIp: input.client_ip ?? null,
      clientUserAgent: input.client_user_agent ?? null,
      consentPageUrl: input.consent_page_url ?? null,
      messageId: input.messageId ?? null,
      createdAt: now,
    });
    return consentView(row!);
  }

  async consent(partnerId: number, phoneInput: string): Promise<ConsentRecord | undefined> {
    const phone = normalisePhone(phoneInput);
    if (!phone) return undefined;
    const [row] = await this.deps.db
      .select()
      .from(smsConsents)
      .where(and(eq(smsConsents.partnerId, partnerId), eq(smsConsents.phone, phone.e164)));
    return row && consentView(row);
  }
}

function isUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}
