// Checks what a partner uploads before anything is stored (DESIGN.md §15): the Pass Type ID
// certificate parses (PEM, or a base64 PKCS#12 opened with the passphrase), its private key
// matches it, Apple's WWDR certificate issued it, and a Google service-account key file has
// the e-mail and RSA key it signs with. Failures name the field (422).
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import forge from 'node-forge';
import type { MessageKey } from '../../shared/i18n.js';

export type CredentialProblem = { field: string; key: MessageKey };
export type Checked<T> = { ok: true; value: T } | { ok: false; problem: CredentialProblem };

const problem = (field: string, key: MessageKey): Checked<never> => ({ ok: false, problem: { field, key } });

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

/** Certificate and key out of a PKCS#12 file; undefined when it does not open. */
function fromPkcs12(base64: string, passphrase: string): { certPem: string; keyPem: string } | undefined {
  const compact = base64.replace(/\s+/g, '');
  if (compact.length === 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(compact)) return undefined;
  try {
    const p12 = forge.pkcs12.pkcs12FromAsn1(forge.asn1.fromDer(forge.util.createBuffer(Buffer.from(compact, 'base64').toString('binary'))), passphrase);
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
  } catch {
    return undefined;
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

export function checkAppleCredentials(input: AppleInput, now: Date): Checked<AppleCredentials> {
  let certPem: string;
  let key: KeyObject | undefined;
  const pem = PEM_CERT.exec(input.certificate);
  if (pem) {
    certPem = pem[0];
    if (input.private_key === undefined || input.private_key.trim() === '') return problem('private_key', 'wallet.private_key_required');
    key = privateKeyOf(input.private_key, input.passphrase);
    if (!key) return problem('private_key', 'wallet.private_key_invalid');
  } else {
    const opened = fromPkcs12(input.certificate, input.passphrase ?? '');
    if (!opened) return problem('certificate', 'wallet.certificate_invalid');
    certPem = opened.certPem;
    key = createPrivateKey(opened.keyPem);
  }
  const cert = x509(certPem);
  if (!cert) return problem('certificate', 'wallet.certificate_invalid');
  if (new Date(cert.validTo) < now) return problem('certificate', 'wallet.certificate_expired');
  // Passes are signed with RSA (the PKCS#7 signer of passkit-generator); Apple issues RSA keys.
  if (key.asymmetricKeyType !== 'rsa') return problem('private_key', 'wallet.private_key_rsa');
  if (!cert.checkPrivateKey(key)) return problem('private_key', 'wallet.private_key_mismatch');
  const uid = subjectField(cert, 'UID');
  if (uid !== undefined && uid !== input.pass_type_identifier) return problem('pass_type_identifier', 'wallet.pass_type_mismatch');
  const wwdrMatch = PEM_CERT.exec(input.wwdr_certificate);
  const wwdr = wwdrMatch ? x509(wwdrMatch[0]) : undefined;
  if (!wwdr) return problem('wwdr_certificate', 'wallet.certificate_invalid');
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
