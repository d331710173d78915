#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ (and the console's under web/) with Node's test
// runner. Files that need a service run only when it is configured:
//   *.redis.test.ts  need REDIS_URL     *.pg.test.ts  need DATABASE_URL
// Everything else runs in both modes: embedded (PGlite, in-process) and, with
// DATABASE_URL / REDIS_URL set, against PostgreSQL and Redis.
// The console's tests live under web/: unit tests in web/src, browser tests in web/e2e
// (Chromium from Debian's `chromium` package); the console is built first when they run.
//
// Speed (the suite must stay within minutes on a 2-core machine, and every test file is a
// process of its own): the TypeScript of src/, test/, web/e2e/ and scripts/ is transpiled once into
// .test-build/ (per file, only what changed since the last run) and the files run as plain
// JavaScript. Under tsx every module a process loads — ~1,500 of them for the app — went
// through the loader's hooks thread: 5 CPU-s to import the app against 2.3 as JavaScript,
// paid by each of ~120 test files and every server they start as a child process. Type
// errors are `npm run typecheck`'s job (CI runs it first); this only strips types.
// web/src's unit tests use the console's bundler-style imports and stay on tsx.
//
// Files run in a pool of TEST_CONCURRENCY processes (default 3), longest first; each file's
// output is printed whole when it ends, and the slowest files are listed at the end.
//
// Usage: node scripts/test.mjs [substring…]   (only the files whose path contains one)
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = process.cwd();
const BUILD = path.join(ROOT, '.test-build');

function find(dir, suffix) {
  if (!existsSync(dir)) return [];
  let out = [];
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out = out.concat(find(p, suffix));
    else if (name.endsWith(suffix)) out.push(p);
  }
  return out;
}

const posix = (f) => f.split(path.sep).join('/');
const filters = process.argv.slice(2);
let files = [...find('src', '.test.ts'), ...find('test', '.test.ts'), ...find('web/src', '.test.ts'), ...find('web/e2e', '.test.ts')].map(posix).sort();
if (filters.length > 0) files = files.filter((f) => filters.some((x) => f.includes(x)));
const needs = [
  ['.redis.test.ts', 'REDIS_URL'],
  ['.pg.test.ts', 'DATABASE_URL'],
];
// The longest files start first (browser tests, child processes, fuzzing): with the files in
// alphabetical order they came last, and one core idled while the final few ran alone.
const SLOW_FIRST = ['web/e2e/', 'test/cli.test.ts', 'test/server.test.ts', 'test/fuzz.test.ts', 'crash', 'test/gameplay-odds', 'test/realtime-limits', 'test/openapi.test.ts', 'test/xml-import'];
const rank = (f) => {
  const i = SLOW_FIRST.findIndex((s) => f.includes(s));
  return i === -1 ? SLOW_FIRST.length : i;
};
files.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
const excluded = [];
files = files.filter((f) => {
  const need = needs.find(([suffix, env]) => f.endsWith(suffix) && !process.env[env]);
  if (need) excluded.push(`${f} (needs ${need[1]})`);
  return !need;
});
if (files.length === 0) {
  console.error(`No test file matches ${filters.join(', ')}.`);
  process.exit(1);
}
if (files.some((f) => f.startsWith('web/e2e/'))) {
  // The browser tests drive the console as `npm run build` makes it, from these sources.
  const build = spawnSync(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--config', 'web/vite.config.ts', '--logLevel', 'warn'], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

// ---- transpile src/, test/, web/e2e/ into .test-build/ --------------------------------------

const COMPILER_OPTIONS = {
  module: ts.ModuleKind.ESNext,
  target: ts.ScriptTarget.ES2023,
  verbatimModuleSyntax: true,
  isolatedModules: true,
  sourceMap: true,
  esModuleInterop: true,
};
/** What the build depends on besides each file's text: a change here rebuilds everything. */
const BUILD_KEY = createHash('sha256').update(ts.version).update(JSON.stringify(COMPILER_OPTIONS)).update('2').digest('hex').slice(0, 16);

function transpile() {
  const started = Date.now();
  const manifestFile = path.join(BUILD, '.manifest.json');
  let manifest = {};
  try {
    const m = JSON.parse(readFileSync(manifestFile, 'utf8'));
    if (m.key === BUILD_KEY) manifest = m.files;
  } catch {
    // First run, or a build of another compiler: start afresh.
  }
  const next = {};
  let written = 0;
  for (const source of [...find('src', '.ts'), ...find('test', '.ts'), ...find('web/e2e', '.ts'), ...find('scripts', '.ts')].map(posix).filter((f) => !f.endsWith('.d.ts'))) {
    const st = statSync(source);
    const stamp = `${st.size}:${st.mtimeMs}`;
    const out = path.join(BUILD, source.replace(/\.ts$/, '.js'));
    next[source] = stamp;
    if (manifest[source] === stamp && existsSync(out)) continue;
    const text = readFileSync(source, 'utf8');
    const result = ts.transpileModule(text, { compilerOptions: COMPILER_OPTIONS, fileName: path.join(ROOT, source) });
    // Stack traces name the TypeScript file and line: the map points at the source in place.
    const map = JSON.parse(result.sourceMapText);
    map.sources = [path.join(ROOT, source)];
    delete map.sourceRoot;
    const code = result.outputText.replace(/\/\/# sourceMappingURL=.*\s*$/, '');
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(out, `${code}//# sourceMappingURL=data:application/json;base64,${Buffer.from(JSON.stringify(map)).toString('base64')}\n`);
    written += 1;
  }
  for (const source of Object.keys(manifest)) {
    if (!(source in next)) rmSync(path.join(BUILD, source.replace(/\.ts$/, '.js')), { force: true });
  }
  // What the code reaches relative to its own file (import.meta.url): the same tree, linked.
  for (const link of ['package.json', 'node_modules', 'migrations', 'test/fixtures', 'web/dist', 'web/public']) {
    const at = path.join(BUILD, link);
    mkdirSync(path.dirname(at), { recursive: true });
    let present = false;
    try {
      present = lstatSync(at).isSymbolicLink();
      if (!present) rmSync(at, { recursive: true, force: true });
    } catch {
      // Not there yet.
    }
    if (!present) symlinkSync(path.relative(path.dirname(at), path.join(ROOT, link)), at);
  }
  writeFileSync(manifestFile, JSON.stringify({ key: BUILD_KEY, files: next }));
  return { written, ms: Date.now() - started };
}

const built = transpile();
const mode = process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite';
const concurrency = Math.max(1, Number(process.env.TEST_CONCURRENCY ?? 3));
console.log(
  `Running ${files.length} test files on ${mode}${process.env.REDIS_URL ? ' + Redis' : ''}, ${concurrency} at a time ` +
    `(transpiled ${built.written} changed files in ${built.ms} ms).`,
);
if (excluded.length > 0) console.log(`Not in this mode: ${excluded.join(', ')}`);

// ---- run -------------------------------------------------------------------------------------

/** A file that has not ended after this long is stopped and counts as failed. */
const FILE_TIMEOUT_MS = Number(process.env.TEST_FILE_TIMEOUT_MS ?? 15 * 60_000);
const env = { ...process.env, NODE_ENV: 'test' };
// CPU seconds per file (the file's process and the children it waited for), where GNU time is
// installed: on a loaded machine wall time says little about what a file costs.
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
const timesDir = TIME ? path.join(BUILD, '.times') : undefined;
if (timesDir) mkdirSync(timesDir, { recursive: true });

function runFile(file) {
  const compiled = !file.startsWith('web/src/');
  const args = compiled
    ? ['--enable-source-maps', '--test-reporter=spec', '--test-timeout=300000', path.join(BUILD, file.replace(/\.ts$/, '.js'))]
    : ['--import', 'tsx', '--test-reporter=spec', '--test-timeout=300000', file];
  const timesFile = timesDir && path.join(timesDir, `${file.replaceAll('/', '_')}.txt`);
  return new Promise((resolve) => {
    const started = Date.now();
    const child = timesFile
      ? spawn(TIME, ['-q', '-f', '%U %S', '-o', timesFile, process.execPath, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks = [];
    child.stdout.on('data', (d) => chunks.push(d));
    child.stderr.on('data', (d) => chunks.push(d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, FILE_TIMEOUT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const output = Buffer.concat(chunks).toString('utf8');
      let cpu;
      try {
        const [user, system] = readFileSync(timesFile, 'utf8').trim().split(/\s+/).map(Number);
        cpu = (user + system) * 1000;
      } catch {
        cpu = undefined;
      }
      const count = (label) => Number(new RegExp(`^ℹ ${label} (\\d+)`, 'm').exec(output)?.[1] ?? 0);
      resolve({
        file,
        ok: code === 0 && !timedOut,
        code,
        signal,
        timedOut,
        ms: Date.now() - started,
        cpu,
        output,
        tests: count('tests'),
        pass: count('pass'),
        fail: count('fail'),
      });
    });
  });
}

const results = [];
const startedAll = Date.now();
const queue = [...files];
async function worker() {
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    const r = await runFile(file);
    results.push(r);
    const status = r.ok ? 'ok' : r.timedOut ? `TIMED OUT after ${FILE_TIMEOUT_MS / 1000} s` : `FAILED (exit ${r.code ?? r.signal})`;
    process.stdout.write(`\n▶ ${file} — ${status}, ${r.pass}/${r.tests} passed, ${(r.ms / 1000).toFixed(1)} s${r.cpu === undefined ? '' : ` (${(r.cpu / 1000).toFixed(1)} CPU-s)`}\n${r.output}`);
  }
}
await Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, worker));

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const failed = results.filter((r) => !r.ok);
const total = results.reduce((a, r) => ({ tests: a.tests + r.tests, pass: a.pass + r.pass, fail: a.fail + r.fail }), { tests: 0, pass: 0, fail: 0 });
const withCpu = results.some((r) => r.cpu !== undefined);
console.log(`\n== slowest files (wall${withCpu ? ', CPU' : ''})`);
for (const r of [...results].sort((a, b) => b.ms - a.ms).slice(0, 15)) {
  console.log(`${seconds(r.ms).padStart(8)}${withCpu ? `${r.cpu === undefined ? '' : seconds(r.cpu)}`.padStart(9) : ''}  ${r.file}`);
}
if (withCpu) console.log(`CPU in all: ${seconds(results.reduce((a, r) => a + (r.cpu ?? 0), 0))}`);
console.log(
  `\n== ${results.length} files, ${total.tests} tests: ${total.pass} passed, ${total.fail} failed; ` +
    `${failed.length} files failed; ${seconds(Date.now() - startedAll)} on ${mode}`,
);
for (const r of failed) console.log(`✖ ${r.file}${r.timedOut ? ' (timed out)' : r.fail === 0 ? ` (exit ${r.code ?? r.signal} without a failing test: see its output above)` : ''}`);
process.exit(failed.length > 0 ? 1 : 0);
