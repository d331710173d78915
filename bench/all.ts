// Every hot-path benchmark at once (`npm run bench`), the way users run the service:
// PostgreSQL + Redis (DATABASE_URL / REDIS_URL, default the local servers), NODE_ENV=production,
// LOG_LEVEL=info, rate limits off. Each figure is the median of BENCH_ROUNDS rounds (3), each
// set against its reference measured in the same round on the same machine; one table:
//
//   path | service | reference in the same run | ratio | aim
//
// The benches run one after another (never together) as child processes; their own output
// goes to stderr as they run, and the last JSON line of each is read for the table.
// Settings: BENCH_ROUNDS (3), BENCH_DURATION (10 s per measurement), WEB_CONCURRENCY (passed to
// the service), BENCH_LOG_LEVEL (info).
import { spawnSync } from 'node:child_process';
import os from 'node:os';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const env: NodeJS.ProcessEnv = {
  ...process.env,
  DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
};

interface PointsResult {
  connections: number;
  cards: number;
  awards_per_s: number;
  keyed_awards_per_s: number;
  one_card_awards_per_s: number;
  pgbench_tps: number;
  p99_ms: number;
}
interface SmsResult {
  connections: number;
  sends_per_s: number;
  handover_p50_ms: number;
  handover_p95_ms: number;
  pgbench_tps: number;
  p99_ms: number;
}
interface HttpResult {
  connections: number;
  bare: { rps: number; rps_per_round?: number[] };
  loyalty: { rps: number; p99_ms: number; rps_per_round?: number[] };
}

/** Run one bench script; its output streams to stderr; the last JSON line is its result. */
function run<T>(script: string, extra: NodeJS.ProcessEnv = {}): T {
  process.stderr.write(`\n── ${script}${Object.keys(extra).length ? ` ${JSON.stringify(extra)}` : ''}\n`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', script], { env: { ...env, ...extra }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  process.stderr.write(r.stdout);
  process.stderr.write(r.stderr);
  if (r.status !== 0) throw new Error(`${script} failed (exit ${r.status})`);
  const line = r.stdout.trim().split('\n').reverse().find((l) => l.startsWith('{'));
  if (!line) throw new Error(`${script} printed no JSON result`);
  return JSON.parse(line) as T;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

interface Row {
  path: string;
  service: string;
  reference: string;
  ratio: number | undefined;
  aim: string;
  met: boolean | undefined;
}

async function main() {
  const rows: Row[] = [];

  // The HTTP bench alternates its targets round by round itself.
  const http = run<HttpResult>('bench/http.ts', { BENCH_ROUNDS: String(ROUNDS) });
  const bareRounds = http.bare.rps_per_round ?? [http.bare.rps];
  const httpRatios = (http.loyalty.rps_per_round ?? [http.loyalty.rps]).map((x, i) => x / bareRounds[i]!);
  const httpRatio = median(httpRatios);
  rows.push({
    path: `POST /en/shop/validate-credentials, ${http.connections} connections`,
    service: `${Math.round(http.loyalty.rps).toLocaleString('en-US')} req/s, p99 ${http.loyalty.p99_ms} ms`,
    reference: `bare Fastify route: ${Math.round(http.bare.rps).toLocaleString('en-US')} req/s`,
    ratio: httpRatio,
    aim: '≥ 0.5',
    met: httpRatio >= 0.5,
  });

  const points: PointsResult[] = [];
  const sms: SmsResult[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    points.push(run<PointsResult>('bench/points.ts'));
    sms.push(run<SmsResult>('bench/sms.ts'));
  }
  const med = <T>(rs: T[], f: (r: T) => number) => median(rs.map(f));
  const pg = (rs: Array<{ pgbench_tps: number }>) => `pgbench -c16 -s16 TPC-B-like: ${Math.round(med(rs, (r) => r.pgbench_tps)).toLocaleString('en-US')} tps`;
  const award = med(points, (r) => r.awards_per_s / r.pgbench_tps);
  const hot = med(points, (r) => r.one_card_awards_per_s / r.pgbench_tps);
  const keyed = med(points, (r) => r.keyed_awards_per_s / r.pgbench_tps);
  rows.push({
    path: `award (transactions/create), ${points[0]!.connections} clients, ${points[0]!.cards} cards`,
    service: `${Math.round(med(points, (r) => r.awards_per_s))} tps, p99 ${med(points, (r) => r.p99_ms)} ms`,
    reference: pg(points),
    ratio: award,
    aim: '≥ 0.6',
    met: award >= 0.6,
  });
  rows.push({
    path: 'award with an Idempotency-Key on each',
    service: `${Math.round(med(points, (r) => r.keyed_awards_per_s))} tps`,
    reference: 'same pgbench',
    ratio: keyed,
    aim: '—',
    met: undefined,
  });
  rows.push({
    path: `award, ${points[0]!.connections} clients on one card`,
    service: `${Math.round(med(points, (r) => r.one_card_awards_per_s))} tps`,
    reference: 'same pgbench',
    ratio: hot,
    aim: '≥ 0.4',
    met: hot >= 0.4,
  });
  const accept = med(sms, (r) => r.sends_per_s / r.pgbench_tps);
  rows.push({
    path: `POST /en/sms/send, ${sms[0]!.connections} clients`,
    service: `${Math.round(med(sms, (r) => r.sends_per_s))} accepted/s, p99 ${med(sms, (r) => r.p99_ms)} ms`,
    reference: pg(sms),
    ratio: accept,
    aim: '≥ 0.4',
    met: accept >= 0.4,
  });
  const handover = med(sms, (r) => r.handover_p50_ms);
  rows.push({
    path: 'SMS accept → handed to the carrier (simulator), at that rate',
    service: `p50 ${Math.round(handover)} ms, p95 ${Math.round(med(sms, (r) => r.handover_p95_ms))} ms`,
    reference: '—',
    ratio: undefined,
    aim: 'p50 < 300 ms',
    met: handover < 300,
  });

  const cell = (r: Row) => [r.path, r.service, r.reference, r.ratio === undefined ? '—' : r.ratio.toFixed(2), `${r.aim}${r.met === undefined ? '' : r.met ? ' ✓' : ' ✗'}`];
  const lines = [
    '',
    `Loyalty hot paths — median of ${ROUNDS} rounds; node ${process.version}, ${os.availableParallelism()} CPU(s) (${os.cpus()[0]?.model ?? 'unknown'})`,
    `PostgreSQL + Redis, NODE_ENV=production, LOG_LEVEL=${process.env.BENCH_LOG_LEVEL ?? 'info'}, RATE_LIMIT_DISABLED=true` +
      `${process.env.WEB_CONCURRENCY ? `, WEB_CONCURRENCY=${process.env.WEB_CONCURRENCY}` : ''}`,
    '',
    '| path | service | reference in the same run | ratio | aim |',
    '|---|---|---|---|---|',
    ...rows.map((r) => `| ${cell(r).join(' | ')} |`),
    '',
  ];
  process.stdout.write(lines.join('\n'));
  process.stdout.write(`${JSON.stringify({ bench: 'all', rounds: ROUNDS, web_concurrency: Number(process.env.WEB_CONCURRENCY ?? 1), rows })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
