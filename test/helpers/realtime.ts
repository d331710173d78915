// Realtime clients for tests: the official pusher-js (its Node build) and a raw `ws`
// client for the frames pusher-js hides.
//
//   const pusher = await connectPusher(t);                         // connected pusher-js
//   const channel = await subscribe(pusher, `qr-login.${id}`);     // subscription_succeeded
//   const got = nextEvent(channel, 'status_update');               // before publishing
//   await t.app.context.realtime.publish(`qr-login.${id}`, 'status_update', {status: 'authenticated'});
//   assert.deepEqual(await got, {status: 'authenticated'});
//   pusher.disconnect();
//
// "Nothing else arrived" is checked with a sentinel, never by sleeping: a socket gets its
// frames in the order the server wrote them, so once a sentinel published after the
// action has arrived, anything the action would have sent to that socket has too.
//
//   const seen = collectEvents(channel, 'status_update');
//   ...the action that must not publish...
//   await sentinel(t, channel);           // or, raw: const before = await client.sync();
//   assert.deepEqual(seen, []);
import { randomBytes } from 'node:crypto';
import PusherModule, { type Channel, type Options } from 'pusher-js';
import WebSocket from 'ws';
import type { TestApp } from './app.js';

// pusher-js's Node build is CommonJS (`module.exports = Pusher`) while its typings declare
// an ES default export, which TypeScript under NodeNext reads as `.default`. At run time
// the default import is the class itself.
type PusherClass = (typeof PusherModule)['default'];
export const Pusher = PusherModule as unknown as PusherClass;
export type Pusher = InstanceType<PusherClass>;

export interface PusherTarget {
  key: string;
  host: string;
  port: number;
}

/** The built-in server of a test app. */
export function targetOf(t: TestApp): PusherTarget {
  const u = new URL(t.url);
  return { key: t.app.context.realtime.app.key, host: u.hostname, port: Number(u.port) };
}

/**
 * A pusher-js client on the built-in server of `t` (or another target), connected.
 * `cluster` is required by pusher-js 8 even with wsHost (realtime.md §1.8).
 */
export async function connectPusher(t: TestApp | PusherTarget, extra: Partial<Options> = {}, timeoutMs = 5000): Promise<Pusher> {
  const target = 'app' in t ? targetOf(t) : t;
  const pusher = new Pusher(target.key, {
    cluster: 'local',
    wsHost: target.host,
    wsPort: target.port,
    forceTLS: false,
    enabledTransports: ['ws'],
    disableStats: true,
    ...extra,
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      pusher.disconnect();
      reject(new Error(`pusher-js did not connect within ${timeoutMs} ms (state ${pusher.connection.state})`));
    }, timeoutMs);
    pusher.connection.bind('connected', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return pusher;
}

/** pusher-js options that authorise private channels through our wsvendor/token route. */
export function wsvendorAuth(t: TestApp, key: { key: string; secret: string }, locale = 'en'): Partial<Options> {
  return {
    channelAuthorization: {
      endpoint: `${t.url}/${locale}/shop/wsvendor/token`,
      transport: 'ajax',
      headers: { 'X-API-Key': key.key, 'X-API-Secret': key.secret },
    },
  };
}

/** Subscribe and wait for pusher:subscription_succeeded; rejects with the subscription error. */
export function subscribe(pusher: Pusher, name: string, timeoutMs = 5000): Promise<Channel> {
  const channel = pusher.subscribe(name);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no subscription answer for ${name} within ${timeoutMs} ms`)), timeoutMs);
    channel.bind('pusher:subscription_succeeded', () => {
      clearTimeout(timer);
      resolve(channel);
    });
    channel.bind('pusher:subscription_error', (err: unknown) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`subscription to ${name} failed`), { detail: err }));
    });
  });
}

/** The data of the next `event` on `channel` (bind before publishing). */
export function nextEvent<T = unknown>(channel: Channel, event: string, timeoutMs = 5000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      channel.unbind(event, handler);
      reject(new Error(`no ${event} on ${channel.name} within ${timeoutMs} ms`));
    }, timeoutMs);
    const handler = (data: T) => {
      clearTimeout(timer);
      channel.unbind(event, handler);
      resolve(data);
    };
    channel.bind(event, handler);
  });
}

/**
 * Publishes a sentinel event on `channel` through the realtime publisher of `via` and waits
 * until the pusher-js client has it. Everything published to that client's socket before
 * the sentinel has arrived by then. Across nodes, publish from the node whose earlier
 * publishes are in question (it then travels the same Redis connection behind them).
 */
export async function sentinel(via: TestApp, channel: Channel, timeoutMs = 5000): Promise<void> {
  const event = `sentinel-${randomBytes(6).toString('hex')}`;
  const got = nextEvent(channel, event, timeoutMs);
  await via.app.context.realtime.publish(channel.name, event, {});
  await got;
}

/** Every `event` on `channel` from now on (to check that something arrives exactly once). */
export function collectEvents<T = unknown>(channel: Channel, event: string): T[] {
  const seen: T[] = [];
  channel.bind(event, (data: T) => seen.push(data));
  return seen;
}

export interface Frame {
  event: string;
  channel?: string;
  data?: unknown;
  user_id?: string;
}

/** A raw WebSocket client that queues every frame it receives. */
export class RawClient {
  readonly frames: Frame[] = [];
  readonly texts: string[] = [];
  private waiters: Array<() => void> = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly opened: Promise<void>;

  constructor(
    readonly ws: WebSocket,
  ) {
    ws.on('message', (data) => {
      const text = data.toString();
      this.texts.push(text);
      try {
        this.frames.push(JSON.parse(text) as Frame);
      } catch {
        this.frames.push({ event: '<unparsable>', data: text });
      }
      for (const w of this.waiters.splice(0)) w();
    });
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    this.opened = new Promise((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.on('error', () => undefined);
    void this.closed.then(() => {
      for (const w of this.waiters.splice(0)) w();
    });
  }

  /** Open `ws://…/app/{key}?protocol=7…` on a test app (or any path on it). */
  static open(t: TestApp, path?: string, options: WebSocket.ClientOptions = {}): RawClient {
    const key = t.app.context.realtime.app.key;
    const url = t.url.replace(/^http/, 'ws') + (path ?? `/app/${key}?protocol=7&client=js&version=8.6.0&flash=false`);
    return new RawClient(new WebSocket(url, options));
  }

  /** Open and wait for pusher:connection_established; returns the socket id. */
  static async connect(t: TestApp, options: WebSocket.ClientOptions = {}): Promise<{ client: RawClient; socketId: string }> {
    const client = RawClient.open(t, undefined, options);
    const established = await client.next('pusher:connection_established');
    const { socket_id: socketId } = JSON.parse(established.data as string) as { socket_id: string };
    return { client, socketId };
  }

  send(message: unknown) {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** The next frame (optionally: the next with this event name), consuming the frames before it. */
  async next(event?: string, timeoutMs = 3000): Promise<Frame> {
    return (await this.take(event, timeoutMs)).at(-1)!;
  }

  /** Removes and returns the frames up to and including the next (matching) one. */
  private async take(event: string | undefined, timeoutMs: number): Promise<Frame[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.frames.findIndex((f) => event === undefined || f.event === event);
      if (i >= 0) return this.frames.splice(0, i + 1);
      const left = deadline - Date.now();
      if (left <= 0 || this.ws.readyState === WebSocket.CLOSED) {
        throw new Error(`no ${event ?? 'frame'} within ${timeoutMs} ms; got ${JSON.stringify(this.frames)}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /**
   * The frames received before the next `event` (consumed, with it). Await a sentinel this
   * way, then check that nothing forbidden came before it.
   */
  async until(event: string, timeoutMs = 3000): Promise<Frame[]> {
    return (await this.take(event, timeoutMs)).slice(0, -1);
  }

  /**
   * A ping round trip: the frames the server wrote to this socket before its pong (consumed,
   * with the pong). The server answers frames of a socket in order, so everything it had
   * sent this socket when it read the ping is in the result, and every frame this socket
   * sent before has been handled.
   */
  sync(timeoutMs = 3000): Promise<Frame[]> {
    this.send({ event: 'pusher:ping', data: {} });
    return this.until('pusher:pong', timeoutMs);
  }

  close() {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.terminate();
  }
}

/** Parse a frame's double-encoded data. */
export function dataOf<T = any>(f: Frame): T {
  return (typeof f.data === 'string' ? JSON.parse(f.data) : f.data) as T;
}
