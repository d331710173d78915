// Realtime benchmark (`npm run bench:realtime`), results in docs/benchmarks.md.
//
// 1. Memory per idle WebSocket connection: BENCH_RT_CONNECTIONS (5,000) connections to
//    the built-in Pusher server, each subscribed to a channel of its own (the QR-login
//    pattern), measured as the RSS and heap growth of the server process (a child, after
//    GC), against the same number of connections to a bare `ws` server in the same run.
// 2. Publish → receive latency with BENCH_RT_SUBSCRIBERS (1,000) subscribed clients,
//    publishing through the HTTP events API with the official `pusher` SDK:
//      fan-out — one event to one channel all clients subscribed to (every delivery timed);
//      unicast — one event to one client's own channel at a time (as a QR-login confirm);
//    against a bare `ws` server broadcasting each HTTP POST body to all its sockets.
//
// 3. QR-login confirm → event latency with BENCH_RT_SUBSCRIBERS (1,000) tills subscribed, each
//    to the channel of its own QR session: the app's POST app/qr-login/confirm is timed until
//    the till's socket gets status_update {status: authenticated, user, token}
//    (BENCH_RT_CONFIRMS of them, one at a time), beside the unicast publish figure above.
//
// The clients are plain `ws` clients in this process; the servers are child processes.
// 5,000 connections need ~5,000 descriptors on each side: the npm script raises the soft
// limit (ulimit -n) where the hard limit allows.
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import PusherServer from 'pusher';
import WebSocket from 'ws';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const env = process.env;
const int = (name: string, fallback: number) => (env[name] && /^\d+$/.test(env[name]!) ? Number(env[name]) : fallback);
const CONNECTIONS = int('BENCH_RT_CONNECTIONS', 5000);
const SUBSCRIBERS = int('BENCH_RT_SUBSCRIBERS', 1000);
const FANOUT_EVENTS = int('BENCH_RT_FANOUT_EVENTS', 50);
const UNICAST_EVENTS = int('BENCH_RT_UNICAST_EVENTS', 500);
const CONFIRMS = int('BENCH_RT_CONFIRMS', 300);
const APP = { id: '1', key: 'benchkey0123456789', secret: 'benchsecret0123456789' };
const say = (line: string) => process.stdout.write(`${line}\n`);

interface Server {
  child: ChildProcess;
  port: number;
  fixtures?: { apiKey: { key: string; secret: string }; customerToken: string };
}

async function startServer(kind: 'loyalty' | 'bare-ws'): Promise<Server> {
  const child = fork(path.join(ROOT, 'bench/realtime-server.ts'), [kind], {
    cwd: ROOT,
    execArgv: ['--expose-gc', '--import', 'tsx'],
    env: {
      PATH: env.PATH,
      HOME: env.HOME,
      TMPDIR: env.TMPDIR,
      REALTIME_APP_ID: APP.id,
      REALTIME_APP_KEY: APP.key,
      REALTIME_APP_SECRET: APP.secret,
      // Every bench client comes from 127.0.0.1: no per-address limit, room for all of them on the node.
      REALTIME_MAX_CONNECTIONS_PER_IP: '0',
      REALTIME_MAX_CONNECTIONS: String(Math.max(50_000, 2 * (CONNECTIONS + SUBSCRIBERS))),
      ...(env.REDIS_URL ? { REDIS_URL: env.REDIS_URL } : {}),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const [msg] = (await once(child, 'message')) as [{ type: string; port: number; gc: boolean; fixtures?: Server['fixtures'] }];
  if (!msg.gc) throw new Error('the server child has no gc(); run with --expose-gc');
  return { child, port: msg.port, ...(msg.fixtures ? { fixtures: msg.fixtures } : {}) };
}

async function memoryOf(server: Server): Promise<NodeJS.MemoryUsage> {
  server.child.send({ type: 'memory' });
  for (;;) {
    const [msg] = (await once(server.child, 'message')) as [{ type: string; memory: NodeJS.MemoryUsage }];
    if (msg.type === 'memory') return msg.memory;
  }
}

async function stopServer(server: Server) {
  server.child.send({ type: 'stop' });
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 15_000);
  await once(server.child, 'exit');
  clearTimeout(timer);
}

interface Client {
  ws: WebSocket;
  /** Called with each frame's text. */
  onFrame?: (text: string) => void;
}

/** Open one client and wait for its first frame (the handshake). */
function openClient(port: number, subscribeTo?: string): Promise<Client> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/app/${APP.key}?protocol=7&client=js&version=8.6.0`, { perMessageDeflate: false });
    const client: Client = { ws };
    let established = false;
    ws.on('message', (data) => {
      const text = data.toString();
      if (!established) {
        established = true;
        if (!subscribeTo) return resolve(client);
        ws.send(JSON.stringify({ event: 'pusher:subscribe', data: { channel: subscribeTo, auth: '' } }));
        return;
      }
      if (subscribeTo && text.includes('subscription_succeeded') && text.includes(`"${subscribeTo}"`)) {
        subscribeTo = undefined;
        return resolve(client);
      }
      client.onFrame?.(text);
    });
    ws.on('error', reject);
  });
}

async function openMany(port: number, n: number, channelOf?: (i: number) => string): Promise<Client[]> {
  const out: Client[] = [];
  const batch = 250;
  for (let i = 0; i < n; i += batch) {
    const size = Math.min(batch, n - i);
    out.push(...(await Promise.all(Array.from({ length: size }, (_, j) => openClient(port, channelOf?.(i + j))))));
  }
  return out;
}

async function closeAll(clients: Client[]) {
  await Promise.all(
    clients.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.ws.readyState === WebSocket.CLOSED) return resolve();
          c.ws.once('close', () => resolve());
          c.ws.terminate();
        }),
    ),
  );
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

async function memoryPerConnection(kind: 'loyalty' | 'bare-ws') {
  const server = await startServer(kind);
  try {
    // Warm the code paths (and the allocator) with a first wave, then measure from there.
    await closeAll(await openMany(server.port, 200, kind === 'loyalty' ? (i) => `qr-login.warm${i}` : undefined));
    await new Promise((r) => setTimeout(r, 300));
    const before = await memoryOf(server);
    const clients = await openMany(server.port, CONNECTIONS, kind === 'loyalty' ? (i) => `qr-login.session${i}` : undefined);
    const after = await memoryOf(server);
    await closeAll(clients);
    return {
      rssPerConnection: (after.rss - before.rss) / CONNECTIONS,
      heapPerConnection: (after.heapUsed - before.heapUsed) / CONNECTIONS,
      externalPerConnection: (after.external - before.external) / CONNECTIONS,
      rssBefore: before.rss,
      rssAfter: after.rss,
    };
  } finally {
    await stopServer(server);
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function summary(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  return { n: s.length, p50: percentile(s, 50), p99: percentile(s, 99), max: s.at(-1) ?? NaN };
}

async function latency(kind: 'loyalty' | 'bare-ws') {
  const server = await startServer(kind);
  const sdk = new PusherServer({ appId: APP.id, key: APP.key, secret: APP.secret, host: '127.0.0.1', port: String(server.port), useTLS: false });
  const publish =
    kind === 'loyalty'
      ? (channel: string, data: string) => sdk.trigger(channel, 'bench', data)
      : (_channel: string, data: string) => fetch(`http://127.0.0.1:${server.port}/publish`, { method: 'POST', body: data });
  try {
    // Fan-out: every client on one channel.
    const fanClients = await openMany(server.port, SUBSCRIBERS, kind === 'loyalty' ? () => 'bench-fanout' : undefined);
    const fanout: number[] = [];
    for (let e = 0; e < FANOUT_EVENTS + 5; e++) {
      let left = SUBSCRIBERS;
      const all = new Promise<void>((resolve) => {
        const t0 = performance.now();
        for (const c of fanClients) {
          c.onFrame = () => {
            if (e >= 5) fanout.push(performance.now() - t0); // the first 5 are warm-up
            if (--left === 0) resolve();
          };
        }
        void publish('bench-fanout', `{"seq":${e}}`);
      });
      await all;
    }
    await closeAll(fanClients);

    // Unicast: each client on its own channel; one event at a time to a random one.
    let unicast: number[] = [];
    if (kind === 'loyalty') {
      const uniClients = await openMany(server.port, SUBSCRIBERS, (i) => `qr-login.u${i}`);
      for (let e = 0; e < UNICAST_EVENTS + 20; e++) {
        const i = Math.floor(Math.random() * SUBSCRIBERS);
        const t0 = performance.now();
        const got = new Promise<void>((resolve) => {
          uniClients[i]!.onFrame = () => resolve();
        });
        await publish(`qr-login.u${i}`, `{"status":"authenticated","seq":${e}}`);
        await got;
        if (e >= 20) unicast.push(performance.now() - t0);
        uniClients[i]!.onFrame = undefined;
      }
      await closeAll(uniClients);
    } else {
      unicast = [];
    }
    const confirm = kind === 'loyalty' ? await confirmLatency(server) : [];
    return { fanout: summary(fanout), unicast: summary(unicast), confirm: summary(confirm) };
  } finally {
    await stopServer(server);
  }
}

/** QR login end to end: sessions generated over HTTP, tills subscribed, confirms timed to the event. */
async function confirmLatency(server: Server): Promise<number[]> {
  const { apiKey, customerToken } = server.fixtures!;
  const base = `http://127.0.0.1:${server.port}`;
  const post = async (path: string, headers: Record<string, string>, body: unknown) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { data: Record<string, string> }).data;
  };
  const till = { 'x-api-key': apiKey.key, 'x-api-secret': apiKey.secret };
  const sessions: Array<{ channel: string; code: string }> = [];
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const s = await post('/en/shop/auth/qr-login/generate', till, { device_name: `Till ${i}` });
    sessions.push({ channel: s.channel!, code: s.qr_content! });
  }
  const clients = await openMany(server.port, SUBSCRIBERS, (i) => sessions[i]!.channel);
  const samples: number[] = [];
  try {
    for (let e = 0; e < Math.min(CONFIRMS + 10, SUBSCRIBERS); e++) {
      const client = clients[e]!;
      const got = new Promise<void>((resolve) => {
        client.onFrame = (text) => {
          if (text.includes('authenticated')) resolve();
        };
      });
      const t0 = performance.now();
      await post('/en/app/qr-login/confirm', { authorization: `Bearer ${customerToken}` }, { code: sessions[e]!.code });
      await got;
      if (e >= 10) samples.push(performance.now() - t0); // the first 10 are warm-up
    }
  } finally {
    await closeAll(clients);
  }
  return samples;
}

const ms = (x: number) => (Number.isNaN(x) ? '—' : `${x.toFixed(2)} ms`);

say(`Realtime benchmark: ${CONNECTIONS} idle connections; ${SUBSCRIBERS} subscribers; Node ${process.version}`);
const memLoyalty = await memoryPerConnection('loyalty');
const memBare = await memoryPerConnection('bare-ws');
say('');
say('Memory per idle connection (server process, after GC):');
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
for (const [label, m] of [['Loyalty (connected + 1 channel)', memLoyalty], ['bare ws (connected)            ', memBare]] as const) {
  say(`  ${label}: ${kib(m.heapPerConnection)} JS heap + ${kib(m.externalPerConnection)} external; ${kib(m.rssPerConnection)} RSS  (RSS ${mb(m.rssBefore)} → ${mb(m.rssAfter)} MiB)`);
}
say(`  ratio (JS heap + external): ${((memLoyalty.heapPerConnection + memLoyalty.externalPerConnection) / (memBare.heapPerConnection + memBare.externalPerConnection)).toFixed(2)}`);
say('  (RSS deltas are noisy: the allocator reuses pages freed after start-up, PGlite\'s included.)');

const latLoyalty = await latency('loyalty');
const latBare = await latency('bare-ws');
say('');
say(`Publish → receive latency, ${SUBSCRIBERS} subscribers (HTTP publish included):`);
say(`  Loyalty fan-out (pusher SDK → events API → ${SUBSCRIBERS} sockets): p50 ${ms(latLoyalty.fanout.p50)}, p99 ${ms(latLoyalty.fanout.p99)}, max ${ms(latLoyalty.fanout.max)} (${latLoyalty.fanout.n} deliveries)`);
say(`  bare ws fan-out (HTTP POST → ${SUBSCRIBERS} sockets):          p50 ${ms(latBare.fanout.p50)}, p99 ${ms(latBare.fanout.p99)}, max ${ms(latBare.fanout.max)} (${latBare.fanout.n} deliveries)`);
say(`  Loyalty unicast (one client's channel, ${SUBSCRIBERS} connected):    p50 ${ms(latLoyalty.unicast.p50)}, p99 ${ms(latLoyalty.unicast.p99)}, max ${ms(latLoyalty.unicast.max)} (${latLoyalty.unicast.n} events)`);
say(`  Loyalty QR confirm → till's event (${SUBSCRIBERS} tills subscribed):  p50 ${ms(latLoyalty.confirm.p50)}, p99 ${ms(latLoyalty.confirm.p99)}, max ${ms(latLoyalty.confirm.max)} (${latLoyalty.confirm.n} confirms)`);
say('');
say(JSON.stringify({ connections: CONNECTIONS, subscribers: SUBSCRIBERS, memory: { loyalty: memLoyalty, bare: memBare }, latency: { loyalty: latLoyalty, bare: latBare } }));
