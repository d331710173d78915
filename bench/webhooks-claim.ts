// The webhook outbox's claim (DESIGN.md §14: a quarter of the slots per partner, partners
// taking turns) against backlogs that used to be cheap for an "oldest due first" claim:
//   hog      one partner with BENCH_CLAIM_BACKLOG due deliveries, 200 others with one each
//   spread   1,000 partners with 10 pending deliveries each, none due (retries waiting):
//            what every poll (500 ms) of every node costs then
//   few due  the same, 20 of them with one due besides
// over a history of BENCH_CLAIM_HISTORY delivered rows per partner (1,201 partners).
// Each claim takes 16 (a node's slots) and is timed; its rows are then handed back (due
// again) outside the timing, so every claim sees the same backlog.
//   npm run bench:webhooks-claim        (embedded PGlite)
//   DATABASE_URL=postgres://… npm run bench:webhooks-claim
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { executePrepared } from '../src/infra/db/index.js';
import { webhooksRepository as repo } from '../src/modules/webhooks/webhooks.repository.js';
import { createTestDatabase } from '../test/helpers/database.js';

const BACKLOG = Number(process.env.BENCH_CLAIM_BACKLOG ?? 100_000);
const CLAIMS = Number(process.env.BENCH_CLAIM_RUNS ?? 50);
/** Delivered rows per partner, kept as history. */
const HISTORY = Number(process.env.BENCH_CLAIM_HISTORY ?? 100);
const SLOTS = 16;
const PER_PARTNER = SLOTS / 4;

const test = await createTestDatabase();
const { db } = test.database;

async function partners(n: number): Promise<number[]> {
  const rows = await executePrepared<{ id: number }>(
    db,
    sql`insert into partners (name, email, password_hash)
      select 'p' || g, 'p' || g || '-' || md5(random()::text) || '@bench.example', 'x' from generate_series(1, ${n}) g returning id`,
  );
  return rows.map((r) => r.id);
}

async function deliveries(partnerIds: number[], each: number, state: 'due' | 'waiting' | 'delivered') {
  const next = state === 'due' ? sql`now() - interval '1 minute' + g * interval '1 millisecond'` : sql`now() + interval '1 hour'`;
  await db.execute(sql`insert into webhook_deliveries (event_id, partner_id, event_type, url, body, next_attempt_at, status)
    select gen_random_uuid()::text, p, 'transaction.created', 'http://127.0.0.1:9/x', '{}', ${next},
      ${state === 'delivered' ? 'delivered' : 'pending'}
    from unnest(${`{${partnerIds.join(',')}}`}::int[]) p, generate_series(1, ${each}) g`);
}

/** The claim before issue 30 (oldest due first, no shares; without its in-order clause): the reference. */
function unfairClaim(): Promise<{ id: number }[]> {
  return db.transaction(async (tx) => {
    const due = await executePrepared<{ id: number }>(
      tx,
      sql`select id from webhook_deliveries where status = 'pending' and next_attempt_at <= now()
        order by next_attempt_at, id limit ${SLOTS} for update skip locked`,
    );
    if (due.length === 0) return [];
    return executePrepared<{ id: number }>(
      tx,
      sql`update webhook_deliveries set attempts = attempts + 1, next_attempt_at = now() + interval '1 minute'
        where id = any(${`{${due.map((d) => d.id).join(',')}}`}::int[]) returning id`,
    );
  });
}

async function run(name: string): Promise<void> {
  await measure(name, () => repo.claimDue(db, SLOTS, 60_000, { perPartner: PER_PARTNER, inFlight: new Map() }));
  await measure('  (before)', unfairClaim);
}

async function measure(name: string, claim: () => Promise<{ id: number }[]>): Promise<void> {
  await db.execute(sql`analyze webhook_deliveries`);
  const times: number[] = [];
  let claimed = 0;
  for (let i = 0; i < CLAIMS; i++) {
    const started = performance.now();
    const rows = await claim();
    times.push(performance.now() - started);
    claimed = rows.length;
    if (rows.length > 0) {
      await db.execute(sql`update webhook_deliveries set attempts = 0, next_attempt_at = now() - interval '1 minute'
        where id in (${sql.join(rows.map((r) => sql`${r.id}`), sql`, `)})`);
    }
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(2);
  console.log(`${name.padEnd(10)} claimed ${String(claimed).padStart(2)} per claim   p50 ${at(0.5)} ms   p95 ${at(0.95)} ms   max ${at(1)} ms`);
}

try {
  console.log(`webhook claim, ${test.url ? 'PostgreSQL' : 'embedded PGlite'}, ${CLAIMS} claims of ${SLOTS} (at most ${PER_PARTNER} a partner)`);
  const [hog, ...others] = await partners(201);
  const many = await partners(1_000);
  // A history: what was delivered stays in the table (and in the non-partial partner index).
  await deliveries([hog!, ...others, ...many], HISTORY, 'delivered');
  await deliveries([hog!], BACKLOG, 'due');
  await deliveries(others, 1, 'due');
  await run('hog');
  await db.execute(sql`delete from webhook_deliveries where status = 'pending'`);
  await deliveries(many, 10, 'waiting');
  await run('spread');
  await deliveries(many.slice(0, 20), 1, 'due');
  await run('few due');
} finally {
  await test.drop();
}
