// Points benchmark (`npm run bench:points`), on PostgreSQL (DATABASE_URL, default the local
// `test` server), one server, in rounds (BENCH_ROUNDS, default 3; the cases of a round run one
// after another, their order rotated from round to round):
// Rate limits are on, as users run them (ceilings raised so the load is never refused), and
// every client is a till with its own API key (bench/postgres.ts tillKeys).
//   1. award transactions/s: POST /en/shop/transactions/create with 16 concurrent clients
//      (autocannon) over 1,000 cards of a programme WITHOUT campaigns — each request
//      authenticates and runs the award's one statement (lock the card, apply the programme's
//      rules, write the transaction, its lot and the balance);
//   2. the basket case (DESIGN.md §12, issue 22): a second programme with five running
//      campaigns (bench/points-basket.ts: a multiplier on a category, a bonus with min_amount,
//      a per_currency on skus, a per_item on products, a bonus; two with a points_budget), and
//        - the amount-only award on it (a budgeted campaign sends it through the engine), and
//          the same with the two budgets removed (unlimited campaigns: the one statement),
//        - the basket award: 10 lines matched to the catalogue, every campaign applying,
//        - the same baskets without the two budgets (what the budgets' row locks cost),
//        - transactions/preview of the same baskets with card_id: requests/s, p50/p95/p99;
//   2b. the tiers case (DESIGN.md §13, issue 23): a third programme, a copy of the first
//      with three tiers (a 1.5× and a 2× multiplier) and no campaign — the amount-only award
//      there is the one statement too (the card's tier state moves in it); only a crossing goes
//      to the engine and writes a history row;
//   3. the same amount-only award with an Idempotency-Key on every request, and on ONE card
//      (every request queues on the same row lock: the worst case);
//   4. the reference, in the same run on the same server while it is idle (before the
//      service's load): pgbench's built-in TPC-B-like transaction at scale 16 (no artificial
//      contention on one branch row), 16 clients.
// Then one short round where a budget runs out (the exhausted campaign must cost nothing).
// Afterwards `loyalty ledger verify` must find every balance equal to its ledger, and each
// campaign's counters must equal its breakdown rows (points_awarded ≤ budget). Last, 200
// basket awards one at a time through the engine's code in this process, every round trip
// timed: where one award's time goes (BENCH_PROFILE_AWARDS, 0 to skip).
//
// Settings: BENCH_DURATION (s, default 10), BENCH_ROUNDS (3), BENCH_CONNECTIONS (16),
// BENCH_CARDS (1000), BENCH_POINTS_CASES (comma list to run only some cases, e.g. "basket"
// with BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=prof" to profile it), DATABASE_URL.
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import autocannon, { type Result } from 'autocannon';
import { BIG_BUDGET, checkCounters, profileStatements, sampleLockWaits, seedBasketProgramme, seedTieredProgramme } from './points-basket.js';
import { PGBENCH_DB, pgbenchTps, RAISED_LIMITS, settingsLine, startBenchServer, tillKeys } from './postgres.js';

/** A campaign's points given: its row's counter plus its shards' (src/modules/campaigns/campaigns.tables.ts). */
const AWARDED = `(c.points_awarded + coalesce((select sum(k.points) from campaign_counters k where k.campaign_id = c.id), 0))::int`;

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const CARDS = Number(process.env.BENCH_CARDS ?? 1000);
const PROFILE_AWARDS = Number(process.env.BENCH_PROFILE_AWARDS ?? 200);
const CASES = ['amount', 'amount_campaigns', 'amount_unlimited', 'amount_tiers', 'basket', 'basket_no_budget', 'preview', 'keyed', 'one_card'] as const;
type Case = (typeof CASES)[number];
const ONLY = new Set((process.env.BENCH_POINTS_CASES ?? CASES.join(',')).split(',').map((s) => s.trim()) as Case[]);

interface Measured {
  rps: number;
  p50: number;
  p95: number;
  p99: number;
  lockWaiting: number;
  active: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

async function main() {
  const bench = await startBenchServer('points', RAISED_LIMITS);
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
    // The campaign programme: a copy of the same rules, a card for each customer, five campaigns.
    const basket = await seedBasketProgramme(db, seed.partner_id, seed.programme_id);
    const tiered = await seedTieredProgramme(db, seed.partner_id, seed.programme_id);
    await db.query('analyze');

    // The reference first, on an idle server.
    const tps = pgbenchTps(PGBENCH_DB, CONNECTIONS, DURATION);

    const headers = { 'content-type': 'application/json', 'x-api-key': bench.apiKey.key, 'x-api-secret': bench.apiKey.secret };
    // One API key per till, each rate-limited under its own key, as tills run.
    const tills = await tillKeys(server.url, server.stdout(), CONNECTIONS);
    const pickFrom = (ids: number[]) => () => ids[Math.floor(Math.random() * ids.length)]!;
    const pickBasket = () => basket.baskets[Math.floor(Math.random() * basket.baskets.length)]!;
    let keySeq = 0;
    const fire = async (path: string, duration: number, body: () => object, withKey = false): Promise<Measured> => {
      const latencies: number[] = [];
      const sampled = await sampleLockWaits(bench.url, async () => {
        // One connection per till key: CONNECTIONS loads side by side, added up.
        const runs = tills.map((till) => {
          const instance = autocannon({
            url: `${server.url}${path}`,
            method: 'POST',
            connections: 1,
            duration,
            headers: { ...headers, 'x-api-key': till.key, 'x-api-secret': till.secret },
            requests: [
              {
                setupRequest: (req) => ({
                  ...req,
                  ...(withKey ? { headers: { ...req.headers, 'idempotency-key': `bench-${++keySeq}` } } : {}),
                  body: JSON.stringify(body()),
                }),
              },
            ],
          });
          (instance as unknown as NodeJS.EventEmitter).on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => latencies.push(ms));
          return instance as unknown as Promise<Result>;
        });
        const all = await Promise.all(runs);
        return {
          rps: all.reduce((n, r) => n + r.requests.average, 0),
          non2xx: all.reduce((n, r) => n + r.non2xx, 0),
          errors: all.reduce((n, r) => n + r.errors, 0),
        };
      });
      const r = sampled.result;
      if (r.non2xx > 0 || r.errors > 0) throw new Error(`${path}: ${r.non2xx} non-2xx, ${r.errors} errors`);
      latencies.sort((a, b) => a - b);
      return { rps: r.rps, p50: pct(latencies, 50), p95: pct(latencies, 95), p99: pct(latencies, 99), lockWaiting: sampled.lockWaiting, active: sampled.active };
    };
    const create = '/en/shop/transactions/create';
    const amountOn = (ids: number[]) => {
      const pick = pickFrom(ids);
      return () => ({ card_id: pick(), shop_id: seed.shop_id, amount: 12.34 });
    };
    const pickB = pickFrom(basket.cardIds);
    const basketBody = () => ({ card_id: pickB(), shop_id: seed.shop_id, items: pickBasket() });
    const setBudgets = (budget: number | null) => db.query(`update campaigns set points_budget = $2 where id = any($1::int[])`, [basket.budgeted, budget]);
    const runCase: Record<Case, (d: number) => Promise<Measured>> = {
      amount: (d) => fire(create, d, amountOn(cardIds)),
      amount_campaigns: (d) => fire(create, d, amountOn(basket.cardIds)),
      amount_unlimited: async (d) => {
        await setBudgets(null);
        try {
          return await fire(create, d, amountOn(basket.cardIds));
        } finally {
          await setBudgets(BIG_BUDGET);
        }
      },
      amount_tiers: (d) => fire(create, d, amountOn(tiered.cardIds)),
      basket: (d) => fire(create, d, basketBody),
      basket_no_budget: async (d) => {
        await setBudgets(null);
        try {
          return await fire(create, d, basketBody);
        } finally {
          await setBudgets(BIG_BUDGET);
        }
      },
      preview: (d) => fire('/en/shop/transactions/preview', d, basketBody),
      keyed: (d) => fire(create, d, amountOn(cardIds), true),
      one_card: (d) => fire(create, d, () => ({ card_id: cardIds[0]!, shop_id: seed.shop_id, amount: 12.34 })),
    };

    // Every campaign applies to the bench's baskets, and preview agrees with it.
    {
      const body = { ...basketBody(), card_id: basket.cardIds[0]! };
      const pv = await fetch(`${server.url}/en/shop/transactions/preview`, { method: 'POST', headers, body: JSON.stringify(body) });
      const pvBody = (await pv.json()) as { data: { points: number; breakdown: Array<{ source: string }> } };
      const cr = await fetch(`${server.url}${create}`, { method: 'POST', headers, body: JSON.stringify(body) });
      const crBody = (await cr.json()) as { data: { points: number; breakdown: Array<{ source: string }> } };
      if (pv.status !== 200 || cr.status !== 201) throw new Error(`basket check: preview ${pv.status}, create ${cr.status}`);
      const applied = crBody.data.breakdown.filter((b) => b.source === 'campaign').length;
      if (applied !== basket.campaigns.length) throw new Error(`basket check: ${applied} campaigns applied, expected ${basket.campaigns.length}: ${JSON.stringify(crBody.data.breakdown)} for ${JSON.stringify(body)}`);
      if (pvBody.data.points !== crBody.data.points) throw new Error(`basket check: preview ${pvBody.data.points} ≠ create ${crBody.data.points}`);
    }

    const chosen = CASES.filter((c) => ONLY.has(c));
    for (const c of chosen) await runCase[c](2); // warm-up
    const results = new Map<Case, Measured[]>(chosen.map((c) => [c, []]));
    // The first five rotate from round to round, so no case always runs first or after the same one.
    const rotating: Case[] = chosen.filter((c) => c !== 'keyed' && c !== 'one_card');
    for (let round = 0; round < ROUNDS; round++) {
      const order = [...rotating.slice(round % Math.max(1, rotating.length)), ...rotating.slice(0, round % Math.max(1, rotating.length)), ...chosen.filter((c) => !rotating.includes(c))];
      for (const c of order) results.get(c)!.push(await runCase[c](DURATION));
      process.stderr.write(`round ${round + 1}/${ROUNDS}: ${order.map((c) => `${c} ${results.get(c)!.at(-1)!.rps.toFixed(0)}/s`).join(', ')}\n`);
    }

    // A budget that runs out during a short round: once exhausted the campaign is skipped.
    let exhausted: { rps: number; budget: number; awarded: number; status: boolean } | undefined;
    if (ONLY.has('basket')) {
      const target = basket.budgeted[0]!;
      const { rows: [c] } = await db.query<{ points_awarded: number }>(`select ${AWARDED} as points_awarded from campaigns c where id = $1`, [target]);
      // About 25 awards' worth of its points: used up in the round's first seconds even at a few awards/s.
      const budget = c!.points_awarded + 300;
      await db.query(`update campaigns set points_budget = $2 where id = $1`, [target, budget]);
      const short = Math.max(3, Math.round(DURATION / 2));
      const m = await runCase.basket(short);
      const { rows: [after] } = await db.query<{ points_awarded: number; points_budget: number }>(`select ${AWARDED} as points_awarded, points_budget from campaigns c where id = $1`, [target]);
      exhausted = { rps: m.rps, budget, awarded: after!.points_awarded, status: after!.points_awarded === budget };
    }

    const verify = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'ledger', 'verify'], {
      env: { ...process.env, DATABASE_URL: bench.url, LOG_LEVEL: 'warn' } as NodeJS.ProcessEnv,
      encoding: 'utf8',
    });
    const report = JSON.parse(verify.stdout) as { ok: boolean; transactions: number };
    if (!report.ok) throw new Error(`ledger verify found differences:\n${verify.stdout}`);
    const counters = await checkCounters(db, basket.campaigns.map((c) => c.id));
    if (!counters.every((c) => c.ok)) throw new Error(`campaign counters differ from their breakdown rows:\n${JSON.stringify(counters, null, 2)}`);

    const tierCheck = await tiered.check();
    if (tierCheck.includes('WRONG')) throw new Error(`tiers: ${tierCheck}`);
    const profile = PROFILE_AWARDS > 0 ? await profileStatements(bench.url, seed.partner_id, seed.shop_id, basket, PROFILE_AWARDS) : undefined;

    const med = (c: Case, f: (m: Measured) => number) => (results.has(c) ? median(results.get(c)!.map(f)) : NaN);
    const rps = (c: Case) => med(c, (m) => m.rps);
    const perRound = (c: Case) => (results.has(c) && results.has('amount') ? results.get(c)!.map((m, i) => (m.rps / results.get('amount')![i]!.rps).toFixed(2)).join(' / ') : '—');
    const row = (label: string, c: Case, extra = '') =>
      results.has(c)
        ? `  ${label.padEnd(34)}${rps(c).toFixed(0).padStart(7)}/s   p50 ${med(c, (m) => m.p50).toFixed(0)} / p95 ${med(c, (m) => m.p95).toFixed(0)} / p99 ${med(c, (m) => m.p99).toFixed(0)} ms   lock-waiting ${med(c, (m) => m.lockWaiting).toFixed(1)}${extra}`
        : `  ${label.padEnd(34)}      —`;
    const lines = [
      '',
      `Points benchmark — PostgreSQL, ${CONNECTIONS} clients, ${DURATION} s × ${ROUNDS} rounds (medians), ${CARDS} cards a programme, node ${process.version}, ${os.cpus().length} cores (shared: figures move with the machine's load)`,
      `  settings: NODE_ENV=production, LOG_LEVEL=info unless listed; rate limits on, one API key per client; non-default: ${settingsLine(RAISED_LIMITS)}${process.env.REDIS_URL ? '; Redis on' : '; no Redis'}`,
      '',
      row('amount-only, no campaigns', 'amount'),
      row('amount-only, 5 campaigns, 2 budgeted', 'amount_campaigns'),
      row('… the 2 budgets removed', 'amount_unlimited'),
      row('amount-only, 3 tiers', 'amount_tiers'),
      row('basket of 10 lines, 5 campaigns', 'basket'),
      row('… the 2 budgets removed', 'basket_no_budget'),
      row('preview (same baskets, card_id)', 'preview'),
      row('amount-only with Idempotency-Key', 'keyed'),
      row('amount-only on one card', 'one_card'),
      `  pgbench TPC-B-like tps            ${tps.toFixed(0).padStart(7)}/s   (reference: same server, same run, idle, -s ${CONNECTIONS})`,
      '',
      `  basket / amount-only (per round)  ${perRound('basket')}   median ${(rps('basket') / rps('amount')).toFixed(2)} (aim ≥ 0.6)`,
      `  amount, campaigns / amount-only   ${perRound('amount_campaigns')}`,
      `  … no budgets / amount-only        ${perRound('amount_unlimited')}   (aim ≥ 0.9)`,
      `  amount, tiers / amount-only       ${perRound('amount_tiers')}   (aim ≥ 0.9) ${tierCheck}`,
      `  basket, no budgets / amount-only  ${perRound('basket_no_budget')}   (aim ≥ 0.8)`,
      `  preview p95                       ${results.has('preview') ? results.get('preview')!.map((m) => m.p95.toFixed(0)).join(' / ') : '—'} ms (aim < 20 ms)`,
      `  awards / pgbench                  ${(rps('amount') / tps).toFixed(2)}`,
      ...(exhausted
        ? [`  budget running out (short round)  ${exhausted.rps.toFixed(0)}/s = ${(exhausted.rps / rps('basket')).toFixed(2)} of the basket median; awarded ${exhausted.awarded} of ${exhausted.budget} (${exhausted.status ? 'exhausted exactly' : 'NOT exhausted'})`]
        : []),
      `  ledger verify                     ${report.ok ? 'ok' : 'FAILED'} (${report.transactions} transactions)`,
      `  campaign counters                 ${counters.map((c) => `#${c.id} ${c.pointsAwarded}${c.budget === null ? '' : `≤${c.budget}`} pts = Σ rows, ${c.usesCount} uses`).join('; ')}`,
      ...(profile
        ? [
            '',
            `  one basket award alone (${profile.awards} in a row, one connection): ${profile.awardMs.toFixed(2)} ms`,
            ...profile.steps.map((s) => `    ${s.step.padEnd(14)} ${s.perAward.toFixed(2)} round trip(s)  ${s.ms.toFixed(2)} ms  ${((100 * s.ms) / profile.awardMs).toFixed(0).padStart(3)} %`),
            `    JS between     ${''.padEnd(15)}${profile.jsMs.toFixed(2)} ms  ${((100 * profile.jsMs) / profile.awardMs).toFixed(0).padStart(3)} %`,
            `  EXPLAIN ANALYZE (planning + execution, ms): ${profile.explained.map((e) => `${e.step} ${e.planningMs.toFixed(2)} + ${e.executionMs.toFixed(2)}`).join('; ')}`,
          ]
        : []),
      '',
    ];
    process.stdout.write(lines.join('\n'));
    const summary = (c: Case) => (results.has(c) ? { rps: rps(c), per_round: results.get(c)!.map((m) => m.rps), p50_ms: med(c, (m) => m.p50), p95_ms: med(c, (m) => m.p95), p99_ms: med(c, (m) => m.p99) } : null);
    process.stdout.write(
      `${JSON.stringify({
        bench: 'points',
        connections: CONNECTIONS,
        duration: DURATION,
        rounds: ROUNDS,
        cards: CARDS,
        awards_per_s: rps('amount'),
        keyed_awards_per_s: rps('keyed'),
        one_card_awards_per_s: rps('one_card'),
        pgbench_tps: tps,
        p50_ms: med('amount', (m) => m.p50),
        p99_ms: med('amount', (m) => m.p99),
        amount_campaigns: summary('amount_campaigns'),
        amount_unlimited: summary('amount_unlimited'),
        amount_tiers: summary('amount_tiers'),
        basket: summary('basket'),
        basket_no_budget: summary('basket_no_budget'),
        preview: summary('preview'),
        basket_ratio: rps('basket') / rps('amount'),
        exhausted_round: exhausted ?? null,
        campaign_counters: counters,
        statement_profile: profile ?? null,
      })}\n`,
    );
  } finally {
    await bench.done();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
