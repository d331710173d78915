// The SMS dispatcher's hand-over rules (issue 10), against a real SMSC (the `smpp` package's
// server side, test/helpers/smsc.ts) and the real store, in both modes. Each test builds its
// own dispatcher over the app's database with a clock it moves (backoffs pass at once), short
// PDU timeouts and a log it reads; the app's own dispatcher is not started.
//   - a message with more parts than the window is handed over part by part, each once;
//   - a transient refusal mid-message: the accepted parts stay, the rest goes at the next attempt;
//   - transient failures are capped: then the message fails, refunded;
//   - a part written and never answered is in doubt: failed, refunded, never submitted again;
//   - a row that cannot be handed over neither rolls back nor holds up the others, and is logged.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { SimulatorCarrier } from '../src/modules/sms/carriers/simulator.js';
import { SmppCarrier } from '../src/modules/sms/carriers/smpp-carrier.js';
import type { Carrier } from '../src/modules/sms/carriers/carrier.js';
import { DISPATCH_ERROR, IN_DOUBT_ERROR, SmsDispatcher } from '../src/modules/sms/dispatcher.js';
import { SmsLifecycle } from '../src/modules/sms/sms-lifecycle.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createAdmin, type PartnerFixture } from './helpers/fixtures.js';
import { account, createSmsPartner, send } from './helpers/sms.js';
import { createTestSmsc, type TestSmsc } from './helpers/smsc.js';

interface LogLine {
  level: string;
  obj: Record<string, unknown>;
  msg: string | undefined;
}

const units = (eur: number) => Math.round(eur * 10_000);
/** Longer than any test runs: a retry happens only when the test moves the clock past it. */
const BACKOFF_MS = 3_600_000;

describe('SMS dispatcher hand-over', () => {
  let t: TestApp;
  let smsc: TestSmsc;
  let partner: PartnerFixture;
  let offset = 0;
  const clock = { now: () => new Date(Date.now() + offset) };
  let log: LogLine[] = [];
  let dispatcher: SmsDispatcher | undefined;
  let destinations = 0;

  before(async () => {
    smsc = await createTestSmsc();
    t = await startTestApp({ SMS_CARRIER: 'smpp', SMPP_URL: smsc.url() }, undefined, { workers: false });
    const admin = await createAdmin(t);
    partner = await createSmsPartner(t, admin, { balance: '10' });
  });
  afterEach(async () => {
    await dispatcher?.stop();
    dispatcher = undefined;
  });
  after(async () => {
    await t?.close();
    await smsc?.close();
  });

  const logger = () => {
    const push = (level: string) => (obj: object, msg?: string) => log.push({ level, obj: obj as Record<string, unknown>, msg });
    return { debug: push('debug'), info: push('info'), warn: push('warn'), error: push('error') };
  };

  /** A short PDU timeout only where a test waits for it: on a busy machine an answer can take a while. */
  function smpp(windowSize: number, pduTimeoutMs = 15_000): Carrier {
    return new SmppCarrier({
      url: smsc.url(),
      windowSize,
      throughputPerSecond: 1000,
      pduTimeoutMs,
      reconnect: { initialMs: 50, maxMs: 200 },
      log: logger(),
    });
  }

  async function startDispatcher(carrier: Carrier, maxAttempts = 3): Promise<SmsDispatcher> {
    log = [];
    const lifecycle = new SmsLifecycle(t.app.context.services.smsAccounts, t.app.context.services.webhooks);
    dispatcher = new SmsDispatcher(t.app.context.database, carrier, lifecycle, clock, {
      pollMs: 20,
      batchSize: 50,
      inDoubtAfterMs: 60_000,
      retryBackoffMs: [BACKOFF_MS],
      maxAttempts,
      log: logger(),
    });
    await dispatcher.start();
    return dispatcher;
  }

  async function rows<T>(query: ReturnType<typeof sql>): Promise<T[]> {
    return ((await t.app.context.database.db.execute(query)) as unknown as { rows: T[] }).rows;
  }

  async function message(id: string) {
    const [row] = await rows<{ status: string; error_message: string | null; dispatch_attempts: number; refunded: boolean }>(
      sql`select status, error_message, dispatch_attempts, refunded_at is not null as refunded from sms_messages where id = ${id}`,
    );
    assert.ok(row, id);
    return row;
  }

  async function until<T>(
    check: () => Promise<T>,
    what: string,
    timeoutMs = 10_000,
    state: () => Promise<string> = async () => '',
  ): Promise<NonNullable<T>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await check();
      if (v) return v as NonNullable<T>;
      if (Date.now() > deadline) assert.fail(`timed out waiting for ${what} ${await state()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  const nextDestination = () => `+3706130${String(destinations++).padStart(4, '0')}`;

  async function sendOk(text: string, destination = nextDestination()) {
    const res = await send(t, partner, { source: 'Shop', destination, message: text });
    assert.equal(res.status, 200, res.text);
    return { id: res.body.data.message_id as string, destination, parts: res.body.data.parts as number, cost: res.body.data.cost.amount as number };
  }

  /** submit_sm the SMSC accepted for a destination: [concatenation ref, part number] each. */
  const acceptedAt = (destination: string) =>
    smsc.submits.filter((s) => s.destination === destination.slice(1)).map((s) => [s.udh?.[3] ?? null, s.udh?.[5] ?? 1]);

  it('hands a message with more parts than the window over part by part, each part once, one concatenation reference', async () => {
    await startDispatcher(smpp(2));
    const m = await sendOk('w'.repeat(700));
    assert.equal(m.parts, 5);
    dispatcher!.wake();
    await until(async () => (await message(m.id)).status === 'sent', 'the message sent');

    const parts = acceptedAt(m.destination);
    assert.deepEqual(parts.map(([, no]) => no), [1, 2, 3, 4, 5]);
    assert.equal(new Set(parts.map(([ref]) => ref)).size, 1, 'one concatenation reference');
    const handovers = await rows<{ part_no: number; outcome: string; handed_at: string }>(
      sql`select part_no, outcome, handed_at::text from sms_handovers where message_id = ${m.id} order by id`,
    );
    assert.deepEqual(handovers.map((h) => [h.part_no, h.outcome]), [1, 2, 3, 4, 5].map((n) => [n, 'accepted']));
    // Marked as the window let them leave, not all at once.
    assert.ok(new Set(handovers.map((h) => h.handed_at)).size >= 3, JSON.stringify(handovers));
    assert.ok(smsc.stats.maxOutstanding <= 2);
  });

  it('keeps the parts accepted before a transient refusal and sends only the rest at the next attempt', async () => {
    await startDispatcher(smpp(1));
    const destination = nextDestination();
    smsc.failDestination(destination, 0x58, { after: 1, times: 1 }); // ESME_RTHROTTLED on part 2, once
    const m = await sendOk('r'.repeat(400), destination);
    assert.equal(m.parts, 3);
    dispatcher!.wake();
    const waiting = await until(async () => {
      const row = await message(m.id);
      return row.dispatch_attempts === 1 ? row : undefined;
    }, 'the refusal recorded');
    assert.equal(waiting.status, 'queued');
    assert.deepEqual(acceptedAt(destination).map(([, no]) => no), [1]);

    offset += BACKOFF_MS; // the backoff passes
    await until(async () => (await message(m.id)).status === 'sent', 'the message sent');
    const parts = acceptedAt(destination);
    assert.deepEqual(parts.map(([, no]) => no), [1, 2, 3], 'part 1 once, then parts 2 and 3');
    assert.equal(new Set(parts.map(([ref]) => ref)).size, 1, 'the later parts join the first');
  });

  it('fails a message after maxAttempts transient refusals, refunded', async () => {
    await startDispatcher(smpp(5), 3);
    const destination = nextDestination();
    smsc.failDestination(destination, 0x58);
    const before = await account(t, partner);
    const m = await sendOk('Throttled for good', destination);
    dispatcher!.wake();
    for (const attempt of [1, 2]) {
      await until(async () => (await message(m.id)).dispatch_attempts === attempt, `attempt ${attempt}`);
      offset += BACKOFF_MS;
    }
    const failed = await until(async () => {
      const row = await message(m.id);
      return row.status === 'failed' ? row : undefined;
    }, 'the message failed');
    assert.equal(failed.error_message, 'SMPP error 0x00000058 (ESME_RTHROTTLED) (gave up after 3 attempts)');
    assert.equal(failed.refunded, true);
    assert.equal(units((await account(t, partner)).balance), units(before.balance));
    assert.equal(smsc.submits.filter((s) => s.destination === destination.slice(1)).length, 0);
  });

  it('fails a part written and never answered as in doubt, refunded, and never submits it again', async () => {
    await startDispatcher(smpp(5, 300));
    const destination = nextDestination();
    smsc.failDestination(destination, 'no-response');
    const before = await account(t, partner);
    const submitsBefore = smsc.stats.submitSm;
    const m = await sendOk('Into the void', destination);
    dispatcher!.wake();
    const failed = await until(async () => {
      const row = await message(m.id);
      return row.status === 'failed' ? row : undefined;
    }, 'the message failed');
    assert.equal(failed.error_message, `${IN_DOUBT_ERROR} (no submit_sm_resp within 300 ms (the part may have been accepted))`);
    assert.equal(failed.refunded, true);
    assert.equal(units((await account(t, partner)).balance), units(before.balance));

    // Long after any backoff and the in-doubt limit: still that one submit_sm.
    offset += 2 * BACKOFF_MS;
    await dispatcher!.tick();
    await dispatcher!.tick();
    assert.equal(smsc.stats.submitSm - submitsBefore, 1);
    const [handover] = await rows<{ outcome: string }>(sql`select outcome from sms_handovers where message_id = ${m.id}`);
    assert.equal(handover?.outcome, 'unknown');
  });

  it('does not let receipts for parts it never learnt the id of hold up the others', async () => {
    await startDispatcher(smpp(5));
    const m = await sendOk('Receipt behind the strays');
    dispatcher!.wake();
    await until(async () => (await message(m.id)).status === 'sent', 'the message sent');
    const submit = smsc.submits.find((s) => s.destination === m.destination.slice(1))!;
    // A full batch of receipts for parts we have no id for (in doubt, or not ours), received
    // before the real one.
    await t.app.context.database.db.execute(sql`
      insert into sms_carrier_receipts (carrier_message_id, state, received_at)
      select 'stray-' || n, 'delivered', now() - interval '2 minutes' from generate_series(1, 200) n`);
    assert.equal(await smsc.deliverReceipt(submit.messageId, 'DELIVRD'), 0);
    await until(async () => (await message(m.id)).status === 'delivered', 'the message delivered');
    const [pending] = await rows<{ n: number }>(sql`select count(*)::int as n from sms_carrier_receipts where applied_at is null`);
    assert.equal(Number(pending!.n), 200, 'the strays stay for operators to see');
  });

  describe('a row that cannot be handed over', () => {
    const BAD = '+37061319999';
    afterEach(async () => {
      await t.app.context.database.db.execute(sql`drop trigger if exists sms_test_bad_row on sms_messages`);
    });

    async function badRow(when: 'claimed' | 'sent') {
      const condition = when === 'claimed' ? sql.raw('new.submitting_at is not null') : sql.raw(`new.status = 'sent'`);
      await t.app.context.database.db.execute(sql`
        create or replace function sms_test_bad_row() returns trigger language plpgsql as $$
        begin
          if new.destination = ${sql.raw(`'${BAD}'`)} and ${condition} then raise exception 'a bad row'; end if;
          return new;
        end $$`);
      await t.app.context.database.db.execute(
        sql`create trigger sms_test_bad_row before update on sms_messages for each row execute function sms_test_bad_row()`,
      );
    }

    async function check(carrier: Carrier, when: 'claimed' | 'sent') {
      await badRow(when);
      const before = await account(t, partner);
      // The bad row is the oldest: the head of the queue, in the same batch as the others.
      const bad = await sendOk(`Bad row ${when}`, BAD);
      const good = [];
      for (let i = 0; i < 5; i++) good.push(await sendOk(`Good row ${when} ${i}`));
      await startDispatcher(carrier, 3);
      for (const g of good) await until(async () => (await message(g.id)).status !== 'queued', `${g.id} handed over`);
      for (const g of good) {
        const row = await message(g.id);
        assert.equal(row.status, 'sent', JSON.stringify(row));
      }
      assert.equal((await message(bad.id)).status, 'queued');
      const logged = log.filter((l) => l.level === 'error' && l.obj.message_id === bad.id);
      assert.ok(logged.length > 0, `the failure is logged with the message id: ${JSON.stringify(log.map((l) => l.msg))}`);

      const state = async () => JSON.stringify({ row: await message(bad.id), log: log.map((l) => [l.level, l.msg, l.obj.message_id]) });
      for (const attempt of [1, 2]) {
        await until(async () => (await message(bad.id)).dispatch_attempts === attempt, `attempt ${attempt}`, 10_000, state);
        offset += BACKOFF_MS;
      }
      const failed = await until(
        async () => {
          const row = await message(bad.id);
          return row.status === 'failed' ? row : undefined;
        },
        'the bad row failed',
        10_000,
        state,
      );
      assert.equal(failed.error_message, `${DISPATCH_ERROR} (gave up after 3 attempts)`);
      assert.equal(failed.refunded, true);
      const charged = good.reduce((n, g) => n + units(g.cost), 0);
      assert.equal(units((await account(t, partner)).balance), units(before.balance) - charged);
    }

    it('over SMPP: the others are claimed and sent; it is postponed, then failed and refunded', async () => {
      await check(smpp(10), 'claimed');
    });

    it('with the simulator: the others are handed over and sent; it is postponed, then failed and refunded', async () => {
      await check(new SimulatorCarrier(t.app.context.database, { delayMs: 60_000, pollMs: 50, clock, log: logger() }), 'sent');
    });
  });
});
