import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

// The module as this file was loaded: transpiled JavaScript (scripts/test.mjs) or the source.
const compiled = import.meta.url.endsWith('.js');
const destination = fileURLToPath(new URL(`./log-destination.${compiled ? 'js' : 'ts'}`, import.meta.url));

/** Run a script in a fresh Node process (with tsx when run from source) and return its standard output. */
function run(script: string): string {
  const r = spawnSync(process.execPath, [...(compiled ? [] : ['--import', 'tsx']), '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

describe('stdout log destination', () => {
  it('writes every line whole and in order, text with multi-byte characters included', () => {
    const out = run(`
      const { stdoutLogDestination } = await import(${JSON.stringify(destination)});
      const d = stdoutLogDestination();
      for (let i = 0; i < 5000; i++) d.write(JSON.stringify({ i, msg: 'Kėdainiai — ✓' }) + '\\n');
    `);
    const lines = out.trimEnd().split('\n').map((l) => JSON.parse(l) as { i: number; msg: string });
    assert.equal(lines.length, 5000);
    lines.forEach((l, i) => assert.deepEqual(l, { i, msg: 'Kėdainiai — ✓' }));
  });

  it('flushes what is still waiting when the process exits at once', () => {
    // The writes are asynchronous: the first line goes to a write at once, the others wait
    // for it. Without the flush at exit those 999 would be lost. (The first one's write is
    // still under way at the exit and may land after them, as with pino's own destination.)
    const out = run(`
      const { stdoutLogDestination } = await import(${JSON.stringify(destination)});
      const d = stdoutLogDestination();
      for (let i = 0; i < 1000; i++) d.write('line ' + i + '\\n');
      process.exit(0);
    `);
    const waiting = out.trimEnd().split('\n').filter((l) => l !== 'line 0');
    assert.deepEqual(waiting, Array.from({ length: 999 }, (_, i) => `line ${i + 1}`));
  });
});
