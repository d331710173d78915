// The Pusher protocol v7 on the wire (shared/reference/realtime.md §1), with a raw `ws`
// client: the frames, codes and limits pusher-js hides.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { signChannel } from '../src/infra/realtime/signing.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { dataOf, RawClient } from './helpers/realtime.js';

/** Polls `check` until it holds (the timeout only fails the test). */
async function waitUntil(what: string, check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('Pusher protocol on the wire', () => {
  let db: TestDatabase;
  let t: TestApp;
  /** Same database; 1 s activity and pong timeouts, an Origin allow-list. */
  let short: TestApp;
  const clients: RawClient[] = [];
  const connect = async (app = t, options: WebSocket.ClientOptions = {}) => {
    const c = await RawClient.connect(app, options);
    clients.push(c.client);
    return c;
  };
  const open = (app: TestApp, path?: string, options: WebSocket.ClientOptions = {}) => {
    const c = RawClient.open(app, path, options);
    clients.push(c);
    return c;
  };
  const sign = (socketId: string, channel: string, channelData?: string) => {
    const { key, secret } = t.app.context.realtime.app;
    return signChannel(key, secret, socketId, channel, channelData);
  };
  /** Subscribe and return the subscription_succeeded frame. */
  async function join(client: RawClient, channel: string, auth?: string, channelData?: string) {
    client.send({ event: 'pusher:subscribe', data: { channel, auth: auth ?? '', ...(channelData ? { channel_data: channelData } : {}) } });
    return client.next('pusher_internal:subscription_succeeded');
  }

  before(async () => {
    db = await createTestDatabase();
    t = await startTestApp({}, db);
    short = await startTestApp(
      { REALTIME_ACTIVITY_TIMEOUT: '1', REALTIME_PONG_TIMEOUT: '1', REALTIME_ALLOWED_ORIGINS: 'https://shop.example.com,http://localhost:8080' },
      db,
    );
  });
  after(async () => {
    for (const c of clients) c.close();
    await t?.close();
    await short?.close();
    await db?.drop();
  });

  describe('handshake', () => {
    it('sends pusher:connection_established with double-encoded data, a CSPRNG socket_id and a truthy activity_timeout', async () => {
      const client = open(t);
      const first = await client.next();
      assert.equal(first.event, 'pusher:connection_established');
      assert.deepEqual(Object.keys(first), ['event', 'data']);
      assert.equal(typeof first.data, 'string');
      const data = dataOf(first);
      assert.match(data.socket_id, /^\d+\.\d+$/);
      assert.equal(data.activity_timeout, 30);
      const other = await connect();
      assert.notEqual(other.socketId, data.socket_id);
    });

    it('refuses an unknown app key: pusher:error 4001, then close 4001', async () => {
      const client = open(t, '/app/nope?protocol=7&client=js&version=8.6.0');
      const error = await client.next();
      assert.equal(error.event, 'pusher:error');
      assert.equal((error.data as { code: number }).code, 4001);
      assert.equal(typeof (error.data as { message: string }).message, 'string');
      assert.equal((await client.closed).code, 4001);
      // Odd keys (malformed escapes, long multi-byte ones) are refused the same way.
      for (const key of ['%E0%A4%A', encodeURIComponent('é'.repeat(100)), 'k'.repeat(150)]) {
        const odd = open(t, `/app/${key}?protocol=7`);
        assert.equal(((await odd.next()).data as { code: number }).code, 4001, key);
        assert.equal((await odd.closed).code, 4001);
      }
    });

    it('checks the protocol version: missing 4008, malformed 4006, unsupported 4007', async () => {
      const key = t.app.context.realtime.app.key;
      for (const [query, code] of [['', 4008], ['?client=js', 4008], ['?protocol=seven', 4006], ['?protocol=3', 4007], ['?protocol=8', 4007]] as const) {
        const client = open(t, `/app/${key}${query}`);
        const error = await client.next();
        assert.equal(error.event, 'pusher:error', query);
        assert.equal((error.data as { code: number }).code, code, query);
        assert.equal((await client.closed).code, code, query);
      }
      for (const version of ['5', '6', '7']) {
        const client = open(t, `/app/${key}?protocol=${version}`);
        assert.equal((await client.next()).event, 'pusher:connection_established', version);
      }
    });

    it('refuses upgrades on other paths with a plain HTTP 404', async () => {
      for (const path of ['/ws', '/app', `/app/${t.app.context.realtime.app.key}/extra`, '/en/shop/health']) {
        const ws = new WebSocket(t.url.replace(/^http/, 'ws') + path);
        const status = await new Promise<number>((resolve, reject) => {
          ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
          ws.on('open', () => reject(new Error(`${path} was upgraded`)));
          ws.on('error', () => undefined);
        });
        assert.equal(status, 404, path);
        ws.terminate();
      }
      // Plain HTTP on the same port is unaffected.
      assert.equal((await fetch(`${t.url}/healthz`)).status, 200);
    });

    it('applies the Origin allow-list: another origin gets 4009; listed origins and non-browser clients connect', async () => {
      const evil = open(short, undefined, { origin: 'https://evil.example.com' });
      const error = await evil.next();
      assert.equal(error.event, 'pusher:error');
      assert.equal((error.data as { code: number }).code, 4009);
      assert.equal((await evil.closed).code, 4009);
      await connect(short, { origin: 'https://shop.example.com' });
      await connect(short, { origin: 'http://localhost:8080' });
      await connect(short);
    });
  });

  describe('keepalive', () => {
    it('answers pusher:ping with pusher:pong and RFC 6455 pings with pongs', async () => {
      const { client } = await connect();
      client.send({ event: 'pusher:ping', data: {} });
      const pong = await client.next('pusher:pong');
      assert.deepEqual(pong, { event: 'pusher:pong', data: '{}' });
      const frame = new Promise<string>((resolve) => client.ws.once('pong', (data) => resolve(data.toString())));
      client.ws.ping('hello');
      assert.equal(await frame, 'hello');
    });

    it('pings an idle socket and closes it with 4201 when no pong comes; an answer keeps it open', async () => {
      const client = open(short);
      assert.equal(dataOf(await client.next('pusher:connection_established')).activity_timeout, 1);
      const ping = await client.next('pusher:ping', 3000);
      assert.equal(ping.data, '{}');
      client.send({ event: 'pusher:pong', data: {} });
      // Answered: still open, pinged again after the next idle period.
      await client.next('pusher:ping', 3000);
      assert.equal(client.ws.readyState, WebSocket.OPEN);
      // Not answered: error 4201, then close 4201.
      const error = await client.next('pusher:error', 3000);
      assert.equal((error.data as { code: number }).code, 4201);
      assert.equal((await client.closed).code, 4201);
    });
  });

  describe('subscriptions', () => {
    it('subscribes to a public channel and answers with pusher_internal:subscription_succeeded', async () => {
      const { client } = await connect();
      client.send({ event: 'pusher:subscribe', data: { channel: 'qr-login.abc', auth: '' } });
      const text = await client.next('pusher_internal:subscription_succeeded').then(() => client.texts.at(-1));
      assert.equal(text, '{"event":"pusher_internal:subscription_succeeded","channel":"qr-login.abc","data":"{}"}');
      await t.app.context.realtime.publish('qr-login.abc', 'status_update', { status: 'authenticated', token: 't' });
      const event = await client.next('status_update');
      assert.deepEqual(event, { event: 'status_update', channel: 'qr-login.abc', data: '{"status":"authenticated","token":"t"}' });
      // Unsubscribe: no reply, no more events (the pong after the publish closes the window).
      client.send({ event: 'pusher:unsubscribe', data: { channel: 'qr-login.abc' } });
      assert.deepEqual(await client.sync(), []);
      await t.app.context.realtime.publish('qr-login.abc', 'status_update', { status: 'expired' });
      assert.deepEqual(await client.sync(), []);
    });

    it('accepts 164-character channel names and refuses longer ones and other characters', async () => {
      const { client } = await connect();
      const longest = `qr-login.${'a'.repeat(164 - 9)}`;
      assert.equal(longest.length, 164);
      await join(client, longest);
      for (const bad of [`${longest}b`, 'has space', 'hash#tag', 'ünicode', '', 42]) {
        client.send({ event: 'pusher:subscribe', data: { channel: bad, auth: '' } });
        const error = await client.next();
        assert.equal(error.event, 'pusher:error', String(bad));
        assert.equal((error.data as { code: null }).code, null);
      }
      await join(client, 'A-Za_z0-9=@,.;');
    });

    it('checks private channel signatures; a failure leaves the socket and its other subscriptions', async () => {
      const { client, socketId } = await connect();
      await join(client, 'public-one');
      await join(client, 'private-ok', sign(socketId, 'private-ok'));
      for (const auth of [sign('1.2', 'private-x'), sign(socketId, 'private-other'), `wrong:${sign(socketId, 'private-x').split(':')[1]}`, '', undefined]) {
        client.send({ event: 'pusher:subscribe', data: { channel: 'private-x', ...(auth === undefined ? {} : { auth }) } });
        const error = await client.next();
        assert.equal(error.event, 'pusher:error');
        assert.equal((error.data as { code: null }).code, null);
        assert.match((error.data as { message: string }).message, /^Invalid signature/);
        const scoped = await client.next();
        assert.equal(scoped.event, 'pusher:subscription_error');
        assert.equal(scoped.channel, 'private-x');
        const detail = dataOf<{ type: string; status: number; error: string }>(scoped);
        assert.deepEqual([detail.type, detail.status], ['AuthError', 401]);
        assert.match(detail.error, /^Invalid signature/);
      }
      await t.app.context.realtime.publish(['public-one', 'private-ok', 'private-x'], 'after', { n: 1 });
      assert.deepEqual(
        (await client.sync()).map((f) => [f.event, f.channel]),
        [
          ['after', 'public-one'],
          ['after', 'private-ok'],
        ],
      );
      assert.equal(client.ws.readyState, WebSocket.OPEN);
    });

    it('runs presence channels: members in the success data, member_added and member_removed once per user_id', async () => {
      const channel = 'presence-game-session.k1';
      const join2 = async (userId: string | number, name: string) => {
        const c = await connect();
        const channelData = JSON.stringify({ user_id: userId, user_info: { name } });
        const ok = await join(c.client, channel, sign(c.socketId, channel, channelData), channelData);
        return { ...c, ok };
      };
      const anna = await join2('anna', 'Anna');
      assert.deepEqual(dataOf(anna.ok), { presence: { ids: ['anna'], hash: { anna: { name: 'Anna' } }, count: 1 } });
      const ben = await join2(7, 'Ben');
      assert.deepEqual(dataOf(ben.ok).presence.count, 2);
      assert.deepEqual(dataOf(ben.ok).presence.hash['7'], { name: 'Ben' });
      const added = await anna.client.next('pusher_internal:member_added');
      assert.deepEqual(dataOf(added), { user_id: '7', user_info: { name: 'Ben' } });
      assert.equal(added.channel, channel);
      // Ben again, from a second socket: no second member_added.
      const ben2 = await join2(7, 'Ben');
      assert.equal(dataOf(ben2.ok).presence.count, 2);
      // ben2's join was handled before its subscription_succeeded, so before anna's pong.
      assert.deepEqual(await anna.client.sync(), []);
      // One of Ben's sockets drops: he is still there. The last one leaves: member_removed once.
      ben.client.close();
      const hub = t.app.context.realtime.hub!;
      await waitUntil('the server to handle the dropped socket', () => hub.subscriberCount(channel) === 2);
      assert.deepEqual(await anna.client.sync(), []);
      ben2.client.send({ event: 'pusher:unsubscribe', data: { channel } });
      await ben2.client.sync();
      assert.deepEqual(
        (await anna.client.sync()).map((f) => [f.event, dataOf(f)]),
        [['pusher_internal:member_removed', { user_id: '7' }]],
      );
      // A presence subscription needs channel_data signed with it.
      const c = await connect();
      c.client.send({ event: 'pusher:subscribe', data: { channel, auth: sign(c.socketId, channel) } });
      assert.match(((await c.client.next('pusher:error')).data as { message: string }).message, /^Invalid signature/);
      assert.equal((await c.client.next()).event, 'pusher:subscription_error');
      const tooLong = JSON.stringify({ user_id: 'u'.repeat(129) });
      c.client.send({ event: 'pusher:subscribe', data: { channel, auth: sign(c.socketId, channel, tooLong), channel_data: tooLong } });
      assert.match(((await c.client.next('pusher:error')).data as { message: string }).message, /user_id/);
      assert.equal(dataOf(await c.client.next()).status, 400);
    });
  });

  describe('client events', () => {
    async function pair(channel: string) {
      const a = await connect();
      const b = await connect();
      for (const x of [a, b]) await join(x.client, channel, channel.startsWith('private-') ? sign(x.socketId, channel) : undefined);
      return [a.client, b.client] as const;
    }

    it('relays them on private channels to the other subscribers only', async () => {
      const [a, b] = await pair('private-till.1');
      a.send({ event: 'client-typing', channel: 'private-till.1', data: { who: 'a' } });
      const got = await b.next('client-typing');
      assert.deepEqual(got, { event: 'client-typing', channel: 'private-till.1', data: '{"who":"a"}' });
      assert.deepEqual(await a.sync(), [], 'not echoed to the sender');
    });

    it('refuses them on public channels such as qr-login.*, without delivering', async () => {
      const [a, b] = await pair('qr-login.victim');
      a.send({ event: 'client-status_update', channel: 'qr-login.victim', data: { status: 'authenticated', token: 'forged' } });
      const error = await a.next('pusher:error');
      assert.match((error.data as { message: string }).message, /only allowed on private and presence channels/);
      assert.deepEqual(await b.sync(), []);
    });

    it('refuses them from a socket that is not subscribed, and over 10 KB of data', async () => {
      const [a, b] = await pair('private-till.2');
      const { client: outsider } = await connect();
      outsider.send({ event: 'client-x', channel: 'private-till.2', data: {} });
      assert.match(((await outsider.next('pusher:error')).data as { message: string }).message, /not subscribed/);
      a.send({ event: 'client-big', channel: 'private-till.2', data: 'x'.repeat(10 * 1024 + 1) });
      assert.match(((await a.next('pusher:error')).data as { message: string }).message, /larger than/);
      assert.deepEqual(await b.sync(), []);
    });

    it('accepts 10 per second per connection; the 11th gets 4301 and the socket stays open', async () => {
      const [a, b] = await pair('private-till.3');
      for (let i = 0; i < 11; i++) a.send({ event: 'client-n', channel: 'private-till.3', data: { i } });
      const error = await a.next('pusher:error');
      assert.equal((error.data as { code: number }).code, 4301);
      // a's error came after all eleven were handled; b's pong after everything relayed to it.
      assert.deepEqual(
        (await b.sync()).map((f) => [f.event, dataOf(f)]),
        Array.from({ length: 10 }, (_, i) => ['client-n', { i }]),
      );
      assert.equal(a.ws.readyState, WebSocket.OPEN);
    });
  });

  describe('frames and limits', () => {
    it('answers malformed messages with pusher:error and stays open', async () => {
      const { client } = await connect();
      for (const bad of ['not json', '[]', '{"data":{}}', '{"event":"no-prefix"}']) {
        client.send(bad);
        assert.equal((await client.next()).event, 'pusher:error', bad);
      }
      // Unknown pusher: events are ignored (forward compatibility).
      client.send({ event: 'pusher:something_new', data: {} });
      client.send({ event: 'pusher:ping', data: {} });
      assert.equal((await client.next()).event, 'pusher:pong');
      // data may also arrive as a JSON string.
      client.send({ event: 'pusher:subscribe', data: JSON.stringify({ channel: 'as-string' }) });
      assert.equal((await client.next()).channel, 'as-string');
    });

    // Frames over REALTIME_MAX_FRAME_BYTES but within 1 MiB get 4301 and stay open (realtime-limits.test.ts).
    it('closes on binary frames (1003) and on frames over 1 MiB (1009, by `ws`)', async () => {
      const { client: binary } = await connect();
      binary.ws.send(Buffer.from('{"event":"pusher:ping","data":{}}'), { binary: true });
      assert.equal((await binary.closed).code, 1003);
      const { client: big } = await connect();
      big.send({ event: 'pusher:ping', data: { pad: 'x'.repeat(1024 * 1024) } });
      assert.equal((await big.closed).code, 1009);
    });

    it('closes sockets with 4200 on shutdown', async () => {
      const other = await startTestApp({}, db);
      const { client } = await RawClient.connect(other);
      await join(client, 'bye');
      await other.close();
      assert.equal((await client.closed).code, 4200);
    });
  });
});
