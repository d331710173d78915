// The caps of DESIGN.md §15 "Bounded work" on uploaded files, without a server: iteration
// counts read from a PKCS#12's or an encrypted key's ASN.1 before anything is decrypted (files
// made with openssl, counts rewritten in their DER so that no test pays for 2,000,000
// iterations), the guard on node-forge's key derivations, key sizes and curves, file sizes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { generateKeyPair, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { before, describe, it } from 'node:test';
import forge from 'node-forge';
import {
  capKeyDerivation,
  checkAppleCredentials,
  checkServiceAccount,
  encryptedPemProblem,
  IterationsExceeded,
  pkcs12Problem,
  WALLET_LIMITS,
} from './wallet-credentials.js';

const dir = mkdtempSync(path.join(tmpdir(), 'wallet-caps-'));
const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });

type Node = forge.asn1.Asn1;
const parse = (der: Buffer): Node => forge.asn1.fromDer(forge.util.createBuffer(der.toString('binary')));
const encode = (node: Node): Buffer => Buffer.from(forge.asn1.toDer(node).getBytes(), 'binary');
const kids = (n: Node): Node[] => (Array.isArray(n.value) ? n.value : []);
const integer = (n: number | bigint): Node =>
  forge.asn1.create(
    forge.asn1.Class.UNIVERSAL,
    forge.asn1.Type.INTEGER,
    false,
    typeof n === 'bigint' ? Buffer.from(`00${n.toString(16).padStart(16, '0')}`, 'hex').toString('binary') : forge.asn1.integerToDer(n).getBytes(),
  );
const oid = (n: Node) => (n.type === forge.asn1.Type.OID && typeof n.value === 'string' ? forge.asn1.derToOid(n.value) : undefined);

/** Rewrites the MAC's iteration count of a PKCS#12 (its MAC no longer verifies: the cap must refuse before that matters). */
function withMacIterations(der: Buffer, count: number | bigint): Buffer {
  const pfx = parse(der);
  kids(kids(pfx)[2]!)[2] = integer(count);
  return encode(pfx);
}

/** Rewrites every PBKDF2 iteration count in a tree, opening `data` contents (PKCS#12 SafeContents) on the way. */
function withPbkdf2Iterations(node: Node, count: number): void {
  const k = kids(node);
  if (oid(k[0] ?? ({} as Node)) === '1.2.840.113549.1.5.12') kids(k[1]!)[1] = integer(count);
  if (oid(k[0] ?? ({} as Node)) === '1.2.840.113549.1.7.1' && k[1]?.tagClass === forge.asn1.Class.CONTEXT_SPECIFIC) {
    const octets = kids(k[1])[0]!;
    const inner = parse(Buffer.from(octets.value as string, 'binary'));
    withPbkdf2Iterations(inner, count);
    octets.value = encode(inner).toString('binary');
    return;
  }
  for (const child of k) withPbkdf2Iterations(child, count);
}

const pemOf = (label: string, der: Buffer) => `-----BEGIN ${label}-----\n${der.toString('base64').replace(/(.{64})/g, '$1\n')}\n-----END ${label}-----\n`;
const derOfPem = (pem: string) => Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');

describe('wallet upload caps', () => {
  let p12: Buffer;
  let certPem: string;
  let keyPem: string;
  let wwdrPem: string;
  let bigRsa: string;

  before(async () => {
    // A key past 4,096 bits, made on the thread pool while openssl runs.
    const big = promisify(generateKeyPair)('rsa', { modulusLength: 4104 });
    openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '3', '-subj', '/CN=Caps CA', '-addext', 'basicConstraints=critical,CA:TRUE');
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'pass.key', '-out', 'pass.csr', '-subj', '/UID=pass.caps/CN=Pass Type ID: pass.caps');
    openssl('x509', '-req', '-in', 'pass.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'pass.pem', '-days', '3');
    openssl('pkcs12', '-export', '-in', 'pass.pem', '-inkey', 'pass.key', '-passout', 'pass:x', '-out', 'pass.p12');
    p12 = readFileSync(path.join(dir, 'pass.p12'));
    certPem = readFileSync(path.join(dir, 'pass.pem'), 'utf8');
    keyPem = readFileSync(path.join(dir, 'pass.key'), 'utf8');
    wwdrPem = readFileSync(path.join(dir, 'ca.pem'), 'utf8');
    bigRsa = (await big).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  });

  const apple = (over: Record<string, string | undefined>) => ({
    pass_type_identifier: 'pass.caps',
    team_identifier: 'TEAM',
    certificate: certPem,
    private_key: keyPem,
    wwdr_certificate: wwdrPem,
    ...over,
  });
  const p12Input = (der: Buffer) => apple({ certificate: der.toString('base64'), private_key: undefined, passphrase: 'x' });

  it('reads the MAC and PBKDF2 counts of a PKCS#12 from its ASN.1: openssl\'s 2,048 and the cap pass, 200,001 and 2,000,000 do not', () => {
    assert.equal(pkcs12Problem(p12), undefined);
    assert.equal(checkAppleCredentials(p12Input(p12), new Date()).ok, true, 'the file as openssl made it opens');
    assert.equal(pkcs12Problem(withMacIterations(p12, WALLET_LIMITS.iterations)), undefined);
    assert.equal(pkcs12Problem(withMacIterations(p12, 200_001)), 'iterations');
    assert.equal(pkcs12Problem(withMacIterations(p12, 2 ** 31 - 1)), 'iterations');
    assert.equal(pkcs12Problem(withMacIterations(p12, 2n ** 63n)), 'iterations', 'a count of any size');
    assert.equal(pkcs12Problem(withMacIterations(p12, 0)), 'malformed');
    // The shrouded key bag's and the encrypted certificate bag's PBES2 counts (the MAC left as it is).
    const pfx = parse(p12);
    withPbkdf2Iterations(pfx, 2_000_000);
    assert.equal(pkcs12Problem(encode(pfx)), 'iterations');
    assert.equal(pkcs12Problem(Buffer.from('not DER at all')), 'malformed');
  });

  it('refuses a 2,000,000-iteration PKCS#12 on its field at once, before decrypting anything', () => {
    const started = performance.now();
    const checked = checkAppleCredentials(p12Input(withMacIterations(p12, 2_000_000)), new Date());
    assert.deepEqual(checked, { ok: false, problem: { field: 'certificate', key: 'wallet.iterations_limit', params: { limit: '200,000' } } });
    // Decrypting would be ~12 s of node-forge's PKCS#12 key derivation.
    assert.ok(performance.now() - started < 200, `${performance.now() - started} ms`);
  });

  it('caps node-forge\'s key derivations wherever the count comes from (counts only visible after an outer layer is decrypted)', () => {
    capKeyDerivation();
    const salt = forge.util.createBuffer('saltsalt');
    assert.throws(() => forge.pkcs12.generateKey('x', salt, 3, 2_000_000, 32, forge.md.sha256.create()), IterationsExceeded);
    const pbe = (forge.pki as unknown as { pbe: { generatePkcs12Key: (...a: unknown[]) => unknown } }).pbe;
    assert.throws(() => pbe.generatePkcs12Key('x', salt, 1, 200_001, 32), IterationsExceeded);
    assert.throws(() => forge.pkcs5.pbkdf2('x', 'saltsalt', 2_000_000, 32), IterationsExceeded);
    assert.equal(forge.pkcs5.pbkdf2('x', 'saltsalt', 10, 32).length, 32, 'within the cap it derives');
    assert.equal(checkAppleCredentials(p12Input(p12), new Date()).ok, true, 'a file within the caps still opens under the guard');
  });

  it('reads the PBKDF2 count of an encrypted PEM key, and refuses scrypt (whose cost the file picks)', () => {
    openssl('pkcs8', '-topk8', '-in', 'pass.key', '-passout', 'pass:x', '-v2', 'aes-256-cbc', '-iter', '2048', '-out', 'enc.pem');
    const enc = readFileSync(path.join(dir, 'enc.pem'), 'utf8');
    assert.equal(encryptedPemProblem(enc), undefined);
    assert.equal(checkAppleCredentials(apple({ private_key: enc, passphrase: 'x' }), new Date()).ok, true);
    const tree = parse(derOfPem(enc));
    withPbkdf2Iterations(tree, 2_000_000);
    const heavy = pemOf('ENCRYPTED PRIVATE KEY', encode(tree));
    assert.equal(encryptedPemProblem(heavy), 'iterations');
    assert.deepEqual(checkAppleCredentials(apple({ private_key: heavy, passphrase: 'x' }), new Date()), {
      ok: false,
      problem: { field: 'private_key', key: 'wallet.iterations_limit', params: { limit: '200,000' } },
    });
    openssl('pkcs8', '-topk8', '-in', 'pass.key', '-passout', 'pass:x', '-scrypt', '-out', 'scrypt.pem');
    const scrypt = readFileSync(path.join(dir, 'scrypt.pem'), 'utf8');
    assert.equal(encryptedPemProblem(scrypt), 'kdf');
    assert.deepEqual(checkAppleCredentials(apple({ private_key: scrypt, passphrase: 'x' }), new Date()), {
      ok: false,
      problem: { field: 'private_key', key: 'wallet.kdf_unsupported' },
    });
  });

  it('refuses RSA keys over 4,096 bits and EC keys other than P-256/P-384, on the field they came in', () => {
    assert.deepEqual(checkAppleCredentials(apple({ private_key: bigRsa }), new Date()), {
      ok: false,
      problem: { field: 'private_key', key: 'wallet.key_too_large', params: { limit: 4096 } },
    });
    const sa = (key: string) => checkServiceAccount({ client_email: 'a@b.c', private_key: key });
    assert.deepEqual(sa(bigRsa), { ok: false, problem: { field: 'service_account.private_key', key: 'wallet.key_too_large', params: { limit: 4096 } } });
    const ec = (namedCurve: string) => generateKeyPairSync('ec', { namedCurve }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    // EC: the curve is checked before "passes are signed with RSA".
    assert.deepEqual(checkAppleCredentials(apple({ private_key: ec('secp521r1') }), new Date()), { ok: false, problem: { field: 'private_key', key: 'wallet.key_curve' } });
    assert.deepEqual(checkAppleCredentials(apple({ private_key: ec('secp256k1') }), new Date()), { ok: false, problem: { field: 'private_key', key: 'wallet.key_curve' } });
    assert.deepEqual(checkAppleCredentials(apple({ private_key: ec('prime256v1') }), new Date()), { ok: false, problem: { field: 'private_key', key: 'wallet.private_key_rsa' } });
    const ed = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    assert.deepEqual(checkAppleCredentials(apple({ private_key: ed }), new Date()), { ok: false, problem: { field: 'private_key', key: 'wallet.key_type' } });
  });

  it('refuses any file over 64 KB on its field', () => {
    const pad = `${'x'.repeat(64)}\n`.repeat(1100);
    const tooLarge = (field: string) => ({ ok: false, problem: { field, key: 'wallet.file_too_large', params: { limit: '64 KB' } } });
    assert.deepEqual(checkAppleCredentials(apple({ certificate: certPem + pad }), new Date()), tooLarge('certificate'));
    assert.deepEqual(checkAppleCredentials(apple({ private_key: keyPem + pad }), new Date()), tooLarge('private_key'));
    assert.deepEqual(checkAppleCredentials(apple({ wwdr_certificate: wwdrPem + pad }), new Date()), tooLarge('wwdr_certificate'));
    assert.deepEqual(checkAppleCredentials(p12Input(Buffer.concat([p12, Buffer.alloc(64 * 1024)])), new Date()), tooLarge('certificate'));
    assert.deepEqual(checkServiceAccount(JSON.stringify({ client_email: 'a@b.c', private_key: keyPem, pad })), tooLarge('service_account'));
    assert.deepEqual(checkServiceAccount({ client_email: 'a@b.c', private_key: keyPem, pad }), tooLarge('service_account'));
    assert.equal(checkAppleCredentials(apple({ certificate: certPem + 'x'.repeat(1000) }), new Date()).ok, true, 'a little text around the PEM is fine');
  });
});
