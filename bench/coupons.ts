// Coupons benchmark (`npm run bench:coupons`), on PostgreSQL (DATABASE_URL, default the local
// `test` server) and Redis (REDIS_URL, default the local server), the server run the way users
// run it: NODE_ENV=production, LOG_LEVEL=info, the default pool (DATABASE_POOL_MAX 10):
//   1. verify + redeem pairs: 16 concurrent tills, each looping over coupons of its own
//      (every coupon is verified at the till's shop, then redeemed there) — pairs/s and the
//      latency of a pair (verify sent → redeem answered), p50 / p95 / p99;
//   2. claims/s of ONE points-costing offer (10 points, unlimited) by customers spread over
//      1,000 cards, 16 concurrent — each claim locks the card, spends the points through the
//      ledger, issues the coupon and counts the claim on the offer's row (the hot row);
//   3. the reference, in the same run on the same server with Loyalty idle: pgbench's
//      built-in TPC-B-like transaction, 16 clients, `-s 16` (no artificial contention).
// Afterwards: every redeemed coupon is `used` exactly once, and `loyalty ledger verify` finds
// every balance equal to its ledger.
//
// Settings: BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (16), BENCH_CARDS (1000),
// DATABASE_URL, REDIS_URL. RATE_LIMIT_DISABLED=true is the one non-default server setting
// (DESIGN §3 allows it for load tests); it is printed beside the figures.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import { TokenService } from '../src/infra/tokens.js';
import { newCouponCode } from '../src/modules/coupons/coupon-code.js';
import { PGBENCH_DB, pgbenchTps, startBenchServer } from './postgres.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const CARDS = Number(process.env.BENCH_CARDS ?? 1000);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const JWT_SECRET = randomBytes(32).toString('hex');

const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS * 2 });

function post(base: string, path: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; body: unknown }> {
  const payload = JSON.stringify(body);
  const u = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { agent, host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** CPU time (user + system, ms) a process has used: steadier than rates on a shared machine. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

const percentile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

/** `workers` loops running `step` until `seconds` pass; the latency of each step in ms. */
async function drive(workers: number, seconds: number, step: (worker: number) => Promise<void>) {
  const latencies: number[] = [];
  const until = Date.now() + seconds * 1000;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      while (Date.now() < until) {
        const t0 = process.hrtime.bigint();
        await step(w);
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }),
  );
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  latencies.sort((a, b) => a - b);
  return { count: latencies.length, perSecond: latencies.length / elapsed, p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95), p99: percentile(latencies, 0.99) };
}

async function main() {
  const bench = await startBenchServer('coupons', {
    LOG_LEVEL: 'info',
    NODE_ENV: 'production',
    DATABASE_POOL_MAX: '10',
    REDIS_URL,
    JWT_SECRET,
  });
  const { server, db } = bench;
  const key = { 'x-api-key': bench.apiKey.key, 'x-api-secret': bench.apiKey.secret };
  try {
    const {
      rows: [seed],
    } = await db.query(`select p.id as partner_id, c.id as programme_id from partners p join partner_cards c on c.partner_id = p.id limit 1`);
    // One shop per till: each till verifies and redeems at its own shop.
    const { rows: shopRows } = await db.query(
      `insert into shops (partner_id, name) select $1, 'Till ' || g from generate_series(1, $2) g returning id`,
      [seed.partner_id, CONNECTIONS],
    );
    const shops = shopRows.map((r: { id: number }) => r.id);
    await db.query(`insert into customers (phone) select '+3706' || lpad(g::text, 7, '0') from generate_series(1, $1) g on conflict do nothing`, [CARDS]);
    const { rows: cardRows } = await db.query(
      `insert into loyalty_cards (partner_id, partner_card_id, customer_id, card_number)
       select $1, $2, id, '9' || lpad(id::text, 15, '0') from customers
       where not exists (select 1 from loyalty_cards l where l.customer_id = customers.id and l.partner_card_id = $2)
       returning id, customer_id`,
      [seed.partner_id, seed.programme_id],
    );
    const cards = cardRows.map((r: { id: number; customer_id: number }) => ({ id: r.id, customerId: r.customer_id }));
    // Points through the ledger (bulk adjustments), so that claims have something to spend.
    for (let i = 0; i < cards.length; i += 1000) {
      const rows = cards.slice(i, i + 1000).map((c) => ({ card_id: c.id, points: 1_000_000, reason: 'bench' }));
      const res = await post(server.url, '/en/shop/points/bulk', key, { rows });
      if (res.status !== 201) throw new Error(`points bulk: ${res.status} ${JSON.stringify(res.body)}`);
    }
    const {
      rows: [freeOffer],
    } = await db.query(
      `insert into offers (partner_id, title, discount_type, max_claims_per_customer) values ($1, 'Bench coupon', 'gift', 1000000) returning id`,
      [seed.partner_id],
    );
    const {
      rows: [paidOffer],
    } = await db.query(
      `insert into offers (partner_id, partner_card_id, title, discount_type, points_cost, max_claims_per_customer)
       values ($1, $2, 'Bench paid coupon', 'gift', 10, 1000000) returning id`,
      [seed.partner_id, seed.programme_id],
    );

    // Coupons for the pairs: each till gets its own queue of distinct coupons.
    const perTill = 8000;
    const queues: Array<Array<{ id: number; code: string }>> = [];
    for (let w = 0; w < CONNECTIONS; w++) {
      const codes = Array.from({ length: perTill }, newCouponCode);
      const owners = codes.map((_, i) => cards[(w * perTill + i) % cards.length]!);
      const { rows } = await db.query(
        `insert into coupons (partner_id, customer_id, card_id, code, offer_id, terms, created_at, updated_at)
         select $1, u.customer_id, u.card_id, u.code, $2, '{"title":"Bench coupon","description":null,"discount_type":"gift","discount_value":null,"reward_type":"coupon","reward_details":null}'::jsonb, now(), now()
         from unnest($3::int[], $4::int[], $5::text[]) as u(customer_id, card_id, code)
         returning id, code`,
        [seed.partner_id, freeOffer.id, owners.map((c) => c.customerId), owners.map((c) => c.id), codes],
      );
      queues.push(rows.map((r: { id: number; code: string }) => ({ id: r.id, code: `${r.code.slice(0, 4)}-${r.code.slice(4, 8)}-${r.code.slice(8)}` })));
    }
    await db.query('vacuum analyze');

    let failures = 0;
    const firstFailure: string[] = [];
    const pair = async (w: number) => {
      const coupon = queues[w]!.pop();
      if (!coupon) throw new Error('out of coupons: raise perTill');
      const v = await post(server.url, '/en/shop/coupons/verify', key, { coupon_code: coupon.code, shop_id: shops[w] });
      const r = await post(server.url, `/en/shop/coupons/${coupon.id}/redeem`, key, { shop_id: shops[w], receipt_number: `B-${coupon.id}` });
      if (v.status !== 200 || r.status !== 200) {
        failures++;
        if (firstFailure.length === 0) firstFailure.push(`${v.status} ${JSON.stringify(v.body)} / ${r.status} ${JSON.stringify(r.body)}`);
      }
    };
    const serverPid = server.child.pid!;
    await drive(CONNECTIONS, 2, pair); // warm-up
    let cpu0 = cpuMs(serverPid);
    const pairs = await drive(CONNECTIONS, DURATION, pair);
    const pairCpuMs = (cpuMs(serverPid) - cpu0) / pairs.count;
    if (failures > 0) throw new Error(`pairs: ${failures} failed, first: ${firstFailure[0]}`);

    const tokens = new TokenService(JWT_SECRET, { access: 3600, customer: 3600, qrCustomer: 3600 });
    const customerTokens = await Promise.all(cards.map(async (c) => (await tokens.sign({ kind: 'customer', subject: c.customerId })).token));
    let claimed = 0;
    const claimOnce = async () => {
      const token = customerTokens[Math.floor(Math.random() * customerTokens.length)]!;
      const res = await post(server.url, `/en/shop/offers/${paidOffer.id}/claim`, { authorization: `Bearer ${token}` }, {});
      if (res.status === 201) claimed++;
      else {
        failures++;
        if (firstFailure.length === 0) firstFailure.push(`${res.status} ${JSON.stringify(res.body)}`);
      }
    };
    await drive(CONNECTIONS, 2, claimOnce); // warm-up
    cpu0 = cpuMs(serverPid);
    const claims = await drive(CONNECTIONS, DURATION, claimOnce);
    const claimCpuMs = (cpuMs(serverPid) - cpu0) / claims.count;
    if (failures > 0) throw new Error(`claims: ${failures} failed, first: ${firstFailure[0]}`);

    const {
      rows: [check],
    } = await db.query(
      `select (select count(*) from coupons where status = 'used')::int as used,
              (select count(*) from coupon_events where event = 'redeemed')::int as redeemed,
              (select count(*) from coupons where offer_id = $1)::int as claimed,
              (select count(*) from points_transactions where type = 'redeem' and reason like 'offer #' || $1 || ':%')::int as charged`,
      [paidOffer.id],
    );
    if (check.used !== check.redeemed) throw new Error(`used ${check.used} vs redeemed events ${check.redeemed}`);
    if (check.claimed !== claimed || check.charged !== claimed) throw new Error(`${claimed} claims answered 201, ${check.claimed} coupons, ${check.charged} charges`);
    const verify = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'ledger', 'verify'], {
      env: { ...process.env, DATABASE_URL: bench.url, LOG_LEVEL: 'warn' } as NodeJS.ProcessEnv,
      encoding: 'utf8',
    });
    const report = JSON.parse(verify.stdout) as { ok: boolean; transactions: number };
    if (!report.ok) throw new Error(`ledger verify found differences:\n${verify.stdout}`);

    // Loyalty is idle now: the reference.
    const tps = pgbenchTps(PGBENCH_DB, CONNECTIONS, DURATION, 16);
    const settings = 'NODE_ENV=production LOG_LEVEL=info DATABASE_POOL_MAX=10 (default) Redis on; non-default: RATE_LIMIT_DISABLED=true';
    const lines = [
      '',
      `Coupons benchmark — PostgreSQL + Redis, ${CONNECTIONS} tills, ${DURATION} s per phase, node ${process.version}, ${os.cpus().length} cores`,
      `  server: ${settings}`,
      '',
      `  verify+redeem pairs/s          ${pairs.perSecond.toFixed(0).padStart(8)}   (pair p50 ${pairs.p50.toFixed(1)} ms, p95 ${pairs.p95.toFixed(1)} ms, p99 ${pairs.p99.toFixed(1)} ms; ${pairs.count} pairs)`,
      `  claims/s, one 10-point offer   ${claims.perSecond.toFixed(0).padStart(8)}   (p50 ${claims.p50.toFixed(1)} ms, p95 ${claims.p95.toFixed(1)} ms, p99 ${claims.p99.toFixed(1)} ms; ${claims.count} claims)`,
      `  server CPU per pair / claim     ${pairCpuMs.toFixed(2).padStart(8)} ms / ${claimCpuMs.toFixed(2)} ms   (Node process, user + system; load avg ${os.loadavg()[0]!.toFixed(1)})`,
      `  pgbench TPC-B-like tps         ${tps.toFixed(0).padStart(8)}   (reference: -s 16, ${CONNECTIONS} clients, same server, Loyalty idle)`,
      '',
      `  pairs / pgbench                ${(pairs.perSecond / tps).toFixed(2).padStart(8)}   (aim ≥ 0.50)`,
      `  pair p95                       ${pairs.p95.toFixed(1).padStart(8)} ms (aim < 20 ms)`,
      `  claims / pgbench               ${(claims.perSecond / tps).toFixed(2).padStart(8)}`,
      `  checks                         every redeemed coupon used once (${check.used}); each 201 claim = one coupon and one charge (${check.claimed}); ledger verify ok (${report.transactions} transactions)`,
      '',
    ];
    process.stdout.write(lines.join('\n'));
    process.stdout.write(
      `${JSON.stringify({ bench: 'coupons', connections: CONNECTIONS, duration: DURATION, settings, pairs_per_s: pairs.perSecond, pair_server_cpu_ms: pairCpuMs, claim_server_cpu_ms: claimCpuMs, load_avg: os.loadavg()[0], pair_p50_ms: pairs.p50, pair_p95_ms: pairs.p95, pair_p99_ms: pairs.p99, claims_per_s: claims.perSecond, claim_p95_ms: claims.p95, pgbench_tps: tps, pgbench_scale: 16 })}\n`,
    );
  } finally {
    agent.destroy();
    await bench.done();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
