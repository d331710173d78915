// Fan-out between nodes through Redis pub/sub (DESIGN.md §1): a node delivers an event to
// its own sockets at once and publishes it with its node id; every other node delivers it
// to theirs when it arrives, and a node ignores its own messages, so no local socket gets
// an event twice. Pub/sub needs a connection of its own (a subscribed connection can run
// no other command), so the subscriber is a second connection; publishing uses the
// shared one, which fails fast while Redis is away (local sockets are still served).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from '../../shared/logger.js';
import type { ChannelEvent } from './protocol.js';

interface Envelope {
  /** Publishing node. */
  n: string;
  e: ChannelEvent[];
}

export class RedisFanout {
  readonly nodeId = randomBytes(8).toString('hex');
  private readonly topic: string;
  private subscriber: Redis | undefined;

  constructor(
    private readonly opts: {
      url: string;
      prefix: string;
      publisher: Redis;
      deliver: (events: ChannelEvent[]) => void;
      log: Logger;
    },
  ) {
    this.topic = `${opts.prefix}realtime`;
  }

  async start(): Promise<void> {
    const sub = new Redis(this.opts.url, { lazyConnect: true, maxRetriesPerRequest: null });
    this.subscriber = sub;
    sub.on('error', (err: Error) => this.opts.log.warn({ err: { message: err.message } }, 'realtime redis subscriber error'));
    sub.on('message', (_topic: string, message: string) => this.onMessage(message));
    try {
      await sub.connect();
      await sub.subscribe(this.topic);
    } catch (err) {
      // ioredis keeps reconnecting and re-subscribes by itself once Redis is back.
      this.opts.log.warn({ err: { message: (err as Error).message } }, 'realtime: redis unreachable at start; local delivery only until it is back');
      if (sub.status !== 'end') void sub.subscribe(this.topic).catch(() => undefined);
    }
  }

  private onMessage(message: string) {
    let env: Envelope;
    try {
      env = JSON.parse(message) as Envelope;
    } catch {
      return;
    }
    if (env.n === this.nodeId || !Array.isArray(env.e)) return;
    this.opts.deliver(env.e);
  }

  async publish(events: ChannelEvent[]): Promise<void> {
    const envelope: Envelope = { n: this.nodeId, e: events };
    await this.opts.publisher.publish(this.topic, JSON.stringify(envelope));
  }

  async close(): Promise<void> {
    const sub = this.subscriber;
    this.subscriber = undefined;
    if (!sub) return;
    await sub.quit().catch(() => sub.disconnect());
  }
}
