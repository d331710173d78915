// The partner's private realtime channel (`private-partner.{id}`, DESIGN.md §5, §9) for the
// console: connection details from `shop/realtime/config` and channel authorisation from
// `shop/wsvendor/token`, both with the partner's own token (docs/decisions.md "Dashboard").
// pusher-js is imported only by the pages that listen, so it stays out of the first page.
import Pusher from 'pusher-js';
import { api } from './client';
import { session } from './session';

export type Listener = (event: string, data: unknown) => void;

export interface PartnerChannel {
  /** Whether events arrive (subscribed); a page may poll while this is false. */
  readonly live: boolean;
  close(): void;
}

export function listenPartner(onEvent: Listener, onLive: (live: boolean) => void): PartnerChannel {
  let pusher: Pusher | undefined;
  let closed = false;
  let live = false;
  const setLive = (v: boolean) => {
    if (v === live) return;
    live = v;
    onLive(v);
  };
  const partnerId = session.current()?.account.id;
  void (async () => {
    if (partnerId === undefined) return;
    const cfg = await api.GET('/{locale}/shop/realtime/config');
    if (closed || !cfg.data) return;
    const { key, host, port, scheme } = cfg.data.data;
    pusher = new Pusher(key, {
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
            (r) => (r.data ? callback(null, { auth: r.data.data.auth }) : callback(new Error(`channel authorisation: ${r.response.status}`), null)),
            (err: unknown) => callback(err instanceof Error ? err : new Error(String(err)), null),
          );
        },
      },
    });
    const channel = pusher.subscribe(`private-partner.${partnerId}`);
    channel.bind('pusher:subscription_succeeded', () => setLive(true));
    channel.bind('pusher:subscription_error', () => setLive(false));
    channel.bind_global((event: string, data: unknown) => {
      if (!event.startsWith('pusher:')) onEvent(event, data);
    });
    pusher.connection.bind('state_change', ({ current }: { current: string }) => {
      if (current !== 'connected') setLive(false);
    });
  })().catch(() => setLive(false));
  return {
    get live() {
      return live;
    },
    close() {
      closed = true;
      pusher?.disconnect();
    },
  };
}
