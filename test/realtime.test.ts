// Realtime with the official clients (DESIGN.md §5, shared/reference/realtime.md §1):
// pusher-js on the built-in server, the `pusher` server SDK on the HTTP events API,
// channel authorisation through shop/wsvendor/token, shop/realtime/config, and the
// external driver (a second node publishing to the first as to a Pusher server).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import PusherServer from 'pusher';
import { md5Hex, signApiRequest } from '../src/infra/realtime/signing.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, request } from './helpers/http.js';
import { collectEvents, connectPusher, nextEvent, sentinel, subscribe, wsvendorAuth, type Pusher } from './helpers/realtime.js';

const APP = { id: '4242', key: `key${randomBytes(8).toString('hex')}`, secret: randomBytes(20).toString('hex') };

/** The official server SDK, pointed at a test app. */
function sdk(t: TestApp, secret = APP.secret) {
  const u = new URL(t.url);
  return new PusherServer({ appId: APP.id, key: APP.key, secret, host: u.hostname, port: u.port, useTLS: false });
}

/** A signed events API request, as the SDK would send it, with parts a test can change. */
async function signedPost(t: TestApp, path: string, body: string, opts: { timestamp?: number; secret?: string } = {}) {
  const params: Record<string, string> = {
    auth_key: APP.key,
    auth_timestamp: String(opts.timestamp ?? Math.floor(Date.now() / 1000)),
    auth_version: '1.0',
    body_md5: md5Hex(body),
  };
  params.auth_signature = signApiRequest(opts.secret ?? APP.secret, 'POST', path, params);
  return request(t.url, 'POST', `${path}?${new URLSearchParams(params)}`, { raw: body, headers: { 'content-type': 'application/json' } });
}

/** The next connection-level error pusher-js reports. */
function nextConnectionError(pusher: Pusher, timeoutMs = 3000): Promise<{ type: string; data: { code: number | null; message: string } }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no connection error')), timeoutMs);
    pusher.connection.bind('error', (err: { type: string; data: { code: number | null; message: string } }) => {
      clearTimeout(timer);
      resolve(err);
    });
  });
}

describe('realtime with the official Pusher clients', () => {
  let db: TestDatabase;
  let t: TestApp;
  let partner: PartnerFixture;
  let other: PartnerFixture;
  const clients: Pusher[] = [];
  const connect = async (...args: Parameters<typeof connectPusher>) => {
    const p = await connectPusher(...args);
    clients.push(p);
    return p;
  };

  before(async () => {
    db = await createTestDatabase();
    t = await startTestApp({ REALTIME_APP_ID: APP.id, REALTIME_APP_KEY: APP.key, REALTIME_APP_SECRET: APP.secret }, db);
    partner = await createPartner(t);
    other = await createPartner(t);
  });
  after(async () => {
    for (const c of clients) c.disconnect();
    await t?.close();
    await db?.drop();
  });

  it('pusher-js connects and receives an event published through context.realtime', async () => {
    const pusher = await connect(t);
    assert.match(pusher.connection.socket_id, /^\d+\.\d+$/);
    const channel = await subscribe(pusher, 'qr-login.AbC_123-x');
    const got = nextEvent(channel, 'status_update');
    await t.app.context.realtime.publish('qr-login.AbC_123-x', 'status_update', { status: 'authenticated', user: { id: 7 }, token: 'jwt' });
    assert.deepEqual(await got, { status: 'authenticated', user: { id: 7 }, token: 'jwt' });
  });

  it('receives events published with the official pusher SDK (trigger and triggerBatch)', async () => {
    const pusher = await connect(t);
    const channel = await subscribe(pusher, 'game-session.s1');
    const second = await subscribe(pusher, 'qr-card.c1');
    const got = nextEvent(channel, 'progress');
    const res = await sdk(t).trigger(['game-session.s1', 'unused-channel'], 'progress', { step: 2 });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {});
    assert.deepEqual(await got, { step: 2 });

    const a = nextEvent(channel, 'one');
    const b = nextEvent(second, 'two');
    const batch = await sdk(t).triggerBatch([
      { channel: 'game-session.s1', name: 'one', data: { n: 1 } },
      { channel: 'qr-card.c1', name: 'two', data: 'plain text' },
    ]);
    assert.equal(batch.status, 200);
    assert.deepEqual(await a, { n: 1 });
    assert.equal(await b, 'plain text');
  });

  it('leaves out the socket named by socket_id, as Pusher does', async () => {
    const sender = await connect(t);
    const receiver = await connect(t);
    const senderChannel = await subscribe(sender, 'excl-test');
    const fromSender = collectEvents(senderChannel, 'news');
    const got = nextEvent(await subscribe(receiver, 'excl-test'), 'news');
    await sdk(t).trigger('excl-test', 'news', { x: 1 }, { socket_id: sender.connection.socket_id });
    assert.deepEqual(await got, { x: 1 });
    await sentinel(t, senderChannel);
    assert.deepEqual(fromSender, []);
  });

  it('authorises a private partner channel through wsvendor/token (pusher-js form POST) and delivers on it', async () => {
    const pusher = await connect(t, wsvendorAuth(t, partner.apiKey));
    const name = `private-partner.${partner.id}`;
    const channel = await subscribe(pusher, name);
    const got = nextEvent(channel, 'card-scanned');
    await t.app.context.realtime.publish(name, 'card-scanned', { card_id: 1 });
    assert.deepEqual(await got, { card_id: 1 });
    // A sub-channel of its own too.
    await subscribe(pusher, `private-partner.${partner.id}.till-3`);
  });

  it("refuses another partner's channel at wsvendor/token, and pusher-js reports it on the channel", async () => {
    const pusher = await connect(t, wsvendorAuth(t, partner.apiKey));
    await assert.rejects(subscribe(pusher, `private-partner.${other.id}`), (err: { detail: { type: string; status: number } }) => {
      assert.equal(err.detail.type, 'AuthError');
      assert.equal(err.detail.status, 403);
      return true;
    });
    assert.equal(pusher.connection.state, 'connected');
  });

  it('refuses a forged signature with a protocol error while the socket and its other subscriptions stay up', async () => {
    const pusher = await connect(t, {
      channelAuthorization: {
        endpoint: 'unused',
        transport: 'ajax',
        customHandler: (_params, callback) => callback(null, { auth: `${APP.key}:${'0'.repeat(64)}` }),
      },
    });
    const publicChannel = await subscribe(pusher, 'still-here');
    const socketId = pusher.connection.socket_id;
    const error = nextConnectionError(pusher);
    await assert.rejects(subscribe(pusher, `private-partner.${partner.id}`), (err: { detail: { type: string; status: number } }) => {
      assert.equal(err.detail.type, 'AuthError');
      assert.equal(err.detail.status, 401);
      return true;
    });
    const reported = await error;
    assert.equal(reported.type, 'PusherError');
    assert.equal(reported.data.code, null);
    assert.match(reported.data.message, /^Invalid signature/);
    // Same socket, same subscriptions.
    assert.equal(pusher.connection.state, 'connected');
    assert.equal(pusher.connection.socket_id, socketId);
    const got = nextEvent(publicChannel, 'still');
    await t.app.context.realtime.publish('still-here', 'still', { ok: true });
    assert.deepEqual(await got, { ok: true });
  });

  it('refuses client events on public channels (qr-login.*) and relays them on private ones, not echoed', async () => {
    const a = await connect(t, wsvendorAuth(t, partner.apiKey));
    const b = await connect(t, wsvendorAuth(t, partner.apiKey));
    const qrA = await subscribe(a, 'qr-login.secret-session');
    const qrChannelB = await subscribe(b, 'qr-login.secret-session');
    const qrB = collectEvents(qrChannelB, 'client-status');
    const error = nextConnectionError(a);
    assert.equal(qrA.trigger('client-status', { status: 'authenticated', token: 'forged' }), true);
    const refused = await error;
    assert.equal(refused.type, 'PusherError');
    assert.match(refused.data.message, /only allowed on private and presence channels/);

    const name = `private-partner.${partner.id}.pos`;
    const privA = await subscribe(a, name);
    const echoed = collectEvents(privA, 'client-hello');
    const got = nextEvent(await subscribe(b, name), 'client-hello');
    privA.trigger('client-hello', { from: 'a' });
    assert.deepEqual(await got, { from: 'a' });
    // The server handled a's frames in order (the refusal came back, b got the hello): an
    // echo to a, or the forged event to b, would be ahead of these sentinels.
    await sentinel(t, privA);
    await sentinel(t, qrChannelB);
    assert.deepEqual(echoed, []);
    assert.deepEqual(qrB, []);
  });

  it('refuses an unknown app key with 4001 (pusher-js does not retry)', async () => {
    const u = new URL(t.url);
    const { Pusher } = await import('./helpers/realtime.js');
    const pusher = new Pusher('no-such-key', {
      cluster: 'local',
      wsHost: u.hostname,
      wsPort: Number(u.port),
      forceTLS: false,
      enabledTransports: ['ws'],
      disableStats: true,
    });
    clients.push(pusher);
    type Reported = { type: string; data?: { code?: number }; error?: Reported };
    const states: string[] = [];
    pusher.connection.bind('state_change', ({ current }: { current: string }) => states.push(current));
    // During the handshake pusher-js wraps the server's pusher:error in a WebSocketError,
    // emitted just before it acts on the code (in the same call): by the time this promise
    // resolves, pusher-js has chosen to give up or to retry.
    const refusal = await new Promise<Reported>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no pusher:error from the server')), 5000);
      pusher.connection.bind('error', (err: Reported) => {
        const reported = [err, err.error].find((x) => x?.type === 'PusherError');
        if (!reported) return;
        clearTimeout(timer);
        resolve(reported);
      });
    });
    assert.equal(refusal.data?.code, 4001);
    // 4001 is in the "do not reconnect unchanged" range: pusher-js gives up after one try
    // (a retry or a back-off would have kept it "connecting").
    assert.deepEqual(states, ['disconnected']);
    assert.equal(pusher.connection.state, 'disconnected');
  });

  describe('HTTP events API', () => {
    const body = JSON.stringify({ name: 'ev', channels: ['c1'], data: '{}' });

    it('refuses a bad signature with 401 (SDK with the wrong secret)', async () => {
      await assert.rejects(sdk(t, 'wrong-secret-0123456789').trigger('c1', 'ev', {}), (err: { status: number; body: string }) => {
        assert.equal(err.status, 401);
        assert.match(err.body, /Invalid signature/);
        return true;
      });
    });

    it('refuses an auth_timestamp more than 600 s away with 401, and accepts one within', async () => {
      const now = Math.floor(Date.now() / 1000);
      const old = await signedPost(t, `/apps/${APP.id}/events`, body, { timestamp: now - 601 });
      assert.equal(old.status, 401);
      assert.equal(old.body.code, 401);
      assert.match(old.body.error, /expired/i);
      const future = await signedPost(t, `/apps/${APP.id}/events`, body, { timestamp: now + 700 });
      assert.equal(future.status, 401);
      const recent = await signedPost(t, `/apps/${APP.id}/events`, body, { timestamp: now - 500 });
      assert.equal(recent.status, 200, recent.text);
      assert.deepEqual(recent.body, {});
    });

    it('refuses a body that does not match body_md5, and a missing signature, with 401', async () => {
      const params = new URLSearchParams({ auth_key: APP.key, auth_timestamp: String(Math.floor(Date.now() / 1000)), auth_version: '1.0', body_md5: md5Hex(body) });
      params.set('auth_signature', signApiRequest(APP.secret, 'POST', `/apps/${APP.id}/events`, Object.fromEntries(params)));
      const tampered = await request(t.url, 'POST', `/apps/${APP.id}/events?${params}`, { raw: body.replace('c1', 'c2'), headers: { 'content-type': 'application/json' } });
      assert.equal(tampered.status, 401);
      const unsigned = await request(t.url, 'POST', `/apps/${APP.id}/events`, { raw: body, headers: { 'content-type': 'application/json' } });
      assert.equal(unsigned.status, 401);
      assert.equal(unsigned.body.code, 401);
    });

    it('answers 413 for data over 10 KB and 400 for the other limits', async () => {
      await assert.rejects(sdk(t).trigger('c1', 'ev', 'x'.repeat(10 * 1024 + 1)), (err: { status: number }) => err.status === 413);
      const exactly = await signedPost(t, `/apps/${APP.id}/events`, JSON.stringify({ name: 'ev', channels: ['c1'], data: 'x'.repeat(10 * 1024) }));
      assert.equal(exactly.status, 200);
      const cases: Array<[string, unknown]> = [
        ['101 channels', { name: 'ev', channels: Array.from({ length: 101 }, (_, i) => `c${i}`), data: '{}' }],
        ['bad channel name', { name: 'ev', channels: ['bad#name'], data: '{}' }],
        ['165-character channel', { name: 'ev', channels: ['c'.repeat(165)], data: '{}' }],
        ['event name over 200', { name: 'e'.repeat(201), channels: ['c1'], data: '{}' }],
        ['data not a string', { name: 'ev', channels: ['c1'], data: { a: 1 } }],
        ['no channels', { name: 'ev', data: '{}' }],
        ['bad socket_id', { name: 'ev', channels: ['c1'], data: '{}', socket_id: 'abc' }],
      ];
      for (const [what, payload] of cases) {
        const res = await signedPost(t, `/apps/${APP.id}/events`, JSON.stringify(payload));
        assert.equal(res.status, 400, `${what}: ${res.text}`);
        assert.equal(res.body.code, 400);
        assert.equal(typeof res.body.error, 'string');
      }
      const notJson = await signedPost(t, `/apps/${APP.id}/events`, '{nope');
      assert.equal(notJson.status, 400);
      const batch = Array.from({ length: 11 }, () => ({ channel: 'c1', name: 'ev', data: '{}' }));
      const tooMany = await signedPost(t, `/apps/${APP.id}/batch_events`, JSON.stringify({ batch }));
      assert.equal(tooMany.status, 400);
      const ten = await signedPost(t, `/apps/${APP.id}/batch_events`, JSON.stringify({ batch: batch.slice(0, 10) }));
      assert.equal(ten.status, 200);
      const huge = await signedPost(t, `/apps/${APP.id}/events`, JSON.stringify({ name: 'ev', channels: ['c1'], data: 'x'.repeat(300 * 1024) }));
      assert.equal(huge.status, 413);
    });

    it('answers 404 for another app id', async () => {
      const res = await signedPost(t, '/apps/999/events', body);
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 404);
    });
  });

  describe('GET shop/realtime/config', () => {
    it('points at this server, with the app key', async () => {
      const res = await request(t.url, 'GET', '/en/shop/realtime/config', { headers: apiHeaders(partner.apiKey) });
      assert.equal(res.status, 200);
      const u = new URL(t.url);
      assert.deepEqual(res.body.data, { key: APP.key, host: u.hostname, port: Number(u.port), scheme: 'http' });
      assert.equal(res.body.success, true);
      assert.equal(res.body.code, 200);
    });

    it('needs API credentials', async () => {
      const res = await request(t.url, 'GET', '/lt/shop/realtime/config');
      assert.equal(res.status, 401);
      assert.equal(res.body.code, 1004);
    });
  });

  describe('POST shop/wsvendor/token', () => {
    const socketId = '1234.5678';
    const token = (body: Record<string, string>, form = false, key = partner.apiKey) =>
      request(t.url, 'POST', '/en/shop/wsvendor/token', {
        headers: { ...apiHeaders(key), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
        ...(form ? { raw: new URLSearchParams(body).toString() } : { json: body }),
      });

    it('signs the caller’s own channels: JSON or form, auth in data and at the top level', async () => {
      for (const channel of [`private-partner.${partner.id}`, `private-partner.${partner.id}.orders`]) {
        const expected = t.app.context.realtime.authorizeChannel(socketId, channel).auth;
        assert.match(expected, new RegExp(`^${APP.key}:[0-9a-f]{64}$`));
        for (const form of [false, true]) {
          const res = await token({ socket_id: socketId, channel_name: channel }, form);
          assert.equal(res.status, 200, res.text);
          assert.equal(res.body.success, true);
          assert.deepEqual(res.body.data, { auth: expected });
          assert.equal(res.body.auth, expected);
        }
      }
    });

    it("answers 403 ACCESS_DENIED for any other channel (another partner's, a public one, a look-alike id)", async () => {
      for (const channel of [`private-partner.${other.id}`, `private-partner.${partner.id}0`, 'qr-login.abc', `presence-partner.${partner.id}`]) {
        const res = await token({ socket_id: socketId, channel_name: channel });
        assert.equal(res.status, 403, channel);
        assert.equal(res.body.code, 'ACCESS_DENIED');
        assert.equal(res.body.errors[0].field, 'channel_name');
        assert.equal(res.body.auth, undefined);
      }
    });

    it('answers 422 on a bad socket_id or channel_name', async () => {
      const cases: Array<[Record<string, string>, string]> = [
        [{ socket_id: 'abc', channel_name: `private-partner.${partner.id}` }, 'socket_id'],
        [{ socket_id: '1.2.3', channel_name: `private-partner.${partner.id}` }, 'socket_id'],
        [{ socket_id: socketId, channel_name: 'bad#name' }, 'channel_name'],
        [{ socket_id: socketId, channel_name: 'x'.repeat(165) }, 'channel_name'],
        [{ channel_name: `private-partner.${partner.id}` }, 'socket_id'],
      ];
      for (const [body, field] of cases) {
        for (const form of [false, true]) {
          const res = await token(body, form);
          assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
          assert.equal(res.body.code, 422);
          assert.deepEqual(Object.keys(res.body.errors), [field]);
        }
      }
    });

    it('needs API credentials', async () => {
      const res = await request(t.url, 'POST', '/en/shop/wsvendor/token', { json: { socket_id: socketId, channel_name: `private-partner.${partner.id}` } });
      assert.equal(res.status, 401);
      assert.equal(res.body.code, 1004);
    });
  });

  describe('external driver', () => {
    let b: TestApp;
    before(async () => {
      const u = new URL(t.url);
      b = await startTestApp(
        {
          REALTIME_DRIVER: 'external',
          REALTIME_EXTERNAL_URL: `http://${APP.key}:${APP.secret}@${u.hostname}:${u.port}/apps/${APP.id}`,
        },
        db,
      );
    });
    after(() => b?.close());

    it("delivers node B's publish to a pusher-js client on node A (B's external Pusher server)", async () => {
      const pusher = await connect(t);
      const channel = await subscribe(pusher, 'qr-login.from-b');
      const got = nextEvent(channel, 'status_update');
      await b.app.context.realtime.publish('qr-login.from-b', 'status_update', { status: 'authenticated' });
      assert.deepEqual(await got, { status: 'authenticated' });
      const many = [nextEvent(channel, 'one'), nextEvent(channel, 'two')];
      await b.app.context.realtime.publishBatch([
        { channel: 'qr-login.from-b', event: 'one', data: 1 },
        { channel: 'qr-login.from-b', event: 'two', data: 2 },
      ]);
      assert.deepEqual(await Promise.all(many), [1, 2]);
    });

    it('signs wsvendor tokens and gives realtime config for the external server; serves no WebSocket itself', async () => {
      const config = await request(b.url, 'GET', '/en/shop/realtime/config', { headers: apiHeaders(partner.apiKey) });
      const u = new URL(t.url);
      assert.deepEqual(config.body.data, { key: APP.key, host: u.hostname, port: Number(u.port), scheme: 'http' });
      // A token from B works on A.
      const pusher = await connect(t, wsvendorAuth(b, partner.apiKey));
      await subscribe(pusher, `private-partner.${partner.id}`);
      const events = await request(b.url, 'POST', `/apps/${APP.id}/events`, { json: {} });
      assert.equal(events.status, 404);
    });

    it('rejects an invalid publish before calling the external server', async () => {
      await assert.rejects(b.app.context.realtime.publish('bad#channel', 'ev', {}), { name: 'RealtimeError', reason: 'invalid_channel' });
      await assert.rejects(b.app.context.realtime.publish('ok', 'ev', 'x'.repeat(10 * 1024 + 1)), { name: 'RealtimeError', reason: 'data_too_large' });
    });
  });
});
