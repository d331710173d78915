// Server-side requests to URLs that users give us (webhook receivers, receipt URLs) must
// not become a way into our own network (SSRF). A URL is acceptable when it is http(s),
// carries no credentials and every address its host stands for is a public unicast
// address. "Private" here is everything ipaddr.js does not classify as `unicast`:
// loopback, RFC 1918, link-local, unique-local, CGNAT, unspecified, multicast, broadcast,
// reserved and documentation ranges — and IPv6 forms that embed one of those IPv4
// addresses (IPv4-mapped, NAT64).
//
// DNS can change between the check and the request (rebinding), so `safeFetch` checks
// again at connection time: its lookup refuses a non-public answer before connecting, and
// the address the socket actually connected to is checked once more.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

export type UrlRefusal = 'invalid' | 'scheme' | 'credentials' | 'private' | 'unresolvable';

export type UrlCheckResult = { ok: true } | { ok: false; code: UrlRefusal; reason: string };

export interface LookupAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all its addresses (dns.lookup with all:true); injectable for tests. */
export type ResolveAll = (hostname: string) => Promise<LookupAddress[]>;

export interface UrlCheckOptions {
  /** ALLOW_PRIVATE_URLS: skip the address checks (tests, local development). */
  allowPrivate: boolean;
  resolve?: ResolveAll;
}

const defaultResolve: ResolveAll = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/**
 * Whether an IP address (v4 or v6 literal) is public, and its ipaddr.js range name if not.
 * IPv6 addresses that embed an IPv4 address (mapped, NAT64) are judged by that address.
 */
export function classifyAddress(address: string): { public: true } | { public: false; range: string } {
  if (!ipaddr.isValid(address) || net.isIP(address) === 0) return { public: false, range: 'invalid' };
  const ip = ipaddr.parse(address);
  const range = ip.range();
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    if (range === 'ipv4Mapped' || range === 'rfc6145' || range === 'rfc6052') {
      // The last 32 bits are the IPv4 address that is really reached.
      const parts = v6.parts;
      const v4 = new ipaddr.IPv4([parts[6]! >> 8, parts[6]! & 0xff, parts[7]! >> 8, parts[7]! & 0xff]);
      const inner = v4.range();
      return inner === 'unicast' ? { public: true } : { public: false, range: `${range} ${inner}` };
    }
    // ::a.b.c.d (the deprecated IPv4-compatible form) has no range of its own in ipaddr.js.
    if (range === 'unicast' && v6.parts.slice(0, 6).every((p) => p === 0)) return { public: false, range: 'ipv4Compatible' };
  }
  return range === 'unicast' ? { public: true } : { public: false, range };
}

/**
 * The refusal's text goes back to the caller (a 422 on the field, an import's error, a delivery
 * attempt): a literal address is the caller's own, but what an internal name resolves to is
 * not theirs to learn, so a name's refusal names neither the address nor its range.
 */
function notPublic(host: string, address: string, range: string): { ok: false; code: 'private'; reason: string } {
  if (host === address) return { ok: false, code: 'private', reason: `${address} is not a public address (${range})` };
  return { ok: false, code: 'private', reason: `${host} resolves to an address that is not public` };
}

const isLocalhostName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

interface ParsedTarget {
  url: URL;
  /** Lower-case host name without IPv6 brackets or a trailing dot. */
  host: string;
  literal: boolean;
}

/** Everything that can be decided without DNS. */
function staticCheck(input: string | URL, allowPrivate: boolean): { ok: true; target: ParsedTarget } | (UrlCheckResult & { ok: false }) {
  let url: URL;
  try {
    url = typeof input === 'string' ? new URL(input) : input;
  } catch {
    return { ok: false, code: 'invalid', reason: 'not a valid URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, code: 'scheme', reason: `only http and https URLs are allowed (got ${url.protocol.replace(/:$/, '')})` };
  }
  if (url.username !== '' || url.password !== '') {
    return { ok: false, code: 'credentials', reason: 'the URL must not contain a user name or password' };
  }
  let host = url.hostname.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (host === '') return { ok: false, code: 'invalid', reason: 'the URL has no host' };
  const literal = net.isIP(host) !== 0;
  if (!allowPrivate) {
    if (isLocalhostName(host)) return { ok: false, code: 'private', reason: `${host} is not a public address (loopback)` };
    if (literal) {
      const c = classifyAddress(host);
      if (!c.public) return notPublic(host, host, c.range);
    }
  }
  return { ok: true, target: { url, host, literal } };
}

function checkResolved(host: string, addresses: LookupAddress[]): UrlCheckResult {
  if (addresses.length === 0) return { ok: false, code: 'unresolvable', reason: `${host} has no address` };
  for (const a of addresses) {
    const c = classifyAddress(a.address);
    if (!c.public) return notPublic(host, a.address, c.range);
  }
  return { ok: true };
}

/**
 * Checks a URL before it is accepted or requested: http(s), no credentials, and — unless
 * `allowPrivate` — a literal address or every address the host resolves to is public.
 */
export async function checkPublicUrl(input: string | URL, opts: UrlCheckOptions): Promise<UrlCheckResult> {
  const s = staticCheck(input, opts.allowPrivate);
  if (!s.ok) return s;
  if (opts.allowPrivate || s.target.literal) return { ok: true };
  let addresses: LookupAddress[];
  try {
    addresses = await (opts.resolve ?? defaultResolve)(s.target.host);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    return { ok: false, code: 'unresolvable', reason: `${s.target.host} cannot be resolved (${code})` };
  }
  return checkResolved(s.target.host, addresses);
}

/** Why a safeFetch produced no response. */
export class SafeFetchError extends Error {
  constructor(
    readonly code: 'refused' | 'timeout' | 'aborted' | 'network',
    message: string,
  ) {
    super(message);
    this.name = 'SafeFetchError';
  }
}

/**
 * A connection-time lookup that refuses non-public answers, so that the address checked is
 * the address connected to. Handles both callback forms (`all` is set by Node's
 * happy-eyeballs connect).
 */
export function guardedLookup(resolve: ResolveAll = defaultResolve): net.LookupFunction {
  return ((hostname: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void) => {
    const host = hostname.toLowerCase().replace(/\.$/, '');
    const done = (err: Error | null, addresses?: LookupAddress[]) => {
      if (err || !addresses) return callback(err);
      if (options.all) return callback(null, addresses);
      return callback(null, addresses[0]!.address, addresses[0]!.family);
    };
    if (isLocalhostName(host)) return done(new SafeFetchError('refused', `${host} is not a public address (loopback)`));
    resolve(hostname).then(
      (all) => {
        const wanted = options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
        // Every answer is judged, not only the ones this connection would try.
        const verdict = checkResolved(host, all);
        if (!verdict.ok) return done(new SafeFetchError('refused', verdict.reason));
        if (wanted.length === 0) {
          return done(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname }));
        }
        return done(null, wanted);
      },
      (err: Error) => done(err),
    );
  }) as net.LookupFunction;
}

export interface SafeFetchOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Whole-request deadline: DNS, connect, TLS, request and response. Default 10 s. */
  timeoutMs?: number;
  allowPrivate: boolean;
  /** At most this many bytes of the response body are read (the rest is dropped). Default 4 KiB. */
  maxResponseBytes?: number;
  signal?: AbortSignal;
  /** Keep-alive agents to reuse connections (create them with `safeAgents`); default: one connection per request. */
  agents?: SafeAgents;
  resolve?: ResolveAll;
}

export interface SafeFetchResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The first `maxResponseBytes` of the body, as text. */
  body: string;
}

export interface SafeAgents {
  http: http.Agent;
  https: https.Agent;
  destroy(): void;
}

/** Keep-alive agents whose connections are made through the guarded lookup (unless allowPrivate). */
export function safeAgents(opts: { allowPrivate: boolean; resolve?: ResolveAll; maxSockets?: number }): SafeAgents {
  const common = {
    keepAlive: true,
    maxSockets: opts.maxSockets ?? 16,
    ...(opts.allowPrivate ? {} : { lookup: guardedLookup(opts.resolve) }),
  };
  const agents = { http: new http.Agent(common), https: new https.Agent(common) };
  return {
    ...agents,
    destroy: () => {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

/**
 * One HTTP request to a user-supplied URL: checked as `checkPublicUrl` does, re-checked at
 * connection time, bounded in time, never following redirects, reading at most a few KB of
 * the answer. Rejects with SafeFetchError when there is no response.
 */
export function safeFetch(input: string | URL, opts: SafeFetchOptions): Promise<SafeFetchResponse> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const maxBytes = opts.maxResponseBytes ?? 4096;
  const s = staticCheck(input, opts.allowPrivate);
  if (!s.ok) return Promise.reject(new SafeFetchError('refused', s.reason));
  const { url } = s.target;
  if (opts.signal?.aborted) return Promise.reject(new SafeFetchError('aborted', 'aborted'));

  return new Promise<SafeFetchResponse>((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | undefined, res?: SafeFetchResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve(res!);
    };
    const https_ = url.protocol === 'https:';
    const agent = opts.agents ? (https_ ? opts.agents.https : opts.agents.http) : false;
    const body = opts.body === undefined ? undefined : Buffer.from(opts.body, 'utf8');
    const req = (https_ ? https : http).request(url, {
      method: opts.method ?? 'POST',
      headers: { ...opts.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
      agent,
      // With a shared agent the agent's lookup is used; without one, this one.
      ...(opts.allowPrivate || opts.agents ? {} : { lookup: guardedLookup(opts.resolve) }),
    });
    const fail = (err: Error) => {
      req.destroy();
      finish(err instanceof SafeFetchError ? err : new SafeFetchError('network', err.message || String(err)));
    };
    // The status is what counts: an answer whose body is still trickling in at the deadline stands.
    let answered: (() => void) | undefined;
    const timer = setTimeout(() => {
      if (answered) answered();
      else fail(new SafeFetchError('timeout', `no response within ${timeoutMs} ms`));
    }, timeoutMs);
    const onAbort = () => fail(new SafeFetchError('aborted', 'aborted'));
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    req.on('socket', (socket: net.Socket) => {
      if (opts.allowPrivate) return;
      // Defence in depth, whatever resolved the name (an agent without the guarded lookup,
      // a reused socket): the address about to be connected to and the one connected to.
      const verify = (address: string | undefined) => {
        if (address === undefined || settled) return;
        const c = classifyAddress(address);
        if (!c.public) fail(new SafeFetchError('refused', notPublic(s.target.host, address, c.range).reason));
      };
      if (socket.connecting) {
        socket.on('lookup', (err: Error | null, address: string) => {
          if (!err) verify(address);
        });
        socket.once('connect', () => verify(socket.remoteAddress));
      } else {
        verify(socket.remoteAddress);
      }
    });
    req.on('error', (err) => fail(err));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => finish(undefined, { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') });
      answered = () => {
        req.destroy();
        done();
      };
      res.on('data', (chunk: Buffer) => {
        if (size < maxBytes) chunks.push(chunk.subarray(0, maxBytes - size));
        size += chunk.length;
        if (size > maxBytes) {
          // Enough: the rest is not read, and the connection is not reused.
          res.destroy();
          req.destroy();
          done();
        }
      });
      res.on('end', done);
      // A receiver that answers and then drops the connection still answered.
      res.on('error', () => done());
      res.on('close', done);
    });
    req.end(body);
  });
}

export interface SafeStreamOptions {
  allowPrivate: boolean;
  headers?: Record<string, string>;
  /** Time for the answer's headers to arrive, and the longest pause between two chunks of its body. Default 30 s. */
  timeoutMs?: number;
  /** Whole-download deadline, body included. Default 15 minutes. */
  deadlineMs?: number;
  /** Redirects followed (each target checked again like the first URL). Default 5. */
  maxRedirects?: number;
  signal?: AbortSignal;
  resolve?: ResolveAll;
}

export interface SafeStreamResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The URL that answered (after redirects). */
  url: string;
  /** The body as it arrives; destroyed with a SafeFetchError on a stall, the deadline or an abort. */
  body: http.IncomingMessage;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * A GET of a user-supplied URL whose body is read as a stream (feeds of any size): every hop
 * is checked as `checkPublicUrl` does and again at connection time, at most `maxRedirects`
 * redirects are followed, the answer must start within `timeoutMs` and never stall longer.
 * Rejects with SafeFetchError when there is no answer to read.
 */
export async function safeGetStream(input: string, opts: SafeStreamOptions): Promise<SafeStreamResponse> {
  const maxRedirects = opts.maxRedirects ?? 5;
  const deadline = Date.now() + (opts.deadlineMs ?? 15 * 60_000);
  let current = input;
  for (let hop = 0; ; hop++) {
    const res = await getOnce(current, opts, deadline);
    const location = res.body.headers.location;
    if (!REDIRECTS.has(res.status) || location === undefined) return res;
    res.body.destroy();
    if (hop >= maxRedirects) throw new SafeFetchError('refused', `more than ${maxRedirects} redirects`);
    try {
      current = new URL(location, current).toString();
    } catch {
      throw new SafeFetchError('network', 'a redirect to an invalid URL');
    }
  }
}

function getOnce(input: string, opts: SafeStreamOptions, deadline: number): Promise<SafeStreamResponse> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const s = staticCheck(input, opts.allowPrivate);
  if (!s.ok) return Promise.reject(new SafeFetchError('refused', s.reason));
  const { url } = s.target;
  if (opts.signal?.aborted) return Promise.reject(new SafeFetchError('aborted', 'aborted'));
  return new Promise<SafeStreamResponse>((resolve, reject) => {
    let answered = false;
    const req = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'GET',
      headers: opts.headers,
      agent: false,
      ...(opts.allowPrivate ? {} : { lookup: guardedLookup(opts.resolve) }),
    });
    const fail = (err: SafeFetchError) => {
      req.destroy(err);
      if (!answered) reject(err);
    };
    const headersTimer = setTimeout(() => fail(new SafeFetchError('timeout', `no response within ${timeoutMs} ms`)), Math.min(timeoutMs, Math.max(0, deadline - Date.now())));
    const deadlineTimer = setTimeout(() => fail(new SafeFetchError('timeout', 'the download took too long')), Math.max(0, deadline - Date.now()));
    deadlineTimer.unref();
    const onAbort = () => fail(new SafeFetchError('aborted', 'aborted'));
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const cleanup = () => {
      clearTimeout(headersTimer);
      clearTimeout(deadlineTimer);
      opts.signal?.removeEventListener('abort', onAbort);
    };
    req.on('socket', (socket: net.Socket) => {
      if (opts.allowPrivate) return;
      const verify = (address: string | undefined) => {
        if (address === undefined) return;
        const c = classifyAddress(address);
        if (!c.public) fail(new SafeFetchError('refused', notPublic(s.target.host, address, c.range).reason));
      };
      if (socket.connecting) {
        socket.on('lookup', (err: Error | null, address: string) => {
          if (!err) verify(address);
        });
        socket.once('connect', () => verify(socket.remoteAddress));
      } else {
        verify(socket.remoteAddress);
      }
    });
    req.on('error', (err) => {
      if (answered) return;
      cleanup();
      reject(err instanceof SafeFetchError ? err : new SafeFetchError('network', err.message || String(err)));
    });
    req.on('response', (res) => {
      answered = true;
      clearTimeout(headersTimer);
      // A stalled body fails the read with a timeout instead of hanging the reader.
      res.setTimeout(timeoutMs, () => res.destroy(new SafeFetchError('timeout', `no data for ${timeoutMs} ms`)));
      res.once('close', cleanup);
      res.once('error', cleanup);
      resolve({ status: res.statusCode ?? 0, headers: res.headers, url: url.toString(), body: res });
    });
    req.end();
  });
}
