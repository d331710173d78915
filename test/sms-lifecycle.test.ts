// The life of a message (spec: SMS message status; DESIGN.md §4), seen through
// GET /{locale}/sms/status/{message_id}: queued → sent → delivered with the built-in carrier
// simulator and its documented test numbers (…0001 fails "Unreachable destination", …0002 never
// gets a receipt and expires), validity and scheduling, refunds on expiry, multi-part messages.
//
// Two apps: `fast` runs the simulator with short delays (SMS_SIMULATOR_DELAY_MS=200,
// SMS_DISPATCH_POLL_MS=50); `held` polls only once a minute and its simulator never reports
// within the test, so the test decides when the dispatcher runs (dispatcher.tick()) and which
// receipts arrive (dispatcher.recordReceipt(), as a carrier would deliver them). The `held`
// tests run first, well before the first periodic tick a minute after start.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { createAdmin, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, request } from './helpers/http.js';
import { collectEvents, connectPusher, sentinel, subscribe, wsvendorAuth, type Pusher } from './helpers/realtime.js';
import type { Channel } from 'pusher-js';
import { SmsAccountsService } from '../src/modules/sms/sms-accounts.service.js';
import { SmsLifecycle } from '../src/modules/sms/sms-lifecycle.js';
import {
  account,
  createSmsPartner,
  ISO,
  LT_FAILS,
  LT_OK,
  LT_SILENT,
  messages,
  send,
  sendBody,
  status,
  waitForStatus,
} from './helpers/sms.js';

const units = (eur: number) => Math.round(eur * 10_000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();

const STATUS_KEYS = [
  'cost',
  'delivered_at',
  'destination',
  'error_message',
  'failed_at',
  'message_id',
  'scheduled',
  'sent_at',
  'source',
  'status',
  'validity',
];

async function rows<T>(t: TestApp, query: ReturnType<typeof sql>): Promise<T[]> {
  return ((await t.app.context.database.db.execute(query)) as unknown as { rows: T[] }).rows;
}

async function statusEvents(t: TestApp, messageId: string): Promise<string[]> {
  const r = await rows<{ status: string }>(t, sql`select status from sms_status_events where message_id = ${messageId} order by id`);
  return r.map((e) => e.status);
}

async function historyItem(t: TestApp, partner: PartnerFixture, messageId: string) {
  const list = (await messages(t, partner, '?per_page=100')).body.data as Array<Record<string, any>>;
  const item = list.find((m) => m.message_id === messageId);
  assert.ok(item, `message ${messageId} in the history`);
  return item;
}

async function sendOk(t: TestApp, partner: PartnerFixture, body: Record<string, unknown>) {
  const res = await send(t, partner, body);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.data.status, 'queued');
  return res.body.data as { message_id: string; cost: { amount: number }; parts: number };
}

let fast: TestApp;
let held: TestApp;
let databases: TestDatabase[] = [];

// The two databases open together (most of a test app's start-up); the apps start one after
// the other, each within Fastify's plugin timeout even on a busy machine.
before(async () => {
  databases = await Promise.all([createTestDatabase(), createTestDatabase()]);
  fast = await startTestApp({ SMS_SIMULATOR_DELAY_MS: '200', SMS_DISPATCH_POLL_MS: '50' }, databases[0]);
  // No periodic work within the test: the dispatcher runs after each send and when told to.
  held = await startTestApp({ SMS_SIMULATOR_DELAY_MS: '600000', SMS_DISPATCH_POLL_MS: '60000' }, databases[1]);
});
after(async () => {
  await fast?.close();
  await held?.close();
  for (const db of databases) await db.drop();
});

describe('SMS lifecycle driven by the test (dispatcher ticks and carrier receipts)', () => {
  let t: TestApp;
  let partner: PartnerFixture;
  const dispatcher = () => t.app.context.workers.smsDispatcher;

  before(async () => {
    t = held;
    const admin = await createAdmin(t);
    partner = await createSmsPartner(t, admin, { balance: '10' });
  });

  async function statusOf(id: string) {
    const res = await status(t, partner.apiKey, id);
    assert.equal(res.status, 200, res.text);
    return res.body.data as Record<string, any>;
  }

  async function partStates(id: string): Promise<string[]> {
    const parts = await rows<{ state: string }>(t, sql`select state from sms_message_parts where message_id = ${id} order by part_no`);
    return parts.map((p) => p.state);
  }

  it('a queued message whose validity passes before it is dispatched expires unsent, refunded', async () => {
    const before = await account(t, partner);
    const scheduled = inMs(2000);
    const validity = inMs(2500);
    const sent = await sendOk(t, partner, sendBody({ scheduled, validity }));
    const charged = await account(t, partner);
    assert.equal(units(before.balance) - units(charged.balance), units(sent.cost.amount));
    await sleep(Date.parse(validity) - Date.now() + 100);
    assert.equal((await statusOf(sent.message_id)).status, 'queued', 'nothing ran in between');

    await dispatcher().tick();
    const data = await statusOf(sent.message_id);
    assert.equal(data.status, 'expired');
    assert.equal(data.sent_at, null, 'never handed to the carrier');
    assert.equal(data.delivered_at, null);
    assert.deepEqual(await statusEvents(t, sent.message_id), ['queued', 'expired']);
    assert.equal(units((await account(t, partner)).balance), units(before.balance), 'refunded');
    assert.equal((await historyItem(t, partner, sent.message_id)).refunded, true);
    const handed = await rows(t, sql`select 1 from sms_simulator_submissions where message_id = ${sent.message_id}`);
    assert.equal(handed.length, 0, 'the carrier never saw it');
  });

  it('a sent message whose receipt does not come before its validity expires, refunded once', async () => {
    const before = await account(t, partner);
    const validity = inMs(2000);
    const sent = await sendOk(t, partner, sendBody({ validity }));
    await waitForStatus(t, partner.apiKey, sent.message_id, 'sent', 1500);
    await sleep(Date.parse(validity) - Date.now() + 100);
    await dispatcher().tick();
    const data = await statusOf(sent.message_id);
    assert.equal(data.status, 'expired');
    assert.match(data.sent_at, ISO);
    assert.equal(units((await account(t, partner)).balance), units(before.balance), 'refunded');

    // A late delivery receipt changes nothing: expired is final, the refund stays single.
    await dispatcher().recordReceipt({ carrierMessageId: `sim-${sent.message_id}-1`, state: 'delivered' });
    await dispatcher().tick();
    await dispatcher().tick();
    assert.equal((await statusOf(sent.message_id)).status, 'expired');
    assert.equal(units((await account(t, partner)).balance), units(before.balance));
    const refunds = await rows(t, sql`select 1 from sms_account_ledger where message_id = ${sent.message_id} and kind = 'refund'`);
    assert.equal(refunds.length, 1);
  });

  it('a multi-part message stays sent until every part is delivered', async () => {
    const sent = await sendOk(t, partner, sendBody({ message: 'Ž'.repeat(150) }));
    assert.equal(sent.parts, 3);
    await waitForStatus(t, partner.apiKey, sent.message_id, 'sent', 1000);

    for (const part of [1, 3]) {
      await dispatcher().recordReceipt({ carrierMessageId: `sim-${sent.message_id}-${part}`, state: 'delivered' });
    }
    await dispatcher().tick();
    for (let i = 0; i < 40 && (await partStates(sent.message_id)).join() !== 'delivered,sent,delivered'; i++) await sleep(25);
    assert.deepEqual(await partStates(sent.message_id), ['delivered', 'sent', 'delivered']);
    const partial = await statusOf(sent.message_id);
    assert.equal(partial.status, 'sent', 'two of three parts are not the message');
    assert.equal(partial.delivered_at, null);

    await dispatcher().recordReceipt({ carrierMessageId: `sim-${sent.message_id}-2`, state: 'delivered' });
    await dispatcher().tick();
    const data = await waitForStatus(t, partner.apiKey, sent.message_id, 'delivered', 2000);
    assert.match(data.delivered_at, ISO);
  });

  it('a multi-part message fails when any part fails, with the carrier reason; the charge stays', async () => {
    const before = await account(t, partner);
    const sent = await sendOk(t, partner, sendBody({ message: 'b'.repeat(200) }));
    assert.equal(sent.parts, 2);
    await waitForStatus(t, partner.apiKey, sent.message_id, 'sent', 1000);
    await dispatcher().recordReceipt({ carrierMessageId: `sim-${sent.message_id}-1`, state: 'delivered' });
    await dispatcher().recordReceipt({ carrierMessageId: `sim-${sent.message_id}-2`, state: 'failed', error: 'Absent subscriber' });
    await dispatcher().tick();
    const data = await waitForStatus(t, partner.apiKey, sent.message_id, 'failed', 2000);
    assert.equal(data.error_message, 'Absent subscriber');
    assert.match(data.failed_at, ISO);
    assert.equal(data.delivered_at, null);
    assert.equal(units(before.balance) - units((await account(t, partner)).balance), units(sent.cost.amount));
  });

  it('records a carrier report of 25,000 receipts at once (more than one statement may carry)', async () => {
    const receipts = Array.from({ length: 25_000 }, (_, i) => ({ carrierMessageId: `bulk-${i}`, state: 'delivered' as const }));
    await dispatcher().recordReceipt(receipts);
    const [counted] = await rows<{ n: number }>(t, sql`select count(*)::int as n from sms_carrier_receipts where carrier_message_id like 'bulk-%'`);
    assert.equal(counted!.n, 25_000);
    // Strays for no part of ours: removed, so they do not stand in front of the other tests' receipts.
    await rows(t, sql`delete from sms_carrier_receipts where carrier_message_id like 'bulk-%'`);
  });

  it('a scheduled message is not dispatched early, even when the dispatcher runs', async () => {
    const sent = await sendOk(t, partner, sendBody({ scheduled: inMs(3600_000) }));
    await dispatcher().tick();
    await dispatcher().tick();
    const data = await statusOf(sent.message_id);
    assert.equal(data.status, 'queued');
    assert.equal(data.sent_at, null);
  });
});

describe('sms.status events on the partner channel (pusher-js)', () => {
  let t: TestApp;
  let partner: PartnerFixture;
  let pusher: Pusher;
  let channel: Channel;
  let events: Array<Record<string, any>>;
  const dispatcher = () => t.app.context.workers.smsDispatcher;

  before(async () => {
    t = held;
    const admin = await createAdmin(t);
    partner = await createSmsPartner(t, admin, { balance: '10' });
    pusher = await connectPusher(t, wsvendorAuth(t, partner.apiKey));
    channel = await subscribe(pusher, `private-partner.${partner.id}`);
    events = collectEvents(channel, 'sms.status');
  });
  after(() => pusher?.disconnect());

  /** The events for one message, once everything published so far has arrived. */
  async function eventsFor(id: string) {
    await sentinel(t, channel);
    return events.filter((e) => e.message_id === id);
  }

  it('announces each committed change once, with the status fields of the history item', async () => {
    const sent = await sendOk(t, partner, sendBody());
    await waitForStatus(t, partner.apiKey, sent.message_id, 'sent', 1500);
    const onSent = await eventsFor(sent.message_id);
    assert.deepEqual(onSent.map((e) => e.status), ['sent'], 'the send itself answers queued; hand-over is announced');
    const { message: _m, parts: _p, encoding: _e, transliterated: _t, created_at: _c, ...fields } = await historyItem(t, partner, sent.message_id);
    assert.deepEqual(onSent[0], fields);

    await dispatcher().recordReceipt({ carrierMessageId: `sim-${sent.message_id}-1`, state: 'delivered' });
    await dispatcher().tick();
    await waitForStatus(t, partner.apiKey, sent.message_id, 'delivered', 2000);
    const all = await eventsFor(sent.message_id);
    assert.deepEqual(all.map((e) => e.status), ['sent', 'delivered']);
    assert.match(all[1]!.delivered_at, ISO);
    assert.equal(all[1]!.refunded, false);
  });

  it('announces an expiry with the refund', async () => {
    const validity = inMs(1500);
    const sent = await sendOk(t, partner, sendBody({ scheduled: inMs(1000), validity }));
    await sleep(Date.parse(validity) - Date.now() + 100);
    await dispatcher().tick();
    const seen = await eventsFor(sent.message_id);
    assert.deepEqual(seen.map((e) => [e.status, e.refunded]), [['expired', true]], 'one event, in its final state');
  });

  it('announces nothing for a change that rolled back, or a savepoint that did', async () => {
    const db = t.app.context.database.db;
    const announced: string[] = [];
    const lifecycle = new SmsLifecycle(new SmsAccountsService(db, {}), { enqueue: async () => 'unused: no receipt asked' }, (rows) =>
      announced.push(...rows.map((row) => `${row.id}:${row.status}`)),
    );
    const sent = await sendOk(t, partner, sendBody({ scheduled: inMs(3600_000) }));
    const id = sent.message_id;

    await assert.rejects(
      lifecycle.transaction(db, async (tx) => {
        assert.ok(await lifecycle.transition(tx, id, 'failed', { error: 'test' }));
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    await lifecycle.transaction(db, async (tx) => {
      await lifecycle
        .savepoint(tx, async (sp) => {
          await lifecycle.transition(sp, id, 'failed', { error: 'test' });
          throw new Error('savepoint rolled back');
        })
        .catch(() => undefined);
    });
    assert.deepEqual(announced, []);
    assert.equal((await status(t, partner.apiKey, id)).body.data.status, 'queued');

    await lifecycle.transaction(db, (tx) => lifecycle.transition(tx, id, 'failed', { error: 'test' }));
    assert.deepEqual(announced, [`${id}:failed`]);
  });
});

describe('SMS lifecycle with the carrier simulator', () => {
  let t: TestApp;
  let partner: PartnerFixture;

  before(async () => {
    t = fast;
    const admin = await createAdmin(t);
    partner = await createSmsPartner(t, admin, { balance: '10' });
  });

  it('a normal number goes queued → sent → delivered, with the spec status fields', async () => {
    const sent = await sendOk(t, partner, sendBody({ message: 'Delivered please' }));
    const data = await waitForStatus(t, partner.apiKey, sent.message_id, 'delivered', 5000);
    const res = await status(t, partner.apiKey, sent.message_id);
    assert.equal(res.status, 200);
    assert.equal(res.body.success, true);
    assert.equal(res.body.code, 200);
    assert.deepEqual(Object.keys(res.body.data).sort(), STATUS_KEYS);
    assert.equal(data.message_id, sent.message_id);
    assert.equal(data.source, 'Shop');
    assert.equal(data.destination, LT_OK);
    assert.match(data.sent_at, ISO);
    assert.match(data.delivered_at, ISO);
    assert.ok(Date.parse(data.delivered_at) >= Date.parse(data.sent_at));
    assert.equal(data.failed_at, null);
    assert.equal(data.scheduled, null);
    assert.equal(data.validity, null);
    assert.equal(data.error_message, null);
    assert.deepEqual(data.cost, { amount: 0.029, currency: 'EUR' });
    assert.deepEqual(await statusEvents(t, sent.message_id), ['queued', 'sent', 'delivered']);
  });

  it('reports status in either locale; the data is the same', async () => {
    const sent = await sendOk(t, partner, sendBody());
    await waitForStatus(t, partner.apiKey, sent.message_id, 'delivered', 5000);
    const en = await request(t.url, 'GET', `/en/sms/status/${sent.message_id}`, { headers: apiHeaders(partner.apiKey) });
    const lt = await request(t.url, 'GET', `/lt/sms/status/${sent.message_id}`, { headers: apiHeaders(partner.apiKey) });
    assert.equal(lt.status, 200);
    assert.deepEqual(lt.body.data, en.body.data);
  });

  it('a number ending 0001 fails with "Unreachable destination"; the charge stays (the carrier had it)', async () => {
    const before = await account(t, partner);
    const sent = await sendOk(t, partner, sendBody({ destination: LT_FAILS }));
    const data = await waitForStatus(t, partner.apiKey, sent.message_id, 'failed', 5000);
    assert.equal(data.error_message, 'Unreachable destination');
    assert.match(data.failed_at, ISO);
    assert.match(data.sent_at, ISO);
    assert.equal(data.delivered_at, null);
    // A refund would have come with the failure, in its transaction.
    assert.deepEqual(await statusEvents(t, sent.message_id), ['queued', 'sent', 'failed']);
    const afterward = await account(t, partner);
    assert.equal(units(before.balance) - units(afterward.balance), units(sent.cost.amount), 'charged, not refunded');
    assert.equal((await historyItem(t, partner, sent.message_id)).refunded, false);
  });

  it('a number ending 0002 stays sent until its validity passes, then expires and is refunded', async () => {
    const before = await account(t, partner);
    const validity = inMs(2000);
    const sent = await sendOk(t, partner, sendBody({ destination: LT_SILENT, validity }));
    await waitForStatus(t, partner.apiKey, sent.message_id, 'sent', 1500);
    const charged = await account(t, partner);
    assert.equal(units(before.balance) - units(charged.balance), units(sent.cost.amount));

    const data = await waitForStatus(t, partner.apiKey, sent.message_id, 'expired', 5000);
    assert.equal(data.validity, validity);
    assert.match(data.sent_at, ISO);
    assert.equal(data.delivered_at, null);
    assert.equal(data.failed_at, null);
    assert.deepEqual(await statusEvents(t, sent.message_id), ['queued', 'sent', 'expired']);
    const refunded = await account(t, partner);
    assert.equal(units(refunded.balance), units(before.balance), 'the charge is given back');
    const item = await historyItem(t, partner, sent.message_id);
    assert.equal(item.refunded, true);
    assert.match(item.expired_at, ISO);
    assert.ok(Date.parse(item.expired_at) >= Date.parse(validity), `expired ${item.expired_at}, validity ${validity}`);
  });

  it('a number ending 0002 gets no receipt: still sent once a message sent after it has been reported', async () => {
    const silent = await sendOk(t, partner, sendBody({ destination: LT_SILENT, validity: inMs(3600_000) }));
    await waitForStatus(t, partner.apiKey, silent.message_id, 'sent', 5000);
    // The simulator reports submissions in the order they fall due, and the dispatcher
    // applies the receipts recorded with (or before) the later message's together with it:
    // by the time the later one is delivered, a receipt for the silent one would have been
    // applied. Its validity is an hour away, so "sent" holds however slow the machine.
    const later = await sendOk(t, partner, sendBody());
    await waitForStatus(t, partner.apiKey, later.message_id, 'delivered', 5000);
    const still = await status(t, partner.apiKey, silent.message_id);
    assert.equal(still.body.data.status, 'sent', still.text);
    assert.equal(still.body.data.delivered_at, null);
    assert.deepEqual(await statusEvents(t, silent.message_id), ['queued', 'sent']);
    // And the simulator is done with it (it never looks at a reported submission again).
    const [handed] = await rows<{ reported: boolean }>(t, sql`select reported_at is not null as reported from sms_simulator_submissions where message_id = ${silent.message_id}`);
    assert.equal(handed?.reported, true, 'the simulator has been through it');
    const receipts = await rows(t, sql`select 1 from sms_carrier_receipts where carrier_message_id like ${`sim-${silent.message_id}-%`}`);
    assert.equal(receipts.length, 0);
  });

  it('a scheduled message stays queued until its time, then is sent and delivered', async () => {
    const scheduled = inMs(1500);
    const sent = await sendOk(t, partner, sendBody({ scheduled }));
    // A second one an hour ahead is still queued however slow the machine: checked after
    // the first was sent, so the dispatcher has passed over it many times by then.
    const farAhead = inMs(3600_000);
    const later = await sendOk(t, partner, sendBody({ scheduled: farAhead }));
    const data = await waitForStatus(t, partner.apiKey, sent.message_id, 'delivered', 5000);
    assert.ok(Date.parse(data.sent_at) >= Date.parse(scheduled), `sent ${data.sent_at}, scheduled ${scheduled}`);
    assert.equal(data.scheduled, scheduled);
    const early = await status(t, partner.apiKey, later.message_id);
    assert.equal(early.body.data.scheduled, farAhead);
    assert.equal(early.body.data.status, 'queued', early.text);
    assert.equal(early.body.data.sent_at, null);
  });

  it('a multi-part message is delivered once all its parts are', async () => {
    const sent = await sendOk(t, partner, sendBody({ message: 'a'.repeat(400) }));
    assert.equal(sent.parts, 3);
    const data = await waitForStatus(t, partner.apiKey, sent.message_id, 'delivered', 5000);
    assert.deepEqual(data.cost, { amount: 0.087, currency: 'EUR' });
    const parts = await rows<{ state: string }>(t, sql`select state from sms_message_parts where message_id = ${sent.message_id} order by part_no`);
    assert.deepEqual(
      parts.map((p) => p.state),
      ['delivered', 'delivered', 'delivered'],
    );
  });

  it('answers an unknown message id with 404, success false and a message', async () => {
    for (const id of ['msg_doesnotexist', 'x', 'a'.repeat(100)]) {
      const res = await status(t, partner.apiKey, id);
      assert.equal(res.status, 404, res.text);
      assert.equal(res.body.success, false);
      assert.equal(typeof res.body.message, 'string');
      assert.ok(res.body.message.length > 0);
      assert.equal(res.body.data, undefined);
    }
    const lt = await request(t.url, 'GET', '/lt/sms/status/msg_doesnotexist', { headers: apiHeaders(partner.apiKey) });
    const en = await status(t, partner.apiKey, 'msg_doesnotexist');
    assert.equal(lt.status, 404);
    assert.notEqual(lt.body.message, en.body.message);
  });

  it('requires API credentials', async () => {
    const sent = await sendOk(t, partner, sendBody());
    const res = await request(t.url, 'GET', `/en/sms/status/${sent.message_id}`);
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 1004);
  });
});
