// Points benchmark (`npm run bench:points`), on PostgreSQL (DATABASE_URL, default the local
// `test` server):
//   1. award transactions/s: POST /en/shop/transactions/create with 16 concurrent clients
//      (autocannon) over 1,000 cards — each request authenticates, locks the card row, reads
//      the programme's rules, applies due expiries, and writes the transaction, its lot and
//      the balance in one transaction;
//   2. the same with an Idempotency-Key on every request (a transaction holds the key with
//      the award), and on ONE card (every request queues on the same row lock: the worst case);
//   3. the reference, in the same run on the same server while it is idle (before the
//      service's load): pgbench's built-in TPC-B-like transaction at scale 16 (no artificial
//      contention on one branch row), 16 clients.
// Afterwards `loyalty ledger verify` must find every balance equal to its ledger.
//
// Settings: BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (16), BENCH_CARDS (1000), DATABASE_URL.
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import autocannon from 'autocannon';
import { PGBENCH_DB, pgbenchTps, settingsLine, startBenchServer } from './postgres.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const CARDS = Number(process.env.BENCH_CARDS ?? 1000);

async function main() {
  const bench = await startBenchServer('points');
  const { server, db } = bench;
  try {
    const { rows: [seed] } = await db.query(`select p.id as partner_id, s.id as shop_id, c.id as programme_id
      from partners p join shops s on s.partner_id = p.id join partner_cards c on c.partner_id = p.id limit 1`);
    // Points that expire, so that every award also keeps the card's next expiry.
    await db.query(`update partner_cards set points_expiration_days = 365 where id = $1`, [seed.programme_id]);
    await db.query(`insert into customers (phone) select '+3706' || lpad(g::text, 7, '0') from generate_series(1, $1) g`, [CARDS]);
    const { rows: cards } = await db.query(
      `insert into loyalty_cards (partner_id, partner_card_id, customer_id, card_number)
       select $1, $2, c.id, '9' || lpad(c.id::text, 15, '0') from customers c
       where not exists (select 1 from loyalty_cards l where l.customer_id = c.id and l.partner_card_id = $2) returning id`,
      [seed.partner_id, seed.programme_id],
    );
    const cardIds = cards.map((r: { id: number }) => r.id);

    // The reference first, on an idle server.
    const tps = pgbenchTps(PGBENCH_DB, CONNECTIONS, DURATION);

    let keySeq = 0;
    const run = (duration: number, pickCard: () => number, withKey = false) =>
      autocannon({
        url: `${server.url}/en/shop/transactions/create`,
        method: 'POST',
        connections: CONNECTIONS,
        duration,
        headers: { 'content-type': 'application/json', 'x-api-key': bench.apiKey.key, 'x-api-secret': bench.apiKey.secret },
        requests: [
          {
            setupRequest: (req) => ({
              ...req,
              ...(withKey ? { headers: { ...req.headers, 'idempotency-key': `bench-${++keySeq}` } } : {}),
              body: JSON.stringify({ card_id: pickCard(), shop_id: seed.shop_id, amount: 12.34 }),
            }),
          },
        ],
      });
    const anyCard = () => cardIds[Math.floor(Math.random() * cardIds.length)]!;
    await run(2, anyCard); // warm-up
    const spread = await run(DURATION, anyCard);
    if (spread.non2xx > 0 || spread.errors > 0) throw new Error(`award phase: ${spread.non2xx} non-2xx, ${spread.errors} errors`);
    const keyed = await run(DURATION, anyCard, true);
    if (keyed.non2xx > 0 || keyed.errors > 0) throw new Error(`keyed phase: ${keyed.non2xx} non-2xx, ${keyed.errors} errors`);
    const hot = await run(DURATION, () => cardIds[0]!);
    if (hot.non2xx > 0 || hot.errors > 0) throw new Error(`hot-card phase: ${hot.non2xx} non-2xx, ${hot.errors} errors`);

    const verify = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'ledger', 'verify'], {
      env: { ...process.env, DATABASE_URL: bench.url, LOG_LEVEL: 'warn' } as NodeJS.ProcessEnv,
      encoding: 'utf8',
    });
    const report = JSON.parse(verify.stdout) as { ok: boolean; transactions: number };
    if (!report.ok) throw new Error(`ledger verify found differences:\n${verify.stdout}`);

    const awards = spread.requests.average;
    const hotAwards = hot.requests.average;
    const keyedAwards = keyed.requests.average;
    const lines = [
      '',
      `Points benchmark — PostgreSQL, ${CONNECTIONS} clients, ${DURATION} s, ${CARDS} cards, node ${process.version}, ${os.cpus().length} cores`,
      `  settings: NODE_ENV=production, LOG_LEVEL=info unless listed; non-default: ${settingsLine()}`,
      '',
      `  awards/s over ${CARDS} cards     ${awards.toFixed(0).padStart(8)}   (p50 ${spread.latency.p50} ms, p99 ${spread.latency.p99} ms)`,
      `  … with Idempotency-Key      ${keyedAwards.toFixed(0).padStart(8)}   (p50 ${keyed.latency.p50} ms, p99 ${keyed.latency.p99} ms)`,
      `  awards/s on one card        ${hotAwards.toFixed(0).padStart(8)}   (p50 ${hot.latency.p50} ms, p99 ${hot.latency.p99} ms)`,
      `  pgbench TPC-B-like tps      ${tps.toFixed(0).padStart(8)}   (reference: same server, same run, idle, -s ${CONNECTIONS})`,
      '',
      `  awards / pgbench            ${(awards / tps).toFixed(2).padStart(8)}`,
      `  with key / pgbench          ${(keyedAwards / tps).toFixed(2).padStart(8)}`,
      `  one card / pgbench          ${(hotAwards / tps).toFixed(2).padStart(8)}`,
      `  ledger verify               ${report.ok ? 'ok' : 'FAILED'} (${report.transactions} transactions)`,
      '',
    ];
    process.stdout.write(lines.join('\n'));
    process.stdout.write(
      `${JSON.stringify({ bench: 'points', connections: CONNECTIONS, duration: DURATION, cards: CARDS, awards_per_s: awards, keyed_awards_per_s: keyedAwards, one_card_awards_per_s: hotAwards, pgbench_tps: tps, p50_ms: spread.latency.p50, p99_ms: spread.latency.p99 })}\n`,
    );
  } finally {
    await bench.done();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
