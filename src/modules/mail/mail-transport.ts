// How an e-mail leaves the process (DESIGN.md §1): SMTP when SMTP_URL is set, otherwise an
// .eml file per message under MAIL_DIR ({data dir}/mail), which a developer can open in any
// mail client. Both go through nodemailer, so the file is exactly what SMTP would have sent.
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { Config } from '../../config.js';

export interface OutgoingMail {
  /** The outbox row id: names the .eml file, so a retry overwrites rather than duplicates. */
  id: number;
  messageId: string;
  from: string;
  to: string;
  subject: string;
  text: string;
}

export interface MailDelivery {
  /** The SMTP server's final answer, or the .eml file written. */
  response: string;
}

/** A delivery failure, and whether trying again can help (SMTP 5xx: no). */
export class MailTransportError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
    this.name = 'MailTransportError';
  }
}

export interface MailTransport {
  readonly name: 'smtp' | 'file';
  send(mail: OutgoingMail): Promise<MailDelivery>;
  close(): void;
}

const messageOf = (mail: OutgoingMail) => ({
  messageId: mail.messageId,
  from: mail.from,
  to: mail.to,
  subject: mail.subject,
  text: mail.text,
  // Outgoing administrative mail: nothing a receiver should auto-reply to.
  headers: { 'Auto-Submitted': 'auto-generated' },
});

export class FileMailTransport implements MailTransport {
  readonly name = 'file';
  private readonly composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });

  constructor(private readonly dir: string) {}

  async send(mail: OutgoingMail): Promise<MailDelivery> {
    const info = await this.composer.sendMail(messageOf(mail));
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const file = path.join(this.dir, `${String(mail.id).padStart(8, '0')}.eml`);
    // Write then rename: a reader never sees half a message.
    const tmp = `${file}.tmp`;
    await writeFile(tmp, info.message as Buffer, { mode: 0o600 });
    await rename(tmp, file);
    return { response: file };
  }

  close(): void {
    this.composer.close();
  }
}

export class SmtpMailTransport implements MailTransport {
  readonly name = 'smtp';
  private readonly smtp;

  constructor(url: string, timeoutMs: number) {
    this.smtp = nodemailer.createTransport({
      url,
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
    });
  }

  async send(mail: OutgoingMail): Promise<MailDelivery> {
    try {
      const info = await this.smtp.sendMail(messageOf(mail));
      return { response: info.response };
    } catch (err) {
      const e = err as { responseCode?: number; message?: string };
      // 5xx is the server saying "never"; everything else (4xx, network, timeouts) may pass later.
      const permanent = typeof e.responseCode === 'number' && e.responseCode >= 500 && e.responseCode < 600;
      throw new MailTransportError(e.message ?? String(err), permanent);
    }
  }

  close(): void {
    this.smtp.close();
  }
}

export function createMailTransport(config: Pick<Config, 'mail'>, timeoutMs = 30_000): MailTransport {
  return config.mail.smtpUrl ? new SmtpMailTransport(config.mail.smtpUrl, timeoutMs) : new FileMailTransport(config.mail.dir);
}
