// The realtime plugin: with the built-in driver, the Pusher WebSocket server on this
// HTTP server's `upgrade` event and the HTTP events API; with either driver, the Shop
// routes (realtime/config, wsvendor/token). The publisher itself is context.realtime.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../config.js';
import { clientAddressResolver } from '../client-address.js';
import { pusherHttpApi } from './http-api.js';
import { PusherServer } from './pusher-server.js';
import type { Realtime } from './realtime.js';
import { realtimeShopRoutes } from './shop.routes.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The built-in Pusher server (undefined with REALTIME_DRIVER=external). */
    pusherServer: PusherServer | undefined;
  }
}

export interface RealtimePluginOptions {
  realtime: Realtime;
  config: Config;
}

async function realtimePlugin(app: FastifyInstance, { realtime, config }: RealtimePluginOptions) {
  let server: PusherServer | undefined;
  if (realtime.driver === 'builtin' && realtime.hub) {
    const pusher = new PusherServer({
      app: realtime.app,
      hub: realtime.hub,
      dispatch: (events) => realtime.dispatch(events),
      activityTimeoutSeconds: config.realtime.activityTimeoutSeconds,
      pongTimeoutSeconds: config.realtime.pongTimeoutSeconds,
      allowedOrigins: config.realtime.allowedOrigins,
      log: app.log,
      limits: config.realtime.limits,
      // The address the HTTP side sees (request.ip under TRUST_PROXY): limits count the client, not its proxy.
      addressOf: clientAddressResolver(config.trustProxy),
    });
    server = pusher;
    app.server.on('upgrade', (req, socket, head) => pusher.handleUpgrade(req, socket, head));
    // Before the HTTP server waits for its connections to end: the sockets are told to
    // reconnect (4200), so a load balancer moves them to a node that is still up.
    app.addHook('preClose', async () => pusher.close());
    await app.register(pusherHttpApi, { realtime });
  } else {
    // No WebSocket server here (clients connect to the external one): refuse upgrades cleanly.
    app.server.on('upgrade', (_req, socket) => {
      socket.on('error', () => socket.destroy());
      socket.once('finish', () => socket.destroy());
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    });
  }
  app.decorate('pusherServer', server);
  await app.register(realtimeShopRoutes, { realtime, config });
}

export default fp(realtimePlugin, { name: 'realtime', dependencies: ['http-core', 'auth'], fastify: '5.x' });
