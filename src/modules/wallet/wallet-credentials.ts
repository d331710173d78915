// Checks what a partner uploads before anything is stored (DESIGN.md §15): the Pass Type ID
// certificate parses (PEM, or a base64 PKCS#12 opened with the passphrase), its private key
// matches it, Apple's WWDR certificate issued it, and a Google service-account key file has
// the e-mail and RSA key it signs with. Failures name the field (422).
//
// Bounded work (DESIGN.md §15 "Bounded work"): what a file may ask for is capped and checked
// before the expensive part — files ≤ 64 KB, PKCS#12 MAC and PBE/PBKDF2 iteration counts
// ≤ 200,000 read from the file's ASN.1 before anything is decrypted (and again by the guard
// on the key-derivation functions, `capKeyDerivation`, for counts only visible once an outer
// layer is decrypted), RSA keys ≤ 4,096 bits, EC keys P-256 or P-384. These functions run in
// the wallet worker thread (wallet-worker.ts), never on the thread that serves requests.
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import forge from 'node-forge';
import type { MessageKey, MessageParams } from '../../shared/i18n.js';

export type CredentialProblem = { field: string; key: MessageKey; params?: MessageParams };
export type Checked<T> = { ok: true; value: T } | { ok: false; problem: CredentialProblem };

const problem = (field: string, key: MessageKey, params?: MessageParams): Checked<never> => ({
  ok: false,
  problem: { field, key, ...(params ? { params } : {}) },
});

/** The caps of §15: bytes of an uploaded file, key-derivation iterations, RSA modulus bits, EC curves (Node's names). */
export const WALLET_LIMITS = {
  fileBytes: 64 * 1024,
  iterations: 200_000,
  rsaBits: 4096,
  curves: ['prime256v1', 'secp384r1'] as readonly string[],
} as const;

const tooLarge = (field: string) => problem(field, 'wallet.file_too_large', { limit: '64 KB' });

/** The problem of a key (private, or a certificate's public key) past the caps, on the field it came in. */
export function keyProblem(key: KeyObject, field: string): CredentialProblem | undefined {
  const details = key.asymmetricKeyDetails;
  if (key.asymmetricKeyType === 'rsa' || key.asymmetricKeyType === 'rsa-pss') {
    if (!details?.modulusLength || details.modulusLength > WALLET_LIMITS.rsaBits) return { field, key: 'wallet.key_too_large', params: { limit: WALLET_LIMITS.rsaBits } };
    return undefined;
  }
  if (key.asymmetricKeyType === 'ec') {
    if (!details?.namedCurve || !WALLET_LIMITS.curves.includes(details.namedCurve)) return { field, key: 'wallet.key_curve' };
    return undefined;
  }
  return { field, key: 'wallet.key_type' };
}

// ---- key-derivation counts, read from the ASN.1 before anything is decrypted ----

const OID = {
  data: '1.2.840.113549.1.7.1',
  pbes2: '1.2.840.113549.1.5.13',
  pbmac1: '1.2.840.113549.1.5.14',
  pbkdf2: '1.2.840.113549.1.5.12',
};
/** PBES1 (PKCS#5 v1.5) and PKCS#12 PBE schemes: params `{salt OCTET STRING, iterations INTEGER}`. */
const PBE_SIMPLE = /^1\.2\.840\.113549\.1\.(5\.(1|3|4|6|10|11)|12\.1\.[1-6])$/;

type Node = forge.asn1.Asn1;
export type KdfProblem = 'iterations' | 'kdf' | 'malformed';

/** DER (or BER) to a tree; BIT STRINGs are left as they are (forge would otherwise try them as DER). */
const fromDer = (bytes: string): Node =>
  (forge.asn1 as unknown as { fromDer: (b: forge.util.ByteStringBuffer, o: { decodeBitStrings: boolean }) => Node }).fromDer(forge.util.createBuffer(bytes), { decodeBitStrings: false });
const children = (n: Node | undefined): Node[] => (n && Array.isArray(n.value) ? n.value : []);
const isType = (n: Node | undefined, type: number) => n !== undefined && n.tagClass === forge.asn1.Class.UNIVERSAL && n.type === type;

/** An INTEGER's value, as a BigInt (the count may be any size the file likes). */
function integerOf(n: Node | undefined): bigint | undefined {
  if (!isType(n, forge.asn1.Type.INTEGER) || typeof n!.value !== 'string' || n!.value.length === 0) return undefined;
  return BigInt.asIntN(n!.value.length * 8, BigInt(`0x${forge.util.bytesToHex(n!.value)}`));
}

const countProblem = (n: Node | undefined): KdfProblem | undefined => {
  const count = integerOf(n);
  if (count === undefined || count < 1n) return 'malformed';
  return count > BigInt(WALLET_LIMITS.iterations) ? 'iterations' : undefined;
};

/** The bytes of an OCTET STRING (DER, or BER's constructed form). */
function octets(n: Node | undefined): string | undefined {
  if (!isType(n, forge.asn1.Type.OCTETSTRING)) return undefined;
  if (typeof n!.value === 'string') return n!.value;
  return children(n).map(octets).join('');
}

/**
 * Every key derivation the structure names, checked: PKCS#12 PBE and PBES1 counts, PBES2 and
 * PBMAC1 with PBKDF2 only (scrypt and anything else refused: their cost is theirs to pick) and
 * its count; `data` content is opened (it is not encrypted) and walked too.
 */
function walkKdfs(node: Node, depth: number): KdfProblem | undefined {
  if (depth > 32) return 'malformed';
  const kids = children(node);
  if (isType(node, forge.asn1.Type.SEQUENCE) && isType(kids[0], forge.asn1.Type.OID) && typeof kids[0]!.value === 'string') {
    const oid = forge.asn1.derToOid(kids[0]!.value);
    if (PBE_SIMPLE.test(oid)) {
      const p = countProblem(children(kids[1])[1]);
      if (p) return p;
    } else if (oid === OID.pbes2 || oid === OID.pbmac1) {
      const kdf = children(kids[1])[0];
      const kdfOid = children(kdf)[0];
      if (!isType(kdfOid, forge.asn1.Type.OID) || forge.asn1.derToOid(kdfOid!.value as string) !== OID.pbkdf2) return 'kdf';
      const p = countProblem(children(children(kdf)[1])[1]);
      if (p) return p;
    } else if (oid === OID.data && kids[1]?.tagClass === forge.asn1.Class.CONTEXT_SPECIFIC) {
      const inner = octets(children(kids[1])[0]);
      if (inner !== undefined && inner.length > 0) {
        const p = walkKdfs(fromDer(inner), depth + 1);
        if (p) return p;
      }
    }
  }
  for (const child of kids) {
    const p = walkKdfs(child, depth + 1);
    if (p) return p;
  }
  return undefined;
}

/**
 * The key derivations a PKCS#12 file (DER bytes) asks for: its MAC's iteration count (default
 * 1) and every PBE/PBES2 it shows before decryption. undefined = within the caps.
 */
export function pkcs12Problem(der: Buffer): KdfProblem | undefined {
  try {
    const pfx = fromDer(der.toString('binary'));
    const [, , macData] = children(pfx);
    if (macData) {
      const macIterations = children(macData)[2];
      if (macIterations !== undefined) {
        const p = countProblem(macIterations);
        if (p) return p;
      }
    }
    return walkKdfs(pfx, 0);
  } catch {
    return 'malformed';
  }
}

/** The key derivations of every encrypted PKCS#8 block (`ENCRYPTED PRIVATE KEY`) in a PEM text. */
export function encryptedPemProblem(pem: string): KdfProblem | undefined {
  for (const m of pem.matchAll(/-----BEGIN ENCRYPTED PRIVATE KEY-----([\s\S]*?)-----END ENCRYPTED PRIVATE KEY-----/g)) {
    try {
      const der = Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64');
      const p = walkKdfs(fromDer(der.toString('binary')), 0);
      if (p) return p;
    } catch {
      return 'malformed';
    }
  }
  return undefined;
}

/** Thrown by the guarded key-derivation functions when a count past the cap reaches them. */
export class IterationsExceeded extends Error {}

let guarded = false;
/**
 * Caps node-forge's key derivations (PBKDF2 and PKCS#12's KDF, used for MACs and PBE) at
 * WALLET_LIMITS.iterations, wherever the count comes from — also one that only shows once an
 * outer layer of a file is decrypted. Installed in the wallet worker.
 */
export function capKeyDerivation(): void {
  if (guarded) return;
  guarded = true;
  const guard = <F extends (...args: never[]) => unknown>(fn: F, countAt: number): F =>
    ((...args: Parameters<F>) => {
      const count = Number(args[countAt]);
      if (!(count <= WALLET_LIMITS.iterations)) throw new IterationsExceeded(`key derivation with ${count} iterations`);
      return fn(...args);
    }) as F;
  const pkcs5 = forge.pkcs5 as unknown as { pbkdf2: (...a: never[]) => unknown };
  pkcs5.pbkdf2 = guard(pkcs5.pbkdf2, 2);
  const pbe = (forge.pki as unknown as { pbe: { generatePkcs12Key: (...a: never[]) => unknown } }).pbe;
  pbe.generatePkcs12Key = guard(pbe.generatePkcs12Key, 3);
  const p12 = forge.pkcs12 as unknown as { generateKey: (...a: never[]) => unknown };
  p12.generateKey = guard(p12.generateKey, 3);
}

const kdfField = (field: string, p: KdfProblem): Checked<never> =>
  p === 'iterations'
    ? problem(field, 'wallet.iterations_limit', { limit: WALLET_LIMITS.iterations.toLocaleString('en') })
    : p === 'kdf'
      ? problem(field, 'wallet.kdf_unsupported')
      : problem(field, field === 'certificate' ? 'wallet.certificate_invalid' : 'wallet.private_key_invalid');

export interface AppleInput {
  pass_type_identifier: string;
  team_identifier: string;
  certificate: string;
  private_key?: string | undefined;
  passphrase?: string | undefined;
  wwdr_certificate: string;
}

export interface AppleCredentials {
  certificatePem: string;
  /** Unencrypted PKCS#8: the passphrase is used here once and never stored. */
  keyPem: string;
  wwdrPem: string;
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;

function x509(pem: string): X509Certificate | undefined {
  try {
    return new X509Certificate(pem);
  } catch {
    return undefined;
  }
}

/** The bytes of a base64 PKCS#12 upload; undefined when it is not base64. */
function pkcs12Bytes(base64: string): Buffer | undefined {
  const compact = base64.replace(/\s+/g, '');
  if (compact.length === 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(compact)) return undefined;
  return Buffer.from(compact, 'base64');
}

/** Certificate and key out of a PKCS#12 file; undefined when it does not open ('iterations' past the cap). */
function fromPkcs12(der: Buffer, passphrase: string): { certPem: string; keyPem: string } | 'iterations' | undefined {
  try {
    const p12 = forge.pkcs12.pkcs12FromAsn1(forge.asn1.fromDer(forge.util.createBuffer(der.toString('binary'))), passphrase);
    const certs = p12.getBags({ bagType: forge.pki.oids.certBag! })[forge.pki.oids.certBag!] ?? [];
    const keys = [
      ...(p12.getBags({ bagType: forge.pki.oids.pkcs8ShroudedKeyBag! })[forge.pki.oids.pkcs8ShroudedKeyBag!] ?? []),
      ...(p12.getBags({ bagType: forge.pki.oids.keyBag! })[forge.pki.oids.keyBag!] ?? []),
    ];
    const key = keys.find((b) => b.key)?.key;
    if (!key) return undefined;
    // The certificate of the key (a file may carry the chain too).
    const keyPem = forge.pki.privateKeyToPem(key);
    const keyObject = createPrivateKey(keyPem);
    for (const bag of certs) {
      if (!bag.cert) continue;
      const certPem = forge.pki.certificateToPem(bag.cert);
      if (x509(certPem)?.checkPrivateKey(keyObject)) return { certPem, keyPem };
    }
    return undefined;
  } catch (err) {
    return err instanceof IterationsExceeded ? 'iterations' : undefined;
  }
}

/** `UID=…` of a certificate subject: Apple puts the pass type identifier there. */
function subjectField(cert: X509Certificate, name: string): string | undefined {
  for (const line of cert.subject.split('\n')) {
    const [k, ...v] = line.split('=');
    if (k === name) return v.join('=');
  }
  return undefined;
}

function privateKeyOf(pem: string, passphrase: string | undefined): KeyObject | undefined {
  try {
    return createPrivateKey({ key: pem, format: 'pem', ...(passphrase !== undefined ? { passphrase } : {}) });
  } catch {
    return undefined;
  }
}

const utf8Bytes = (text: string) => Buffer.byteLength(text, 'utf8');

export function checkAppleCredentials(input: AppleInput, now: Date): Checked<AppleCredentials> {
  // Sizes first: nothing else is looked at in a file past 64 KB.
  if (input.private_key !== undefined && utf8Bytes(input.private_key) > WALLET_LIMITS.fileBytes) return tooLarge('private_key');
  if (utf8Bytes(input.wwdr_certificate) > WALLET_LIMITS.fileBytes) return tooLarge('wwdr_certificate');
  let certPem: string;
  let key: KeyObject | undefined;
  // The field the key came in: its own, or the .p12's.
  let keyField = 'private_key';
  const pem = PEM_CERT.exec(input.certificate);
  if (pem) {
    if (utf8Bytes(input.certificate) > WALLET_LIMITS.fileBytes) return tooLarge('certificate');
    certPem = pem[0];
    if (input.private_key === undefined || input.private_key.trim() === '') return problem('private_key', 'wallet.private_key_required');
    const kdf = encryptedPemProblem(input.private_key);
    if (kdf) return kdfField('private_key', kdf);
    key = privateKeyOf(input.private_key, input.passphrase);
    if (!key) return problem('private_key', 'wallet.private_key_invalid');
  } else {
    const der = pkcs12Bytes(input.certificate);
    if (!der) return problem('certificate', 'wallet.certificate_invalid');
    if (der.length > WALLET_LIMITS.fileBytes) return tooLarge('certificate');
    // The counts the file asks for, read before anything is decrypted.
    const kdf = pkcs12Problem(der);
    if (kdf) return kdfField('certificate', kdf);
    const opened = fromPkcs12(der, input.passphrase ?? '');
    if (opened === 'iterations') return kdfField('certificate', 'iterations');
    if (!opened) return problem('certificate', 'wallet.certificate_invalid');
    certPem = opened.certPem;
    key = createPrivateKey(opened.keyPem);
    keyField = 'certificate';
  }
  const keyCap = keyProblem(key, keyField);
  if (keyCap) return { ok: false, problem: keyCap };
  const cert = x509(certPem);
  if (!cert) return problem('certificate', 'wallet.certificate_invalid');
  if (new Date(cert.validTo) < now) return problem('certificate', 'wallet.certificate_expired');
  // Passes are signed with RSA (the PKCS#7 signer of passkit-generator); Apple issues RSA keys.
  if (key.asymmetricKeyType !== 'rsa') return problem(keyField, 'wallet.private_key_rsa');
  const certCap = keyProblem(cert.publicKey, 'certificate');
  if (certCap) return { ok: false, problem: certCap };
  if (!cert.checkPrivateKey(key)) return problem('private_key', 'wallet.private_key_mismatch');
  const uid = subjectField(cert, 'UID');
  if (uid !== undefined && uid !== input.pass_type_identifier) return problem('pass_type_identifier', 'wallet.pass_type_mismatch');
  const wwdrMatch = PEM_CERT.exec(input.wwdr_certificate);
  const wwdr = wwdrMatch ? x509(wwdrMatch[0]) : undefined;
  if (!wwdr) return problem('wwdr_certificate', 'wallet.certificate_invalid');
  const wwdrCap = keyProblem(wwdr.publicKey, 'wwdr_certificate');
  if (wwdrCap) return { ok: false, problem: wwdrCap };
  if (!cert.checkIssued(wwdr) || !cert.verify(wwdr.publicKey)) return problem('wwdr_certificate', 'wallet.wwdr_not_issuer');
  return {
    ok: true,
    value: { certificatePem: cert.toString(), keyPem: key.export({ type: 'pkcs8', format: 'pem' }).toString(), wwdrPem: wwdr.toString() },
  };
}

export interface ServiceAccount {
  client_email: string;
  private_key: string;
  private_key_id?: string;
}

/** The key file as uploaded: its JSON text, or the object itself. */
export function checkServiceAccount(value: unknown): Checked<ServiceAccount> {
  let json: unknown = value;
  if (utf8Bytes(typeof value === 'string' ? value : (JSON.stringify(value) ?? '')) > WALLET_LIMITS.fileBytes) return tooLarge('service_account');
  if (typeof value === 'string') {
    try {
      json = JSON.parse(value);
    } catch {
      return problem('service_account', 'wallet.service_account_json');
    }
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return problem('service_account', 'wallet.service_account_json');
  const o = json as Record<string, unknown>;
  if (typeof o.client_email !== 'string' || !/^[^\s@]+@[^\s@]+$/.test(o.client_email)) return problem('service_account.client_email', 'wallet.service_account_email');
  if (typeof o.private_key !== 'string') return problem('service_account.private_key', 'wallet.private_key_invalid');
  const key = privateKeyOf(o.private_key, undefined);
  if (!key || key.asymmetricKeyType !== 'rsa') return problem('service_account.private_key', 'wallet.private_key_invalid');
  const keyCap = keyProblem(key, 'service_account.private_key');
  if (keyCap) return { ok: false, problem: keyCap };
  return {
    ok: true,
    value: {
      client_email: o.client_email,
      private_key: o.private_key,
      ...(typeof o.private_key_id === 'string' ? { private_key_id: o.private_key_id } : {}),
    },
  };
}

/** What GET shows of a certificate (never its key). */
export function certificateSummary(pem: string) {
  const cert = new X509Certificate(pem);
  return {
    subject: cert.subject.replace(/\n/g, ', '),
    issuer: cert.issuer.replace(/\n/g, ', '),
    serial_number: cert.serialNumber,
    expires_at: new Date(cert.validTo).toISOString(),
    fingerprint_sha256: cert.fingerprint256,
  };
}
