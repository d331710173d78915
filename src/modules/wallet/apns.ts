// Apple Push Notification service over HTTP/2 (node:http2), as Wallet pass updates need it:
// POST /3/device/{pushToken}, topic = the pass type identifier, body `{}`, TLS client
// certificate = the partner's Pass Type ID certificate. One connection per partner per batch.
import { connect, constants, type ClientHttp2Session } from 'node:http2';
import { rootCertificates } from 'node:tls';

export interface ApnsResult {
  /** HTTP status, or 0 when there was no response (network, TLS, timeout). */
  status: number;
  reason?: string;
}

export class ApnsConnection {
  private session: ClientHttp2Session | undefined;
  private failure: Error | undefined;

  constructor(
    private readonly url: string,
    private readonly tls: { cert: string; key: string; extraCa: string | undefined },
    private readonly timeoutMs: number,
  ) {}

  private open(): ClientHttp2Session {
    if (this.session && !this.session.closed && !this.session.destroyed) return this.session;
    this.failure = undefined;
    const session = connect(this.url, {
      cert: this.tls.cert,
      key: this.tls.key,
      ...(this.tls.extraCa ? { ca: [...rootCertificates, this.tls.extraCa] } : {}),
    });
    session.on('error', (err) => {
      this.failure = err;
    });
    this.session = session;
    return session;
  }

  push(pushToken: string, topic: string): Promise<ApnsResult> {
    return new Promise((resolve) => {
      let session: ClientHttp2Session;
      try {
        session = this.open();
      } catch (err) {
        resolve({ status: 0, reason: (err as Error).message });
        return;
      }
      const req = session.request({
        [constants.HTTP2_HEADER_METHOD]: 'POST',
        [constants.HTTP2_HEADER_PATH]: `/3/device/${encodeURIComponent(pushToken)}`,
        'apns-topic': topic,
        'content-type': 'application/json',
      });
      let status = 0;
      let body = '';
      const done = (result: ApnsResult) => {
        clearTimeout(timer);
        resolve(result);
      };
      const timer = setTimeout(() => {
        req.close(constants.NGHTTP2_CANCEL);
        done({ status: 0, reason: 'timeout' });
      }, this.timeoutMs);
      req.on('response', (headers) => {
        status = Number(headers[constants.HTTP2_HEADER_STATUS]);
      });
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => {
        if (body.length < 2000) body += chunk;
      });
      req.on('end', () => {
        let reason: string | undefined;
        try {
          reason = body ? (JSON.parse(body) as { reason?: string }).reason : undefined;
        } catch {
          reason = undefined;
        }
        done({ status, ...(reason ? { reason } : {}) });
      });
      req.on('error', (err) => done({ status: 0, reason: this.failure?.message ?? err.message }));
      req.end('{}');
    });
  }

  close(): void {
    this.session?.close();
    this.session = undefined;
  }
}
