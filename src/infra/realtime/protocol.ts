// The rules of the Pusher protocol v7 that the server, the HTTP events API and the
// publishers share (reference: shared/reference/realtime.md §1, docs/realtime.md).
import { randomInt } from 'node:crypto';

/** Channel names: channels.md's alphabet, `#` reserved, at most 164 characters prefix included. */
export const CHANNEL_NAME_RE = /^[A-Za-z0-9_\-=@,.;]+$/;
export const MAX_CHANNEL_NAME_LENGTH = 164;
/** Event names (pusher-http-node's limit). */
export const MAX_EVENT_NAME_LENGTH = 200;
/** Event data, in UTF-8 bytes: Pusher's 10 KB (HTTP 413 / pusher:error on the socket). */
export const MAX_EVENT_DATA_BYTES = 10 * 1024;
/** Channels per trigger and events per batch, as Pusher. */
export const MAX_CHANNELS_PER_EVENT = 100;
export const MAX_BATCH_EVENTS = 10;
/**
 * What `ws` itself accepts in one frame (more: it closes the connection with 1009). Well
 * above REALTIME_MAX_FRAME_BYTES, so that the server sees a frame just over that limit and
 * answers it with 4301 while the socket stays open; only absurd frames cost a connection.
 */
export const MAX_WS_PAYLOAD_BYTES = 1024 * 1024;
/** Client events a connection may send per second before 4301. */
export const CLIENT_EVENTS_PER_SECOND = 10;
/** Presence limits of presence-channels.md. */
export const MAX_PRESENCE_MEMBERS = 100;
export const MAX_PRESENCE_USER_ID_LENGTH = 128;
export const MAX_PRESENCE_USER_INFO_BYTES = 1024;

export const SOCKET_ID_RE = /^\d+\.\d+$/;

/** Protocol versions this server speaks; pusher-js 8 sends 7. */
export const SUPPORTED_PROTOCOLS = new Set([5, 6, 7]);

/** Close / error codes of the protocol ("Error Codes"). */
export const CODES = {
  APP_NOT_FOUND: 4001,
  INVALID_VERSION: 4006,
  UNSUPPORTED_PROTOCOL: 4007,
  NO_PROTOCOL: 4008,
  UNAUTHORIZED: 4009,
  /** Over capacity (connections per address or per node): pusher-js backs off and retries. */
  OVER_CAPACITY: 4100,
  GENERIC_RECONNECT: 4200,
  PONG_NOT_RECEIVED: 4201,
  /** A limit on the open connection (client events, subscribes, frame size, channels): it stays open. */
  LIMIT_REACHED: 4301,
} as const;

export type ChannelKind = 'public' | 'private' | 'private-encrypted' | 'presence';

export function channelKind(name: string): ChannelKind {
  if (name.startsWith('presence-')) return 'presence';
  if (name.startsWith('private-encrypted-')) return 'private-encrypted';
  if (name.startsWith('private-')) return 'private';
  return 'public';
}

export function isValidChannelName(name: unknown): name is string {
  return typeof name === 'string' && name.length > 0 && name.length <= MAX_CHANNEL_NAME_LENGTH && CHANNEL_NAME_RE.test(name);
}

export function isValidEventName(name: unknown): name is string {
  return typeof name === 'string' && name.length > 0 && name.length <= MAX_EVENT_NAME_LENGTH;
}

export function isValidSocketId(id: unknown): id is string {
  return typeof id === 'string' && id.length <= 41 && SOCKET_ID_RE.test(id);
}

/**
 * A socket id from the CSPRNG: two ~48-bit decimal numbers ("123.456" form, which
 * pusher-http-node checks). Unguessable, because a socket id takes part in channel auth.
 */
export function newSocketId(): string {
  const part = () => randomInt(1, 2 ** 48 - 1);
  return `${part()}.${part()}`;
}

/** Server → client data is a JSON string (pusher-js decodes it a second time). */
export function encodeData(data: unknown): string {
  return typeof data === 'string' ? data : JSON.stringify(data ?? {});
}

export function byteLength(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** One server → client frame. */
export function frame(event: string, data: unknown, channel?: string, userId?: string): string {
  const msg: Record<string, unknown> = { event };
  if (channel !== undefined) msg.channel = channel;
  msg.data = encodeData(data);
  if (userId !== undefined) msg.user_id = userId;
  return JSON.stringify(msg);
}

/** `pusher:error`: its data is an object, not a string (protocol doc, "Error Codes"). */
export function errorFrame(code: number | null, message: string): string {
  return JSON.stringify({ event: 'pusher:error', data: { code, message } });
}

/** An event published to channels, as it travels between publishers, nodes and sockets. */
export interface ChannelEvent {
  channel: string;
  event: string;
  /** Already encoded (a JSON string or the publisher's own string). */
  data: string;
  /** A socket not to deliver to (the publisher's own: trigger's socket_id, client events). */
  exceptSocketId?: string;
  /** Presence client events carry the sender's user_id. */
  userId?: string;
}
