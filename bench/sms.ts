// SMS benchmark (`npm run bench:sms`), on PostgreSQL (DATABASE_URL, default the local `test`
// server):
//   1. accepted sends/s: POST /en/sms/send with 16 concurrent clients (autocannon), each a
//      transaction that locks the partner's SMS account row, charges, queues and records;
//   2. dispatcher throughput: messages/s handed to the carrier (the built-in simulator) while
//      draining the backlog the send phase left;
//   3. the reference, in the same run on the same server: pgbench's built-in TPC-B-like
//      transaction (`pgbench -i` into a scratch database), 16 clients.
// Every send goes to one partner — the worst case for the account row lock; several partners
// would not contend with each other.
//
// Settings: BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (16), DATABASE_URL.
import os from 'node:os';
import autocannon from 'autocannon';
import { PGBENCH_DB, pgbenchTps, startBenchServer } from './postgres.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);

async function main() {
  const bench = await startBenchServer('sms', { SMS_SIMULATOR_DELAY_MS: '1000', SMS_DISPATCH_POLL_MS: '100' });
  const { server, db } = bench;
  try {
    await db.query(`update sms_accounts set balance = 1000000`);
    const count = async (where: string) => Number((await db.query(`select count(*) as n from sms_messages where ${where}`)).rows[0].n);

    const run = (duration: number) =>
      autocannon({
        url: `${server.url}/en/sms/send`,
        method: 'POST',
        connections: CONNECTIONS,
        duration,
        headers: { 'content-type': 'application/json', 'x-api-key': bench.apiKey.key, 'x-api-secret': bench.apiKey.secret },
        body: JSON.stringify({ source: 'DemoShop', destination: '+37061234567', message: 'Your order is ready for pickup.' }),
      });
    await run(2); // warm-up
    const sendResult = await run(DURATION);
    if (sendResult.non2xx > 0 || sendResult.errors > 0) throw new Error(`send phase: ${sendResult.non2xx} non-2xx, ${sendResult.errors} errors`);

    // Let the dispatcher catch up with the send phase, then give it a backlog of its own:
    // 20,000 queued messages inserted at once, and time how fast it hands them over.
    while ((await count(`status = 'queued'`)) > 0) await new Promise((r) => setTimeout(r, 100));
    const backlog = 20_000;
    const handed = async () => Number((await db.query(`select count(*) as n from sms_simulator_submissions`)).rows[0].n);
    const before = await handed();
    await db.query(
      `insert into sms_messages (id, partner_id, source, destination, country, body, encoding, parts, price_per_part, cost, carrier)
       select 'bench_' || g, partner_id, source, destination, country, body, encoding, parts, price_per_part, cost, carrier
       from (select * from sms_messages limit 1) m, generate_series(1, $1) g`,
      [backlog],
    );
    const t0 = Date.now();
    while ((await handed()) - before < backlog && Date.now() - t0 < 300_000) await new Promise((r) => setTimeout(r, 100));
    const drainSeconds = (Date.now() - t0) / 1000;
    const dispatchRate = ((await handed()) - before) / drainSeconds;

    const tps = pgbenchTps(PGBENCH_DB, CONNECTIONS, DURATION);
    const sends = sendResult.requests.average;
    const lines = [
      '',
      `SMS benchmark — PostgreSQL, ${CONNECTIONS} clients, ${DURATION} s, node ${process.version}, ${os.cpus().length} cores`,
      '',
      `  accepted sends/s          ${sends.toFixed(0).padStart(8)}   (p50 ${sendResult.latency.p50} ms, p99 ${sendResult.latency.p99} ms)`,
      `  dispatcher messages/s     ${dispatchRate.toFixed(0).padStart(8)}   (backlog ${backlog} drained in ${drainSeconds.toFixed(1)} s)`,
      `  pgbench TPC-B-like tps    ${tps.toFixed(0).padStart(8)}   (reference, same server, same run)`,
      '',
      `  sends / pgbench           ${(sends / tps).toFixed(2).padStart(8)}`,
      `  dispatch / pgbench        ${(dispatchRate / tps).toFixed(2).padStart(8)}`,
      '',
    ];
    process.stdout.write(lines.join('\n'));
    process.stdout.write(
      `${JSON.stringify({ bench: 'sms', connections: CONNECTIONS, duration: DURATION, sends_per_s: sends, dispatch_per_s: dispatchRate, pgbench_tps: tps, p50_ms: sendResult.latency.p50, p99_ms: sendResult.latency.p99 })}\n`,
    );
  } finally {
    await bench.done();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
