#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ with Node's test runner (through tsx).
// Files that need a service run only when it is configured:
//   *.redis.test.ts  need REDIS_URL     *.pg.test.ts  need DATABASE_URL
// Everything else runs in both modes: embedded (PGlite, in-process) and, with
// DATABASE_URL / REDIS_URL set, against PostgreSQL and Redis.
// The console's tests live under web/: unit tests in web/src, browser tests in web/e2e
// (Chromium from Debian's `chromium` package); the console is built first when they run.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

function find(dir) {
  let out = [];
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out = out.concat(find(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const filters = process.argv.slice(2);
let files = [...find('src'), ...find('test'), ...find('web/src'), ...find('web/e2e')].sort();
if (filters.length > 0) files = files.filter((f) => filters.some((x) => f.includes(x)));
const needs = [
  ['.redis.test.ts', 'REDIS_URL'],
  ['.pg.test.ts', 'DATABASE_URL'],
];
// The longest files start first (browser tests, child processes, fuzzing): with the files in
// alphabetical order they came last, and one core idled while the final few ran alone.
const SLOW_FIRST = ['web/e2e/', 'test/cli.test.ts', 'test/server.test.ts', 'test/fuzz.test.ts', 'crash', 'test/openapi.test.ts', 'test/xml-import'];
const rank = (f) => {
  const i = SLOW_FIRST.findIndex((s) => f.replaceAll(path.sep, '/').includes(s));
  return i === -1 ? SLOW_FIRST.length : i;
};
files.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
const excluded = [];
files = files.filter((f) => {
  const need = needs.find(([suffix, env]) => f.endsWith(suffix) && !process.env[env]);
  if (need) excluded.push(`${f} (needs ${need[1]})`);
  return !need;
});
if (files.some((f) => f.startsWith(path.join('web', 'e2e')))) {
  // The browser tests drive the console as `npm run build` makes it, from these sources.
  const build = spawnSync(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--config', 'web/vite.config.ts', '--logLevel', 'warn'], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
if (files.length === 0) {
  // `node --test` with no file falls back to its own discovery (which finds this script).
  console.error(`No test file matches ${filters.join(', ')}.`);
  process.exit(1);
}
const mode = process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite';
console.log(`Running ${files.length} test files on ${mode}${process.env.REDIS_URL ? ' + Redis' : ''}.`);
if (excluded.length > 0) console.log(`Not in this mode: ${excluded.join(', ')}`);

const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=3', '--test-timeout=300000', '--test-reporter=spec', ...files],
  { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } },
);
process.exit(result.status ?? 1);
