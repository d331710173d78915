// Outgoing e-mail for any module (first: admin e-mail to a partner, DESIGN.md §7):
//
//   const mail = await mailer.enqueue(tx, { to, subject, body, partnerId, sentByAdminId });
//
// enqueue writes the outbox row in the caller's transaction — the message exists if and only
// if the request's effect commits — and the worker (start/stop) delivers it with retries.
import { randomUUID } from 'node:crypto';
import type { Static } from 'typebox';
import type { Config } from '../../config.js';
import type { Database, Executor } from '../../infra/db/index.js';
import type { PageWindow } from '../../shared/pagination.js';
import { iso } from '../../shared/time.js';
import { createMailTransport, type MailTransport } from './mail-transport.js';
import { mailRepository as repo, type MailRow } from './mail.repository.js';
import type { Mail } from './mail.schemas.js';
import { MailWorker, type MailWorkerLogger } from './mail.worker.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Attempts at about 0, 1 min, 6 min, 36 min, 2 h 36 min, 8 h 36 min and 20 h 36 min, then `failed`. */
export const DEFAULT_MAIL_BACKOFF_MS: readonly number[] = [MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR, 12 * HOUR];

export interface MailTuning {
  backoffMs?: readonly number[];
  pollIntervalMs?: number;
  /** Deadline of one SMTP conversation step (connect, greeting, each command). */
  timeoutMs?: number;
}

export type MailView = Static<typeof Mail>;

export const mailView = (row: MailRow): MailView => ({
  id: row.id,
  to: row.toAddress,
  subject: row.subject,
  status: row.status,
  attempts: row.attempts,
  last_error: row.lastError,
  created_at: iso(row.createdAt),
  sent_at: iso(row.sentAt),
});

export class MailService {
  private readonly worker: MailWorker;
  readonly transportName: MailTransport['name'];

  constructor(
    private readonly database: Database,
    private readonly config: Pick<Config, 'mail'>,
    opts: MailTuning & { log?: MailWorkerLogger } = {},
  ) {
    const timeoutMs = opts.timeoutMs ?? 30_000;
    const transport = createMailTransport(config, timeoutMs);
    this.transportName = transport.name;
    this.worker = new MailWorker(database, transport, {
      backoffMs: opts.backoffMs ?? DEFAULT_MAIL_BACKOFF_MS,
      pollIntervalMs: opts.pollIntervalMs ?? 1000,
      concurrency: 4,
      // An SMTP send is a handful of steps, each bounded by timeoutMs.
      leaseMs: timeoutMs * 6 + 60_000,
      log: opts.log,
    });
  }

  /** Queues a plain-text message in `tx`; nothing is sent unless it commits. */
  async enqueue(
    tx: Executor,
    mail: { to: string; subject: string; body: string; partnerId?: number; sentByAdminId?: number },
  ): Promise<MailView> {
    const domain = /@([^>\s]+)>?\s*$/.exec(this.config.mail.from)?.[1] ?? 'loyalty.localhost';
    const row = await repo.insert(tx, {
      messageId: `<${randomUUID()}@${domain}>`,
      partnerId: mail.partnerId ?? null,
      sentByAdminId: mail.sentByAdminId ?? null,
      fromAddress: this.config.mail.from,
      toAddress: mail.to,
      subject: mail.subject,
      body: mail.body,
    });
    return mailView(row);
  }

  async listForPartner(partnerId: number, page: PageWindow): Promise<{ items: MailView[]; total: number }> {
    const { rows, total } = await repo.listForPartner(this.database.db, partnerId, page.perPage, page.offset);
    return { items: rows.map(mailView), total };
  }

  start(): Promise<void> {
    return this.worker.start();
  }

  stop(): Promise<void> {
    return this.worker.stop();
  }

  wake(): void {
    this.worker.wake();
  }
}
