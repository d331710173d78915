// The partner's private realtime channel (`private-partner.{id}`, DESIGN.md §5, §9) for the
// console: connection details from `shop/realtime/config` and channel authorisation from
// `shop/wsvendor/token`, both with the partner's own token (docs/decisions.md "Dashboard").
// pusher-js is imported only by the pages that listen, so it stays out of the first page.
//
// One connection for the whole console, shared by the pages that listen (SMS, Imports): a
// page that goes away only stops listening. Opening and closing a socket per page made quick
// moves between those pages close sockets that pusher-js was about to write to — it sends on
// a timer (its subscribe after the authorisation answer, a pong), and a click may run before
// that timer: "WebSocket is already in CLOSING or CLOSED state". The socket now closes only
// when no page has listened for IDLE_MS, or the partner signs out — after every send already
// queued (see `teardown`), with the authorisation of a closed connection never answered.
import Pusher from 'pusher-js';
import { api } from './client';
import { session } from './session';

export type Listener = (event: string, data: unknown) => void;

export interface PartnerChannel {
  /** Whether events arrive (subscribed); a page may poll while this is false. */
  readonly live: boolean;
  close(): void;
}

/** How long the connection outlives the last page listening: a move to another page and back keeps it. */
const IDLE_MS = 10_000;

interface Subscriber {
  onEvent: Listener;
  onLive: (live: boolean) => void;
}

interface Connection {
  partnerId: number;
  pusher?: Pusher;
  live: boolean;
  closed: boolean;
  subscribers: Set<Subscriber>;
  idle?: ReturnType<typeof setTimeout>;
}

let current: Connection | undefined;

function setLive(c: Connection, live: boolean) {
  if (c.closed || c.live === live) return;
  c.live = live;
  for (const s of [...c.subscribers]) s.onLive(live);
}

function open(partnerId: number): Connection {
  const c: Connection = { partnerId, live: false, closed: false, subscribers: new Set() };
  void (async () => {
    const cfg = await api.GET('/{locale}/shop/realtime/config');
    if (c.closed || !cfg.data) return;
    const { key, host, port, scheme } = cfg.data.data;
    const pusher = new Pusher(key, {
      cluster: 'local',
      wsHost: host,
      wsPort: port,
      wssPort: port,
      forceTLS: scheme === 'https',
      enabledTransports: ['ws', 'wss'],
      disableStats: true,
      channelAuthorization: {
        customHandler: ({ socketId, channelName }, callback) => {
          api.POST('/{locale}/shop/wsvendor/token', { body: { socket_id: socketId, channel_name: channelName } }).then(
            // A connection closed meanwhile gets no answer: pusher-js would send its subscribe.
            (r) => {
              if (c.closed) return;
              if (r.data) callback(null, { auth: r.data.data.auth });
              else callback(new Error(`channel authorisation: ${r.response.status}`), null);
            },
            (err: unknown) => {
              if (!c.closed) callback(err instanceof Error ? err : new Error(String(err)), null);
            },
          );
        },
      },
    });
    c.pusher = pusher;
    const channel = pusher.subscribe(`private-partner.${partnerId}`);
    channel.bind('pusher:subscription_succeeded', () => setLive(c, true));
    channel.bind('pusher:subscription_error', () => setLive(c, false));
    channel.bind_global((event: string, data: unknown) => {
      if (c.closed || event.startsWith('pusher:')) return;
      for (const s of [...c.subscribers]) s.onEvent(event, data);
    });
    pusher.connection.bind('state_change', ({ current: state }: { current: string }) => {
      if (state !== 'connected') setLive(c, false);
    });
  })().catch(() => setLive(c, false));
  return c;
}

/**
 * Ends a connection: nothing more reaches its pages, and the socket closes on a timer of its
 * own, so that the sends pusher-js has already queued on its timers go out first — timers run
 * in order, and a send once the socket is closing is what the browser complains about.
 */
function teardown(c: Connection) {
  if (c.closed) return;
  setLive(c, false);
  c.closed = true;
  clearTimeout(c.idle);
  if (current === c) current = undefined;
  c.subscribers.clear();
  const pusher = c.pusher;
  if (pusher) setTimeout(() => pusher.disconnect(), 0);
}

// Signing out (or another partner signing in) ends the connection at once. A new token of the
// same partner does not: the channel was authorised once, at subscribe.
session.subscribe(() => {
  if (current && session.current()?.account.id !== current.partnerId) teardown(current);
});

export function listenPartner(onEvent: Listener, onLive: (live: boolean) => void): PartnerChannel {
  const s = session.current();
  if (!s) return { live: false, close() {} };
  if (current && current.partnerId !== s.account.id) teardown(current);
  const c = (current ??= open(s.account.id));
  clearTimeout(c.idle);
  const subscriber: Subscriber = { onEvent, onLive };
  c.subscribers.add(subscriber);
  // A page arriving on a connection that is already subscribed is live at once.
  if (c.live) onLive(true);
  let closed = false;
  return {
    get live() {
      return !closed && !c.closed && c.live;
    },
    close() {
      if (closed) return;
      closed = true;
      c.subscribers.delete(subscriber);
      if (c.subscribers.size === 0 && !c.closed) {
        clearTimeout(c.idle);
        c.idle = setTimeout(() => teardown(c), IDLE_MS);
      }
    },
  };
}
