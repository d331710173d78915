import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { SecretBox, secretsKeySource } from './secret-box.js';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('opens what it sealed, for the same place only, and not with another key', () => {
    const sealed = box.seal('-----BEGIN PRIVATE KEY-----', 'wallet:1:apple_key');
    assert.match(sealed, /^v1:/);
    assert.ok(!sealed.includes('PRIVATE'));
    assert.equal(box.open(sealed, 'wallet:1:apple_key'), '-----BEGIN PRIVATE KEY-----');
    assert.equal(box.open(sealed, 'wallet:2:apple_key'), undefined, 'moved to another partner');
    assert.equal(new SecretBox(randomBytes(32)).open(sealed, 'wallet:1:apple_key'), undefined);
    assert.notEqual(box.seal('x', 'a'), box.seal('x', 'a'), 'a fresh IV each time');
  });

  it('refuses a value whose GCM tag was cut short (a 4-byte tag is a prefix of the real one, and 2^32 tries would forge it)', () => {
    const sealed = box.seal('', 'a');
    assert.equal(box.open(sealed, 'a'), '');
    const raw = Buffer.from(sealed.slice(3), 'base64');
    for (const tagBytes of [4, 8, 12, 15]) {
      const cut = `v1:${raw.subarray(0, 12 + tagBytes).toString('base64')}`;
      assert.equal(box.open(cut, 'a'), undefined, `${tagBytes}-byte tag`);
    }
    const short = box.seal('secret', 'a');
    const body = Buffer.from(short.slice(3), 'base64');
    // Tag cut to 12 bytes with the body moved up: never opens.
    const moved = `v1:${Buffer.concat([body.subarray(0, 24), body.subarray(28)]).toString('base64')}`;
    assert.equal(box.open(moved, 'a'), undefined);
  });

  it('uses the configured key; else generates one into the data dir on the embedded store only', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'secrets-'));
    assert.equal(await secretsKeySource({ configured: undefined, embedded: false, dataDir: dir })(), undefined);
    const first = (await secretsKeySource({ configured: undefined, embedded: true, dataDir: dir })())!;
    const file = path.join(dir, 'secrets.key');
    assert.match(readFileSync(file, 'utf8'), /^[0-9a-f]{64}\n$/);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const again = (await secretsKeySource({ configured: undefined, embedded: true, dataDir: dir })())!;
    assert.equal(again.open(first.seal('s', 'a'), 'a'), 's', 'the same key on the next start');
    const configured = (await secretsKeySource({ configured: Buffer.alloc(32, 1), embedded: true, dataDir: dir })())!;
    assert.equal(new SecretBox(Buffer.alloc(32, 1)).open(configured.seal('s', 'a'), 'a'), 's');
  });
});
