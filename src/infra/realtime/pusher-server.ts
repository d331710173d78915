// The Pusher protocol v7 WebSocket server on the service's own HTTP server, at /app/{key}
// (shared/reference/realtime.md §1, docs/realtime.md). `ws` runs without a server of its
// own: the HTTP server's `upgrade` event hands it the sockets it should take, and every
// other upgrade is refused with a plain HTTP answer.
//
// Payloads are never logged: events carry login tokens (QR login).
//
// Limits (DESIGN §16, docs/realtime.md "Limits"): connections per client address and per
// node (over them: 4100, pusher-js backs off), channels per connection (LimitReached on that
// channel), subscribe frames per second and frame size (4301, the frame is dropped, the
// socket stays). What they keep per connection is a few numbers, no timers.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { Logger } from '../../shared/logger.js';
import type { LocalHub, Subscriber } from './hub.js';
import {
  byteLength,
  channelKind,
  CLIENT_EVENTS_PER_SECOND,
  CODES,
  encodeData,
  errorFrame,
  frame,
  isValidChannelName,
  MAX_EVENT_DATA_BYTES,
  MAX_EVENT_NAME_LENGTH,
  MAX_PRESENCE_MEMBERS,
  MAX_PRESENCE_USER_ID_LENGTH,
  MAX_PRESENCE_USER_INFO_BYTES,
  MAX_WS_PAYLOAD_BYTES,
  newSocketId,
  SUPPORTED_PROTOCOLS,
  type ChannelEvent,
} from './protocol.js';
import { verifyChannelAuth } from './signing.js';

export interface PusherServerOptions {
  app: { key: string; secret: string };
  hub: LocalHub;
  /** Delivers client events here and on the other nodes. */
  dispatch: (events: ChannelEvent[]) => Promise<void>;
  activityTimeoutSeconds: number;
  pongTimeoutSeconds: number;
  /** Browser origins allowed to connect; empty = any. */
  allowedOrigins: readonly string[];
  log: Logger;
  limits: RealtimeLimits;
  /**
   * The client address a connection counts against (the one the HTTP side uses, under
   * TRUST_PROXY). Default: the TCP peer.
   */
  addressOf?: (req: IncomingMessage) => string;
}

/** REALTIME_MAX_* (src/config.ts). */
export interface RealtimeLimits {
  /** Channels one connection may be subscribed to at once. */
  maxChannelsPerConnection: number;
  /** Open connections per client address; 0 = no limit. */
  maxConnectionsPerIp: number;
  /** Open connections on this node. */
  maxConnections: number;
  /** pusher:subscribe frames per connection per second. */
  maxSubscribesPerSecond: number;
  /** Bytes in one inbound frame. */
  maxFrameBytes: number;
}

const OPEN = 1;
const peerAddress = (req: IncomingMessage) => req.socket.remoteAddress ?? '';

/** One client connection. Kept small: the server may hold tens of thousands. */
class Connection implements Subscriber {
  readonly socketId = newSocketId();
  /** channel → the presence user_id this socket joined as ('' elsewhere). */
  readonly channels = new Map<string, string>();
  lastActivity = Date.now();
  /** When the server's own pusher:ping went out (0: none pending). */
  pingSentAt = 0;
  clientEventWindow = 0;
  clientEventCount = 0;
  /** pusher:subscribe frames: start of the current one-second window and the count in it. */
  subscribeWindow = 0;
  subscribeCount = 0;

  /** `address`: the client address this connection counts against (its per-address slot). */
  constructor(
    readonly ws: WebSocket,
    readonly address: string,
  ) {}

  send(text: string) {
    if (this.ws.readyState === OPEN) this.ws.send(text);
  }
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export class PusherServer {
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_WS_PAYLOAD_BYTES,
    // Compression costs ~300 KB of zlib state per socket under load for frames this small.
    perMessageDeflate: false,
    clientTracking: false,
  });
  private readonly connections = new Set<Connection>();
  /** Open connections per client address (only with a per-address limit); absent = 0. */
  private readonly perAddress = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;
  private closing = false;

  constructor(private readonly opts: PusherServerOptions) {
    // One timer for every socket (not one per socket): idle sockets get a pusher:ping,
    // and those that do not answer within the pong timeout are closed with 4201.
    const period = Math.max(100, Math.min(opts.activityTimeoutSeconds, opts.pongTimeoutSeconds) * 250);
    this.sweeper = setInterval(() => this.sweep(), period);
    this.sweeper.unref();
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  /** Open connections counted against `address` (0 without a per-address limit). */
  connectionsFrom(address: string): number {
    return this.perAddress.get(address) ?? 0;
  }

  /** For the HTTP server's `upgrade` event: take /app/{key}, refuse everything else. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer) {
    socket.on('error', () => socket.destroy());
    const path = (req.url ?? '/').split('?')[0]!;
    if (!/^\/app\/[^/]+$/.test(path)) return refuse(socket, 404, 'Not Found');
    if (this.closing) return refuse(socket, 503, 'Service Unavailable');
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, req));
  }

  private accept(ws: WebSocket, req: IncomingMessage) {
    ws.on('error', () => undefined);
    // Errors that end the connection: a pusher:error, then a close with the same code
    // (what Reverb and soketi do; protocol 7 clients read the close code).
    const reject = (code: number, message: string) => {
      ws.send(errorFrame(code, message));
      ws.close(code, message);
      // A peer that never answers the close would hold its socket for `ws`'s 30 s close
      // timeout, outside every count: refused sockets get one second.
      setTimeout(() => ws.terminate(), 1000).unref();
    };
    const [path = '', query = ''] = (req.url ?? '').split('?', 2);
    // Keys are plain ASCII ([A-Za-z0-9_-]), compared as sent: nothing to decode.
    const key = path.slice('/app/'.length);
    if (key !== this.opts.app.key) {
      return reject(CODES.APP_NOT_FOUND, /^[A-Za-z0-9_-]{1,64}$/.test(key) ? `App key ${key} does not exist` : 'App key does not exist');
    }
    const protocol = new URLSearchParams(query).get('protocol');
    if (protocol === null || protocol === '') return reject(CODES.NO_PROTOCOL, 'No protocol version supplied');
    if (!/^\d{1,3}$/.test(protocol)) return reject(CODES.INVALID_VERSION, 'Invalid version string format');
    if (!SUPPORTED_PROTOCOLS.has(Number(protocol))) return reject(CODES.UNSUPPORTED_PROTOCOL, `Unsupported protocol version ${protocol}`);
    const origin = req.headers.origin;
    // Non-browser clients send no Origin; the allow-list is what stops other web sites.
    if (origin !== undefined && this.opts.allowedOrigins.length > 0 && !this.opts.allowedOrigins.includes(origin)) {
      return reject(CODES.UNAUTHORIZED, 'Origin not allowed');
    }

    // Over capacity: 4100, so pusher-js backs off (1 s and more) instead of retrying at once.
    const { maxConnections, maxConnectionsPerIp } = this.opts.limits;
    if (this.connections.size >= maxConnections) {
      return reject(CODES.OVER_CAPACITY, `Over capacity: this server holds at most ${maxConnections} connections`);
    }
    const address = (this.opts.addressOf ?? peerAddress)(req);
    const fromAddress = this.perAddress.get(address) ?? 0;
    if (maxConnectionsPerIp > 0 && fromAddress >= maxConnectionsPerIp) {
      return reject(CODES.OVER_CAPACITY, `Over capacity: at most ${maxConnectionsPerIp} connections per client address`);
    }

    const conn = new Connection(ws, address);
    this.connections.add(conn);
    if (maxConnectionsPerIp > 0) this.perAddress.set(address, fromAddress + 1);
    ws.on('message', (data, isBinary) => this.onMessage(conn, data, isBinary));
    ws.on('ping', () => this.touch(conn));
    ws.on('pong', () => this.touch(conn));
    ws.on('close', () => this.onClose(conn));
    conn.send(
      frame('pusher:connection_established', { socket_id: conn.socketId, activity_timeout: this.opts.activityTimeoutSeconds }),
    );
  }

  private touch(conn: Connection) {
    conn.lastActivity = Date.now();
    conn.pingSentAt = 0;
  }

  private onMessage(conn: Connection, data: RawData, isBinary: boolean) {
    this.touch(conn);
    const { maxFrameBytes } = this.opts.limits;
    if (rawLength(data) > maxFrameBytes) {
      return conn.send(errorFrame(CODES.LIMIT_REACHED, `Frame rejected: larger than ${maxFrameBytes} bytes`));
    }
    if (isBinary) {
      conn.ws.close(1003, 'Binary frames are not supported');
      return;
    }
    let msg: unknown;
    try {
      msg = JSON.parse(data.toString());
    } catch {
      return conn.send(errorFrame(null, 'Invalid JSON'));
    }
    if (!isObject(msg) || typeof msg.event !== 'string') return conn.send(errorFrame(null, 'A message needs an event name'));
    const payload = typeof msg.data === 'string' ? tryParse(msg.data) : msg.data;
    switch (msg.event) {
      case 'pusher:ping':
        return conn.send(frame('pusher:pong', {}));
      case 'pusher:pong':
        return;
      case 'pusher:subscribe':
        return this.subscribe(conn, payload);
      case 'pusher:unsubscribe':
        return this.unsubscribe(conn, payload);
      case 'pusher:signin':
        return conn.send(errorFrame(null, 'User sign-in is not supported by this server'));
    }
    if (msg.event.startsWith('client-')) return this.clientEvent(conn, msg);
    // Unknown protocol events are ignored, for the protocol's forward compatibility.
    if (msg.event.startsWith('pusher:')) return;
    return conn.send(errorFrame(null, `Unsupported event ${msg.event.slice(0, MAX_EVENT_NAME_LENGTH)}`));
  }

  /**
   * A failed channel authorisation: hosted Pusher's `pusher:error` (code null), then the
   * channel-scoped `pusher:subscription_error` (soketi's form), which pusher-js passes to
   * the channel's own `pusher:subscription_error` handlers. The socket and its other
   * subscriptions stay.
   */
  private refuseSubscription(conn: Connection, channel: string, message: string, status: number) {
    conn.send(errorFrame(null, message));
    conn.send(frame('pusher:subscription_error', { type: 'AuthError', error: message, status }, channel));
  }

  private subscribe(conn: Connection, data: unknown) {
    // Every subscribe frame counts, valid or not: the rate bounds the work a socket can ask for.
    const { maxSubscribesPerSecond, maxChannelsPerConnection } = this.opts.limits;
    const now = Date.now();
    if (now - conn.subscribeWindow >= 1000) {
      conn.subscribeWindow = now;
      conn.subscribeCount = 0;
    }
    if (++conn.subscribeCount > maxSubscribesPerSecond) {
      return conn.send(errorFrame(CODES.LIMIT_REACHED, `Subscribe rejected: only ${maxSubscribesPerSecond} accepted per second`));
    }
    if (!isObject(data)) return conn.send(errorFrame(null, 'pusher:subscribe needs data.channel'));
    const channel = data.channel;
    if (!isValidChannelName(channel)) return conn.send(errorFrame(null, 'Invalid channel name'));
    // A channel this socket already has does not take another slot.
    if (!conn.channels.has(channel) && conn.channels.size >= maxChannelsPerConnection) {
      const error = `Subscription limit reached: at most ${maxChannelsPerConnection} channels per connection (unsubscribe from one first)`;
      return conn.send(frame('pusher:subscription_error', { type: 'LimitReached', error, status: CODES.LIMIT_REACHED }, channel));
    }
    const kind = channelKind(channel);
    const { app, hub } = this.opts;

    if (kind === 'public') {
      hub.subscribe(channel, conn);
      conn.channels.set(channel, '');
      return conn.send(frame('pusher_internal:subscription_succeeded', {}, channel));
    }

    if (kind !== 'presence') {
      if (!verifyChannelAuth(app, data.auth, conn.socketId, channel)) {
        return this.refuseSubscription(conn, channel, `Invalid signature: expected HMAC SHA256 hex digest of ${conn.socketId}:${channel}`, 401);
      }
      hub.subscribe(channel, conn);
      conn.channels.set(channel, '');
      return conn.send(frame('pusher_internal:subscription_succeeded', {}, channel));
    }

    const channelData = data.channel_data;
    if (typeof channelData !== 'string' || !verifyChannelAuth(app, data.auth, conn.socketId, channel, channelData)) {
      return this.refuseSubscription(
        conn,
        channel,
        `Invalid signature: expected HMAC SHA256 hex digest of ${conn.socketId}:${channel}:<channel_data>`,
        401,
      );
    }
    const member = parseChannelData(channelData);
    if (typeof member === 'string') return this.refuseSubscription(conn, channel, member, 400);
    const previous = conn.channels.get(channel);
    if (previous !== undefined && previous !== member.userId) {
      // The same socket rejoining as someone else: leave as the old user first.
      this.leavePresence(conn, channel, previous);
    }
    if (!hub.presenceHasRoom(channel, member.userId, MAX_PRESENCE_MEMBERS)) {
      return this.refuseSubscription(conn, channel, `Presence channel is full (${MAX_PRESENCE_MEMBERS} members)`, 403);
    }
    hub.subscribe(channel, conn);
    conn.channels.set(channel, member.userId);
    const added = hub.presenceJoin(channel, conn, member);
    const members = hub.presenceMembers(channel);
    const hash: Json = {};
    for (const m of members) hash[m.userId] = m.userInfo ?? null;
    conn.send(
      frame(
        'pusher_internal:subscription_succeeded',
        { presence: { ids: members.map((m) => m.userId), hash, count: members.length } },
        channel,
      ),
    );
    if (added) {
      hub.deliver({
        channel,
        event: 'pusher_internal:member_added',
        data: encodeData({ user_id: member.userId, user_info: member.userInfo }),
        exceptSocketId: conn.socketId,
      });
    }
  }

  private leavePresence(conn: Connection, channel: string, userId: string) {
    const { hub } = this.opts;
    if (hub.presenceLeave(channel, conn, userId)) {
      hub.deliver({ channel, event: 'pusher_internal:member_removed', data: encodeData({ user_id: userId }), exceptSocketId: conn.socketId });
    }
  }

  private unsubscribe(conn: Connection, data: unknown) {
    if (!isObject(data) || typeof data.channel !== 'string') return;
    this.leave(conn, data.channel);
  }

  private leave(conn: Connection, channel: string) {
    const userId = conn.channels.get(channel);
    if (userId === undefined) return;
    conn.channels.delete(channel);
    this.opts.hub.unsubscribe(channel, conn);
    if (userId !== '') this.leavePresence(conn, channel, userId);
  }

  private clientEvent(conn: Connection, msg: Json) {
    const event = msg.event as string;
    const channel = msg.channel;
    if (event.length > MAX_EVENT_NAME_LENGTH) return conn.send(errorFrame(null, `Event name is longer than ${MAX_EVENT_NAME_LENGTH} characters`));
    if (typeof channel !== 'string') return conn.send(errorFrame(null, 'A client event needs a channel'));
    const kind = channelKind(channel);
    // Public channels (qr-login.* among them) never carry client events: anyone who knows
    // the name could speak on them. Encrypted channels cannot either (Pusher's rule).
    if (kind !== 'private' && kind !== 'presence') {
      return conn.send(errorFrame(null, 'Client events are only allowed on private and presence channels'));
    }
    const userId = conn.channels.get(channel);
    if (userId === undefined) return conn.send(errorFrame(null, `Client event rejected: not subscribed to ${channel}`));
    const now = Date.now();
    if (now - conn.clientEventWindow >= 1000) {
      conn.clientEventWindow = now;
      conn.clientEventCount = 0;
    }
    if (++conn.clientEventCount > CLIENT_EVENTS_PER_SECOND) {
      return conn.send(errorFrame(CODES.LIMIT_REACHED, `Client event rejected: only ${CLIENT_EVENTS_PER_SECOND} accepted per second`));
    }
    const data = encodeData(msg.data);
    if (byteLength(data) > MAX_EVENT_DATA_BYTES) {
      return conn.send(errorFrame(null, `Client event rejected: data is larger than ${MAX_EVENT_DATA_BYTES} bytes`));
    }
    // Not echoed to the sender; on presence channels it carries the sender's user_id.
    void this.opts.dispatch([{ channel, event, data, exceptSocketId: conn.socketId, ...(userId !== '' ? { userId } : {}) }]);
  }

  /** Every way a connection ends comes here (once): its slots are given back. */
  private onClose(conn: Connection) {
    if (!this.connections.delete(conn)) return;
    const fromAddress = this.perAddress.get(conn.address);
    if (fromAddress !== undefined) {
      if (fromAddress <= 1) this.perAddress.delete(conn.address);
      else this.perAddress.set(conn.address, fromAddress - 1);
    }
    for (const channel of [...conn.channels.keys()]) this.leave(conn, channel);
  }

  private sweep() {
    const now = Date.now();
    const idleMs = this.opts.activityTimeoutSeconds * 1000;
    const pongMs = this.opts.pongTimeoutSeconds * 1000;
    for (const conn of this.connections) {
      if (conn.pingSentAt === 0) {
        if (now - conn.lastActivity >= idleMs) {
          conn.pingSentAt = now;
          conn.send(frame('pusher:ping', {}));
        }
      } else if (now - conn.pingSentAt >= pongMs) {
        conn.send(errorFrame(CODES.PONG_NOT_RECEIVED, 'Pong reply not received in time'));
        conn.ws.close(CODES.PONG_NOT_RECEIVED, 'Pong reply not received in time');
        // A peer that does not answer the close either is cut off by the next sweep.
        conn.pingSentAt = now - pongMs / 2;
        this.onClose(conn);
        setTimeout(() => conn.ws.terminate(), 1000).unref();
      }
    }
  }

  /** Graceful shutdown: every client is told to reconnect (4200), to another node if there is one. */
  async close(timeoutMs = 2000): Promise<void> {
    this.closing = true;
    clearInterval(this.sweeper);
    const open = [...this.connections];
    const closed = open.map((conn) => new Promise<void>((resolve) => conn.ws.once('close', () => resolve())));
    for (const conn of open) conn.ws.close(CODES.GENERIC_RECONNECT, 'Server shutting down');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(closed),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    for (const conn of open) conn.ws.terminate();
    for (const conn of open) this.onClose(conn);
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}

/** Bytes in an inbound frame, however `ws` hands it over. */
function rawLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((n, b) => n + b.length, 0);
  return data instanceof ArrayBuffer ? data.byteLength : data.length;
}

function tryParse(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

/** channel_data of a presence subscription: {user_id, user_info?}; an error message otherwise. */
function parseChannelData(channelData: string): { userId: string; userInfo: unknown } | string {
  const parsed = tryParse(channelData);
  if (!isObject(parsed)) return 'channel_data must be a JSON object';
  const id = parsed.user_id;
  if ((typeof id !== 'string' && typeof id !== 'number') || String(id) === '') return 'channel_data.user_id is required';
  const userId = String(id);
  if (userId.length > MAX_PRESENCE_USER_ID_LENGTH) return `user_id is longer than ${MAX_PRESENCE_USER_ID_LENGTH} characters`;
  const userInfo = parsed.user_info;
  if (userInfo !== undefined && byteLength(JSON.stringify(userInfo)) > MAX_PRESENCE_USER_INFO_BYTES) {
    return `user_info is larger than ${MAX_PRESENCE_USER_INFO_BYTES} bytes`;
  }
  return { userId, userInfo };
}

/** A plain HTTP answer to an upgrade this server does not take (as `ws` itself aborts a handshake). */
function refuse(socket: Duplex, status: number, text: string) {
  if (!socket.writable) return socket.destroy();
  socket.once('finish', () => socket.destroy());
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${text.length}\r\n\r\n${text}`);
}
