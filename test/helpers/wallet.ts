// Wallet test kit: a certificate authority standing in for Apple (root → WWDR → Pass Type ID
// certificate), a PKCS#12 of the pass certificate, a Google service-account key, a local
// HTTP/2 server standing in for APNs (it demands the pass certificate as client certificate)
// and a local HTTP server standing in for the Google Wallet API. All made with openssl and
// node: no network.
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { createSecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface WalletCerts {
  dir: string;
  caFile: string;
  passTypeIdentifier: string;
  teamIdentifier: string;
  certificate: string;
  privateKey: string;
  wwdr: string;
  /** base64 PKCS#12 of the pass certificate and key, passphrase `p12Passphrase`. */
  p12: string;
  p12Passphrase: string;
  /** Another key (matches nothing) and a WWDR of another CA. */
  otherKey: string;
  otherWwdr: string;
  serverCert: string;
  serverKey: string;
  serviceAccount: { type: string; client_email: string; private_key: string; private_key_id: string };
  serviceAccountPublicKey: string;
}

const openssl = (dir: string, args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });

export function makeWalletCerts(passTypeIdentifier = 'pass.test.loyalty', teamIdentifier = 'TEAM123456'): WalletCerts {
  const dir = mkdtempSync(path.join(tmpdir(), 'wallet-certs-'));
  writeFileSync(path.join(dir, 'ca.ext'), 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n');
  writeFileSync(path.join(dir, 'leaf.ext'), 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth,emailProtection\n');
  writeFileSync(path.join(dir, 'server.ext'), 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n');
  const rsa = ['-newkey', 'rsa:2048', '-nodes'];
  openssl(dir, ['req', '-x509', ...rsa, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '30', '-subj', '/CN=Test Apple Root CA']);
  openssl(dir, ['req', ...rsa, '-keyout', 'wwdr.key', '-out', 'wwdr.csr', '-subj', '/CN=Test WWDR/OU=G4']);
  openssl(dir, ['x509', '-req', '-in', 'wwdr.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'wwdr.pem', '-days', '30', '-extfile', 'ca.ext']);
  openssl(dir, ['req', ...rsa, '-keyout', 'pass.key', '-out', 'pass.csr', '-subj', `/UID=${passTypeIdentifier}/CN=Pass Type ID: ${passTypeIdentifier}/OU=${teamIdentifier}/O=Test/C=LT`]);
  openssl(dir, ['x509', '-req', '-in', 'pass.csr', '-CA', 'wwdr.pem', '-CAkey', 'wwdr.key', '-CAcreateserial', '-out', 'pass.pem', '-days', '30', '-extfile', 'leaf.ext']);
  openssl(dir, ['pkcs12', '-export', '-in', 'pass.pem', '-inkey', 'pass.key', '-passout', 'pass:p12-secret', '-out', 'pass.p12']);
  openssl(dir, ['req', ...rsa, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost']);
  openssl(dir, ['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '30', '-extfile', 'server.ext']);
  openssl(dir, ['req', '-x509', ...rsa, '-keyout', 'other.key', '-out', 'other.pem', '-days', '30', '-subj', '/CN=Another CA']);
  const google = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const read = (f: string) => readFileSync(path.join(dir, f), 'utf8');
  return {
    dir,
    caFile: path.join(dir, 'ca.pem'),
    passTypeIdentifier,
    teamIdentifier,
    certificate: read('pass.pem'),
    privateKey: read('pass.key'),
    wwdr: read('wwdr.pem'),
    p12: readFileSync(path.join(dir, 'pass.p12')).toString('base64'),
    p12Passphrase: 'p12-secret',
    otherKey: read('other.key'),
    otherWwdr: read('other.pem'),
    serverCert: read('server.pem'),
    serverKey: read('server.key'),
    serviceAccount: {
      type: 'service_account',
      client_email: 'wallet@test-project.iam.gserviceaccount.com',
      private_key: google.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      private_key_id: 'key-1',
    },
    serviceAccountPublicKey: google.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

export interface Recorded {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Subject of the TLS client certificate (APNs stand-in). */
  clientSubject?: string;
}

/** An HTTP/2 TLS server standing in for APNs: it requires a client certificate issued under the test CA. */
export async function startApnsStandIn(certs: WalletCerts) {
  const requests: Recorded[] = [];
  const state = { status: 200 };
  const server = createSecureServer({
    key: certs.serverKey,
    cert: certs.serverCert,
    ca: [readFileSync(certs.caFile, 'utf8'), certs.wwdr],
    requestCert: true,
    rejectUnauthorized: true,
  });
  server.on('stream', (stream, headers) => {
    let body = '';
    stream.setEncoding('utf8');
    stream.on('data', (c: string) => (body += c));
    stream.on('end', () => {
      const socket = stream.session?.socket as unknown as { getPeerCertificate?: () => { subject?: { CN?: string } } } | undefined;
      requests.push({
        method: String(headers[':method']),
        path: String(headers[':path']),
        headers: headers as IncomingHttpHeaders,
        body,
        clientSubject: socket?.getPeerCertificate?.().subject?.CN ?? '',
      });
      stream.respond({ ':status': state.status, 'content-type': 'application/json' });
      stream.end(state.status === 200 ? '' : JSON.stringify({ reason: 'ServiceUnavailable' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    requests,
    state,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A plain HTTP server standing in for the Google Wallet REST API. */
export async function startGoogleStandIn() {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** The files of a .pkpass (unzipped with the unzip command). */
export function unzipPass(pkpass: Buffer): { dir: string; files: Record<string, Buffer> } {
  const dir = mkdtempSync(path.join(tmpdir(), 'pkpass-'));
  writeFileSync(path.join(dir, 'pass.pkpass'), pkpass);
  execFileSync('unzip', ['-q', 'pass.pkpass', '-d', 'out'], { cwd: dir });
  const names = execFileSync('unzip', ['-Z1', 'pass.pkpass'], { cwd: dir, encoding: 'utf8' }).trim().split('\n');
  const files: Record<string, Buffer> = {};
  for (const name of names) files[name] = readFileSync(path.join(dir, 'out', name));
  return { dir: path.join(dir, 'out'), files };
}

/** `openssl smime -verify` of the pass's signature over manifest.json against the test CA; throws when it does not verify. */
export function verifySignature(passDir: string, caFile: string): string {
  return execFileSync(
    'openssl',
    ['smime', '-verify', '-binary', '-inform', 'DER', '-in', 'signature', '-content', 'manifest.json', '-CAfile', caFile, '-out', '/dev/null'],
    { cwd: passDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
}
