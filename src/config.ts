// The only module that reads process.env. Everything else receives a typed Config.
// Each setting is parsed and checked here so that a bad value stops the process at
// boot with a message naming the variable, never later on a request.
import { isIP } from 'node:net';
import path from 'node:path';
import ipaddr from 'ipaddr.js';

export interface RateLimitRule {
  /** Requests allowed per hour (0 = no hourly window). */
  perHour: number;
  /** Requests allowed per minute (burst window). */
  perMinute: number;
}

/** The parsed TRUST_PROXY setting: no proxy, a hop count, or the proxies' addresses/CIDRs. */
export type TrustProxySetting = false | number | string[];

export interface Config {
  env: 'development' | 'production' | 'test';
  host: string;
  port: number;
  /** Base URL printed at start and used in links; defaults to http://localhost:{port}. */
  publicBaseUrl: string | undefined;
  dataDir: string;
  databaseUrl: string | undefined;
  databasePoolMax: number;
  /** Processes serving the port (Node's cluster module); 1 = this process alone. */
  webConcurrency: number;
  redisUrl: string | undefined;
  redisKeyPrefix: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** TRUST_PROXY: no proxy (false), a hop count, or the proxies' addresses/CIDRs (src/infra/client-address.ts). */
  trustProxy: TrustProxySetting;
  bodyLimit: number;
  jwtSecret: string | undefined;
  accessTokenTtlSeconds: number;
  customerTokenTtlSeconds: number;
  /** Customer tokens from a QR login at a partner's till (QR_CUSTOMER_TOKEN_TTL). */
  qrCustomerTokenTtlSeconds: number;
  admin: { email: string; password: string } | undefined;
  demoSeed: boolean;
  appTestPhones: Record<string, string>;
  rateLimit: {
    disabled: boolean;
    api: RateLimitRule;
    ip: RateLimitRule;
    partner: RateLimitRule;
    admin: RateLimitRule;
    customer: RateLimitRule;
    /** SIGNIN_LOCK_ATTEMPTS wrong passwords within SIGNIN_LOCK_MINUTES lock a partner's or admin's e-mail that long. */
    signInLock: { attempts: number; minutes: number };
  };
  shutdownTimeoutMs: number;
  metricsEnabled: boolean;
  /** METRICS_TOKEN: when set, /metrics needs `Authorization: Bearer <token>`. */
  metricsToken: string | undefined;
  sms: {
    /** Which carrier hands messages on: the built-in simulator or SMPP. */
    carrier: 'simulator' | 'smpp';
    /** Default price per part by ISO country ("*" = elsewhere), exact decimal EUR text. */
    prices: Record<string, string>;
    simulatorDelayMs: number;
    dispatchPollMs: number;
    /** How long an interrupted SMPP hand-over waits before it is failed (never resent). */
    inDoubtAfterMs: number;
    /** SMS_DEFAULT_VALIDITY_MINUTES: a message sent without a validity expires this long after its send. */
    defaultValidityMinutes: number;
    /** SMPP_URL: smpp://system_id:password@host:port (ssmpp:// for TLS); required when carrier is smpp. */
    smppUrl: string | undefined;
    /** SMPP_ENQUIRE_LINK_MS: keep-alive period of the SMPP session. */
    smppEnquireLinkMs: number;
    /** SMPP_WINDOW: most submit_sm sent and not yet answered. */
    smppWindow: number;
    /** SMPP_THROUGHPUT: most submit_sm per second. */
    smppThroughput: number;
    /** SMPP_RESPONSE_TIMEOUT_MS: wait for a response PDU (and for connect + bind); a late submit_sm_resp drops the session. */
    smppResponseTimeoutMs: number;
    /**
     * SMPP_RECEIPT_ID_FORMAT: how the carrier writes a part's id in its delivery receipts,
     * relative to the id its submit_sm_resp gave: `same` (as given), `decimal` (the receipt has
     * in decimal what submit_sm_resp gave in hex) or `hex` (the other way round). Only that
     * spelling is looked up: the others may be another message's id.
     */
    smppReceiptIdFormat: 'same' | 'hex' | 'decimal';
    /** SMS_SYSTEM_SENDER: sender name of the platform's own messages (sign-in codes). */
    systemSender: string;
  };
  points: {
    /** POINTS_EXPIRY_SWEEP_MS: how often the expiry job looks for lots past their expiry. */
    expirySweepMs: number;
  };
  /** QR_EXPIRY_SWEEP_MS: how often QR sessions past their 5 minutes are marked (and announced) expired. */
  qrExpirySweepMs: number;
  /** GAME_SESSION_EXPIRY_SWEEP_MS: how often game plays past their 30 minutes are marked (and announced) expired. */
  gameSessionExpirySweepMs: number;
  /** APP_LINK_BASE: prefix of the links in QR codes that the mobile app opens. */
  appLinkBase: string;
  /** APP_DOWNLOAD_URL: where send-app-link points customers to get the app. */
  appDownloadUrl: string;
  // Outgoing webhooks (src/modules/webhooks, src/infra/safe-url.ts)
  /** ALLOW_PRIVATE_URLS: let user-given URLs reach private, loopback and link-local addresses (tests, local dev). */
  allowPrivateUrls: boolean;
  /** WEBHOOK_TIMEOUT_MS: deadline of one delivery attempt (DNS, connect, request and response). */
  webhookTimeoutMs: number;
  realtime: RealtimeConfig;
  // Admin e-mail (src/modules/mail)
  mail: {
    /** SMTP_URL: smtp:// or smtps:// (credentials in the URL); unset = write .eml files to `dir`. */
    smtpUrl: string | undefined;
    /** MAIL_FROM: the From header, `address` or `Name <address>`. */
    from: string;
    /** MAIL_DIR: where the file transport writes .eml files (default {data dir}/mail). */
    dir: string;
  };
  // Message attachments (src/modules/partner-messages)
  files: {
    /** FILES_DIR: where uploaded attachments are stored (default {data dir}/attachments). */
    dir: string;
    /** ATTACHMENT_MAX_BYTES: largest accepted attachment. */
    maxBytes: number;
    /** ATTACHMENT_MAX_FILES: most attachments on one message. */
    maxFiles: number;
  };
  // Wallet passes (src/modules/wallet, docs/wallet.md)
  wallet: {
    /** LOYALTY_SECRETS_KEY: 32 bytes (64 hex digits or base64) sealing wallet private keys (AES-256-GCM); unset = generated into the data dir on the embedded store, refused saves on PostgreSQL. */
    secretsKey: Buffer | undefined;
    /** APNS_URL: Apple's push service (HTTP/2). */
    apnsUrl: string;
    /** APNS_CA_FILE: a PEM file of a CA to trust for APNS_URL besides the system's (a local stand-in). */
    apnsCaFile: string | undefined;
    /** GOOGLE_WALLET_API_URL: base of the Google Wallet REST API; unset = Google objects are not patched. */
    googleWalletApiUrl: string | undefined;
  };
  // Catalog and XML feed import (src/modules/catalog, docs/catalog.md)
  xmlImport: {
    /** XML_IMPORT_MAX_BYTES: largest feed, counted after decompression. */
    maxBytes: number;
    /** XML_IMPORT_TIMEOUT_MS: a feed URL must start answering, and keep sending, within this. */
    timeoutMs: number;
    /** XML_IMPORT_LEASE_MS: how long a node's claim on a running import lasts without a heartbeat. */
    leaseMs: number;
    /** XML_IMPORT_CONCURRENCY: imports running at once on one node. */
    concurrency: number;
    /** XML_IMPORT_POLL_MS: how often a node looks for queued imports and due feeds (enqueues also wake it). */
    pollMs: number;
    /** Where uploaded feeds wait for their import: {FILES_DIR}/imports. */
    dir: string;
  };
  version: string;
}

/** The Pusher-protocol realtime server (src/infra/realtime, docs/realtime.md). */
export interface RealtimeConfig {
  /** REALTIME_DRIVER: the built-in server on this port, or an external Pusher-compatible one. */
  driver: 'builtin' | 'external';
  /** REALTIME_APP_ID / _KEY / _SECRET (built-in): unset → generated once and kept in the database. */
  app: { id: string | undefined; key: string | undefined; secret: string | undefined };
  /** REALTIME_EXTERNAL_URL (external driver): http(s)://KEY:SECRET@host:port/apps/APP_ID. */
  external: { appId: string; key: string; secret: string; host: string; port: number; scheme: 'http' | 'https' } | undefined;
  /** REALTIME_PUBLIC_HOST / _PORT / _SCHEME: what GET shop/realtime/config tells clients to connect to. */
  publicHost: string | undefined;
  publicPort: number | undefined;
  publicScheme: 'http' | 'https' | undefined;
  /** REALTIME_ALLOWED_ORIGINS: browser origins allowed to connect; empty = any. */
  allowedOrigins: string[];
  /** REALTIME_ACTIVITY_TIMEOUT (s): sent in the handshake; the server pings a socket idle this long. */
  activityTimeoutSeconds: number;
  /** REALTIME_PONG_TIMEOUT (s): how long the server waits for the answer to its ping before closing 4201. */
  pongTimeoutSeconds: number;
  /** Built-in server's limits (DESIGN §16, docs/realtime.md "Limits"). */
  limits: {
    /** REALTIME_MAX_CHANNELS_PER_CONNECTION: more → subscription_error LimitReached (4301). */
    maxChannelsPerConnection: number;
    /** REALTIME_MAX_CONNECTIONS_PER_IP: per client address, 0 = no limit; more → close 4100. */
    maxConnectionsPerIp: number;
    /** REALTIME_MAX_CONNECTIONS: per node; more → close 4100. */
    maxConnections: number;
    /** REALTIME_MAX_SUBSCRIBES_PER_SECOND: per connection; more → pusher:error 4301, frame dropped. */
    maxSubscribesPerSecond: number;
    /** REALTIME_MAX_FRAME_BYTES: one inbound frame; more → pusher:error 4301, frame dropped. */
    maxFrameBytes: number;
  };
}

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

class Reader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  raw(name: string): string | undefined {
    const v = this.env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  }

  str(name: string, fallback: string): string {
    return this.raw(name) ?? fallback;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const v = this.raw(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!/^-?\d+$/.test(v) || n < min || n > max) {
      this.problems.push(`${name} must be an integer from ${min} to ${max} (got "${v}")`);
      return fallback;
    }
    return n;
  }

  bool(name: string, fallback: boolean): boolean {
    const v = this.raw(name)?.toLowerCase();
    if (v === undefined) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(v)) return true;
    if (['0', 'false', 'no', 'off'].includes(v)) return false;
    this.problems.push(`${name} must be true or false (got "${v}")`);
    return fallback;
  }

  oneOf<T extends string>(name: string, fallback: T, allowed: readonly T[]): T {
    const v = this.raw(name);
    if (v === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(v)) {
      this.problems.push(`${name} must be one of ${allowed.join(', ')} (got "${v}")`);
      return fallback;
    }
    return v as T;
  }

  url(name: string, protocols: string[]): string | undefined {
    const v = this.raw(name);
    if (v === undefined) return undefined;
    try {
      const u = new URL(v);
      if (!protocols.includes(u.protocol)) throw new Error('protocol');
      return v;
    } catch {
      this.problems.push(`${name} must be a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`);
      return undefined;
    }
  }
}

function parseTestPhones(r: Reader, name: string, fallback: string): Record<string, string> {
  const v = r.raw(name) ?? fallback;
  const out: Record<string, string> = {};
  if (v === '') return out;
  for (const pair of v.split(',')) {
    const m = /^\s*(\+\d{6,15}):(\d{6})\s*$/.exec(pair);
    if (!m) {
      r.problems.push(`${name} must be a comma-separated list of +E164:6digitcode pairs (bad entry "${pair}")`);
      continue;
    }
    out[m[1]!] = m[2]!;
  }
  return out;
}

function parsePrices(r: Reader, name: string, fallback: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of (r.raw(name) ?? fallback).split(',')) {
    const m = /^\s*([A-Z]{2}|\*)\s*=\s*(\d{1,6}(?:\.\d{1,4})?)\s*$/.exec(entry);
    if (!m) {
      r.problems.push(`${name} must look like "LT=0.0290,LV=0.0390,*=0.0600" (bad entry "${entry}")`);
      continue;
    }
    out[m[1]!] = m[2]!;
  }
  if (!('*' in out)) r.problems.push(`${name} must include a "*" price for other countries`);
  return out;
}

/** smpp://system_id:password@host:port, or ssmpp:// for TLS; the password is never echoed. */
function parseSmppUrl(r: Reader, name: string, required: boolean): string | undefined {
  if (r.raw(name) === undefined) {
    if (required) r.problems.push(`${name} is required when SMS_CARRIER=smpp (smpp://system_id:password@host:port)`);
    return undefined;
  }
  const v = r.url(name, ['smpp:', 'ssmpp:']);
  if (v === undefined) return undefined;
  const u = new URL(v);
  if (!u.hostname || !u.username || !u.password) {
    r.problems.push(`${name} must carry a system_id, a password and a host: smpp://system_id:password@host:port`);
    return undefined;
  }
  return v;
}

/** An alphanumeric sender name as the SMS interface allows it: letters, digits, spaces, ≤ 11. */
function systemSender(r: Reader, name: string, fallback: string): string {
  const v = r.str(name, fallback);
  if (!/^[A-Za-z0-9 ]{1,11}$/.test(v) || v.trim() === '') {
    r.problems.push(`${name} must be 1 to 11 letters, digits or spaces (got "${v}")`);
    return fallback;
  }
  return v;
}

/** `address` or `Display Name <address>`; the address must look like one (no header injection). */
function parseMailFrom(r: Reader, name: string, fallback: string): string {
  const v = r.raw(name) ?? fallback;
  const address = /^(?:[^<>\r\n]*<([^<>\s@]+@[^<>\s@]+)>|([^<>\s@]+@[^<>\s@]+))$/.exec(v);
  if (!address) {
    r.problems.push(`${name} must be an e-mail address or "Name <address>" (got "${v}")`);
    return fallback;
  }
  return v;
}

/** http(s)://KEY:SECRET@host[:port]/apps/APP_ID — the URL form the pusher SDK (Pusher.forURL) reads. */
function parseExternalRealtime(r: Reader, name: string, required: boolean): RealtimeConfig['external'] {
  const raw = r.raw(name);
  if (raw === undefined) {
    if (required) r.problems.push(`${name} is required when REALTIME_DRIVER=external (http(s)://KEY:SECRET@host:port/apps/APP_ID)`);
    return undefined;
  }
  const v = r.url(name, ['http:', 'https:']);
  if (v === undefined) return undefined;
  const u = new URL(v);
  const appId = /^\/apps\/([^/]+)\/?$/.exec(u.pathname)?.[1];
  if (!u.hostname || !u.username || !u.password || appId === undefined) {
    r.problems.push(`${name} must carry a key, a secret, a host and the app id: http(s)://KEY:SECRET@host:port/apps/APP_ID`);
    return undefined;
  }
  const scheme = u.protocol === 'https:' ? 'https' : 'http';
  return {
    appId: decodeURIComponent(appId),
    key: decodeURIComponent(u.username),
    secret: decodeURIComponent(u.password),
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : scheme === 'https' ? 443 : 80,
    scheme,
  };
}

function parseRealtime(r: Reader): RealtimeConfig {
  const driver = r.oneOf('REALTIME_DRIVER', 'builtin', ['builtin', 'external'] as const);
  const id = r.raw('REALTIME_APP_ID');
  const key = r.raw('REALTIME_APP_KEY');
  const secret = r.raw('REALTIME_APP_SECRET');
  // The key is a path segment of the WebSocket URL and the id one of the HTTP API's.
  if (id !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(id)) r.problems.push('REALTIME_APP_ID must be 1 to 64 letters, digits, "-" or "_"');
  if (key !== undefined && !/^[A-Za-z0-9_-]{8,64}$/.test(key)) r.problems.push('REALTIME_APP_KEY must be 8 to 64 letters, digits, "-" or "_"');
  if (secret !== undefined && secret.length < 16) r.problems.push('REALTIME_APP_SECRET must be at least 16 characters');
  if ((key === undefined) !== (secret === undefined)) r.problems.push('REALTIME_APP_KEY and REALTIME_APP_SECRET must be set together');
  const origins = (r.raw('REALTIME_ALLOWED_ORIGINS') ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  const allowedOrigins: string[] = [];
  for (const o of origins) {
    try {
      const u = new URL(o);
      if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.origin !== o.replace(/\/+$/, '')) throw new Error('origin');
      allowedOrigins.push(u.origin);
    } catch {
      r.problems.push(`REALTIME_ALLOWED_ORIGINS must be a comma-separated list of origins like https://shop.example.com (bad entry "${o}")`);
    }
  }
  const publicHost = r.raw('REALTIME_PUBLIC_HOST');
  if (publicHost !== undefined && !/^[A-Za-z0-9.-]+$|^\[?[0-9A-Fa-f:.]+\]?$/.test(publicHost)) {
    r.problems.push('REALTIME_PUBLIC_HOST must be a host name or an IP address (no scheme, no port)');
  }
  const publicPort = r.raw('REALTIME_PUBLIC_PORT') === undefined ? undefined : r.int('REALTIME_PUBLIC_PORT', 443, 1, 65535);
  const publicScheme = r.raw('REALTIME_PUBLIC_SCHEME') === undefined ? undefined : r.oneOf('REALTIME_PUBLIC_SCHEME', 'https', ['http', 'https'] as const);
  return {
    driver,
    app: { id, key, secret },
    external: parseExternalRealtime(r, 'REALTIME_EXTERNAL_URL', driver === 'external'),
    publicHost,
    publicPort,
    publicScheme,
    allowedOrigins,
    activityTimeoutSeconds: r.int('REALTIME_ACTIVITY_TIMEOUT', 30, 1, 3600),
    pongTimeoutSeconds: r.int('REALTIME_PONG_TIMEOUT', 30, 1, 600),
    limits: {
      maxChannelsPerConnection: r.int('REALTIME_MAX_CHANNELS_PER_CONNECTION', 100, 1, 10_000),
      maxConnectionsPerIp: r.int('REALTIME_MAX_CONNECTIONS_PER_IP', 1000, 0, 10_000_000),
      maxConnections: r.int('REALTIME_MAX_CONNECTIONS', 50_000, 1, 10_000_000),
      maxSubscribesPerSecond: r.int('REALTIME_MAX_SUBSCRIBES_PER_SECOND', 20, 1, 10_000),
      // Below `ws`'s own 1 MiB frame cap (protocol.ts MAX_WS_PAYLOAD_BYTES), so the server answers 4301 itself.
      maxFrameBytes: r.int('REALTIME_MAX_FRAME_BYTES', 10_240, 1024, 512 * 1024),
    },
  };
}

/** smtp://user:pass@host:port or smtps:// (TLS from the start); the password is never echoed. */
function parseSmtpUrl(r: Reader, name: string): string | undefined {
  const v = r.url(name, ['smtp:', 'smtps:']);
  if (v === undefined) return undefined;
  if (!new URL(v).hostname) {
    r.problems.push(`${name} must name a host: smtp://user:password@host:port`);
    return undefined;
  }
  return v;
}

/**
 * TRUST_PROXY: unset/false = no proxy; a positive integer = that many proxy hops; otherwise
 * a comma-separated list of proxy addresses, CIDRs or proxy-addr's range names. `true`
 * (trust every hop) is refused: any client could then choose its own address.
 */
function parseTrustProxy(r: Reader, name: string): TrustProxySetting {
  const v = r.raw(name);
  if (v === undefined) return false;
  const lower = v.toLowerCase();
  if (['0', 'false', 'no', 'off'].includes(lower)) return false;
  if (['true', 'yes', 'on'].includes(lower)) {
    r.problems.push(
      `${name}=${v} is refused: trusting every proxy lets a client choose its own address through X-Forwarded-For; give the number of proxy hops (e.g. 1) or the proxies' addresses/CIDRs (e.g. 10.0.0.0/8)`,
    );
    return false;
  }
  if (/^\d+$/.test(v)) {
    const hops = Number(v);
    if (hops > 32) {
      r.problems.push(`${name} as a hop count must be from 1 to 32 (got "${v}")`);
      return false;
    }
    return hops;
  }
  const entries = v.split(',').map((e) => e.trim());
  const bad = entries.filter((e) => !isProxyAddress(e));
  if (bad.length > 0) {
    r.problems.push(
      `${name} must be a hop count or a comma-separated list of proxy addresses, CIDRs, loopback, linklocal or uniquelocal (bad entry "${bad[0]}")`,
    );
    return false;
  }
  return entries;
}

/** An entry of a proxy list as @fastify/proxy-addr accepts it: a range name, an IP, IP/prefix or IP/netmask. */
function isProxyAddress(entry: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true;
  const slash = entry.indexOf('/');
  const ip = slash === -1 ? entry : entry.slice(0, slash);
  // net.isIP, not ipaddr.isValid alone: that takes "1.5" or "0x0a.1" for an IPv4 address.
  if (isIP(ip) === 0 || !ipaddr.isValid(ip)) return false;
  if (slash === -1) return true;
  const range = entry.slice(slash + 1);
  const bits = ipaddr.parse(ip).kind() === 'ipv4' ? 32 : 128;
  if (/^\d+$/.test(range)) return Number(range) <= bits;
  // A netmask (255.255.0.0) is accepted for IPv4 as proxy-addr does; it must be contiguous.
  return bits === 32 && ipaddr.IPv4.isValidFourPartDecimal(range) && ipaddr.IPv4.parse(range).prefixLengthFromSubnetMask() !== null;
}

/** A bearer token Prometheus can send: 16 or more visible characters, no spaces. */
function parseMetricsToken(r: Reader, name: string): string | undefined {
  const v = r.raw(name);
  if (v === undefined) return undefined;
  if (!/^[\x21-\x7e]{16,}$/.test(v)) {
    r.problems.push(`${name} must be at least 16 visible characters without spaces`);
    return undefined;
  }
  return v;
}

/** 32 bytes written as 64 hex digits or as base64. */
function parseSecretsKey(r: Reader, name: string): Buffer | undefined {
  const v = r.raw(name);
  if (v === undefined) return undefined;
  const key = /^[0-9a-fA-F]{64}$/.test(v) ? Buffer.from(v, 'hex') : /^[A-Za-z0-9+/]{43}=?$/.test(v) ? Buffer.from(v, 'base64') : undefined;
  if (key?.length !== 32) {
    r.problems.push(`${name} must be 32 bytes, written as 64 hex digits or base64 (openssl rand -hex 32)`);
    return undefined;
  }
  return key;
}

function rule(r: Reader, prefix: string, perHour: number, perMinute: number): RateLimitRule {
  return {
    perHour: r.int(`${prefix}_PER_HOUR`, perHour, 0, 10_000_000),
    perMinute: r.int(`${prefix}_PER_MINUTE`, perMinute, 1, 1_000_000),
  };
}

/** Parse and validate configuration; throws ConfigError listing every problem found. */
export function loadConfig(env: Env = process.env, version = '0.0.0'): Config {
  const r = new Reader(env);
  const nodeEnv = r.oneOf('NODE_ENV', 'development', ['development', 'production', 'test'] as const);
  const databaseUrl = r.url('DATABASE_URL', ['postgres:', 'postgresql:']);
  const redisUrl = r.url('REDIS_URL', ['redis:', 'rediss:']);
  const port = r.int('PORT', 3000, 0, 65535);
  const publicBaseUrl = r.url('PUBLIC_BASE_URL', ['http:', 'https:'])?.replace(/\/+$/, '');

  const adminEmail = r.raw('LOYALTY_ADMIN_EMAIL');
  const adminPassword = r.raw('LOYALTY_ADMIN_PASSWORD');
  if ((adminEmail === undefined) !== (adminPassword === undefined)) {
    r.problems.push('LOYALTY_ADMIN_EMAIL and LOYALTY_ADMIN_PASSWORD must be set together');
  }
  if (adminPassword !== undefined && adminPassword.length < 10) {
    r.problems.push('LOYALTY_ADMIN_PASSWORD must be at least 10 characters');
  }
  const jwtSecret = r.raw('JWT_SECRET');
  if (jwtSecret !== undefined && jwtSecret.length < 32) {
    r.problems.push('JWT_SECRET must be at least 32 characters');
  }
  const embedded = databaseUrl === undefined;
  const webConcurrency = r.int('WEB_CONCURRENCY', 1, 1, 64);
  if (webConcurrency > 1 && embedded) {
    r.problems.push('WEB_CONCURRENCY above 1 needs DATABASE_URL: the embedded store serves one process');
  }
  if (webConcurrency > 1 && redisUrl === undefined) {
    r.problems.push('WEB_CONCURRENCY above 1 needs REDIS_URL: rate limits and realtime channels are shared between processes through Redis');
  }
  // Demo data and test phones are for a first look on a developer's machine: never by
  // default on a production database or in production mode, only when set explicitly.
  const firstLook = embedded && nodeEnv !== 'production';
  const dataDir = path.resolve(r.str('LOYALTY_DATA_DIR', './data'));

  const config: Config = {
    env: nodeEnv,
    host: r.str('HOST', '0.0.0.0'),
    port,
    publicBaseUrl,
    dataDir,
    databaseUrl,
    databasePoolMax: r.int('DATABASE_POOL_MAX', 10, 1, 1000),
    webConcurrency,
    redisUrl,
    redisKeyPrefix: r.str('REDIS_KEY_PREFIX', 'loyalty:'),
    logLevel: r.oneOf('LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const),
    trustProxy: parseTrustProxy(r, 'TRUST_PROXY'),
    bodyLimit: r.int('BODY_LIMIT', 1024 * 1024, 1024, 64 * 1024 * 1024),
    jwtSecret,
    accessTokenTtlSeconds: r.int('ACCESS_TOKEN_TTL', 12 * 3600, 60, 30 * 24 * 3600),
    customerTokenTtlSeconds: r.int('CUSTOMER_TOKEN_TTL', 30 * 24 * 3600, 60, 365 * 24 * 3600),
    qrCustomerTokenTtlSeconds: r.int('QR_CUSTOMER_TOKEN_TTL', 12 * 3600, 60, 365 * 24 * 3600),
    admin: adminEmail && adminPassword ? { email: adminEmail, password: adminPassword } : undefined,
    demoSeed: r.bool('LOYALTY_DEMO_SEED', firstLook),
    appTestPhones: parseTestPhones(r, 'APP_TEST_PHONES', firstLook ? '+37060000000:123456' : ''),
    rateLimit: {
      disabled: r.bool('RATE_LIMIT_DISABLED', false),
      api: rule(r, 'RATE_LIMIT_API', 1000, 100),
      ip: rule(r, 'RATE_LIMIT_IP', 0, 60),
      partner: rule(r, 'RATE_LIMIT_PARTNER', 5000, 200),
      admin: rule(r, 'RATE_LIMIT_ADMIN', 10000, 500),
      customer: rule(r, 'RATE_LIMIT_CUSTOMER', 1000, 100),
      signInLock: {
        attempts: r.int('SIGNIN_LOCK_ATTEMPTS', 10, 1, 1000),
        minutes: r.int('SIGNIN_LOCK_MINUTES', 15, 1, 24 * 60),
      },
    },
    shutdownTimeoutMs: r.int('SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    metricsEnabled: r.bool('METRICS_ENABLED', true),
    metricsToken: parseMetricsToken(r, 'METRICS_TOKEN'),
    sms: {
      carrier: r.oneOf('SMS_CARRIER', 'simulator', ['simulator', 'smpp'] as const),
      prices: parsePrices(r, 'SMS_PRICES', 'LT=0.0290,LV=0.0390,EE=0.0390,PL=0.0290,*=0.0600'),
      simulatorDelayMs: r.int('SMS_SIMULATOR_DELAY_MS', 2000, 0, 600_000),
      dispatchPollMs: r.int('SMS_DISPATCH_POLL_MS', 250, 10, 60_000),
      inDoubtAfterMs: r.int('SMS_IN_DOUBT_AFTER_MS', 120_000, 1000, 86_400_000),
      defaultValidityMinutes: r.int('SMS_DEFAULT_VALIDITY_MINUTES', 2880, 1, 10_080),
      smppUrl: parseSmppUrl(r, 'SMPP_URL', r.raw('SMS_CARRIER') === 'smpp'),
      smppEnquireLinkMs: r.int('SMPP_ENQUIRE_LINK_MS', 30_000, 1000, 600_000),
      smppWindow: r.int('SMPP_WINDOW', 10, 1, 1000),
      smppThroughput: r.int('SMPP_THROUGHPUT', 50, 1, 10_000),
      smppResponseTimeoutMs: r.int('SMPP_RESPONSE_TIMEOUT_MS', 10_000, 100, 120_000),
      smppReceiptIdFormat: r.oneOf('SMPP_RECEIPT_ID_FORMAT', 'same', ['same', 'hex', 'decimal'] as const),
      systemSender: systemSender(r, 'SMS_SYSTEM_SENDER', 'Loyalty'),
    },
    points: {
      expirySweepMs: r.int('POINTS_EXPIRY_SWEEP_MS', 60_000, 100, 86_400_000),
    },
    qrExpirySweepMs: r.int('QR_EXPIRY_SWEEP_MS', 5_000, 100, 600_000),
    gameSessionExpirySweepMs: r.int('GAME_SESSION_EXPIRY_SWEEP_MS', 30_000, 100, 3_600_000),
    appLinkBase: (r.raw('APP_LINK_BASE') ?? 'loyalty://app').replace(/\/+$/, ''),
    appDownloadUrl: r.url('APP_DOWNLOAD_URL', ['http:', 'https:']) ?? `${publicBaseUrl ?? `http://localhost:${port}`}/app`,
    allowPrivateUrls: r.bool('ALLOW_PRIVATE_URLS', false),
    webhookTimeoutMs: r.int('WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
    realtime: parseRealtime(r),
    mail: {
      smtpUrl: parseSmtpUrl(r, 'SMTP_URL'),
      from: parseMailFrom(r, 'MAIL_FROM', 'Loyalty <no-reply@loyalty.localhost>'),
      dir: path.resolve(r.str('MAIL_DIR', path.join(dataDir, 'mail'))),
    },
    files: {
      dir: path.resolve(r.str('FILES_DIR', path.join(dataDir, 'attachments'))),
      maxBytes: r.int('ATTACHMENT_MAX_BYTES', 10 * 1024 * 1024, 1, 1024 * 1024 * 1024),
      maxFiles: r.int('ATTACHMENT_MAX_FILES', 5, 0, 20),
    },
    wallet: {
      secretsKey: parseSecretsKey(r, 'LOYALTY_SECRETS_KEY'),
      apnsUrl: (r.url('APNS_URL', ['https:']) ?? 'https://api.push.apple.com').replace(/\/+$/, ''),
      apnsCaFile: r.raw('APNS_CA_FILE'),
      googleWalletApiUrl: r.url('GOOGLE_WALLET_API_URL', ['http:', 'https:'])?.replace(/\/+$/, ''),
    },
    xmlImport: {
      maxBytes: r.int('XML_IMPORT_MAX_BYTES', 200 * 1024 * 1024, 1024, 4 * 1024 * 1024 * 1024),
      timeoutMs: r.int('XML_IMPORT_TIMEOUT_MS', 30_000, 100, 600_000),
      leaseMs: r.int('XML_IMPORT_LEASE_MS', 60_000, 1000, 3_600_000),
      concurrency: r.int('XML_IMPORT_CONCURRENCY', 2, 1, 64),
      pollMs: r.int('XML_IMPORT_POLL_MS', 5_000, 10, 600_000),
      dir: path.join(path.resolve(r.str('FILES_DIR', path.join(dataDir, 'attachments'))), 'imports'),
    },
    version,
  };
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}

export function baseUrlOf(config: Config, boundPort: number): string {
  return config.publicBaseUrl ?? `http://localhost:${boundPort}`;
}
