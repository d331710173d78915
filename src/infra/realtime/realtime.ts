// The realtime publisher other modules use (context.realtime), with two drivers:
//   builtin  — this process's Pusher server: local sockets at once, other nodes through
//              Redis pub/sub when REDIS_URL is set (redis-fanout.ts);
//   external — an external Pusher-compatible server, through the official `pusher` SDK.
// Either way one set of app credentials signs channel authorisations (wsvendor/token).
import Pusher from 'pusher';
import type { Redis } from 'ioredis';
import type { RealtimeConfig } from '../../config.js';
import type { Logger } from '../../shared/logger.js';
import { LocalHub } from './hub.js';
import {
  byteLength,
  encodeData,
  isValidChannelName,
  isValidEventName,
  isValidSocketId,
  MAX_BATCH_EVENTS,
  MAX_CHANNELS_PER_EVENT,
  MAX_EVENT_DATA_BYTES,
  MAX_EVENT_NAME_LENGTH,
  type ChannelEvent,
} from './protocol.js';
import { RedisFanout } from './redis-fanout.js';
import { signChannel } from './signing.js';

export interface RealtimeApp {
  id: string;
  key: string;
  secret: string;
}

export interface PublishOptions {
  /** Do not deliver to this socket (the connection that caused the event). */
  socketId?: string;
}

export interface BatchEvent {
  channel: string;
  event: string;
  /** A string is sent as is; anything else is JSON-encoded. */
  data: unknown;
  socketId?: string;
}

/** What other modules publish through. */
export interface RealtimePublisher {
  /**
   * Publish `event` with `data` on one channel or up to 100. Resolves once the event is
   * delivered to this node's sockets and handed to Redis or the external server; rejects
   * with RealtimeError for invalid input (name, size) or when the external server refuses.
   * Delivery to clients is not guaranteed (Pusher's semantics): clients re-read state by
   * HTTP after (re)subscribing.
   */
  publish(channels: string | readonly string[], event: string, data: unknown, opts?: PublishOptions): Promise<void>;
  /** Up to 10 events, each on its own channel (Pusher's batch). */
  publishBatch(events: readonly BatchEvent[]): Promise<void>;
}

export type RealtimeFailure =
  | 'invalid_channel'
  | 'too_many_channels'
  | 'invalid_event'
  | 'invalid_socket_id'
  | 'data_too_large'
  | 'batch_too_large'
  | 'upstream';

export class RealtimeError extends Error {
  constructor(
    readonly reason: RealtimeFailure,
    message: string,
  ) {
    super(message);
    this.name = 'RealtimeError';
  }
}

/** The checks Pusher's HTTP API makes on a trigger, shared by the publisher and the events API. */
export function toChannelEvents(channels: readonly string[], event: unknown, data: unknown, socketId?: unknown): ChannelEvent[] {
  if (channels.length === 0) throw new RealtimeError('invalid_channel', 'at least one channel is required');
  if (channels.length > MAX_CHANNELS_PER_EVENT) {
    throw new RealtimeError('too_many_channels', `at most ${MAX_CHANNELS_PER_EVENT} channels per event`);
  }
  for (const c of channels) {
    if (!isValidChannelName(c)) throw new RealtimeError('invalid_channel', 'invalid channel name');
  }
  if (!isValidEventName(event)) throw new RealtimeError('invalid_event', `event name must be 1 to ${MAX_EVENT_NAME_LENGTH} characters`);
  if (socketId !== undefined && !isValidSocketId(socketId)) throw new RealtimeError('invalid_socket_id', 'invalid socket_id');
  const encoded = encodeData(data);
  if (byteLength(encoded) > MAX_EVENT_DATA_BYTES) {
    throw new RealtimeError('data_too_large', `event data is larger than ${MAX_EVENT_DATA_BYTES} bytes`);
  }
  return channels.map((channel) => ({
    channel,
    event,
    data: encoded,
    ...(socketId !== undefined ? { exceptSocketId: socketId as string } : {}),
  }));
}

export function batchToChannelEvents(events: readonly BatchEvent[]): ChannelEvent[] {
  if (events.length > MAX_BATCH_EVENTS) throw new RealtimeError('batch_too_large', `at most ${MAX_BATCH_EVENTS} events per batch`);
  return events.flatMap((e) => toChannelEvents([e.channel], e.event, e.data, e.socketId));
}

export interface Realtime extends RealtimePublisher {
  readonly driver: 'builtin' | 'external';
  /** The credentials clients and the HTTP API use (the external server's with that driver). */
  readonly app: RealtimeApp;
  /** This node's sockets (builtin driver only). */
  readonly hub: LocalHub | undefined;
  /** Pusher channel authorisation for a socket: `{auth}` (+ channel_data for presence). */
  authorizeChannel(socketId: string, channel: string, channelData?: string): { auth: string; channel_data?: string };
  /** Deliver events that are already checked (the events API, client events). */
  dispatch(events: ChannelEvent[]): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

abstract class BaseRealtime implements Realtime {
  abstract readonly driver: 'builtin' | 'external';
  abstract readonly hub: LocalHub | undefined;
  constructor(readonly app: RealtimeApp) {}

  authorizeChannel(socketId: string, channel: string, channelData?: string) {
    const auth = signChannel(this.app.key, this.app.secret, socketId, channel, channelData);
    return channelData === undefined ? { auth } : { auth, channel_data: channelData };
  }

  async publish(channels: string | readonly string[], event: string, data: unknown, opts: PublishOptions = {}): Promise<void> {
    const list = typeof channels === 'string' ? [channels] : channels;
    await this.dispatch(toChannelEvents(list, event, data, opts.socketId));
  }

  async publishBatch(events: readonly BatchEvent[]): Promise<void> {
    await this.dispatch(batchToChannelEvents(events));
  }

  abstract dispatch(events: ChannelEvent[]): Promise<void>;
  async start(): Promise<void> {}
  async close(): Promise<void> {}
}

class BuiltinRealtime extends BaseRealtime {
  readonly driver = 'builtin' as const;
  readonly hub = new LocalHub();
  private readonly fanout: RedisFanout | undefined;

  constructor(
    app: RealtimeApp,
    private readonly opts: { redis: Redis | undefined; redisUrl: string | undefined; prefix: string; log: Logger },
  ) {
    super(app);
    if (opts.redis && opts.redisUrl) {
      this.fanout = new RedisFanout({
        url: opts.redisUrl,
        prefix: opts.prefix,
        publisher: opts.redis,
        deliver: (events) => this.deliverLocal(events),
        log: opts.log,
      });
    }
  }

  private deliverLocal(events: ChannelEvent[]) {
    for (const ev of events) this.hub.deliver(ev);
  }

  async dispatch(events: ChannelEvent[]): Promise<void> {
    this.deliverLocal(events);
    if (!this.fanout) return;
    try {
      await this.fanout.publish(events);
    } catch (err) {
      // This node's sockets have it; the other nodes' miss it (clients re-read by HTTP).
      this.opts.log.warn({ err: { message: (err as Error).message } }, 'realtime: redis publish failed; delivered on this node only');
    }
  }

  override async start() {
    await this.fanout?.start();
  }

  override async close() {
    await this.fanout?.close();
  }
}

class ExternalRealtime extends BaseRealtime {
  readonly driver = 'external' as const;
  readonly hub = undefined;
  private readonly client: Pusher;

  constructor(external: NonNullable<RealtimeConfig['external']>) {
    super({ id: external.appId, key: external.key, secret: external.secret });
    this.client = new Pusher({
      appId: external.appId,
      key: external.key,
      secret: external.secret,
      host: external.host,
      port: String(external.port),
      useTLS: external.scheme === 'https',
      timeout: 10_000,
    });
  }

  /** One trigger call for up to 100 channels (the SDK sends a data string as it is). */
  override async publish(channels: string | readonly string[], event: string, data: unknown, opts: PublishOptions = {}): Promise<void> {
    const list = typeof channels === 'string' ? [channels] : [...channels];
    const [first] = toChannelEvents(list, event, data, opts.socketId);
    await this.call(() => this.client.trigger(list, event, first!.data, opts.socketId ? { socket_id: opts.socketId } : undefined));
  }

  private async call(send: () => Promise<unknown>) {
    try {
      await send();
    } catch (err) {
      const status = (err as { status?: number }).status;
      throw new RealtimeError('upstream', `the external realtime server refused the events${status ? ` (HTTP ${status})` : ''}`);
    }
  }

  async dispatch(events: ChannelEvent[]): Promise<void> {
    // One batch call per 10 events, in order.
    for (let i = 0; i < events.length; i += 10) {
      const batch = events.slice(i, i + 10).map((e) => ({
        channel: e.channel,
        name: e.event,
        data: e.data,
        ...(e.exceptSocketId ? { socket_id: e.exceptSocketId } : {}),
      }));
      await this.call(() => this.client.triggerBatch(batch));
    }
  }
}

export function createRealtime(
  config: RealtimeConfig,
  app: RealtimeApp | undefined,
  opts: { redis: Redis | undefined; redisUrl: string | undefined; prefix: string; log: Logger },
): Realtime {
  if (config.driver === 'external') return new ExternalRealtime(config.external!);
  return new BuiltinRealtime(app!, opts);
}
