import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const destination = fileURLToPath(new URL('./log-destination.ts', import.meta.url));

/** Run a script in a fresh Node process (with tsx) and return its standard output. */
function run(script: string): string {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
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
    // The writes are asynchronous: without the flush at exit these lines would be lost.
    const out = run(`
      const { stdoutLogDestination } = await import(${JSON.stringify(destination)});
      const d = stdoutLogDestination();
      for (let i = 0; i < 1000; i++) d.write('line ' + i + '\\n');
      process.exit(0);
    `);
    const lines = out.trimEnd().split('\n');
    assert.equal(lines.length, 1000);
    assert.equal(lines.at(-1), 'line 999');
  });
});
