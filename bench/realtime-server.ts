// A server under test for bench/realtime.ts, forked with --expose-gc. argv[2] picks it:
//   loyalty — the real app (embedded PGlite in a temporary directory, built-in realtime);
//   bare-ws — the reference: node:http + `ws` with the same options (no compression,
//             16 KiB frames), answering each connection with one frame and broadcasting
//             each POST /publish body to every socket.
// It reports {port} over IPC, and answers 'memory' with process.memoryUsage() after GC.
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';

const kind = process.argv[2];
const gc = (globalThis as { gc?: () => void }).gc;

async function settledMemory(): Promise<NodeJS.MemoryUsage> {
  for (let i = 0; i < 4; i++) {
    gc?.();
    await new Promise((r) => setTimeout(r, 100));
  }
  return process.memoryUsage();
}

interface Started {
  port: number;
  close: () => Promise<void>;
  /** Loyalty only: a partner's API credentials and a customer token, for the QR-confirm phase. */
  fixtures?: { apiKey: { key: string; secret: string }; customerToken: string };
}

async function startLoyalty(): Promise<Started> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-bench-rt-'));
  const { loadConfig } = await import('../src/config.js');
  const { buildApp } = await import('../src/app.js');
  const config = loadConfig({
    ...process.env,
    HOST: '127.0.0.1',
    PORT: '0',
    LOYALTY_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_DISABLED: 'true',
    LOYALTY_DEMO_SEED: 'false',
    METRICS_ENABLED: 'false',
    // Idle sockets must stay idle for the memory figure: no server pings during the run.
    REALTIME_ACTIVITY_TIMEOUT: '3600',
  });
  const { fastify, context } = await buildApp(config, { workers: false });
  await fastify.listen({ host: '127.0.0.1', port: 0 });
  const { partners, apiKeys, customers } = context.services;
  const partner = await partners.create({ name: 'Bench', email: 'bench@example.com', password: 'bench-password-1' });
  if (!partner.ok) throw new Error('bench partner not created');
  const apiKey = await apiKeys.create(partner.value.id, 'bench');
  const customer = await customers.findOrCreateByPhone(context.database.db, '+37060000001');
  const { token } = await context.tokens.sign({ kind: 'customer', subject: customer.id });
  return {
    port: (fastify.server.address() as AddressInfo).port,
    fixtures: { apiKey: { key: apiKey.key, secret: apiKey.secret }, customerToken: token },
    close: async () => {
      await fastify.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function startBare(): Promise<Started> {
  const sockets = new Set<WebSocket>();
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 16 * 1024, clientTracking: false });
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => (body += d));
    req.on('end', () => {
      for (const ws of sockets) ws.send(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.on('upgrade', (req, socket, head) => {
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      ws.on('close', () => sockets.delete(ws));
      ws.on('message', () => undefined);
      ws.send('{"event":"pusher:connection_established","data":"{\\"socket_id\\":\\"1.1\\",\\"activity_timeout\\":30}"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const ws of sockets) ws.terminate();
      await new Promise((r) => server.close(r));
    },
  };
}

const started = kind === 'loyalty' ? await startLoyalty() : kind === 'bare-ws' ? await startBare() : undefined;
if (!started) throw new Error(`unknown server kind ${kind}`);
process.on('message', (msg: { type: string }) => {
  if (msg.type === 'memory') void settledMemory().then((memory) => process.send!({ type: 'memory', memory }));
  if (msg.type === 'stop') void started.close().then(() => process.exit(0));
});
process.send!({ type: 'ready', port: started.port, gc: gc !== undefined, fixtures: started.fixtures });
