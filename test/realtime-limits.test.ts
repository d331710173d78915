// Limits of the built-in Pusher server (DESIGN.md §16, docs/realtime.md "Limits"): channels
// per connection (with the official pusher-js client), connections per client address and
// per node (4100, pusher-js backs off), subscribe frames per second and frame size (4301,
// raw `ws` frames), and that every way a connection ends gives its slot back.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { connectPusher, dataOf, nextEvent, Pusher, RawClient, subscribe, targetOf, type Frame } from './helpers/realtime.js';

/** Polls `check` until it holds (the timeout only fails the test). */
async function waitUntil(what: string, check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const errorOf = (f: Frame) => f.data as { code: number | null; message: string };
const subscribeFrame = (channel: string) => ({ event: 'pusher:subscribe', data: { channel, auth: '' } });

describe('realtime server limits', () => {
  let db: TestDatabase;
  /** Defaults: 20 subscribes a second, 10 KB frames. */
  let t: TestApp;
  /** 100 channels per connection (the default), subscribes not the bottleneck. */
  let many: TestApp;
  /** 3 connections per client address; one proxy hop in front (TRUST_PROXY=1). */
  let perIp: TestApp;
  /** 3 connections on the node, no per-address limit. */
  let perNode: TestApp;
  /** 2 per address, 1 s activity and pong timeouts: every close path. */
  let leaky: TestApp;
  const raws: RawClient[] = [];
  const pushers: Pusher[] = [];
  const open = (app: TestApp) => {
    const c = RawClient.open(app);
    raws.push(c);
    return c;
  };
  const connect = async (app: TestApp) => {
    const c = await RawClient.connect(app);
    raws.push(c.client);
    return c.client;
  };
  /** A raw connection the server refuses: its pusher:error and close code (fails at once if it is let in). */
  async function refused(app: TestApp) {
    const c = open(app);
    const error = await c.next();
    if (error.event !== 'pusher:error') {
      c.close();
      assert.fail(`the connection was not refused (got ${error.event})`);
    }
    const closed = await c.closed;
    return { error, closed };
  }
  const serverOf = (app: TestApp) => app.app.fastify.pusherServer!;
  const hubOf = (app: TestApp) => app.app.context.realtime.hub!;

  before(async () => {
    db = await createTestDatabase();
    t = await startTestApp({}, db);
    many = await startTestApp({ REALTIME_MAX_SUBSCRIBES_PER_SECOND: '1000' }, db);
    perIp = await startTestApp({ REALTIME_MAX_CONNECTIONS_PER_IP: '3', TRUST_PROXY: '1' }, db);
    perNode = await startTestApp({ REALTIME_MAX_CONNECTIONS: '3', REALTIME_MAX_CONNECTIONS_PER_IP: '0' }, db);
    leaky = await startTestApp({ REALTIME_MAX_CONNECTIONS_PER_IP: '2', REALTIME_ACTIVITY_TIMEOUT: '1', REALTIME_PONG_TIMEOUT: '1' }, db);
  });
  after(async () => {
    for (const p of pushers) p.disconnect();
    for (const c of raws) c.close();
    for (const app of [t, many, perIp, perNode, leaky]) await app?.close();
    await db?.drop();
  });

  describe('channels per connection', () => {
    it('a pusher-js flood is refused at exactly 100: the 101st gets subscription_error LimitReached 4301, the first 100 work', async () => {
      const pusher = await connectPusher(many);
      pushers.push(pusher);
      const channels = await Promise.all(Array.from({ length: 100 }, (_, i) => subscribe(pusher, `flood-${i}`)));
      assert.equal(channels.length, 100);

      const extra = pusher.subscribe('flood-100');
      const refusal = await new Promise<{ type: string; error: string; status: number }>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no subscription_error for the 101st channel')), 3000);
        extra.bind('pusher:subscription_succeeded', () => reject(new Error('the 101st channel was subscribed')));
        extra.bind('pusher:subscription_error', (err: { type: string; error: string; status: number }) => {
          clearTimeout(timer);
          resolve(err);
        });
      });
      assert.equal(refusal.type, 'LimitReached');
      assert.equal(refusal.status, 4301);
      assert.match(refusal.error, /100 channels per connection/);
      // Nothing was stored for the refused channel; the socket and its channels stay.
      assert.equal(hubOf(many).subscriberCount('flood-100'), 0);
      assert.equal(pusher.connection.state, 'connected');
      for (const i of [0, 57, 99]) {
        const got = nextEvent(channels[i]!, 'hello');
        await many.app.context.realtime.publish(`flood-${i}`, 'hello', { i });
        assert.deepEqual(await got, { i });
      }

      // Unsubscribing frees a slot.
      pusher.unsubscribe('flood-0');
      await subscribe(pusher, 'flood-again');
      assert.equal(hubOf(many).subscriberCount('flood-0'), 0);
    });

    it('re-subscribing to a channel the socket has does not take a second slot; unsubscribing frees one', async () => {
      const client = await connect(many);
      for (let i = 0; i < 100; i++) client.send(subscribeFrame(`slot-${i}`));
      const frames = await client.sync();
      assert.equal(frames.filter((f) => f.event === 'pusher_internal:subscription_succeeded').length, 100);
      // Again on a channel it has: still answered as a success.
      client.send(subscribeFrame('slot-7'));
      assert.deepEqual((await client.sync()).map((f) => [f.event, f.channel]), [['pusher_internal:subscription_succeeded', 'slot-7']]);
      assert.equal(hubOf(many).subscriberCount('slot-7'), 1);

      client.send(subscribeFrame('slot-100'));
      const [refusal, ...rest] = await client.sync();
      assert.deepEqual(rest, []);
      assert.equal(refusal!.event, 'pusher:subscription_error');
      assert.equal(refusal!.channel, 'slot-100');
      const { type, status, error } = dataOf<{ type: string; error: string; status: number }>(refusal!);
      assert.deepEqual([type, status], ['LimitReached', 4301]);
      assert.match(error, /at most 100 channels per connection/);
      assert.equal(hubOf(many).subscriberCount('slot-100'), 0);

      client.send({ event: 'pusher:unsubscribe', data: { channel: 'slot-3' } });
      client.send(subscribeFrame('slot-100'));
      assert.deepEqual((await client.sync()).map((f) => [f.event, f.channel]), [['pusher_internal:subscription_succeeded', 'slot-100']]);
      client.send(subscribeFrame('slot-3'));
      assert.equal((await client.sync())[0]!.event, 'pusher:subscription_error');
      assert.equal(hubOf(many).subscriberCount('slot-3'), 0);
    });
  });

  describe('subscribe rate and frame size', () => {
    it('takes 20 subscribe frames a second; more get pusher:error 4301 and are dropped, the socket stays', async () => {
      const client = await connect(t);
      for (let i = 0; i < 25; i++) client.send(subscribeFrame(`rate-${i}`));
      const frames = await client.sync();
      const succeeded = frames.filter((f) => f.event === 'pusher_internal:subscription_succeeded').map((f) => f.channel);
      assert.deepEqual(succeeded, Array.from({ length: 20 }, (_, i) => `rate-${i}`));
      const errors = frames.filter((f) => f.event === 'pusher:error').map(errorOf);
      assert.equal(errors.length, 5);
      for (const e of errors) {
        assert.equal(e.code, 4301);
        assert.match(e.message, /20 accepted per second/);
      }
      for (let i = 20; i < 25; i++) assert.equal(hubOf(t).subscriberCount(`rate-${i}`), 0);
      assert.equal(client.ws.readyState, WebSocket.OPEN);
      // The next second takes subscribes again.
      await sleep(1050);
      client.send(subscribeFrame('rate-20'));
      assert.deepEqual((await client.sync()).map((f) => [f.event, f.channel]), [['pusher_internal:subscription_succeeded', 'rate-20']]);
    });

    it('answers a frame over 10 KB with pusher:error 4301 and drops it; the connection stays usable', async () => {
      const client = await connect(t);
      /** A pusher:ping frame of exactly `bytes` bytes. */
      const pingOf = (bytes: number) => {
        const shell = JSON.stringify({ event: 'pusher:ping', data: { pad: '' } });
        return JSON.stringify({ event: 'pusher:ping', data: { pad: 'x'.repeat(bytes - shell.length) } });
      };
      assert.equal(pingOf(10_240).length, 10_240);
      client.send(pingOf(10_240));
      assert.equal((await client.next()).event, 'pusher:pong');

      // Just over the limit, and over `ws`'s old 16 KiB cap: answered, not a 1009 close.
      for (const size of [10_241, 20_000]) {
        client.send(pingOf(size));
        const error = await client.next();
        assert.equal(error.event, 'pusher:error', String(size));
        assert.equal(errorOf(error).code, 4301);
        assert.match(errorOf(error).message, /larger than 10240 bytes/);
        // Dropped: no pong for it.
        assert.deepEqual(await client.sync(), []);
      }
      const big = JSON.stringify({ event: 'pusher:subscribe', data: { channel: 'too-big', auth: 'x'.repeat(10_300) } });
      client.send(big);
      assert.equal(errorOf(await client.next('pusher:error')).code, 4301);
      assert.equal(hubOf(t).subscriberCount('too-big'), 0);

      client.send(subscribeFrame('after-big'));
      assert.equal((await client.next()).event, 'pusher_internal:subscription_succeeded');
      assert.equal(client.ws.readyState, WebSocket.OPEN);
    });
  });

  describe('connections per client address and per node', () => {
    it('closes the 4th connection from one address with pusher:error 4100 and close 4100; closing one frees its slot', async () => {
      const held = [await connect(perIp), await connect(perIp), await connect(perIp)];
      assert.equal(serverOf(perIp).connectionsFrom('127.0.0.1'), 3);
      const { error, closed } = await refused(perIp);
      assert.equal(error.event, 'pusher:error');
      assert.equal(errorOf(error).code, 4100);
      assert.match(errorOf(error).message, /at most 3 connections per client address/);
      assert.equal(closed.code, 4100);
      assert.equal(serverOf(perIp).connectionsFrom('127.0.0.1'), 3);

      held[0]!.ws.close();
      await waitUntil('the slot to be freed', () => serverOf(perIp).connectionsFrom('127.0.0.1') === 2);
      held.push(await connect(perIp));
      assert.equal((await refused(perIp)).closed.code, 4100);
      for (const c of held) c.ws.close();
      await waitUntil('every slot to be freed', () => serverOf(perIp).connectionsFrom('127.0.0.1') === 0);
    });

    it('counts the client address the HTTP side uses (X-Forwarded-For through TRUST_PROXY), not the proxy', async () => {
      const from = async (address: string) => {
        const c = RawClient.open(perIp, undefined, { headers: { 'X-Forwarded-For': address } });
        raws.push(c);
        const first = await c.next();
        return { client: c, first };
      };
      const held = [];
      for (let i = 0; i < 3; i++) {
        const { client, first } = await from('203.0.113.7');
        assert.equal(first.event, 'pusher:connection_established');
        held.push(client);
      }
      assert.equal(serverOf(perIp).connectionsFrom('203.0.113.7'), 3);
      assert.equal(serverOf(perIp).connectionsFrom('127.0.0.1'), 0);
      const over = await from('203.0.113.7');
      if (over.first.event !== 'pusher:error') over.client.close();
      assert.equal(errorOf(over.first).code, 4100);
      assert.equal((await over.client.closed).code, 4100);
      // Another client behind the same proxy has its own slots.
      const other = await from('198.51.100.2');
      assert.equal(other.first.event, 'pusher:connection_established');
      held.push(other.client);
      for (const c of held) c.ws.close();
      await waitUntil('every slot to be freed', () => serverOf(perIp).connectionsFrom('203.0.113.7') === 0 && serverOf(perIp).connectionCount === 0);
    });

    it('pusher-js refused with 4100 backs off (no tight reconnect loop) and connects once a slot is free', async () => {
      const held = [await connect(perIp), await connect(perIp), await connect(perIp)];
      let upgrades = 0;
      const count = () => upgrades++;
      perIp.app.fastify.server.on('upgrade', count);
      try {
        const pusher = new Pusher(targetOf(perIp).key, {
          cluster: 'local',
          wsHost: targetOf(perIp).host,
          wsPort: targetOf(perIp).port,
          forceTLS: false,
          enabledTransports: ['ws'],
          disableStats: true,
        });
        pushers.push(pusher);
        const error = await new Promise<{ type: string; error: { data: { code: number } } }>((resolve, reject) => {
          pusher.connection.bind('error', resolve);
          pusher.connection.bind('connected', () => reject(new Error('pusher-js was let in over the limit')));
        });
        assert.equal(error.error.data.code, 4100);
        await sleep(2500);
        // Backoff is a second or more between attempts: at most 4 tries in 2.5 s (a retry at once would be hundreds).
        assert.ok(upgrades >= 1 && upgrades <= 4, `${upgrades} connection attempts in 2.5 s`);
        assert.notEqual(pusher.connection.state, 'connected');

        held[0]!.ws.close();
        await waitUntil('pusher-js to connect', () => pusher.connection.state === 'connected', 5000);
        pusher.disconnect();
      } finally {
        perIp.app.fastify.server.off('upgrade', count);
        for (const c of held) c.ws.close();
      }
      await waitUntil('every slot to be freed', () => serverOf(perIp).connectionsFrom('127.0.0.1') === 0);
    });

    it('closes connections over the node limit with 4100 whatever the address; closing frees the slot', async () => {
      const held = [await connect(perNode), await connect(perNode), await connect(perNode)];
      assert.equal(serverOf(perNode).connectionCount, 3);
      const { error, closed } = await refused(perNode);
      assert.equal(errorOf(error).code, 4100);
      assert.match(errorOf(error).message, /at most 3 connections/);
      assert.equal(closed.code, 4100);
      held[1]!.ws.terminate();
      await waitUntil('the slot to be freed', () => serverOf(perNode).connectionCount === 2);
      held.push(await connect(perNode));
      assert.equal((await refused(perNode)).closed.code, 4100);
      for (const c of held) c.ws.close();
      await waitUntil('every slot to be freed', () => serverOf(perNode).connectionCount === 0);
    });

    it('gives the slot back on every close path: client close, dropped TCP, pong timeout, refusals, shutdown', async () => {
      const slots = () => serverOf(leaky).connectionsFrom('127.0.0.1');
      /** Fill both slots, check a third is refused, end the two the given way, check both are back. */
      async function cycle(how: string, end: (a: RawClient, b: RawClient) => unknown) {
        const a = await connect(leaky);
        const b = await connect(leaky);
        assert.equal(slots(), 2, how);
        assert.equal((await refused(leaky)).closed.code, 4100, how);
        await end(a, b);
        await waitUntil(`slots back after ${how}`, () => slots() === 0 && serverOf(leaky).connectionCount === 0, 6000);
      }
      await cycle('a clean close', (a, b) => {
        a.ws.close();
        b.ws.close(4000);
      });
      await cycle('a dropped TCP connection', (a, b) => {
        a.ws.terminate();
        b.ws.terminate();
      });
      // Silent clients: pusher:ping after 1 s idle, no answer within 1 s → 4201.
      await cycle('the pong timeout', async (a, b) => {
        assert.equal((await a.closed).code, 4201);
        assert.equal((await b.closed).code, 4201);
      });
      // Refused connections never held a slot.
      await Promise.all(Array.from({ length: 5 }, () => connect(leaky).then(() => undefined, () => undefined)));
      await waitUntil('refused sockets to be gone', () => slots() <= 2);
      assert.equal(slots(), 2);
      for (const c of raws) c.close();
      await waitUntil('slots back', () => slots() === 0);

      const other = await startTestApp({ REALTIME_MAX_CONNECTIONS_PER_IP: '2' }, db);
      const server = serverOf(other);
      try {
        const x = await RawClient.connect(other);
        raws.push(x.client);
        assert.equal(server.connectionsFrom('127.0.0.1'), 1);
      } finally {
        await other.close();
      }
      assert.equal(server.connectionsFrom('127.0.0.1'), 0);
      assert.equal(server.connectionCount, 0);
    });
  });
});
