// SMS benchmark (`npm run bench:sms`), on PostgreSQL (DATABASE_URL, default the local `test`
// server):
//   1. the reference, first, on the idle server: pgbench's built-in TPC-B-like transaction at
//      scale 16 (`pgbench -i` into a scratch database), 16 clients;
//   2. accepted sends/s: POST /en/sms/send with 16 concurrent clients (autocannon), each a
//      transaction that locks the partner's SMS account row, charges, queues and records;
//   3. accept → handed to the carrier: for every message of the measured phase, the time from
//      its acceptance to its hand-over to the carrier (the built-in simulator: this figure is
//      the service's own dispatch, not a real SMSC's), p50 and p95;
//   4. dispatcher throughput: messages/s handed to the simulator while draining a backlog of
//      20,000 messages inserted at once.
// Every send goes to one partner — the worst case for the account row lock; several partners
// would not contend with each other. The dispatcher runs at its defaults.
//
// Settings: BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (16), DATABASE_URL, REDIS_URL,
// BENCH_LOG_LEVEL (info), WEB_CONCURRENCY, BENCH_SERVER_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=prof").
import os from 'node:os';
import autocannon from 'autocannon';
import { PGBENCH_DB, pgbenchTps, settingsLine, startBenchServer } from './postgres.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);

async function main() {
  const bench = await startBenchServer('sms');
  const { server, db } = bench;
  try {
    const tps = pgbenchTps(PGBENCH_DB, CONNECTIONS, DURATION);
    await db.query(`update sms_accounts set balance = 1000000`);
    const count = async (where: string) => Number((await db.query(`select count(*) as n from sms_messages where ${where}`)).rows[0].n);
    const dbNow = async () => (await db.query(`select clock_timestamp() as t`)).rows[0].t as Date;

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
    while ((await count(`status = 'queued'`)) > 0) await new Promise((r) => setTimeout(r, 100));
    const from = await dbNow();
    const sendResult = await run(DURATION);
    const to = await dbNow();
    if (sendResult.non2xx > 0 || sendResult.errors > 0) throw new Error(`send phase: ${sendResult.non2xx} non-2xx, ${sendResult.errors} errors`);

    // Every message of the measured phase handed over: how long each waited.
    while ((await count(`status = 'queued'`)) > 0) await new Promise((r) => setTimeout(r, 100));
    const { rows: [lat] } = await db.query(
      `select count(*)::int as n,
              percentile_cont(0.5) within group (order by extract(epoch from s.submitted_at - m.created_at)) * 1000 as p50,
              percentile_cont(0.95) within group (order by extract(epoch from s.submitted_at - m.created_at)) * 1000 as p95
       from sms_messages m join sms_simulator_submissions s on s.message_id = m.id
       where m.created_at >= $1 and m.created_at <= $2`,
      [from, to],
    );

    // A backlog of its own: 20,000 queued messages inserted at once, and how fast they go.
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

    const sends = sendResult.requests.average;
    const p50 = Number(lat.p50);
    const p95 = Number(lat.p95);
    const lines = [
      '',
      `SMS benchmark — PostgreSQL, ${CONNECTIONS} clients, ${DURATION} s, node ${process.version}, ${os.cpus().length} cores`,
      `  settings: NODE_ENV=production, LOG_LEVEL=info unless listed; non-default: ${settingsLine()}; carrier: the built-in simulator`,
      '',
      `  accepted sends/s          ${sends.toFixed(0).padStart(8)}   (p50 ${sendResult.latency.p50} ms, p99 ${sendResult.latency.p99} ms)`,
      `  accept → handed over      ${p50.toFixed(0).padStart(8)} ms p50, ${p95.toFixed(0)} ms p95 (${lat.n} messages of the measured phase; simulator carrier)`,
      `  dispatcher messages/s     ${dispatchRate.toFixed(0).padStart(8)}   (backlog ${backlog} drained in ${drainSeconds.toFixed(1)} s; simulator carrier)`,
      `  pgbench TPC-B-like tps    ${tps.toFixed(0).padStart(8)}   (reference: same server, same run, idle, -s ${CONNECTIONS})`,
      '',
      `  sends / pgbench           ${(sends / tps).toFixed(2).padStart(8)}`,
      `  dispatch / pgbench        ${(dispatchRate / tps).toFixed(2).padStart(8)}`,
      '',
    ];
    process.stdout.write(lines.join('\n'));
    process.stdout.write(
      `${JSON.stringify({ bench: 'sms', connections: CONNECTIONS, duration: DURATION, sends_per_s: sends, dispatch_per_s: dispatchRate, handover_p50_ms: p50, handover_p95_ms: p95, pgbench_tps: tps, p50_ms: sendResult.latency.p50, p99_ms: sendResult.latency.p99 })}\n`,
    );
  } finally {
    await bench.done();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
