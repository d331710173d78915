// Outgoing webhooks (DESIGN.md §4 "Delivery receipts", §7 webhook secret) over real HTTP:
// a receiving server started here gets the signed deliveries; the partner reads its secret
// and every delivery with its attempts through the API.
import assert from 'node:assert/strict';
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_BACKOFF_MS, WebhooksService, type WebhooksTuning } from '../src/modules/webhooks/webhooks.service.js';
import { signatureHeader, verifySignature } from '../src/modules/webhooks/webhooks.signing.js';
import { startTestApp, type Env, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { bearer, request } from './helpers/http.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// Generous enough that a loaded machine does not turn a prompt answer into a timeout (and
// so a retry the receiver sees twice); the timeout test waits for it once.
const TIMEOUT_MS = 1500;

/** The retry schedule is a build option, not configuration. */
const startApp = (env: Env, webhooks: WebhooksTuning): Promise<TestApp> =>
  startTestApp({ WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), ...env }, undefined, { webhooks });

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * The partner's receiver. Paths decide the answer:
 *   /ok/*          200            /accepted/*   202
 *   /flaky/*       500, 500, 200  (per path)
 *   /down/*        503 always     /redirect/*   302 to /ok (must not be followed)
 *   /hang-once/*   no answer for 6 s the first time, then 200
 *   /hang/*        no answer for 6 s
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
        this.requests.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
        const n = (this.seen.get(path) ?? 0) + 1;
        this.seen.set(path, n);
        const answer = (status: number, headers: Record<string, string> = {}) => res.writeHead(status, headers).end('{"received":true}');
        if (path.startsWith('/ok/')) answer(200);
        else if (path.startsWith('/accepted/')) answer(202);
        else if (path.startsWith('/flaky/')) answer(n <= 2 ? 500 : 200);
        else if (path.startsWith('/down/')) answer(503);
        else if (path.startsWith('/redirect/')) answer(302, { location: `${this.base}/ok/redirected` });
        else if (path.startsWith('/hang-once/') && n > 1) answer(200);
        else if (path.startsWith('/hang')) setTimeout(() => answer(200), 6000).unref();
        else answer(404);
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

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 8000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function enqueue(t: TestApp, partnerId: number, url: string, payload: unknown, eventType = 'test.event'): Promise<string> {
  const { webhooks } = t.app.context.services;
  return t.app.context.database.db.transaction((tx) => webhooks.enqueue(tx, { partnerId, eventType, url, payload }));
}

async function secretOf(t: TestApp, partner: PartnerFixture): Promise<string> {
  const res = await request(t.url, 'GET', '/en/partners/webhook-secret', { headers: bearer(partner.token) });
  assert.equal(res.status, 200, res.text);
  return res.body.data.secret;
}

async function deliveryByEvent(t: TestApp, partner: PartnerFixture, eventId: string) {
  const list = await request(t.url, 'GET', '/en/partners/webhook-deliveries?per_page=100', { headers: bearer(partner.token) });
  assert.equal(list.status, 200, list.text);
  const item = list.body.data.find((d: { event_id: string }) => d.event_id === eventId);
  if (!item) return undefined;
  const one = await request(t.url, 'GET', `/en/partners/webhook-deliveries/${item.id}`, { headers: bearer(partner.token) });
  assert.equal(one.status, 200, one.text);
  return { item, detail: one.body.data };
}

/** Waits until the delivery of `eventId` is no longer pending; returns its list item and detail. */
function settled(t: TestApp, partner: PartnerFixture, eventId: string, timeoutMs?: number) {
  return waitFor(
    `delivery ${eventId} to settle`,
    async () => {
      const d = await deliveryByEvent(t, partner, eventId);
      return d && d.item.status !== 'pending' ? d : undefined;
    },
    timeoutMs,
  );
}

/**
 * Enqueues a delivery after everything so far and waits until it settles. Claims take due
 * rows oldest first, so by then the worker has made a claim that took every row due before
 * it: a delivery that was claimable again (due no later than the sentinel) has been claimed
 * again, which its attempt count shows even while its request is still on the way.
 */
async function sentinelDelivery(app: TestApp, p: PartnerFixture): Promise<void> {
  const id = await enqueue(app, p.id, `${receiver.base}/ok/sentinel-${randomUUID()}`, { sentinel: true });
  const { item } = await settled(app, p, id);
  assert.equal(item.status, 'delivered');
}

/** The receiver's own check: recompute the HMAC over the raw body and compare in constant time. */
function assertSigned(r: Received, secret: string) {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(r.headers['x-loyalty-signature']));
  assert.ok(m, `signature header ${r.headers['x-loyalty-signature']}`);
  const ts = Number(m[1]);
  assert.ok(Math.abs(ts - Math.floor(r.at / 1000)) <= 5, 'timestamp is the send time in unix seconds');
  const expected = createHmac('sha256', secret).update(`${ts}.${r.body}`).digest();
  assert.ok(timingSafeEqual(Buffer.from(m[2]!, 'hex'), expected), 'signature verifies with the secret');
}

function signedWith(r: Received, secret: string): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(r.headers['x-loyalty-signature']));
  if (!m) return false;
  const expected = createHmac('sha256', secret).update(`${m[1]}.${r.body}`).digest();
  return timingSafeEqual(Buffer.from(m[2]!, 'hex'), expected);
}

const receiver = new Receiver();
let t: TestApp;
let partner: PartnerFixture;

before(async () => {
  await receiver.start();
  // A long poll interval: prompt first deliveries prove the wake on commit; retries are
  // woken by their own short schedule.
  t = await startApp({ ALLOW_PRIVATE_URLS: 'true' }, { backoffMs: [100, 100], pollIntervalMs: 10_000 });
  partner = await createPartner(t);
});
after(async () => {
  await t.close();
  await receiver.stop();
});

describe('webhook secret', () => {
  it('is created on first use and then stays the same', async () => {
    const p = await createPartner(t);
    const first = await secretOf(t, p);
    assert.match(first, /^whsec_[A-Za-z0-9_-]{43}$/);
    assert.equal(await secretOf(t, p), first);
    assert.equal(await t.app.context.services.webhooks.getSecret(p.id), first);
  });

  it('answers in the envelope, in the locale of the path', async () => {
    const en = await request(t.url, 'POST', '/en/partners/webhook-secret/rotate', { headers: bearer(partner.token) });
    const lt = await request(t.url, 'POST', '/lt/partners/webhook-secret/rotate', { headers: bearer(partner.token) });
    assert.equal(en.status, 200, en.text);
    assert.deepEqual(Object.keys(en.body).sort(), ['code', 'data', 'message', 'request_id', 'success']);
    assert.deepEqual(Object.keys(en.body.data), ['secret']);
    assert.notEqual(en.body.message, lt.body.message);
    assert.notEqual(en.body.data.secret, lt.body.data.secret);
  });

  it('needs the partner JWT', async () => {
    for (const [method, path] of [
      ['GET', '/en/partners/webhook-secret'],
      ['POST', '/en/partners/webhook-secret/rotate'],
      ['GET', '/en/partners/webhook-deliveries'],
      ['GET', '/en/partners/webhook-deliveries/1'],
    ] as const) {
      const res = await request(t.url, method, path);
      assert.equal(res.status, 401, `${method} ${path}`);
      const api = await request(t.url, method, path, { headers: { 'x-api-key': partner.apiKey.key, 'x-api-secret': partner.apiKey.secret } });
      assert.ok(api.status === 401 || api.status === 403, `${method} ${path} with API credentials: ${api.status}`);
    }
  });
});

describe('delivery', () => {
  it('POSTs the exact body with the event headers and a signature that verifies with the secret', async () => {
    const secret = await secretOf(t, partner);
    const payload = { message_id: 'm-1', status: 'delivered', text: 'Ačiū — ąčęėįšųūž 🎉', cost: { amount: '0.0290', currency: 'EUR' }, n: null };
    const committedAt = Date.now();
    const eventId = await enqueue(t, partner.id, `${receiver.base}/ok/exact`, payload, 'sms.status');
    assert.match(eventId, UUID);
    const [r] = await waitFor('the delivery', () => receiver.to('/ok/exact').length > 0 && receiver.to('/ok/exact'));
    // Woken by the commit, not by the 10 s poll.
    assert.ok(r!.at - committedAt < 5000, `delivered ${r!.at - committedAt} ms after commit`);
    assert.equal(r!.body, JSON.stringify(payload));
    assert.equal(r!.headers['content-type'], 'application/json');
    assert.equal(r!.headers['content-length'], String(Buffer.byteLength(JSON.stringify(payload))));
    assert.equal(r!.headers['x-loyalty-event-id'], eventId);
    assert.equal(r!.headers['x-loyalty-event'], 'sms.status');
    assert.equal(r!.headers['user-agent'], 'Loyalty-Webhooks/1');
    assertSigned(r!, secret);
    assert.equal(verifySignature(secret, r!.body, String(r!.headers['x-loyalty-signature'])), true);
    assert.equal(verifySignature(secret, `${r!.body} `, String(r!.headers['x-loyalty-signature'])), false, 'a changed body does not verify');

    const { item, detail } = await settled(t, partner, eventId);
    assert.deepEqual(Object.keys(item).sort(), [
      'attempts',
      'created_at',
      'delivered_at',
      'event_id',
      'event_type',
      'id',
      'last_error',
      'last_status_code',
      'next_attempt_at',
      'status',
      'subscription_id',
      'url',
    ]);
    assert.equal(item.status, 'delivered');
    assert.equal(item.attempts, 1);
    assert.equal(item.event_type, 'sms.status');
    assert.equal(item.url, `${receiver.base}/ok/exact`);
    assert.equal(item.last_status_code, 200);
    assert.equal(item.last_error, null);
    assert.equal(item.next_attempt_at, null);
    assert.ok(Date.parse(item.delivered_at) >= Date.parse(item.created_at));
    assert.equal(detail.attempts.length, 1);
    assert.deepEqual(Object.keys(detail.attempts[0]).sort(), ['attempt_no', 'attempted_at', 'duration_ms', 'error', 'status_code']);
    assert.equal(detail.attempts[0].attempt_no, 1);
    assert.equal(detail.attempts[0].status_code, 200);
    assert.equal(detail.attempts[0].error, null);
    assert.ok(Number.isInteger(detail.attempts[0].duration_ms) && detail.attempts[0].duration_ms >= 0);
    await sentinelDelivery(t, partner);
    assert.equal((await deliveryByEvent(t, partner, eventId))?.item.attempts, 1, 'a delivered event is not claimed again');
    assert.equal(receiver.to('/ok/exact').length, 1, 'a delivered event is not sent again');
  });

  it('counts any 2xx as delivered', async () => {
    const eventId = await enqueue(t, partner.id, `${receiver.base}/accepted/x`, { a: 1 });
    const { item } = await settled(t, partner, eventId);
    assert.equal(item.status, 'delivered');
    assert.equal(item.last_status_code, 202);
  });

  it('retries 500, 500 then 200 with the same event id: 3 attempts recorded, delivered', async () => {
    const secret = await secretOf(t, partner);
    const eventId = await enqueue(t, partner.id, `${receiver.base}/flaky/a`, { attempt: 'three times' });
    const { item, detail } = await settled(t, partner, eventId);
    assert.equal(item.status, 'delivered');
    assert.equal(item.attempts, 3);
    assert.equal(item.last_status_code, 200);
    assert.equal(item.last_error, null);
    assert.deepEqual(
      detail.attempts.map((a: { attempt_no: number; status_code: number; error: string | null }) => [a.attempt_no, a.status_code, a.error]),
      [
        [1, 500, null],
        [2, 500, null],
        [3, 200, null],
      ],
    );
    const got = receiver.to('/flaky/a');
    assert.equal(got.length, 3);
    for (const r of got) {
      assert.equal(r.headers['x-loyalty-event-id'], eventId);
      assert.equal(r.body, JSON.stringify({ attempt: 'three times' }));
      assertSigned(r, secret);
    }
    // The schedule's waits (100 ms) separate the attempts.
    assert.ok(got[1]!.at - got[0]!.at >= 90, `second attempt ${got[1]!.at - got[0]!.at} ms after the first`);
    assert.ok(got[2]!.at - got[1]!.at >= 90, `third attempt ${got[2]!.at - got[1]!.at} ms after the second`);
  });

  it('gives up after the schedule when the receiver never answers 2xx: failed, every attempt visible', async () => {
    const eventId = await enqueue(t, partner.id, `${receiver.base}/down/a`, { x: 1 });
    const { item, detail } = await settled(t, partner, eventId);
    assert.equal(item.status, 'failed');
    assert.equal(item.attempts, 3);
    assert.equal(item.last_status_code, 503);
    assert.equal(item.next_attempt_at, null);
    assert.equal(item.delivered_at, null);
    assert.deepEqual(
      detail.attempts.map((a: { attempt_no: number; status_code: number }) => [a.attempt_no, a.status_code]),
      [
        [1, 503],
        [2, 503],
        [3, 503],
      ],
    );
    await sentinelDelivery(t, partner);
    assert.equal((await deliveryByEvent(t, partner, eventId))?.item.attempts, 3, 'a failed event is not claimed again');
    assert.equal(receiver.to('/down/a').length, 3, 'nothing more after failed');
  });

  it('does not follow a redirect: a 302 is a failed attempt', async () => {
    const eventId = await enqueue(t, partner.id, `${receiver.base}/redirect/a`, { x: 1 });
    const { item } = await settled(t, partner, eventId);
    assert.equal(item.status, 'failed');
    assert.equal(item.last_status_code, 302);
    assert.equal(receiver.to('/redirect/a').length, 3);
    assert.equal(receiver.to('/ok/redirected').length, 0);
  });

  it('counts a timeout as a failed attempt and retries', async () => {
    const eventId = await enqueue(t, partner.id, `${receiver.base}/hang-once/a`, { slow: true });
    const { item, detail } = await settled(t, partner, eventId);
    assert.equal(item.status, 'delivered');
    assert.equal(item.attempts, 2);
    const [first, second] = detail.attempts;
    assert.equal(first.status_code, null);
    assert.match(first.error, /timeout/);
    assert.match(first.error, new RegExp(`${TIMEOUT_MS} ms`));
    assert.ok(first.duration_ms >= TIMEOUT_MS - 10 && first.duration_ms < TIMEOUT_MS + 1500, String(first.duration_ms));
    assert.equal(second.status_code, 200);
    assert.equal(second.error, null);
    const got = receiver.to('/hang-once/a');
    assert.equal(got.length, 2);
    assert.equal(got[0]!.headers['x-loyalty-event-id'], got[1]!.headers['x-loyalty-event-id']);
  });

  it('records a refused connection as the error of the attempt', async () => {
    const dead = http.createServer();
    await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
    const port = (dead.address() as AddressInfo).port;
    await new Promise((resolve) => dead.close(resolve));
    const eventId = await enqueue(t, partner.id, `http://127.0.0.1:${port}/nobody`, { x: 1 });
    const { item, detail } = await settled(t, partner, eventId);
    assert.equal(item.status, 'failed');
    assert.equal(item.last_status_code, null);
    assert.match(item.last_error, /ECONNREFUSED/);
    assert.equal(detail.attempts.length, 3);
  });

  it('sends nothing for an enqueue whose transaction rolls back', async () => {
    const { webhooks } = t.app.context.services;
    let eventId = '';
    await assert.rejects(
      t.app.context.database.db.transaction(async (tx) => {
        eventId = await webhooks.enqueue(tx, { partnerId: partner.id, eventType: 'test.event', url: `${receiver.base}/ok/rolled-back`, payload: { x: 1 } });
        throw new Error('the event did not happen');
      }),
      /the event did not happen/,
    );
    assert.match(eventId, UUID);
    // No row, so nothing can ever claim it; and a committed event enqueued after it (due
    // later, so claimed no earlier) is delivered while the rolled-back one was not.
    assert.equal(await webhooks.findByEventId(eventId), undefined);
    assert.equal(await deliveryByEvent(t, partner, eventId), undefined);
    const later = await enqueue(t, partner.id, `${receiver.base}/ok/after-rollback`, { y: 2 });
    await settled(t, partner, later);
    assert.equal(receiver.to('/ok/after-rollback').length, 1);
    assert.equal(receiver.to('/ok/rolled-back').length, 0);
  });

  it('refuses a payload that is not JSON', async () => {
    await assert.rejects(enqueue(t, partner.id, `${receiver.base}/ok/never`, undefined), TypeError);
  });
});

describe('rotation', () => {
  it('signs deliveries after a rotation with the new secret only', async () => {
    const p = await createPartner(t);
    const old = await secretOf(t, p);
    const before = await enqueue(t, p.id, `${receiver.base}/ok/rot-before`, { n: 1 });
    await settled(t, p, before);
    assert.ok(signedWith(receiver.to('/ok/rot-before')[0]!, old));

    const rotated = await request(t.url, 'POST', '/en/partners/webhook-secret/rotate', { headers: bearer(p.token) });
    assert.equal(rotated.status, 200, rotated.text);
    const fresh = rotated.body.data.secret;
    assert.match(fresh, /^whsec_/);
    assert.notEqual(fresh, old);
    assert.equal(await secretOf(t, p), fresh);

    const afterRotation = await enqueue(t, p.id, `${receiver.base}/ok/rot-after`, { n: 2 });
    await settled(t, p, afterRotation);
    const r = receiver.to('/ok/rot-after')[0]!;
    assertSigned(r, fresh);
    assert.equal(signedWith(r, old), false, 'the old secret no longer signs');
  });

  it('signs the retries of an earlier event with the new secret', async () => {
    const p = await createPartner(t);
    const old = await secretOf(t, p);
    const eventId = await enqueue(t, p.id, `${receiver.base}/hang-once/rot`, { n: 3 });
    // Rotate while the first attempt is waiting for its timeout.
    await waitFor('the first attempt', () => receiver.to('/hang-once/rot').length === 1);
    const fresh = await t.app.context.services.webhooks.rotate(p.id);
    await settled(t, p, eventId);
    const [first, retry] = receiver.to('/hang-once/rot');
    assert.ok(signedWith(first!, old));
    assertSigned(retry!, fresh);
    assert.equal(signedWith(retry!, old), false);
  });
});

describe('deliveries endpoints', () => {
  it('lists newest first with meta, and paginates', async () => {
    const p = await createPartner(t);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await enqueue(t, p.id, `${receiver.base}/ok/list-${i}`, { i }));
    for (const id of ids) await settled(t, p, id);
    const all = await request(t.url, 'GET', '/en/partners/webhook-deliveries', { headers: bearer(p.token) });
    assert.equal(all.status, 200);
    assert.deepEqual(
      all.body.data.map((d: { event_id: string }) => d.event_id),
      [...ids].reverse(),
    );
    assert.deepEqual(all.body.meta, { current_page: 1, per_page: 20, total: 3, last_page: 1 });
    const page2 = await request(t.url, 'GET', '/en/partners/webhook-deliveries?page=2&per_page=2', { headers: bearer(p.token) });
    assert.equal(page2.status, 200);
    assert.deepEqual(
      page2.body.data.map((d: { event_id: string }) => d.event_id),
      [ids[0]],
    );
    assert.deepEqual(page2.body.meta, { current_page: 2, per_page: 2, total: 3, last_page: 2 });
    const bad = await request(t.url, 'GET', '/en/partners/webhook-deliveries?per_page=101', { headers: bearer(p.token) });
    assert.equal(bad.status, 422);
  });

  it("keeps partners apart: B cannot see A's deliveries, and each has its own secret", async () => {
    const a = await createPartner(t);
    const b = await createPartner(t);
    const eventId = await enqueue(t, a.id, `${receiver.base}/ok/tenant-a`, { secret: 'of A' });
    const { item } = await settled(t, a, eventId);

    const asB = await request(t.url, 'GET', `/en/partners/webhook-deliveries/${item.id}`, { headers: bearer(b.token) });
    assert.equal(asB.status, 404);
    assert.equal(asB.body.code, 'RESOURCE_NOT_FOUND');
    assert.ok(Array.isArray(asB.body.errors));
    assert.match(asB.body.message, /Webhook delivery/);
    const listB = await request(t.url, 'GET', '/en/partners/webhook-deliveries', { headers: bearer(b.token) });
    assert.deepEqual(listB.body.data, []);
    assert.equal(listB.body.meta.total, 0);
    const asA = await request(t.url, 'GET', `/en/partners/webhook-deliveries/${item.id}`, { headers: bearer(a.token) });
    assert.equal(asA.status, 200);
    assert.equal(asA.body.data.event_id, eventId);

    const secretA = await secretOf(t, a);
    const secretB = await secretOf(t, b);
    assert.notEqual(secretA, secretB);
    await request(t.url, 'POST', '/en/partners/webhook-secret/rotate', { headers: bearer(b.token) });
    assert.equal(await secretOf(t, a), secretA, "B's rotation leaves A's secret alone");
  });

  it('answers 404 for a delivery that does not exist', async () => {
    const res = await request(t.url, 'GET', '/en/partners/webhook-deliveries/2147483647', { headers: bearer(partner.token) });
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'RESOURCE_NOT_FOUND');
  });
});

describe('several workers on one database', () => {
  it('send each delivery once, and a stopped worker hands its delivery back', async () => {
    const { database } = t.app.context;
    await t.app.context.services.webhooks.stop();
    // A long timeout: a second request here can only come from a second claim.
    const opts = { allowPrivateUrls: true, timeoutMs: 10_000, backoffMs: [100], pollIntervalMs: 20, concurrency: 4 };
    const nodes = [new WebhooksService(database, opts), new WebhooksService(database, opts), new WebhooksService(database, opts)];
    try {
      const p = await createPartner(t);
      const ids: string[] = [];
      for (let i = 0; i < 24; i++) ids.push(await enqueue(t, p.id, `${receiver.base}/ok/multi-${i}`, { i }));
      await Promise.all(nodes.map((n) => n.start()));
      for (const id of ids) await settled(t, p, id, 15_000);
      // Stopping waits for every node's claim under way and its deliveries: a second claim
      // of a delivery is committed (counted) by then, whenever its request would arrive.
      await Promise.all(nodes.map((n) => n.stop()));
      for (let i = 0; i < 24; i++) {
        assert.equal((await deliveryByEvent(t, p, ids[i]!))?.item.attempts, 1, `multi-${i} claimed once`);
        assert.equal((await t.app.context.services.webhooks.findByEventId(ids[i]!))?.attempts.length, 1, `multi-${i} attempted once`);
        assert.equal(receiver.to(`/ok/multi-${i}`).length, 1, `multi-${i} sent once`);
      }
      await Promise.all(nodes.map((n) => n.start()));

      // Shutdown mid-attempt: the claim is given back, uncounted and due at once.
      const hanging = await enqueue(t, p.id, `${receiver.base}/hang/stop`, { stop: true });
      await waitFor('the hanging attempt', () => receiver.to('/hang/stop').length === 1);
      await Promise.all(nodes.map((n) => n.stop()));
      const d = await t.app.context.services.webhooks.findByEventId(hanging);
      assert.ok(d);
      assert.equal(d.status, 'pending');
      assert.equal(d.attempts.length, 0);
      assert.ok(d.next_attempt_at !== null && Date.parse(d.next_attempt_at) <= Date.now() + 1000);
      const listed = await deliveryByEvent(t, p, hanging);
      assert.equal(listed?.item.attempts, 0);
    } finally {
      await Promise.all(nodes.map((n) => n.stop()));
      await t.app.context.services.webhooks.start();
    }
  });
});

describe('private addresses (ALLOW_PRIVATE_URLS=false)', () => {
  let strict: TestApp;
  before(async () => {
    strict = await startApp({}, { backoffMs: [50], pollIntervalMs: 10_000 });
  });
  after(() => strict.close());

  it('refuses a delivery to 127.0.0.1 or localhost: attempts recorded naming the address, nothing received', async () => {
    assert.equal(strict.config.allowPrivateUrls, false);
    const p = await createPartner(strict);
    const literal = await enqueue(strict, p.id, `${receiver.base}/ok/private-literal`, { x: 1 });
    const named = await enqueue(strict, p.id, `${receiver.base.replace('127.0.0.1', 'localhost')}/ok/private-name`, { x: 2 });
    const { item, detail } = await settled(strict, p, literal);
    assert.equal(item.status, 'failed');
    assert.equal(item.attempts, 2);
    assert.equal(item.last_status_code, null);
    assert.match(item.last_error, /127\.0\.0\.1 is not a public address \(loopback\)/);
    assert.equal(detail.attempts.length, 2);
    for (const a of detail.attempts) {
      assert.equal(a.status_code, null);
      assert.match(a.error, /^refused: 127\.0\.0\.1 is not a public address/);
    }
    const byName = await settled(strict, p, named);
    assert.equal(byName.item.status, 'failed');
    assert.match(byName.item.last_error, /localhost is not a public address/);
    assert.equal(receiver.to('/ok/private-literal').length, 0);
    assert.equal(receiver.to('/ok/private-name').length, 0);
  });

  it('checks URLs for other modules the same way (checkUrl)', async () => {
    const { webhooks } = strict.app.context.services;
    const refused = await webhooks.checkUrl(`${receiver.base}/x`);
    assert.equal(refused.ok, false);
    assert.deepEqual(await webhooks.checkUrl('https://8.8.8.8/hook'), { ok: true });
    assert.deepEqual(await t.app.context.services.webhooks.checkUrl(`${receiver.base}/x`), { ok: true }, 'allowed with ALLOW_PRIVATE_URLS=true');
  });
});

describe('signing and schedule', () => {
  it('verifySignature accepts the header it made and refuses tampering, other secrets and stale times', () => {
    const now = 1_700_000_000;
    const header = signatureHeader('whsec_a', '{"a":1}', now);
    assert.match(header, /^t=1700000000,v1=[0-9a-f]{64}$/);
    assert.equal(verifySignature('whsec_a', '{"a":1}', header, { now }), true);
    assert.equal(verifySignature('whsec_b', '{"a":1}', header, { now }), false);
    assert.equal(verifySignature('whsec_a', '{"a":2}', header, { now }), false);
    assert.equal(verifySignature('whsec_a', '{"a":1}', header, { now: now + 301 }), false);
    const flipped = header.slice(0, -1) + (header.endsWith('0') ? '1' : '0');
    assert.equal(verifySignature('whsec_a', '{"a":1}', flipped, { now }), false);
    assert.equal(verifySignature('whsec_a', '{"a":1}', undefined, { now }), false);
    assert.equal(verifySignature('whsec_a', '{"a":1}', 'garbage', { now }), false);
  });

  it('by default makes at least 6 attempts spread over more than 24 hours', () => {
    assert.ok(DEFAULT_BACKOFF_MS.length + 1 >= 6);
    const span = DEFAULT_BACKOFF_MS.reduce((a, b) => a + b, 0);
    assert.ok(span >= 24 * 3600_000, `last attempt ${span / 3600_000} h after the first`);
    assert.equal(DEFAULT_BACKOFF_MS[0], 30_000);
    for (let i = 1; i < DEFAULT_BACKOFF_MS.length; i++) assert.ok(DEFAULT_BACKOFF_MS[i]! > DEFAULT_BACKOFF_MS[i - 1]!, 'waits grow');
  });
});
