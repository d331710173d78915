// The partner console's first page: initial JavaScript (gzip) and time to interactive on
// loopback, against a reference measured in the same run (a bare node:http page, loaded by
// the same browser). The server runs as users run it: NODE_ENV=production, LOG_LEVEL=info,
// the embedded store unless DATABASE_URL / REDIS_URL are set. `npm run bench:dashboard`.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createTestDatabase } from '../test/helpers/database.js';
import { launchBrowser } from '../web/e2e/helpers/browser.js';
import { seed } from '../web/e2e/helpers/seed.js';

const RUNS = 15;
const BUDGET_KB = 200;
const BUDGET_MS = 1000;
const DIST = path.resolve(import.meta.dirname, '../web/dist');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.95) - 1)]!;

const env = {
  NODE_ENV: 'production',
  LOG_LEVEL: 'info',
  HOST: '127.0.0.1',
  PORT: '0',
  LOYALTY_DEMO_SEED: 'false',
  APP_TEST_PHONES: '+37060000000:123456',
  DATABASE_URL: process.env.DATABASE_URL,
  REDIS_URL: process.env.REDIS_URL,
};
const db = await createTestDatabase(process.env.DATABASE_URL);
const config = loadConfig(env, 'bench');
const app = await buildApp(config, { database: db.database });
// info-level request logs go to a sink, as a deployment's log shipper would take them.
await app.fastify.listen({ host: '127.0.0.1', port: 0 });
const url = `http://127.0.0.1:${(app.fastify.server.address() as AddressInfo).port}`;
const t = { url, app, config, db, close: async () => undefined };
const demo = await seed(t);

const reference = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>ref</title><h1>Reference</h1>'));
await new Promise<void>((r) => reference.listen(0, '127.0.0.1', r));
const refUrl = `http://127.0.0.1:${(reference.address() as AddressInfo).port}/`;

const browser = await launchBrowser();
try {
  const page = await browser.page({ width: 1280, height: 860 });

  // 1. JavaScript the first page loads: every script response, sized as gzip -9 of the file.
  const js = new Set<string>();
  page.on('response', (r) => {
    if (r.url().endsWith('.js')) js.add(new URL(r.url()).pathname);
  });
  const gz = async (files: Set<string>) => {
    let total = 0;
    for (const f of files) total += gzipSync(await readFile(path.join(DIST, f.replace('/dashboard/', ''))), { level: 9 }).length;
    return total / 1024;
  };
  await page.goto(`${url}/dashboard/`);
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  const signInKb = await gz(js);
  await page.getByLabel('Email').fill(demo.partner.email);
  await page.getByLabel('Password').fill(demo.partner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('figure').first().waitFor();
  const overviewKb = await gz(js);

  // 2. Time to interactive: navigation start → the page's first control is usable (sign-in:
  // the Sign in button; signed in: the Overview heading and its KPIs filled), warm cache off.
  const cdp = await browser.context.newCDPSession(page);
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  const measure = async (go: () => Promise<void>) => {
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      await go();
      times.push(await page.evaluate(() => performance.now()));
    }
    return times;
  };
  const overview = await measure(async () => {
    await page.goto(`${url}/dashboard/`);
    await page.locator('.kpis dd').first().filter({ hasText: /\d/ }).waitFor();
  });
  await page.getByRole('button', { name: 'Sign out' }).click();
  const signIn = await measure(async () => {
    await page.goto(`${url}/dashboard/`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
  });
  const ref = await measure(async () => {
    await page.goto(refUrl);
    await page.getByRole('heading', { name: 'Reference' }).waitFor();
  });

  const settings = `NODE_ENV=production LOG_LEVEL=info store=${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite (embedded)'}${process.env.REDIS_URL ? ' + Redis' : ''}; cache disabled; ${RUNS} loads each; Chromium ${browser.context.browser()?.version() ?? ''}`;
  const row = (name: string, xs: number[]) =>
    `| ${name} | ${median(xs).toFixed(0)} ms | ${p95(xs).toFixed(0)} ms | ${(median(xs) / median(ref)).toFixed(1)}× |`;
  const lines = [
    `Settings: ${settings}`,
    '',
    '| initial JavaScript (gzip -9) | KB | budget |',
    '|---|---|---|',
    `| sign-in page | ${signInKb.toFixed(1)} | ${BUDGET_KB} |`,
    `| signed in: Overview with charts | ${overviewKb.toFixed(1)} | ${BUDGET_KB} |`,
    '',
    '| interactive after navigation start | median | p95 | vs reference |',
    '|---|---|---|---|',
    row('sign-in page (Sign in button usable)', signIn),
    row('Overview (KPIs filled in)', overview),
    row('reference: bare node:http page', ref),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const ok = overviewKb <= BUDGET_KB && median(overview) < BUDGET_MS && median(signIn) < BUDGET_MS;
  process.stdout.write(ok ? 'within budget\n' : 'OVER BUDGET\n');
  process.exitCode = ok ? 0 : 1;
} finally {
  await browser.close();
  reference.close();
  await app.fastify.close();
  await db.drop();
}
