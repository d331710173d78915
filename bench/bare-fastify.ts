// The baseline of bench/http.ts: Fastify 5 with its defaults (no logger, no hooks, no
// plugins) and one POST route answering a small JSON object. Started as a child process
// by the benchmark; prints "is listening on http://localhost:PORT" like the real server.
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';

const app = Fastify();

app.post('/', async () => ({ success: true, data: { valid: true } }));

await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
const { port } = app.server.address() as AddressInfo;
process.stdout.write(`bare Fastify ${app.version} is listening on http://localhost:${port}\n`);

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
