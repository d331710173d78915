// XML import benchmark (`npm run bench:import`), on PostgreSQL (DATABASE_URL, default the local
// `test` server):
//   1. a feed of N generated items (about 800 bytes each: 100,000 items ≈ 80 MB) is written to a
//      temporary file, streamed — never held in memory;
//   2. the bare parse rate: the same bytes read from that file, decoded and parsed by the same
//      parser (saxes, through the service's own reader) in this process, doing nothing with the
//      items — the reference for the ratio;
//   3. the real server (a child process, NODE_ENV=production, LOG_LEVEL=info, default pool and
//      poll settings) on a scratch database: the file is uploaded (POST from-file, streamed) and
//      imported; items/s from the import's started_at to finished_at, and the peak RSS growth of
//      the server process over upload and import (VmHWM after clear_refs, and 20 ms samples).
// At 10,000, 100,000 and 125,000 items (BENCH_SIZES; 125,000 items ≈ 100 MB, the feed size
// DESIGN.md §9 bounds the growth for), so the cost per item can be compared.
//
// Settings: BENCH_SIZES (default "10000,100000,125000"), DATABASE_URL, REDIS_URL (default the local
// redis://127.0.0.1:6379, as production runs; "none" for without), BENCH_SERVER_NODE_OPTIONS
// (default none: e.g. "--max-old-space-size=256"), BENCH_SERVER_NODE_ARGS (node flags NODE_OPTIONS
// refuses, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the server).
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { SaxesParser } from 'saxes';
import { feedText } from '../src/modules/catalog/feed-reader.js';
import { childEnv, startServerProcess } from '../test/helpers/server-process.js';
import { drop, recreate, urlFor } from './postgres.js';

const SIZES = (process.env.BENCH_SIZES ?? '10000,100000,125000').split(',').map(Number);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const MAX_BYTES = 200 * 1024 * 1024;

const WORDS = ['kavos', 'puodelis', 'porcelianinis', 'arbatinukas', 'lėkštė', 'šaukštas', 'dubuo', 'taurė', 'ąsotis', 'padėklas'];

/** One item, about 800 bytes, deterministic in i. */
function item(prefix: string, i: number): string {
  const w = (k: number) => WORDS[(i * 7 + k) % WORDS.length];
  const price = `${(i % 997) + 1}.${String(i % 100).padStart(2, '0')}`;
  const sale = i % 5 === 0 ? `\n    <sale_price>${(i % 997) + 0.5}</sale_price>` : '';
  return `  <product id="${prefix}${i}">
    <name>${w(1)} ${w(2)} ${i}</name>
    <sku>SKU-${prefix}${i}</sku>
    <ean>${String(4770000000000 + i)}</ean>
    <brand>Brand ${i % 40}</brand>
    <price>${price}</price>${sale}
    <currency>EUR</currency>
    <stock>${i % 50}</stock>
    <weight>0.${(i % 9) + 1} kg</weight>
    <color>${i % 2 === 0 ? 'balta' : 'mėlyna'}</color>
    <image>https://shop.example.com/images/${prefix}${i}.jpg</image>
    <url>https://shop.example.com/products/${prefix}${i}</url>
    <category>${w(3)} &gt; ${w(4)}</category>
    <description>${w(5)} ${w(6)} ${w(7)}: porcelianinis gaminys, tinkamas indaplovei ir mikrobangų krosnelei. Matmenys 12 × 9 cm, talpa 300 ml. Spalva balta, su mėlynu kraštu. Pagaminta Lietuvoje; garantija 24 mėnesiai. Tiekiama per 1–2 darbo dienas visoje Lietuvoje.</description>
    <warranty>24 mėn.</warranty>
  </product>
`;
}

/** Writes the feed to `file` in chunks (never the whole feed in memory); returns its size. */
async function writeFeed(file: string, prefix: string, n: number): Promise<number> {
  const out = createWriteStream(file);
  let buf = '<?xml version="1.0" encoding="UTF-8"?>\n<products>\n';
  for (let i = 1; i <= n; i++) {
    buf += item(prefix, i);
    if (buf.length > 256 * 1024) {
      if (!out.write(buf)) await once(out, 'drain');
      buf = '';
    }
  }
  out.end(`${buf}</products>\n`);
  await once(out, 'finish');
  return (await stat(file)).size;
}

/** The bare parse: decode and parse with saxes, counting items, nothing else. */
async function bareParse(file: string): Promise<{ items: number; ms: number }> {
  const started = performance.now();
  const parser = new SaxesParser({ position: true });
  let items = 0;
  parser.on('opentag', (t) => {
    if (t.name === 'product') items++;
  });
  parser.on('text', () => undefined);
  parser.on('closetag', () => undefined);
  for await (const text of feedText(createReadStream(file), { maxBytes: MAX_BYTES })) parser.write(text);
  parser.close();
  return { items, ms: performance.now() - started };
}

const rssKb = async (pid: number, field: 'VmRSS' | 'VmHWM') =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);

async function upload(base: string, key: { key: string; secret: string }, file: string, size: number): Promise<number> {
  const url = new URL(`${base}/en/shop/xml-import/from-file?filename=${path.basename(file)}`);
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      headers: { 'x-api-key': key.key, 'x-api-secret': key.secret, 'content-type': 'application/xml', 'content-length': String(size) },
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => (res.statusCode === 202 ? resolve(JSON.parse(body).data.import_id) : reject(new Error(`upload: ${res.statusCode} ${body}`))));
    });
    req.on('error', reject);
    createReadStream(file).pipe(req);
  });
}

async function main() {
  const db = 'loyalty_bench_import';
  await recreate(db);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-bench-import-'));
  const env: Record<string, string> = {
    DATABASE_URL: urlFor(db),
    LOYALTY_DATA_DIR: path.join(dir, 'data'),
    LOYALTY_DEMO_SEED: 'true',
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
  };
  if (REDIS_URL !== 'none') env.REDIS_URL = REDIS_URL;
  const nodeOptions = process.env.BENCH_SERVER_NODE_OPTIONS;
  if (nodeOptions) env.NODE_OPTIONS = nodeOptions;
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const server = await startServerProcess(childEnv(env), 180_000, nodeArgs);
  const results: Array<Record<string, number>> = [];
  try {
    const key = server.apiKey!;
    const pid = server.child.pid!;
    for (const [round, n] of SIZES.entries()) {
      const file = path.join(dir, `feed-${n}.xml`);
      const bytes = await writeFeed(file, `R${round}-`, n);
      const bare = await bareParse(file);
      if (bare.items !== n) throw new Error(`bare parse found ${bare.items} items`);

      const before = await rssKb(pid, 'VmRSS');
      await writeFile(`/proc/${pid}/clear_refs`, '5').catch(() => undefined);
      let peak = before;
      const sampler = setInterval(() => {
        rssKb(pid, 'VmRSS').then((kb) => (peak = Math.max(peak, kb)), () => undefined);
      }, 20);
      const uploadStarted = performance.now();
      const id = await upload(server.url, key, file, bytes);
      const uploadMs = performance.now() - uploadStarted;
      const uploadPeak = Math.max(peak, await rssKb(pid, 'VmHWM'));
      let rec: { status: string; created: number; started_at: string; finished_at: string };
      for (;;) {
        const res = await fetch(`${server.url}/en/shop/xml-import/${id}`, { headers: { 'x-api-key': key.key, 'x-api-secret': key.secret } });
        if (res.status !== 200) throw new Error(`import ${id}: ${res.status} ${await res.text()}`);
        rec = ((await res.json()) as { data: typeof rec }).data;
        if (['completed', 'failed'].includes(rec.status)) break;
        // Within the default API rate limit (100/minute); the timing is the server's own.
        await new Promise((r) => setTimeout(r, 1000));
      }
      clearInterval(sampler);
      if (rec.status !== 'completed' || rec.created !== n) throw new Error(`import: ${JSON.stringify(rec)}`);
      peak = Math.max(peak, await rssKb(pid, 'VmHWM'));
      const importMs = Date.parse(rec.finished_at) - Date.parse(rec.started_at);
      results.push({
        items: n,
        mb: bytes / 1e6,
        bare_items_per_s: Math.round((n / bare.ms) * 1000),
        bare_mb_per_s: Number(((bytes / 1e6 / bare.ms) * 1000).toFixed(1)),
        import_items_per_s: Math.round((n / importMs) * 1000),
        import_ms: importMs,
        upload_ms: Math.round(uploadMs),
        ratio: Number((n / importMs / (n / bare.ms)).toFixed(2)),
        rss_growth_mb: Number(((peak - before) / 1024).toFixed(1)),
        rss_before_mb: Number((before / 1024).toFixed(1)),
        rss_upload_growth_mb: Number(((uploadPeak - before) / 1024).toFixed(1)),
      });
      await rm(file);
    }
  } finally {
    await server.kill('SIGTERM');
    await drop(db);
    await rm(dir, { recursive: true, force: true });
  }
  const lines = [
    '',
    `XML import benchmark — PostgreSQL, node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'})`,
    'Server settings: defaults (pool 10, XML_IMPORT_CONCURRENCY 2, batches of 1000, parse in a worker thread) with NODE_ENV=production, LOG_LEVEL=info;',
    `  non-default: LOYALTY_DEMO_SEED=true (for the API key), DATABASE_URL=<scratch database>${REDIS_URL !== 'none' ? `, REDIS_URL=${REDIS_URL}` : ''}${nodeOptions ? `, NODE_OPTIONS=${nodeOptions}` : ''}${nodeArgs.length > 0 ? `, node ${nodeArgs.join(' ')}` : ''}`,
    '',
    '| items | MB | bare parse items/s (MB/s) | import items/s | ratio | import s | upload s | peak RSS growth |',
    '|---|---|---|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${r.items!.toLocaleString('en')} | ${r.mb!.toFixed(1)} | ${r.bare_items_per_s!.toLocaleString('en')} (${r.bare_mb_per_s}) | ${r.import_items_per_s!.toLocaleString('en')} | **${r.ratio}** | ${(r.import_ms! / 1000).toFixed(1)} | ${(r.upload_ms! / 1000).toFixed(1)} | ${r.rss_growth_mb} MB (from ${r.rss_before_mb} MB) |`,
    ),
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n${JSON.stringify({ bench: 'import', node_options: nodeOptions ?? null, results })}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
