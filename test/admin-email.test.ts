// Admin e-mail to a partner (DESIGN.md §1, §7 "Admin e-mail"; docs/decisions.md "E-mail"):
// queued in the request's transaction (202), delivered by the mail worker through a real SMTP
// server started here (the npm smtp-server package), with retries; and on the embedded
// default, written as an .eml file under the data dir.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { createAdmin, createPartner, type AdminFixture, type PartnerFixture } from './helpers/fixtures.js';
import { bearer, request, type Response } from './helpers/http.js';

const FROM = 'Loyalty Ops <ops@loyalty.test>';
const FAST = { backoffMs: [100, 100], pollIntervalMs: 100, timeoutMs: 5000 };

interface Received {
  rcpt: string[];
  mail: ParsedMail;
}

/** An SMTP server: RCPT to `flaky-*` fails once with 451 (temporary), to `bounce-*` always with 550. */
class TestSmtp {
  readonly received: Received[] = [];
  private readonly seen = new Map<string, number>();
  private server!: SMTPServer;
  port = 0;

  async start() {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onRcptTo: (address, _session, callback) => {
        const to = address.address;
        const n = (this.seen.get(to) ?? 0) + 1;
        this.seen.set(to, n);
        if (to.startsWith('bounce-')) return callback(Object.assign(new Error('5.1.1 no such user'), { responseCode: 550 }));
        if (to.startsWith('flaky-') && n === 1) return callback(Object.assign(new Error('4.3.0 try again later'), { responseCode: 451 }));
        callback();
      },
      onData: (stream, session, callback) => {
        simpleParser(stream).then(
          (mail) => {
            this.received.push({ rcpt: session.envelope.rcptTo.map((r) => r.address), mail });
            callback();
          },
          (err: Error) => callback(err),
        );
      },
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.server.address() as AddressInfo).port;
  }

  to(address: string) {
    return this.received.filter((r) => r.rcpt.includes(address));
  }

  stop() {
    return new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 8000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function assertShapeA(res: Response, fields: string[], note = '') {
  assert.equal(res.status, 422, `${note} ${res.text}`);
  assert.equal(res.body.code, 422);
  assert.deepEqual(Object.keys(res.body.errors).sort(), fields.sort(), `${note} ${res.text}`);
}

let database: TestDatabase;
before(async () => {
  database = await createTestDatabase();
});
after(() => database.drop());

async function partnerWithEmail(t: TestApp, local: string): Promise<PartnerFixture & { email: string }> {
  const p = await createPartner(t);
  const email = `${local}-${p.id}@example.com`;
  // The fixture's address, swapped for one the test server reacts to.
  await t.app.context.database.db.execute(sql`update partners set email = ${email} where id = ${p.id}`);
  return { ...p, email };
}

describe('admin e-mail over SMTP', () => {
  let t: TestApp;
  let smtp: TestSmtp;
  let admin: AdminFixture;

  before(async () => {
    smtp = new TestSmtp();
    await smtp.start();
    t = await startTestApp({ SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, MAIL_FROM: FROM }, database, { mail: FAST });
    admin = await createAdmin(t);
  });
  after(async () => {
    await t.close();
    await smtp.stop();
  });

  const sendEmail = (id: number, json: unknown, headers: Record<string, string> = {}) =>
    request(t.url, 'POST', `/en/admin/partners/${id}/send-email`, { headers: { ...bearer(admin.token), ...headers }, json });
  const emails = async (id: number) => (await request(t.url, 'GET', `/en/admin/partners/${id}/emails`, { headers: bearer(admin.token) })).body;

  it('answers 202 and delivers subject, body and recipient intact', async () => {
    const p = await partnerWithEmail(t, 'shop');
    const subject = 'Sąskaita už kovą — nauji įkainiai';
    const body = 'Labas,\n\nyour March statement is ready: 3.3369 EUR.\nĄČĘĖĮŠŲŪŽ — ačiū!\n';
    const res = await sendEmail(p.id, { subject, body });
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.success, true);
    assert.equal(res.body.code, 202);
    assert.equal(res.body.data.to, p.email);
    assert.equal(res.body.data.subject, subject);
    assert.equal(res.body.data.status, 'pending');

    const [got] = await waitFor('the SMTP server to receive it', () => smtp.to(p.email).length > 0 && smtp.to(p.email));
    assert.equal(got!.mail.subject, subject);
    assert.equal(got!.mail.text, body);
    assert.deepEqual(got!.rcpt, [p.email]);
    assert.equal(got!.mail.from?.value[0]?.address, 'ops@loyalty.test');
    assert.equal(got!.mail.from?.value[0]?.name, 'Loyalty Ops');
    assert.match(got!.mail.messageId ?? '', /^<[0-9a-f-]{36}@loyalty\.test>$/);

    const sent = await waitFor('status sent', async () => {
      const list = await emails(p.id);
      return list.data[0].status === 'sent' && list;
    });
    assert.equal(sent.data[0].attempts, 1);
    assert.equal(sent.data[0].last_error, null);
    assert.match(sent.data[0].sent_at, /^\d{4}-/);
    assert.equal(sent.meta.total, 1);
  });

  it('retries a temporary refusal and records the attempts', async () => {
    const p = await partnerWithEmail(t, 'flaky');
    assert.equal((await sendEmail(p.id, { subject: 'Retry me', body: 'Second time lucky' })).status, 202);
    await waitFor('delivery after a retry', () => smtp.to(p.email).length === 1);
    const list = await waitFor('status sent', async () => {
      const l = await emails(p.id);
      return l.data[0].status === 'sent' && l;
    });
    assert.equal(list.data[0].attempts, 2);
    const [got] = smtp.to(p.email);
    assert.equal(got!.mail.subject, 'Retry me');
    // The parser ends a text without a final line break with one.
    assert.equal(got!.mail.text, 'Second time lucky\n');
  });

  it('gives up at once on a permanent refusal (5xx): status failed with the reason', async () => {
    const p = await partnerWithEmail(t, 'bounce');
    assert.equal((await sendEmail(p.id, { subject: 'Nobody home', body: 'x' })).status, 202);
    const list = await waitFor('status failed', async () => {
      const l = await emails(p.id);
      return l.data[0].status === 'failed' && l;
    });
    assert.equal(list.data[0].attempts, 1);
    assert.match(list.data[0].last_error, /550/);
    assert.equal(smtp.to(p.email).length, 0);
  });

  it('honours Idempotency-Key: the same request queues one e-mail', async () => {
    const p = await partnerWithEmail(t, 'once');
    const first = await sendEmail(p.id, { subject: 'Once', body: 'Only once' }, { 'idempotency-key': 'mail-1' });
    const second = await sendEmail(p.id, { subject: 'Once', body: 'Only once' }, { 'idempotency-key': 'mail-1' });
    assert.equal(first.status, 202);
    assert.equal(second.status, 202);
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    assert.equal(second.body.data.id, first.body.data.id);
    await waitFor('delivery', () => smtp.to(p.email).length === 1);
    assert.equal((await emails(p.id)).meta.total, 1);
  });

  it('validates subject (1..200, one line) and body (1..50000); an unknown partner is 404', async () => {
    const p = await createPartner(t);
    const cases: Array<[unknown, string[]]> = [
      [{}, ['body', 'subject']],
      [{ subject: '', body: 'x' }, ['subject']],
      [{ subject: '   ', body: 'x' }, ['subject']],
      [{ subject: 's'.repeat(201), body: 'x' }, ['subject']],
      [{ subject: 'Hi\r\nBcc: victim@example.com', body: 'x' }, ['subject']],
      [{ subject: 'Hi', body: '' }, ['body']],
      [{ subject: 'Hi', body: 'b'.repeat(50_001) }, ['body']],
      [{ subject: 12, body: 'x' }, ['subject']],
      [{ subject: 'Hi\u0000', body: 'x' }, ['subject']],
      [{ subject: 'Hi', body: 'x\u0000y' }, ['body']],
    ];
    for (const [json, fields] of cases) assertShapeA(await sendEmail(p.id, json), fields, JSON.stringify(json).slice(0, 60));
    assert.equal((await sendEmail(p.id, { subject: 's'.repeat(200), body: 'b'.repeat(50_000) })).status, 202);
    const missing = await sendEmail(2_000_000_000, { subject: 'Hi', body: 'x' });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'RESOURCE_NOT_FOUND');
  });
});

describe('admin e-mail on the embedded default: .eml files under the data dir', () => {
  let t: TestApp;
  let dataDir: string;
  let admin: AdminFixture;

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'loyalty-mail-'));
    t = await startTestApp({ LOYALTY_DATA_DIR: dataDir }, database, { mail: FAST });
    admin = await createAdmin(t);
  });
  after(async () => {
    await t.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('writes the message as an .eml file that parses back to the same subject, body and recipient', async () => {
    const p = await partnerWithEmail(t, 'file');
    const res = await request(t.url, 'POST', `/lt/admin/partners/${p.id}/send-email`, {
      headers: bearer(admin.token),
      json: { subject: 'Sveiki, partneri', body: 'Tai bandomasis laiškas.\nAntra eilutė.\n' },
    });
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.message, 'El. laiškas priimtas siųsti');
    const mailDir = path.join(dataDir, 'mail');
    const files = await waitFor('an .eml file', async () => {
      const names = await readdir(mailDir).catch(() => []);
      return names.filter((n) => n.endsWith('.eml')).length > 0 && names.filter((n) => n.endsWith('.eml'));
    });
    assert.deepEqual(files, [`${String(res.body.data.id).padStart(8, '0')}.eml`]);
    const mail = await simpleParser(await readFile(path.join(mailDir, files[0]!)));
    assert.equal(mail.subject, 'Sveiki, partneri');
    assert.equal(mail.text, 'Tai bandomasis laiškas.\nAntra eilutė.\n');
    const to = Array.isArray(mail.to) ? mail.to[0] : mail.to;
    assert.equal(to?.value[0]?.address, p.email);
    assert.equal(mail.from?.value[0]?.address, 'no-reply@loyalty.localhost');
    const list = await waitFor('status sent', async () => {
      const l = (await request(t.url, 'GET', `/en/admin/partners/${p.id}/emails`, { headers: bearer(admin.token) })).body;
      return l.data[0].status === 'sent' && l;
    });
    assert.equal(list.data[0].attempts, 1);
  });
});
