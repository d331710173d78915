// Partner events (DESIGN.md §14) over real HTTP: subscriptions CRUD, the test ping, and every
// event type arriving at a receiving server started here — once, signed with the partner's
// webhook secret, with the resource as the API shows it and a `sequence` that increases in
// the order the partner's events happen; nothing for a change that did not happen; retries
// with the same event id; deliveries independent of each other (a refused event holds back
// nothing), a quarter of the delivery slots at most per partner, pings sent once and at most
// 10 a minute.
import assert from 'node:assert/strict';
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { EVENT_TYPES } from '../src/modules/webhooks/webhooks.events.js';
import { webhookDeliveries, webhookSubscriptions } from '../src/modules/webhooks/webhooks.tables.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { fixtureFeed, importFeed } from './helpers/catalog.js';
import { createAdmin, createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { award, createCustomer, createProgramme, createShop, joinProgramme } from './helpers/loyalty.js';
import { claimCoupon, claimReward, couponAction, createGame, createOffer, progress, startGame } from './helpers/engagement.js';
import { createSmsPartner, send, sendBody, status, waitForStatus } from './helpers/sms.js';

const SUBSCRIPTION_KEYS = ['created_at', 'description', 'events', 'id', 'is_active', 'url'];

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
  at: number;
}

/**
 * The partner's receiver. /ok/* answers 200; /flaky/* 500 on its first request, then 200;
 * /down/* 503 always;
 * /poison/* 500 to an event whose data.reason is "poison", 200 to the others; /hang/* never answers.
 */
class Receiver {
  readonly requests: Received[] = [];
  private readonly seen = new Map<string, number>();
  private server!: http.Server;
  base = '';

  async start() {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '';
        const body = Buffer.concat(chunks).toString('utf8');
        this.requests.push({ path, headers: req.headers, body, json: JSON.parse(body), at: Date.now() });
        const n = (this.seen.get(path) ?? 0) + 1;
        this.seen.set(path, n);
        let code = 200;
        if (path.startsWith('/flaky/') && n === 1) code = 500;
        if (path.startsWith('/down/')) code = 503;
        if (path.startsWith('/poison/') && JSON.parse(body).data?.reason === 'poison') code = 500;
        if (path.startsWith('/hang/')) return; // never answers (timed out by WEBHOOK_TIMEOUT_MS)
        res.writeHead(code).end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  to(path: string) {
    return this.requests.filter((r) => r.path === path);
  }

  async stop() {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const receiver = new Receiver();
let t: TestApp;
let n = 0;
const path = (kind = 'ok') => `/${kind}/r${++n}`;

function subscribe(p: PartnerFixture, json: Record<string, unknown>) {
  return request(t.url, 'POST', '/en/partners/webhooks', { headers: bearer(p.token), json });
}

async function subscribed(p: PartnerFixture, events: string[], kind = 'ok', extra: Record<string, unknown> = {}) {
  const at = path(kind);
  const res = await subscribe(p, { url: `${receiver.base}${at}`, events, ...extra });
  assert.equal(res.status, 201, res.text);
  return { ...res.body.data, path: at } as { id: number; path: string; events: string[] };
}

async function secretOf(p: PartnerFixture): Promise<string> {
  return (await request(t.url, 'GET', '/en/partners/webhook-secret', { headers: bearer(p.token) })).body.data.secret;
}

function assertSigned(r: Received, secret: string) {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(r.headers['x-loyalty-signature']));
  assert.ok(m, `signature header ${r.headers['x-loyalty-signature']}`);
  const expected = createHmac('sha256', secret).update(`${m[1]}.${r.body}`).digest();
  assert.ok(timingSafeEqual(Buffer.from(m[2]!, 'hex'), expected), 'signature verifies with the secret');
}

/** The partner's deliveries (newest first), all of them. */
async function deliveries(p: PartnerFixture): Promise<any[]> {
  const res = await request(t.url, 'GET', '/en/partners/webhook-deliveries?per_page=100', { headers: bearer(p.token) });
  assert.equal(res.status, 200, res.text);
  return res.body.data;
}

/**
 * Waits for `count` events at `at`, then checks each: signed, headers matching the body, the
 * envelope's keys in their order, an integer `sequence`. Returned ordered by `sequence`, as a
 * receiver orders them (deliveries are independent, so they may arrive in any order): where a
 * test expects the order its changes were made in, the sequence increases in that order.
 */
async function eventsAt(p: PartnerFixture, at: string, count = 1): Promise<any[]> {
  const got = await waitFor(`${count} event(s) at ${at}`, () => receiver.to(at).length >= count && receiver.to(at));
  const secret = await secretOf(p);
  for (const r of got) {
    assertSigned(r, secret);
    assert.deepEqual(Object.keys(r.json), ['id', 'type', 'sequence', 'created_at', 'partner_id', 'data']);
    assert.equal(JSON.stringify(r.json), r.body, 'the body is plain JSON, as JSON.stringify writes it');
    assert.ok(Number.isSafeInteger(r.json.sequence) && r.json.sequence > 0, `sequence ${r.json.sequence}`);
    assert.equal(r.headers['x-loyalty-event-id'], r.json.id);
    assert.equal(r.headers['x-loyalty-event'], r.json.type);
    assert.equal(r.json.partner_id, p.id);
  }
  return got.map((r) => r.json).sort((a, b) => a.sequence - b.sequence);
}

/** Nothing of `type` was written for the subscription (deliveries are written with the change, so none is on its way either). */
async function assertNoDelivery(p: PartnerFixture, subscriptionId: number, type?: string) {
  const list = await deliveries(p);
  const found = list.filter((d) => d.subscription_id === subscriptionId && (type === undefined || d.event_type === type));
  assert.deepEqual(found, [], `deliveries to subscription ${subscriptionId}`);
}

before(async () => {
  await receiver.start();
  t = await startTestApp(
    { ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_MS: '1500', SMS_SIMULATOR_DELAY_MS: '50', SMS_DISPATCH_POLL_MS: '50' },
    undefined,
    { webhooks: { backoffMs: [300, 300, 300], pollIntervalMs: 10_000 } },
  );
});
after(async () => {
  await t.close();
  await receiver.stop();
});

describe('subscriptions', () => {
  it('are created with defaults, listed, changed in part and deleted', async () => {
    const p = await createPartner(t);
    const res = await subscribe(p, { url: `${receiver.base}/ok/crud`, events: ['coupon.redeemed', 'transaction.created'] });
    assert.equal(res.status, 201, res.text);
    const sub = res.body.data;
    assert.deepEqual(Object.keys(sub).sort(), SUBSCRIPTION_KEYS);
    assert.equal(sub.is_active, true);
    assert.equal(sub.description, null);
    assert.deepEqual(sub.events, ['coupon.redeemed', 'transaction.created']);

    const list = await request(t.url, 'GET', '/en/partners/webhooks', { headers: bearer(p.token) });
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.data, [sub]);

    const put = await request(t.url, 'PUT', `/en/partners/webhooks/${sub.id}`, { headers: bearer(p.token), json: { description: 'CRM', is_active: false } });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.body.data, { ...sub, description: 'CRM', is_active: false });
    const put2 = await request(t.url, 'PUT', `/en/partners/webhooks/${sub.id}`, { headers: bearer(p.token), json: { events: ['*'] } });
    assert.deepEqual(put2.body.data, { ...sub, description: 'CRM', is_active: false, events: ['*'] });

    const del = await request(t.url, 'DELETE', `/en/partners/webhooks/${sub.id}`, { headers: bearer(p.token) });
    assert.equal(del.status, 200, del.text);
    assert.equal((await request(t.url, 'GET', `/en/partners/webhooks/${sub.id}`, { headers: bearer(p.token) })).status, 404);
    assert.equal((await request(t.url, 'DELETE', `/en/partners/webhooks/${sub.id}`, { headers: bearer(p.token) })).status, 404);
    assert.deepEqual((await request(t.url, 'GET', '/en/partners/webhooks', { headers: bearer(p.token) })).body.data, []);
  });

  it('accept every listed event name and "*"; refuse an unknown one (422 on events) and a bad URL (422 on url)', async () => {
    const p = await createPartner(t);
    const all = await subscribe(p, { url: `${receiver.base}/ok/all`, events: [...EVENT_TYPES] });
    assert.equal(all.status, 201, all.text);
    assert.ok(EVENT_TYPES.includes('card.tier_changed'));
    const bad = await subscribe(p, { url: `${receiver.base}/ok/x`, events: ['transaction.created', 'card.deleted'] });
    assert.equal(bad.status, 422, bad.text);
    assert.deepEqual(Object.keys(bad.body.errors), ['events']);
    const ftp = await subscribe(p, { url: 'ftp://example.com/x', events: ['*'] });
    assert.equal(ftp.status, 422, ftp.text);
    assert.deepEqual(Object.keys(ftp.body.errors), ['url']);
    const none = await subscribe(p, { url: `${receiver.base}/ok/x`, events: [] });
    assert.equal(none.status, 422, none.text);
    const put = await request(t.url, 'PUT', `/en/partners/webhooks/${all.body.data.id}`, { headers: bearer(p.token), json: { events: ['nope'] } });
    assert.equal(put.status, 422, put.text);
    assert.deepEqual(Object.keys(put.body.errors), ['events']);
    const after = await request(t.url, 'GET', `/en/partners/webhooks/${all.body.data.id}`, { headers: bearer(p.token) });
    assert.deepEqual(after.body.data.events, [...EVENT_TYPES], 'a refused change changes nothing');
  });

  it('are at most 10 per partner: the 11th is 422 QUOTA_EXCEEDED meta {limit}, the status the code has everywhere', async () => {
    const p = await createPartner(t);
    for (let i = 0; i < 10; i++) assert.equal((await subscribe(p, { url: `${receiver.base}/ok/q${i}`, events: ['*'] })).status, 201);
    const eleventh = await subscribe(p, { url: `${receiver.base}/ok/q10`, events: ['*'] });
    assert.equal(eleventh.status, 422, eleventh.text);
    assert.equal(eleventh.body.code, 'QUOTA_EXCEEDED');
    assert.deepEqual(eleventh.body.errors, [{ field: 'id', code: 'QUOTA_EXCEEDED', message: 'A partner has at most 10 webhook subscriptions', meta: { limit: 10 } }]);
    assert.equal((await request(t.url, 'GET', '/en/partners/webhooks', { headers: bearer(p.token) })).body.data.length, 10);
    const other = await createPartner(t);
    assert.equal((await subscribe(other, { url: `${receiver.base}/ok/q`, events: ['*'] })).status, 201, 'the limit is per partner');
  });

  it("keep partners apart: another partner's subscription is 404 for GET, PUT, DELETE and test", async () => {
    const a = await createPartner(t);
    const b = await createPartner(t);
    const sub = await subscribed(a, ['*']);
    for (const [method, p, json] of [
      ['GET', `/en/partners/webhooks/${sub.id}`, undefined],
      ['PUT', `/en/partners/webhooks/${sub.id}`, { is_active: false }],
      ['DELETE', `/en/partners/webhooks/${sub.id}`, undefined],
      ['POST', `/en/partners/webhooks/${sub.id}/test`, undefined],
    ] as const) {
      const res = await request(t.url, method, p, { headers: bearer(b.token), ...(json ? { json } : {}) });
      assert.equal(res.status, 404, `${method} ${p}: ${res.text}`);
      assert.equal(res.body.code, 'RESOURCE_NOT_FOUND');
    }
    assert.deepEqual((await request(t.url, 'GET', '/en/partners/webhooks', { headers: bearer(b.token) })).body.data, []);
    const mine = await request(t.url, 'GET', `/en/partners/webhooks/${sub.id}`, { headers: bearer(a.token) });
    assert.equal(mine.body.data.is_active, true, "B's PUT changed nothing");
    assert.equal(receiver.to(sub.path).length, 0, "B's test sent nothing");
  });

  it('need the partner JWT', async () => {
    const p = await createPartner(t);
    for (const [method, at] of [
      ['GET', '/en/partners/webhooks'],
      ['POST', '/en/partners/webhooks'],
      ['PUT', '/en/partners/webhooks/1'],
      ['DELETE', '/en/partners/webhooks/1'],
      ['POST', '/en/partners/webhooks/1/test'],
    ] as const) {
      assert.equal((await request(t.url, method, at)).status, 401, `${method} ${at}`);
      const api = await request(t.url, method, at, { headers: apiHeaders(p.apiKey) });
      assert.ok(api.status === 401 || api.status === 403, `${method} ${at} with API credentials: ${api.status}`);
    }
  });

  it('test: a ping goes at once, whatever the event list or state, and is listed among the deliveries', async () => {
    const p = await createPartner(t);
    const sub = await subscribed(p, ['import.finished'], 'ok', { is_active: false });
    const res = await request(t.url, 'POST', `/en/partners/webhooks/${sub.id}/test`, { headers: bearer(p.token) });
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.data.event_type, 'ping');
    assert.equal(res.body.data.subscription_id, sub.id);
    const [ping] = await eventsAt(p, sub.path);
    assert.equal(ping.type, 'ping');
    assert.deepEqual(ping.data, { subscription_id: sub.id });
    assert.equal(ping.id, res.body.data.event_id);
    await waitFor('the ping delivered', async () => (await deliveries(p)).find((d) => d.event_id === ping.id && d.status === 'delivered'));
  });
});

describe('private addresses (ALLOW_PRIVATE_URLS=false)', () => {
  let strict: TestApp;
  before(async () => {
    strict = await startTestApp({ ALLOW_PRIVATE_URLS: 'false' });
  });
  after(async () => strict.close());

  it('refuses a loopback or private URL with 422 on url, as the SMS receipt URL', async () => {
    const p = await createPartner(strict);
    for (const url of ['http://127.0.0.1:9/x', 'http://localhost/x', 'http://10.0.0.1/x', 'http://[::1]/x', 'http://169.254.169.254/latest']) {
      const res = await request(strict.url, 'POST', '/en/partners/webhooks', { headers: bearer(p.token), json: { url, events: ['*'] } });
      assert.equal(res.status, 422, `${url}: ${res.text}`);
      assert.deepEqual(Object.keys(res.body.errors), ['url'], url);
    }
    const ok = await request(strict.url, 'POST', '/en/partners/webhooks', { headers: bearer(p.token), json: { url: 'https://93.184.215.14/hook', events: ['*'] } });
    assert.equal(ok.status, 201, ok.text);
    const put = await request(strict.url, 'PUT', `/en/partners/webhooks/${ok.body.data.id}`, { headers: bearer(p.token), json: { url: 'http://127.0.0.1/x' } });
    assert.equal(put.status, 422, put.text);
    assert.deepEqual(Object.keys(put.body.errors), ['url']);
  });
});

describe('events', () => {
  let p: PartnerFixture;
  let shop: number;
  let programme: number;
  const rules = { pointsPerCurrency: '1', currencyAmount: '1', pointsPerVisit: 0, minPointsPerPurchase: 0, minPointsForRedemption: 1 };

  before(async () => {
    p = await createPartner(t);
    shop = await createShop(t, p.id);
    programme = await createProgramme(t, p.id, rules);
  });

  const newCard = async () => (await joinProgramme(t, await createCustomer(t), programme)).id;
  const txDetails = async (id: number) => {
    const res = await request(t.url, 'GET', `/en/shop/transactions/${id}`, { headers: apiHeaders(p.apiKey) });
    assert.equal(res.status, 200, res.text);
    return res.body.data;
  };

  it('transaction.created: an award arrives once, signed, with the entry as the API shows it; one event id for every subscription', async () => {
    const all = await subscribed(p, ['*']);
    const some = await subscribed(p, ['transaction.created']);
    const other = await subscribed(p, ['coupon.redeemed']);
    const card = await newCard();
    const res = await award(t, p, { card_id: card, shop_id: shop, amount: 12, receipt_number: 'R-1' });
    assert.equal(res.status, 201, res.text);
    const [e1] = (await eventsAt(p, all.path, 2)).filter((e) => e.type === 'transaction.created');
    const [e2] = await eventsAt(p, some.path);
    assert.equal(e1.id, e2.id, 'one event id shared by the subscriptions');
    assert.deepEqual(e1.data, res.body.data);
    assert.deepEqual(e2, e1);
    // GET shows the same entry (with its returns besides).
    const { returns, ...shown } = await txDetails(res.body.data.id);
    assert.deepEqual(returns, []);
    assert.deepEqual(e1.data, shown);
    await assertNoDelivery(p, other.id);
    // Each arrives once: wait for the deliveries to settle, then count.
    await waitFor('settled', async () => (await deliveries(p)).filter((d) => d.event_id === e1.id && d.status === 'delivered').length === 2);
    assert.equal(receiver.to(some.path).length, 1);
    await request(t.url, 'DELETE', `/en/partners/webhooks/${all.id}`, { headers: bearer(p.token) });
    await request(t.url, 'DELETE', `/en/partners/webhooks/${some.id}`, { headers: bearer(p.token) });
    await request(t.url, 'DELETE', `/en/partners/webhooks/${other.id}`, { headers: bearer(p.token) });
  });

  it('nothing for a refused award, a rolled-back bulk adjustment, a failed redeem, or to an inactive subscription', async () => {
    const sub = await subscribed(p, ['*']);
    const off = await subscribed(p, ['*'], 'ok', { is_active: false });
    const card = await newCard();
    const before = (await deliveries(p)).length;
    // A refused award (an unknown shop; a receipt used before).
    assert.equal((await award(t, p, { card_id: card, shop_id: 999_999, amount: 5 })).status, 404);
    assert.equal((await award(t, p, { card_id: card, shop_id: shop, amount: 5, receipt_number: 'dup' })).status, 201);
    assert.equal((await award(t, p, { card_id: card, shop_id: shop, amount: 5, receipt_number: 'dup' })).status, 409);
    // A bulk adjustment whose second row fails: the first row's entry (and event) roll back.
    const bulk = await request(t.url, 'POST', '/en/shop/points/bulk', {
      headers: apiHeaders(p.apiKey),
      json: { rows: [{ card_id: card, points: 5, reason: 'a' }, { card_id: card, points: -1_000_000, reason: 'b' }] },
    });
    assert.ok(bulk.status >= 400 && bulk.status < 500, bulk.text);
    // A failed redeem: a coupon used already, an unknown coupon.
    const offer = await createOffer(t, p, { partner_card_id: programme });
    const customer = await createCustomer(t);
    await joinProgramme(t, customer, programme);
    const coupon = await claimCoupon(t, customer, offer.id);
    assert.equal((await couponAction(t, p, coupon.id, 'redeem', { shop_id: shop })).status, 200);
    assert.equal((await couponAction(t, p, coupon.id, 'redeem', { shop_id: shop })).status, 409);
    assert.equal((await couponAction(t, p, 999_999, 'redeem', { shop_id: shop })).status, 404);

    const written = (await deliveries(p)).slice(0, (await deliveries(p)).length - before);
    const types = written.filter((d) => d.subscription_id === sub.id).map((d) => d.event_type).sort();
    // The customer's join (card.created), the one award that happened, the claim, the one redeem.
    assert.deepEqual(types, ['card.created', 'coupon.claimed', 'coupon.redeemed', 'transaction.created']);
    await assertNoDelivery(p, off.id);
    await request(t.url, 'DELETE', `/en/partners/webhooks/${sub.id}`, { headers: bearer(p.token) });
    await request(t.url, 'DELETE', `/en/partners/webhooks/${off.id}`, { headers: bearer(p.token) });
  });

  it('a change of subscriptions applies to the next event at once (nothing stale is cached)', async () => {
    const q = await createPartner(t);
    const qShop = await createShop(t, q.id);
    const card = (await joinProgramme(t, await createCustomer(t), await createProgramme(t, q.id, rules))).id;
    const earn = async () => assert.equal((await award(t, q, { card_id: card, shop_id: qShop, amount: 3 })).status, 201);
    await earn(); // read: nobody listens
    const sub = await subscribed(q, ['transaction.created']);
    await earn();
    assert.equal((await deliveries(q)).length, 1, 'the new subscription got the award at once');
    await request(t.url, 'PUT', `/en/partners/webhooks/${sub.id}`, { headers: bearer(q.token), json: { is_active: false } });
    await earn();
    assert.equal((await deliveries(q)).length, 1, 'deactivated: nothing');
    await request(t.url, 'PUT', `/en/partners/webhooks/${sub.id}`, { headers: bearer(q.token), json: { is_active: true, events: ['card.created'] } });
    await earn();
    assert.equal((await deliveries(q)).length, 1, 'no longer listed: nothing');
    await request(t.url, 'PUT', `/en/partners/webhooks/${sub.id}`, { headers: bearer(q.token), json: { events: ['*'] } });
    await earn();
    assert.equal((await deliveries(q)).length, 2, '"*" again: delivered');
  });

  it('an award of a partner nobody listens to reads no subscription: the cached answer decides', async () => {
    const q = await createPartner(t);
    const qShop = await createShop(t, q.id);
    const card = (await joinProgramme(t, await createCustomer(t), await createProgramme(t, q.id, rules))).id;
    const earn = async () => assert.equal((await award(t, q, { card_id: card, shop_id: qShop, amount: 3 })).status, 201);
    await earn();
    // Written behind the service's back (no NOTIFY, nothing forgotten): an award that read the
    // subscriptions would see it.
    await t.app.context.database.db.insert(webhookSubscriptions).values({ partnerId: q.id, url: `${receiver.base}${path()}`, events: ['*'] });
    await earn();
    assert.deepEqual(await deliveries(q), []);
    t.app.context.services.webhooks.events.forget(q.id);
    await earn();
    assert.equal((await deliveries(q)).length, 1);
  });

  it('deductions, adjustments, returns and reversals: transaction.created / .returned / .reversed with the new entry', async () => {
    const sub = await subscribed(p, ['transaction.created', 'transaction.returned', 'transaction.reversed']);
    const card = await newCard();
    const bought = await award(t, p, { card_id: card, shop_id: shop, amount: 40 });
    const spent = await request(t.url, 'POST', '/en/shop/transactions/deduct-points', { headers: apiHeaders(p.apiKey), json: { card_id: card, shop_id: shop, points: 5 } });
    const adjusted = await request(t.url, 'POST', '/en/shop/points', { headers: apiHeaders(p.apiKey), json: { card_id: card, points: 3, reason: 'goodwill' } });
    const returned = await request(t.url, 'POST', `/en/shop/transactions/${bought.body.data.id}/return`, { headers: apiHeaders(p.apiKey), json: { amount: 10 } });
    const reversed = await request(t.url, 'POST', `/en/shop/transactions/${adjusted.body.data.id}/reverse`, { headers: apiHeaders(p.apiKey), json: {} });
    for (const r of [bought, spent, adjusted, returned, reversed]) assert.equal(r.status, 201, r.text);
    const events = await eventsAt(p, sub.path, 5);
    assert.deepEqual(
      events.map((e) => [e.type, e.data.id]),
      [
        ['transaction.created', bought.body.data.id],
        ['transaction.created', spent.body.data.id],
        ['transaction.created', adjusted.body.data.id],
        ['transaction.returned', returned.body.data.id],
        ['transaction.reversed', reversed.body.data.id],
      ],
      'sequence increases in the order they happened',
    );
    assert.equal(new Set(events.map((e) => e.sequence)).size, 5, 'each event its own sequence');
    assert.deepEqual(events[1].data, spent.body.data);
    assert.deepEqual(events[3].data, returned.body.data);
    assert.deepEqual(events[4].data, reversed.body.data);
    await request(t.url, 'DELETE', `/en/partners/webhooks/${sub.id}`, { headers: bearer(p.token) });
  });

  it('card.created (then the welcome bonus as transaction.created), coupon.claimed / .redeemed / .rolled_back', async () => {
    const bonusProgramme = await createProgramme(t, p.id, { ...rules, initialBonusPoints: 25 });
    const sub = await subscribed(p, ['card.created', 'transaction.created', 'coupon.claimed', 'coupon.redeemed', 'coupon.rolled_back']);
    const customer = await createCustomer(t);
    const card = await joinProgramme(t, customer, bonusProgramme);
    const offer = await createOffer(t, p, { partner_card_id: bonusProgramme, points_cost: 10 });
    const coupon = await claimCoupon(t, customer, offer.id);
    const redeemed = await couponAction(t, p, coupon.id, 'redeem', { shop_id: shop });
    const rolled = await couponAction(t, p, coupon.id, 'rollback', { shop_id: shop }, { 'idempotency-key': 'rb-1' });
    assert.equal(redeemed.status, 200, redeemed.text);
    assert.equal(rolled.status, 200, rolled.text);
    const events = await eventsAt(p, sub.path, 6);
    assert.deepEqual(
      events.map((e) => e.type),
      ['card.created', 'transaction.created', 'transaction.created', 'coupon.claimed', 'coupon.redeemed', 'coupon.rolled_back'],
      'sequence increases in the order they happened, across event types',
    );
    assert.equal(new Set(events.map((e) => e.sequence)).size, 6, 'each event its own sequence');
    assert.deepEqual(events[0].data, card, 'the card as POST /shop/loyalty-cards answered');
    assert.equal(events[1].data.type, 'bonus');
    assert.equal(events[1].data.points, 25);
    assert.equal(events[2].data.type, 'redeem', 'the points the coupon cost');
    assert.deepEqual(events[3].data, coupon);
    assert.deepEqual(events[4].data, redeemed.body.data.coupon);
    assert.deepEqual(events[5].data, rolled.body.data.coupon);
    await request(t.url, 'DELETE', `/en/partners/webhooks/${sub.id}`, { headers: bearer(p.token) });
  });

  it('campaign.exhausted when an award uses the last of a campaign, with the campaign as GET shows it', async () => {
    const sub = await subscribed(p, ['campaign.exhausted']);
    const res = await request(t.url, 'POST', '/en/partners/campaigns', {
      headers: bearer(p.token),
      json: { partner_card_id: programme, name: 'Twice', effect: { type: 'bonus', value: 10 }, limits: { uses: 2 } },
    });
    assert.equal(res.status, 201, res.text);
    const card = await newCard();
    assert.equal((await award(t, p, { card_id: card, shop_id: shop, amount: 5 })).status, 201);
    await assertNoDelivery(p, sub.id);
    assert.equal((await award(t, p, { card_id: card, shop_id: shop, amount: 5 })).status, 201);
    const [e] = await eventsAt(p, sub.path);
    const campaign = (await request(t.url, 'GET', `/en/partners/campaigns/${res.body.data.id}`, { headers: bearer(p.token) })).body.data;
    assert.equal(campaign.status, 'exhausted');
    assert.deepEqual(e.data, campaign);
    assert.equal((await award(t, p, { card_id: card, shop_id: shop, amount: 5 })).status, 201);
    await request(t.url, 'PUT', `/en/partners/campaigns/${res.body.data.id}`, { headers: bearer(p.token), json: { is_active: false } });
    assert.equal((await deliveries(p)).filter((d) => d.subscription_id === sub.id).length, 1, 'once');
    await request(t.url, 'DELETE', `/en/partners/webhooks/${sub.id}`, { headers: bearer(p.token) });
  });

  it('card.tier_changed when an award crosses a threshold and when a return drops below it, with the card as the API shows it', async () => {
    const sub = await subscribed(p, ['card.tier_changed']);
    const tiered = await createProgramme(t, p.id, rules);
    const tier = await request(t.url, 'POST', `/en/partners/cards/${tiered}/tiers`, {
      headers: bearer(p.token),
      json: { name: { en: 'Silver', lt: 'Sidabras' }, threshold: 10, color: '#C0C0C0' },
    });
    assert.equal(tier.status, 201, tier.text);
    const card = (await joinProgramme(t, await createCustomer(t), tiered)).id;
    const cardNow = async () => (await request(t.url, 'GET', `/en/shop/loyalty-cards/info?card_id=${card}`, { headers: apiHeaders(p.apiKey) })).body.data.card;
    assert.equal((await award(t, p, { card_id: card, shop_id: shop, amount: 5 })).status, 201);
    await assertNoDelivery(p, sub.id);
    const crossing = await award(t, p, { card_id: card, shop_id: shop, amount: 6 });
    assert.equal(crossing.status, 201, crossing.text);
    const [up] = await eventsAt(p, sub.path);
    assert.deepEqual(up.data.tier, { id: tier.body.data.id, name: { en: 'Silver', lt: 'Sidabras' }, color: '#C0C0C0' });
    assert.deepEqual(up.data, await cardNow());
    const back = await request(t.url, 'POST', `/en/shop/transactions/${crossing.body.data.id}/return`, { headers: apiHeaders(p.apiKey), json: { amount: 6 } });
    assert.equal(back.status, 201, back.text);
    const [, down] = await eventsAt(p, sub.path, 2);
    assert.equal(down.data.tier, null);
    assert.deepEqual(down.data, await cardNow());
    await request(t.url, 'DELETE', `/en/partners/webhooks/${sub.id}`, { headers: bearer(p.token) });
  });

  it('game.reward_claimed with the claim as the API answered it', async () => {
    const sub = await subscribed(p, ['game.reward_claimed']);
    const game = await createGame(t, p, {
      partner_card_id: programme,
      rewards: [{ label: '7 points', probability: 1, reward_type: 'points', points: 7 }],
    });
    const customer = await createCustomer(t);
    await joinProgramme(t, customer, programme);
    const started = await startGame(t, customer, game.id);
    assert.equal(started.status, 201, started.text);
    const key = started.body.data.session_key;
    assert.equal((await progress(t, bearer(customer.token), key, { progress: 100, completed: true })).status, 200);
    const claimed = await claimReward(t, bearer(customer.token), key);
    assert.equal(claimed.status, 200, claimed.text);
    const [e] = await eventsAt(p, sub.path);
    assert.deepEqual(e.data, claimed.body.data);
    await request(t.url, 'DELETE', `/en/partners/webhooks/${sub.id}`, { headers: bearer(p.token) });
  });

  it('import.finished with the import as GET shows it', async () => {
    const sub = await subscribed(p, ['import.finished']);
    const record = await importFeed(t, p.apiKey, fixtureFeed('home-made.xml'), { filename: 'home-made.xml' });
    const [e] = await eventsAt(p, sub.path);
    assert.deepEqual(e.data, record);
    await request(t.url, 'DELETE', `/en/partners/webhooks/${sub.id}`, { headers: bearer(p.token) });
  });

  it("sms.status to subscriptions on every change, as GET /sms/status shows it; the message's receiptURL still gets its receipt", async () => {
    const admin = await createAdmin(t);
    const sp = await createSmsPartner(t, admin);
    const sub = await subscribed(sp, ['sms.status']);
    const receiptPath = path();
    const sent = await send(t, sp, sendBody({ receipt: true, receiptURL: `${receiver.base}${receiptPath}` }));
    assert.equal(sent.status, 200, sent.text);
    const id = sent.body.data.message_id;
    await waitForStatus(t, sp.apiKey, id, 'delivered');
    const events = await eventsAt(sp, sub.path, 2);
    assert.deepEqual(events.map((e) => e.data.status), ['sent', 'delivered']);
    assert.deepEqual(events[1].data, (await status(t, sp.apiKey, id)).body.data);
    const receipts = await waitFor('receipts', () => receiver.to(receiptPath).length >= 2 && receiver.to(receiptPath));
    assert.equal(receipts[0]!.json.message_id, id, 'the receipt keeps its own body (§4)');
    assert.equal(receipts[0]!.json.type, undefined);
  });
});

/** A partner with a card to adjust: each adjustment is one transaction.created event. */
async function adjustable(app: TestApp, p: PartnerFixture) {
  const card = (await joinProgramme(app, await createCustomer(app), await createProgramme(app, p.id))).id;
  return async (reason: string, points = 1) => {
    const res = await request(app.url, 'POST', '/en/shop/points', { headers: apiHeaders(p.apiKey), json: { card_id: card, points, reason } });
    assert.equal(res.status, 201, res.text);
    return res.body.data;
  };
}

describe('delivery', () => {
  it('retries a 500 and then a 200 with the same event id and body', async () => {
    const p = await createPartner(t);
    const adjust = await adjustable(t, p);
    const sub = await subscribed(p, ['transaction.created'], 'flaky');
    await adjust('retried');
    await waitFor('two attempts', () => receiver.to(sub.path).length >= 2);
    const [first, second] = receiver.to(sub.path);
    assert.equal(first!.headers['x-loyalty-event-id'], second!.headers['x-loyalty-event-id']);
    assert.equal(first!.body, second!.body);
    const d = await waitFor('delivered', async () => (await deliveries(p)).find((x) => x.event_id === first!.json.id && x.status === 'delivered'));
    assert.equal(d.attempts, 2);
  });

  it('a ping is attempted once: refused, it ends failed with its one attempt, never retried', async () => {
    const p = await createPartner(t);
    const sub = await subscribed(p, ['*'], 'down');
    const ping = await request(t.url, 'POST', `/en/partners/webhooks/${sub.id}/test`, { headers: bearer(p.token) });
    assert.equal(ping.status, 202, ping.text);
    const d = await waitFor('the ping settled', async () => (await deliveries(p)).find((x) => x.event_id === ping.body.data.event_id && x.status !== 'pending'));
    assert.equal(d.status, 'failed');
    assert.equal(d.attempts, 1);
    assert.equal(d.last_status_code, 503);
    // An event sent after it, to the same receiver, has had its first retry (300 ms) by now:
    // a ping that were retried would have been too.
    const adjust = await adjustable(t, p);
    await adjust('after the ping');
    await waitFor('the event retried', () => receiver.to(sub.path).filter((r) => r.json.type === 'transaction.created').length >= 2);
    assert.equal(receiver.to(sub.path).filter((r) => r.json.type === 'ping').length, 1, 'one request for the ping');
    assert.equal((await deliveries(p)).find((x) => x.event_id === ping.body.data.event_id).attempts, 1);
  });

  it('a ping claimed again after its node died mid-attempt is ended, not sent again', async () => {
    const p = await createPartner(t);
    const sub = await subscribed(p, ['*']);
    // What a node that died during the attempt leaves: the attempt counted, the lease run out.
    const eventId = randomUUID();
    await t.app.context.database.db.insert(webhookDeliveries).values({
      eventId,
      subscriptionId: sub.id,
      partnerId: p.id,
      eventType: 'ping',
      url: `${receiver.base}${sub.path}`,
      body: JSON.stringify({ id: eventId, type: 'ping' }),
      attempts: 1,
    });
    t.app.context.services.webhooks.wake();
    const d = await waitFor('the ping ended', async () => (await deliveries(p)).find((x) => x.event_id === eventId && x.status !== 'pending'));
    assert.equal(d.status, 'failed');
    assert.match(d.last_error, /interrupted/);
    assert.equal(receiver.to(sub.path).length, 0, 'not sent again');
  });

  it('a receiver that stays down: every event uses its own whole schedule, then ends failed', async () => {
    const p = await createPartner(t);
    const programme = await createProgramme(t, p.id, { pointsPerCurrency: '1', currencyAmount: '1' });
    const sub = await subscribed(p, ['transaction.created'], 'down');
    const card = (await joinProgramme(t, await createCustomer(t), programme)).id;
    const bulk = await request(t.url, 'POST', '/en/shop/points/bulk', {
      headers: apiHeaders(p.apiKey),
      json: { rows: [{ card_id: card, points: 1, reason: 'a' }, { card_id: card, points: 2, reason: 'b' }] },
    });
    assert.ok(bulk.status >= 200 && bulk.status < 300, bulk.text);
    const settled = await waitFor('both failed', async () => {
      const list = (await deliveries(p)).filter((d) => d.subscription_id === sub.id);
      return list.length === 2 && list.every((d) => d.status === 'failed') && list;
    });
    // backoff [300, 300, 300]: four attempts each, whatever the other's fate.
    assert.deepEqual(settled.map((d: { attempts: number }) => d.attempts), [4, 4]);
    assert.equal(receiver.to(sub.path).length, 8);
  });

  it('deleting a subscription ends its deliveries not yet made', async () => {
    const p = await createPartner(t);
    const adjust = await adjustable(t, p);
    const sub = await subscribed(p, ['transaction.created'], 'down');
    await adjust('never answered');
    await waitFor('a first attempt', () => receiver.to(sub.path).length >= 1);
    const eventId = receiver.to(sub.path)[0]!.json.id;
    assert.equal((await request(t.url, 'DELETE', `/en/partners/webhooks/${sub.id}`, { headers: bearer(p.token) })).status, 200);
    const [d] = await deliveries(p);
    assert.equal(d.event_id, eventId);
    assert.equal(d.status, 'failed');
    assert.equal(d.last_error, 'subscription deleted');
    const attempts = receiver.to(sub.path).length;
    await new Promise((resolve) => setTimeout(resolve, 700));
    assert.equal(receiver.to(sub.path).length, attempts, 'no attempt after the delete');
  });

  it('a receiver that hangs does not slow the API: the award answers while its event is still being attempted', async () => {
    const p = await createPartner(t);
    const shop = await createShop(t, p.id);
    const programme = await createProgramme(t, p.id, { pointsPerCurrency: '1', currencyAmount: '1' });
    const sub = await subscribed(p, ['transaction.created'], 'hang');
    const card = (await joinProgramme(t, await createCustomer(t), programme)).id;
    await award(t, p, { card_id: card, shop_id: shop, amount: 1 });
    await waitFor('the first attempt under way', () => receiver.to(sub.path).length >= 1);
    const started = Date.now();
    const res = await award(t, p, { card_id: card, shop_id: shop, amount: 2 });
    assert.equal(res.status, 201, res.text);
    assert.ok(Date.now() - started < 1000, `the award took ${Date.now() - started} ms (attempt timeout 1500 ms)`);
    const [first] = (await deliveries(p)).filter((d) => d.subscription_id === sub.id).reverse();
    assert.equal(first.status, 'pending');
    await request(t.url, 'DELETE', `/en/partners/webhooks/${sub.id}`, { headers: bearer(p.token) });
  });

  it("never sends partner A's events to partner B", async () => {
    const a = await createPartner(t);
    const b = await createPartner(t);
    const shop = await createShop(t, a.id);
    const programme = await createProgramme(t, a.id);
    const subB = await subscribed(b, ['*']);
    const subA = await subscribed(a, ['*']);
    const card = (await joinProgramme(t, await createCustomer(t), programme)).id;
    assert.equal((await award(t, a, { card_id: card, shop_id: shop, amount: 10 })).status, 201);
    await eventsAt(a, subA.path, 2);
    assert.deepEqual(await deliveries(b), []);
    assert.equal(receiver.to(subB.path).length, 0);
  });

  it('a deleted subscription gets nothing more, and its deliveries stay listed', async () => {
    const p = await createPartner(t);
    const sub = await subscribed(p, ['*']);
    await request(t.url, 'POST', `/en/partners/webhooks/${sub.id}/test`, { headers: bearer(p.token) });
    await eventsAt(p, sub.path);
    assert.equal((await request(t.url, 'DELETE', `/en/partners/webhooks/${sub.id}`, { headers: bearer(p.token) })).status, 200);
    const shop = await createShop(t, p.id);
    const programme = await createProgramme(t, p.id);
    const card = (await joinProgramme(t, await createCustomer(t), programme)).id;
    assert.equal((await award(t, p, { card_id: card, shop_id: shop, amount: 10 })).status, 201);
    const list = await deliveries(p);
    assert.equal(list.length, 1);
    assert.equal(list[0].event_type, 'ping');
    assert.equal(list[0].subscription_id, null);
  });
});

/** A receiver that accepts every request and never answers: counts what it holds open. */
class Hang {
  open = 0;
  maxOpen = 0;
  received = 0;
  ended = 0;
  private server!: http.Server;
  base = '';

  async start() {
    this.server = http.createServer((req) => {
      this.received++;
      this.open++;
      this.maxOpen = Math.max(this.maxOpen, this.open);
      req.resume();
      req.socket.on('close', () => {
        this.open--;
        this.ended++;
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop() {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

describe('independent deliveries, fair slots, limited pings', () => {
  // Slow failures, so that what the tests look for happens long before any of them ends:
  // a refused event's next attempt is a minute away, a hanging attempt times out after 30 s.
  let slow: TestApp;
  const hang = new Hang();
  before(async () => {
    await hang.start();
    slow = await startTestApp(
      { ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_MS: '30000', RATE_LIMIT_DISABLED: 'false' },
      undefined,
      { webhooks: { backoffMs: [60_000], pollIntervalMs: 10_000 } },
    );
  });
  after(async () => {
    await slow.close();
    await hang.stop();
  });

  const subscribeOn = async (p: PartnerFixture, url: string, events: string[]) => {
    const res = await request(slow.url, 'POST', '/en/partners/webhooks', { headers: bearer(p.token), json: { url, events } });
    assert.equal(res.status, 201, res.text);
    return res.body.data as { id: number };
  };
  const deliveriesOn = async (p: PartnerFixture): Promise<any[]> =>
    (await request(slow.url, 'GET', '/en/partners/webhook-deliveries?per_page=100', { headers: bearer(p.token) })).body.data;

  it('a refused event does not delay later events of its subscription: they arrive while it waits for its retry', async () => {
    const p = await createPartner(slow);
    const adjust = await adjustable(slow, p);
    const at = path('poison');
    await subscribeOn(p, `${receiver.base}${at}`, ['transaction.created']);
    const poison = await adjust('poison');
    const later = [await adjust('fine-1'), await adjust('fine-2')];
    const got = await waitFor('the later events', () => {
      const fine = receiver.to(at).filter((r) => r.json.data.reason !== 'poison');
      return fine.length >= 2 && fine;
    });
    assert.deepEqual(got.map((r) => r.json.data.id).sort(), later.map((e) => e.id).sort());
    const first = (await deliveriesOn(p)).find((d) => d.event_id === receiver.to(at).find((r) => r.json.data.id === poison.id)?.json.id);
    assert.ok(first, 'the refused event was attempted');
    assert.equal(first.status, 'pending', 'still being retried');
    assert.equal(first.attempts, 1);
    assert.ok(Date.parse(first.next_attempt_at) > Date.now() + 30_000, 'its next attempt a minute after the first');
    const sequences = receiver.to(at).map((r) => [r.json.data.reason, r.json.sequence] as const);
    const of = (reason: string) => sequences.find(([r]) => r === reason)![1];
    assert.ok(of('poison') < of('fine-1') && of('fine-1') < of('fine-2'), `receivers can put them back in order: ${JSON.stringify(sequences)}`);
  });

  it("one partner's hanging receiver holds at most a quarter of the slots: another partner's ping goes at once", async () => {
    const b = await createPartner(slow);
    const programme = await createProgramme(slow, b.id);
    const card = (await joinProgramme(slow, await createCustomer(slow), programme)).id;
    await subscribeOn(b, `${hang.base}/b`, ['transaction.created']);
    // 40 events of B at once, to a receiver that never answers.
    const bulk = await request(slow.url, 'POST', '/en/shop/points/bulk', {
      headers: apiHeaders(b.apiKey),
      json: { rows: Array.from({ length: 40 }, (_, i) => ({ card_id: card, points: 1, reason: `b${i}` })) },
    });
    assert.ok(bulk.status >= 200 && bulk.status < 300, bulk.text);
    await waitFor("B's receiver holding 4 attempts", () => hang.open >= 4);

    const a = await createPartner(slow);
    const at = path();
    const sub = await subscribeOn(a, `${receiver.base}${at}`, ['*']);
    const sentAt = Date.now();
    const ping = await request(slow.url, 'POST', `/en/partners/webhooks/${sub.id}/test`, { headers: bearer(a.token) });
    assert.equal(ping.status, 202, ping.text);
    const [got] = await waitFor("A's ping", () => receiver.to(at).length > 0 && receiver.to(at));
    // Without the share B held all 16 slots, and A's ping waited for B's 30 s timeouts.
    // (A condition, not a stopwatch: B's attempts end after 30 s, so this fails without the
    // share however fast or slow the machine; with it, the ping takes what a ping takes.)
    assert.equal(hang.ended, 0, `A's ping arrived (after ${got!.at - sentAt} ms) while every attempt of B still hung`);
    assert.equal(hang.maxOpen, 4, 'B never held more than 4 of the 16 slots');
    const bPending = (await deliveriesOn(b)).filter((d) => d.status === 'pending');
    assert.equal(bPending.length, 40, "B's events wait their turn; none is lost");
  });

  it('pings: at most 10 a minute per partner, the 11th is 429 code 1003 with the rate-limit headers; nothing sent for it', async () => {
    const p = await createPartner(slow);
    const at = path();
    const sub = await subscribeOn(p, `${receiver.base}${at}`, ['import.finished']);
    const test = () => request(slow.url, 'POST', `/en/partners/webhooks/${sub.id}/test`, { headers: bearer(p.token) });
    for (let i = 1; i <= 10; i++) {
      const res = await test();
      assert.equal(res.status, 202, `ping ${i}: ${res.text}`);
      assert.equal(res.headers.get('x-ratelimit-limit'), '10');
      assert.equal(res.headers.get('x-ratelimit-remaining'), String(10 - i));
    }
    const eleventh = await test();
    assert.equal(eleventh.status, 429, eleventh.text);
    assert.equal(eleventh.body.code, 1003);
    assert.equal(eleventh.headers.get('x-ratelimit-limit'), '10');
    assert.equal(eleventh.headers.get('x-ratelimit-remaining'), '0');
    const retryAfter = Number(eleventh.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    assert.equal(Number(eleventh.headers.get('x-ratelimit-reset')), retryAfter);
    assert.equal((await deliveriesOn(p)).length, 10, 'the 11th queued nothing');
    await waitFor('the 10 pings', () => receiver.to(at).length >= 10);
    const other = await createPartner(slow);
    const otherSub = await subscribeOn(other, `${receiver.base}${path()}`, ['*']);
    const theirs = await request(slow.url, 'POST', `/en/partners/webhooks/${otherSub.id}/test`, { headers: bearer(other.token) });
    assert.equal(theirs.status, 202, 'the limit is per partner');
  });
});
