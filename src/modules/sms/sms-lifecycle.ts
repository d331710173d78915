// Status transitions of an SMS message, in one place (DESIGN.md §4):
//
//   queued ──► sent ──► delivered
//     │         ├─────► failed     (carrier: undeliverable / rejected, reason in error_message)
//     │         └─────► expired    (validity passed before delivery)          ── refunded
//     ├──────► failed              (refused before reaching the carrier)        ── refunded
//     └──────► expired             (validity passed before dispatch)            ── refunded
//
// delivered, failed and expired are final. Every transition is a conditional UPDATE on the
// current status (so racing workers cannot apply two), records a status event, refunds when
// the rule says so and — when the sender asked for receipts — queues the signed webhook, all in
// the caller's transaction. Once that transaction has committed, each change is announced
// (`sms.status` on the partner's private realtime channel): see `transaction`.
import { and, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Db, Executor, Tx } from '../../infra/db/index.js';
import { amountToJson, parseAmount } from '../../shared/money.js';
import { iso } from '../../shared/time.js';
import type { SmsAccountsService } from './sms-accounts.service.js';
import { smsMessages, smsStatusEvents, type SmsStatus } from './sms.tables.js';
import type { PartnerEventSink } from '../webhooks/webhooks.events.js';

export type SmsMessageRow = typeof smsMessages.$inferSelect;

export interface ReceiptPublisher {
  enqueue(tx: Executor, event: { partnerId: number; eventType: string; url: string; payload: unknown }): Promise<string>;
}

const FROM: Record<Exclude<SmsStatus, 'queued'>, SmsStatus[]> = {
  sent: ['queued'],
  delivered: ['queued', 'sent'],
  failed: ['queued', 'sent'],
  expired: ['queued', 'sent'],
};

export interface TransitionOptions {
  at?: Date;
  error?: string | null;
  detail?: string;
  /** Refund the charge (expiry always; a failure only before the carrier had it). */
  refund?: boolean;
  /** Refund this much instead of the whole charge (the parts of a message the carrier never had). */
  refundAmount?: bigint;
}

/** The columns a move to `to` sets. */
function changes(to: Exclude<SmsStatus, 'queued'>, at: Date, error?: string | null) {
  const set: Partial<Omit<typeof smsMessages.$inferInsert, 'body'>> & { body?: SQL } = { status: to };
  if (to === 'sent') set.sentAt = at;
  if (to === 'delivered') set.deliveredAt = at;
  if (to === 'failed') set.failedAt = at;
  if (to === 'expired') set.expiredAt = at;
  if (error !== undefined) set.errorMessage = error;
  // The platform's own messages carry sign-in codes: once the text has left for the carrier
  // (or never will), its digits are not kept.
  set.body = sql`case when ${smsMessages.partnerId} is null then regexp_replace(${smsMessages.body}, '[0-9]', '•', 'g') else ${smsMessages.body} end`;
  return set;
}

/** A message's status as GET /sms/status shows it. */
export function statusView(row: SmsMessageRow) {
  return {
    message_id: row.id,
    status: row.status,
    source: row.source,
    destination: row.destination,
    sent_at: iso(row.sentAt),
    delivered_at: iso(row.deliveredAt),
    failed_at: iso(row.failedAt),
    scheduled: iso(row.scheduledAt),
    validity: iso(row.validityAt),
    cost: { amount: amountToJson(row.cost), currency: 'EUR' as const },
    error_message: row.errorMessage,
  };
}

/** The receipt body (DESIGN.md §4): the status view without the scheduling fields. */
export function receiptPayload(row: SmsMessageRow) {
  const { scheduled: _scheduled, validity: _validity, ...payload } = statusView(row);
  return payload;
}

/** Told of the messages a transaction moved, once it has committed (each once, in its last state). */
export type StatusAnnouncer = (rows: SmsMessageRow[]) => void;

/**
 * The realtime `sms.status` event: the status fields of a `partners/sms/messages` item (no
 * text), so a list on screen can take them over as they are.
 */
export function statusEvent(row: SmsMessageRow) {
  return { ...statusView(row), expired_at: iso(row.expiredAt), refunded: row.refundedAt !== null };
}

export class SmsLifecycle {
  /** The moves of each open transaction (and its savepoints), waiting for its commit. */
  private readonly uncommitted = new WeakMap<Executor, SmsMessageRow[]>();

  constructor(
    private readonly accounts: SmsAccountsService,
    private readonly receipts: ReceiptPublisher,
    private readonly announce: StatusAnnouncer = () => {},
    /** Partner events (DESIGN.md §14): sms.status to the partner's subscriptions, besides any receiptURL. */
    private readonly events?: PartnerEventSink,
  ) {}

  /**
   * Runs `fn` in a new transaction of `db` and, once it has committed, announces every message
   * it moved — each once, in its last state. Nothing is announced when it fails. (The moves
   * are kept per transaction object, passed along explicitly: no async context tracking,
   * which would tax every promise of the process.)
   */
  async transaction<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
    const changed: SmsMessageRow[] = [];
    const result = await db.transaction((tx) => {
      this.uncommitted.set(tx, changed);
      return fn(tx);
    });
    const latest = new Map<string, SmsMessageRow>();
    for (const row of changed) latest.set(row.id, row);
    if (latest.size > 0) this.announce([...latest.values()]);
    return result;
  }

  /** Runs `fn` in a savepoint of `tx`: its moves are forgotten when it rolls back. */
  async savepoint<T>(tx: Tx, fn: (sp: Tx) => Promise<T>): Promise<T> {
    const changed = this.uncommitted.get(tx);
    const mark = changed?.length ?? 0;
    try {
      return await tx.transaction((sp) => {
        if (changed) this.uncommitted.set(sp, changed);
        return fn(sp);
      });
    } catch (err) {
      if (changed) changed.length = mark;
      throw err;
    }
  }

  /** Record the initial `queued` event of a message just inserted (the send response reports it; no receipt). */
  async queued(tx: Executor, row: SmsMessageRow): Promise<void> {
    await tx.insert(smsStatusEvents).values({ messageId: row.id, status: 'queued', at: row.createdAt });
  }

  /**
   * Move a message to `to` if it is still in a state that allows it. Returns the updated row,
   * or undefined when another worker (or an earlier receipt) got there first.
   */
  async transition(
    tx: Executor,
    messageId: string,
    to: Exclude<SmsStatus, 'queued'>,
    opts: TransitionOptions = {},
  ): Promise<SmsMessageRow | undefined> {
    const at = opts.at ?? new Date();
    const [row] = await tx
      .update(smsMessages)
      .set(changes(to, at, opts.error))
      .where(and(eq(smsMessages.id, messageId), inArray(smsMessages.status, FROM[to])))
      .returning();
    if (!row) return undefined;
    await tx.insert(smsStatusEvents).values({ messageId, status: to, at, detail: opts.detail ?? opts.error ?? null });
    // The platform's own messages (partnerId null) cost nobody anything: nothing to refund.
    if ((opts.refund || opts.refundAmount !== undefined) && row.partnerId !== null) {
      const refunded = await this.accounts.refund(tx, row.partnerId, opts.refundAmount ?? parseAmount(row.cost) ?? 0n, row.id);
      if (refunded) {
        const [updated] = await tx.update(smsMessages).set({ refundedAt: at }).where(eq(smsMessages.id, messageId)).returning();
        await this.publish(tx, updated!);
        this.uncommitted.get(tx)?.push(updated!);
        return updated;
      }
    }
    await this.publish(tx, row);
    this.uncommitted.get(tx)?.push(row);
    return row;
  }

  /**
   * `transition` for many messages at once, to a status that never refunds: one UPDATE and one
   * INSERT whatever their number (the dispatcher's batches). Returns the rows it moved; a
   * message another worker got to first is left out.
   */
  async transitionMany(tx: Executor, messageIds: readonly string[], to: 'sent' | 'delivered', at: Date): Promise<SmsMessageRow[]> {
    if (messageIds.length === 0) return [];
    const rows = await tx
      .update(smsMessages)
      .set(changes(to, at))
      .where(and(inArray(smsMessages.id, [...messageIds]), inArray(smsMessages.status, FROM[to])))
      .returning();
    if (rows.length === 0) return rows;
    await tx.insert(smsStatusEvents).values(rows.map((row) => ({ messageId: row.id, status: to, at, detail: null })));
    for (const row of rows) {
      await this.publish(tx, row);
      this.uncommitted.get(tx)?.push(row);
    }
    return rows;
  }

  private async publish(tx: Executor, row: SmsMessageRow): Promise<void> {
    if (row.partnerId === null) return;
    // Every status change of the partner's messages, as GET /sms/status shows it, to its
    // subscriptions listing sms.status; the receipt the send asked for (§4) goes on unchanged.
    await this.events?.emit(tx, row.partnerId, 'sms.status', statusView(row));
    if (!row.receipt || !row.receiptUrl) return;
    await this.receipts.enqueue(tx, {
      partnerId: row.partnerId,
      eventType: 'sms.status',
      url: row.receiptUrl,
      payload: receiptPayload(row),
    });
  }
}
