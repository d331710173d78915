// The config module: defaults, and every bad value stopping the start with a message
// that names the variable.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { baseUrlOf, ConfigError, loadConfig } from './config.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    assert.match(err.message, /^Invalid configuration:\n/);
    for (const p of err.problems) assert.ok(err.message.includes(p));
    return err.problems;
  }
  assert.fail(`no ConfigError for ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('has working defaults with nothing set (embedded)', () => {
    const c = loadConfig({}, '1.2.3');
    assert.equal(c.env, 'development');
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.port, 3000);
    assert.equal(c.publicBaseUrl, undefined);
    assert.equal(c.dataDir, path.resolve('./data'));
    assert.equal(c.databaseUrl, undefined);
    assert.equal(c.redisUrl, undefined);
    assert.equal(c.databasePoolMax, 10);
    assert.equal(c.redisKeyPrefix, 'loyalty:');
    assert.equal(c.logLevel, 'info');
    assert.equal(c.trustProxy, false);
    assert.equal(c.bodyLimit, 1024 * 1024);
    assert.equal(c.jwtSecret, undefined);
    assert.equal(c.admin, undefined);
    assert.equal(c.rateLimit.disabled, false);
    assert.deepEqual(c.rateLimit.api, { perHour: 1000, perMinute: 100 });
    assert.deepEqual(c.rateLimit.ip, { perHour: 0, perMinute: 60 });
    assert.deepEqual(c.rateLimit.partner, { perHour: 5000, perMinute: 200 });
    assert.deepEqual(c.rateLimit.admin, { perHour: 10000, perMinute: 500 });
    assert.equal(c.metricsEnabled, true);
    assert.equal(c.shutdownTimeoutMs, 10_000);
    assert.equal(c.version, '1.2.3');
  });

  it('reads each setting', () => {
    const c = loadConfig({
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: '8080',
      PUBLIC_BASE_URL: 'https://loyalty.example.com/',
      LOYALTY_DATA_DIR: '/tmp/loyalty-x',
      DATABASE_URL: 'postgres://u:p@db:5432/loyalty',
      DATABASE_POOL_MAX: '25',
      REDIS_URL: 'rediss://cache:6380',
      LOG_LEVEL: 'warn',
      TRUST_PROXY: '2',
      BODY_LIMIT: '2048',
      JWT_SECRET: 'x'.repeat(32),
      LOYALTY_ADMIN_EMAIL: 'ops@example.com',
      LOYALTY_ADMIN_PASSWORD: 'long-enough-pw',
      RATE_LIMIT_DISABLED: 'true',
      RATE_LIMIT_API_PER_MINUTE: '5',
      RATE_LIMIT_API_PER_HOUR: '0',
      METRICS_ENABLED: 'off',
    });
    assert.equal(c.env, 'production');
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.port, 8080);
    assert.equal(c.publicBaseUrl, 'https://loyalty.example.com');
    assert.equal(c.dataDir, '/tmp/loyalty-x');
    assert.equal(c.databaseUrl, 'postgres://u:p@db:5432/loyalty');
    assert.equal(c.databasePoolMax, 25);
    assert.equal(c.redisUrl, 'rediss://cache:6380');
    assert.equal(c.logLevel, 'warn');
    assert.equal(c.trustProxy, 2);
    assert.equal(c.bodyLimit, 2048);
    assert.equal(c.jwtSecret, 'x'.repeat(32));
    assert.deepEqual(c.admin, { email: 'ops@example.com', password: 'long-enough-pw' });
    assert.equal(c.rateLimit.disabled, true);
    assert.deepEqual(c.rateLimit.api, { perHour: 0, perMinute: 5 });
    assert.equal(c.metricsEnabled, false);
    assert.equal(baseUrlOf(c, 1234), 'https://loyalty.example.com');
  });

  it('writes e-mail and attachments under the data dir by default, or where told', () => {
    const d = loadConfig({ LOYALTY_DATA_DIR: '/tmp/loyalty-y' });
    assert.deepEqual(d.mail, { smtpUrl: undefined, from: 'Loyalty <no-reply@loyalty.localhost>', dir: '/tmp/loyalty-y/mail' });
    assert.deepEqual(d.files, { dir: '/tmp/loyalty-y/attachments', maxBytes: 10 * 1024 * 1024, maxFiles: 5 });
    const c = loadConfig({
      SMTP_URL: 'smtps://user:pw@mail.example.com:465',
      MAIL_FROM: 'Loyalty Ops <ops@example.com>',
      MAIL_DIR: '/tmp/mail-z',
      FILES_DIR: '/tmp/files-z',
      ATTACHMENT_MAX_BYTES: '2048',
      ATTACHMENT_MAX_FILES: '2',
    });
    assert.deepEqual(c.mail, { smtpUrl: 'smtps://user:pw@mail.example.com:465', from: 'Loyalty Ops <ops@example.com>', dir: '/tmp/mail-z' });
    assert.deepEqual(c.files, { dir: '/tmp/files-z', maxBytes: 2048, maxFiles: 2 });
    assert.equal(loadConfig({ SMTP_URL: 'smtp://127.0.0.1:2525' }).mail.smtpUrl, 'smtp://127.0.0.1:2525');
  });

  it('treats empty and blank values as unset', () => {
    const c = loadConfig({ PORT: '', DATABASE_URL: '  ', LOYALTY_ADMIN_EMAIL: '', LOYALTY_ADMIN_PASSWORD: ' ' });
    assert.equal(c.port, 3000);
    assert.equal(c.databaseUrl, undefined);
    assert.equal(c.admin, undefined);
  });

  it('builds the base URL from the bound port when PUBLIC_BASE_URL is unset', () => {
    assert.equal(baseUrlOf(loadConfig({ PORT: '0' }), 43210), 'http://localhost:43210');
  });

  const bad: Array<[string, string]> = [
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['PORT', '3000.5'],
    ['NODE_ENV', 'staging'],
    ['DATABASE_URL', 'mysql://x'],
    ['DATABASE_URL', 'not a url'],
    ['REDIS_URL', 'http://cache:6379'],
    ['PUBLIC_BASE_URL', 'ftp://example.com'],
    ['DATABASE_POOL_MAX', '0'],
    ['LOG_LEVEL', 'loud'],
    ['TRUST_PROXY', 'maybe'],
    ['TRUST_PROXY', 'true'],
    ['TRUST_PROXY', '33'],
    ['TRUST_PROXY', '10.0.0.1,'],
    ['TRUST_PROXY', '10.0.0.0/33'],
    ['SIGNIN_LOCK_ATTEMPTS', '0'],
    ['SIGNIN_LOCK_MINUTES', 'quarter'],
    ['METRICS_TOKEN', 'short'],
    ['METRICS_TOKEN', 'sixteen chars with spaces'],
    ['BODY_LIMIT', '10'],
    ['JWT_SECRET', 'too-short'],
    ['RATE_LIMIT_DISABLED', 'sometimes'],
    ['RATE_LIMIT_API_PER_MINUTE', '0'],
    ['RATE_LIMIT_IP_PER_HOUR', 'lots'],
    ['ACCESS_TOKEN_TTL', '5'],
    ['QR_CUSTOMER_TOKEN_TTL', '12h'],
    ['SHUTDOWN_TIMEOUT_MS', 'soon'],
    ['METRICS_ENABLED', '2'],
    ['LOYALTY_DEMO_SEED', 'sure'],
    ['SMTP_URL', 'http://mail.example.com'],
    ['SMTP_URL', 'smtp://'],
    ['MAIL_FROM', 'not an address'],
    ['MAIL_FROM', 'Ops <ops@example.com>\r\nBcc: x@example.com'],
    ['ATTACHMENT_MAX_BYTES', '0'],
    ['ATTACHMENT_MAX_FILES', '21'],
    ['LOYALTY_SECRETS_KEY', 'short'],
    ['LOYALTY_SECRETS_KEY', 'ab'.repeat(31)],
    ['APNS_URL', 'http://api.push.apple.com'],
    ['GOOGLE_WALLET_API_URL', 'ftp://example.com'],
  ];
  for (const [name, value] of bad) {
    it(`rejects ${name}=${JSON.stringify(value)} naming the variable`, () => {
      const problems = problemsOf({ [name]: value });
      assert.equal(problems.length, 1, problems.join('; '));
      assert.ok(problems[0]!.startsWith(name), problems[0]);
    });
  }

  it('reads the wallet settings: a 32-byte secrets key as hex or base64, Apple\'s push host by default', () => {
    const none = loadConfig({});
    assert.equal(none.wallet.secretsKey, undefined);
    assert.equal(none.wallet.apnsUrl, 'https://api.push.apple.com');
    assert.equal(none.wallet.googleWalletApiUrl, undefined);
    const hex = 'ab'.repeat(32);
    assert.deepEqual(loadConfig({ LOYALTY_SECRETS_KEY: hex }).wallet.secretsKey, Buffer.from(hex, 'hex'));
    const b64 = Buffer.alloc(32, 7).toString('base64');
    assert.deepEqual(loadConfig({ LOYALTY_SECRETS_KEY: b64 }).wallet.secretsKey, Buffer.alloc(32, 7));
    const set = loadConfig({ APNS_URL: 'https://127.0.0.1:8443/', APNS_CA_FILE: '/etc/ca.pem', GOOGLE_WALLET_API_URL: 'http://127.0.0.1:9000/' });
    assert.deepEqual(set.wallet, { secretsKey: undefined, apnsUrl: 'https://127.0.0.1:8443', apnsCaFile: '/etc/ca.pem', googleWalletApiUrl: 'http://127.0.0.1:9000' });
  });

  it('lists every problem at once', () => {
    const problems = problemsOf({ PORT: 'abc', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud' });
    assert.equal(problems.length, 3);
    assert.deepEqual(problems.map((p) => p.split(' ')[0]).sort(), ['DATABASE_URL', 'LOG_LEVEL', 'PORT']);
  });

  it('does not echo secrets from a bad DATABASE_URL or a short JWT_SECRET', () => {
    const problems = problemsOf({ DATABASE_URL: 'mysql://user:hunter2@db/x', JWT_SECRET: 'secret-value' });
    assert.doesNotMatch(problems.join('\n'), /hunter2|secret-value/);
  });

  it('needs LOYALTY_ADMIN_EMAIL and LOYALTY_ADMIN_PASSWORD together, with a long enough password', () => {
    assert.match(problemsOf({ LOYALTY_ADMIN_EMAIL: 'ops@example.com' }).join('\n'), /LOYALTY_ADMIN_EMAIL and LOYALTY_ADMIN_PASSWORD/);
    assert.match(problemsOf({ LOYALTY_ADMIN_PASSWORD: 'long-enough-pw' }).join('\n'), /LOYALTY_ADMIN_EMAIL and LOYALTY_ADMIN_PASSWORD/);
    const short = problemsOf({ LOYALTY_ADMIN_EMAIL: 'ops@example.com', LOYALTY_ADMIN_PASSWORD: 'short' });
    assert.deepEqual(short, ['LOYALTY_ADMIN_PASSWORD must be at least 10 characters']);
  });

  it('runs one process by default; WEB_CONCURRENCY above 1 needs PostgreSQL and Redis', () => {
    assert.equal(loadConfig({}).webConcurrency, 1);
    const pg = 'postgres://u@db/loyalty';
    const redis = 'redis://cache:6379';
    assert.equal(loadConfig({ WEB_CONCURRENCY: '4', DATABASE_URL: pg, REDIS_URL: redis }).webConcurrency, 4);
    assert.deepEqual(problemsOf({ WEB_CONCURRENCY: '2' }).map((p) => /needs (\w+)/.exec(p)?.[1]).sort(), ['DATABASE_URL', 'REDIS_URL']);
    assert.match(problemsOf({ WEB_CONCURRENCY: '2', DATABASE_URL: pg }).join('\n'), /WEB_CONCURRENCY above 1 needs REDIS_URL/);
    assert.match(problemsOf({ WEB_CONCURRENCY: '0' }).join('\n'), /WEB_CONCURRENCY must be an integer from 1 to 64/);
  });

  describe('APP_TEST_PHONES', () => {
    it('defaults to one test phone on the embedded store and none with DATABASE_URL', () => {
      assert.deepEqual(loadConfig({}).appTestPhones, { '+37060000000': '123456' });
      assert.deepEqual(loadConfig({ DATABASE_URL: 'postgres://db/x' }).appTestPhones, {});
      assert.deepEqual(loadConfig({ NODE_ENV: 'production' }).appTestPhones, {});
      assert.deepEqual(loadConfig({ NODE_ENV: 'production', APP_TEST_PHONES: '+37060000001:111111' }).appTestPhones, { '+37060000001': '111111' });
    });

    it('parses comma-separated +E164:code pairs, tolerating spaces', () => {
      assert.deepEqual(loadConfig({ APP_TEST_PHONES: '+37060000000:123456, +4915112345678:654321' }).appTestPhones, {
        '+37060000000': '123456',
        '+4915112345678': '654321',
      });
    });

    it('can be set on PostgreSQL too', () => {
      const c = loadConfig({ DATABASE_URL: 'postgres://db/x', APP_TEST_PHONES: '+37060000001:111111' });
      assert.deepEqual(c.appTestPhones, { '+37060000001': '111111' });
    });

    for (const value of ['37060000000:123456', '+37060000000:12345', '+37060000000', '+37060000000:123456,', '+370600:123456x']) {
      it(`rejects ${JSON.stringify(value)}`, () => {
        const problems = problemsOf({ APP_TEST_PHONES: value });
        assert.ok(problems.length >= 1 && problems.every((p) => p.startsWith('APP_TEST_PHONES')), problems.join('; '));
      });
    }
  });

  describe('demo seed', () => {
    it('is on by default on the embedded store', () => {
      assert.equal(loadConfig({}).demoSeed, true);
    });
    it('is off by default with DATABASE_URL', () => {
      assert.equal(loadConfig({ DATABASE_URL: 'postgres://db/x' }).demoSeed, false);
    });
    it('is off by default with NODE_ENV=production, even embedded; on when set explicitly', () => {
      assert.equal(loadConfig({ NODE_ENV: 'production' }).demoSeed, false);
      assert.equal(loadConfig({ NODE_ENV: 'production', LOYALTY_DEMO_SEED: 'true' }).demoSeed, true);
    });
    it('follows LOYALTY_DEMO_SEED either way', () => {
      assert.equal(loadConfig({ LOYALTY_DEMO_SEED: 'false' }).demoSeed, false);
      assert.equal(loadConfig({ DATABASE_URL: 'postgres://db/x', LOYALTY_DEMO_SEED: 'true' }).demoSeed, true);
    });
  });
});

describe('loadConfig: outgoing webhooks', () => {
  it('refuses private URLs and waits 10 s per attempt by default', () => {
    const c = loadConfig({});
    assert.equal(c.allowPrivateUrls, false);
    assert.equal(c.webhookTimeoutMs, 10_000);
  });

  it('reads ALLOW_PRIVATE_URLS and WEBHOOK_TIMEOUT_MS', () => {
    const c = loadConfig({ ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_MS: '2500' });
    assert.equal(c.allowPrivateUrls, true);
    assert.equal(c.webhookTimeoutMs, 2500);
    assert.equal(loadConfig({ ALLOW_PRIVATE_URLS: 'off' }).allowPrivateUrls, false);
  });

  for (const [name, value] of [
    ['ALLOW_PRIVATE_URLS', 'maybe'],
    ['WEBHOOK_TIMEOUT_MS', 'soon'],
    ['WEBHOOK_TIMEOUT_MS', '10'],
    ['WEBHOOK_TIMEOUT_MS', '999999999'],
  ] as const) {
    it(`rejects ${name}=${JSON.stringify(value)} naming the variable`, () => {
      const problems = problemsOf({ [name]: value });
      assert.equal(problems.length, 1, problems.join('; '));
      assert.ok(problems[0]!.startsWith(name), problems[0]);
    });
  }
});

describe('loadConfig: SMPP carrier', () => {
  it('uses the simulator by default, with SMPP defaults that need no URL', () => {
    const c = loadConfig({});
    assert.equal(c.sms.carrier, 'simulator');
    assert.equal(c.sms.smppUrl, undefined);
    assert.equal(c.sms.smppEnquireLinkMs, 30_000);
    assert.equal(c.sms.smppWindow, 10);
    assert.equal(c.sms.smppThroughput, 50);
    assert.equal(c.sms.defaultValidityMinutes, 2880);
    assert.equal(c.sms.smppResponseTimeoutMs, 10_000);
    assert.equal(c.sms.smppReceiptIdFormat, 'same');
    assert.equal(loadConfig({ SMS_DEFAULT_VALIDITY_MINUTES: '60' }).sms.defaultValidityMinutes, 60);
  });

  it('reads SMS_CARRIER=smpp with SMPP_URL and the session settings', () => {
    const c = loadConfig({
      SMS_CARRIER: 'smpp',
      SMPP_URL: 'smpp://loyalty:s3cret@smsc.example.com:2775',
      SMPP_ENQUIRE_LINK_MS: '15000',
      SMPP_WINDOW: '4',
      SMPP_THROUGHPUT: '25',
      SMPP_RECEIPT_ID_FORMAT: 'decimal',
    });
    assert.equal(c.sms.carrier, 'smpp');
    assert.equal(c.sms.smppUrl, 'smpp://loyalty:s3cret@smsc.example.com:2775');
    assert.equal(c.sms.smppEnquireLinkMs, 15_000);
    assert.equal(c.sms.smppWindow, 4);
    assert.equal(c.sms.smppThroughput, 25);
    assert.equal(c.sms.smppReceiptIdFormat, 'decimal');
    assert.equal(loadConfig({ SMPP_RECEIPT_ID_FORMAT: 'hex' }).sms.smppReceiptIdFormat, 'hex');
  });

  it('needs SMPP_URL when SMS_CARRIER=smpp', () => {
    assert.deepEqual(problemsOf({ SMS_CARRIER: 'smpp' }), [
      'SMPP_URL is required when SMS_CARRIER=smpp (smpp://system_id:password@host:port)',
    ]);
  });

  for (const value of ['http://id:pw@smsc:2775', 'smpp://smsc.example.com:2775', 'smpp://id@smsc.example.com:2775', 'not a url']) {
    it(`rejects SMPP_URL=${JSON.stringify(value)} without echoing it`, () => {
      const problems = problemsOf({ SMS_CARRIER: 'smpp', SMPP_URL: value });
      assert.equal(problems.length, 1, problems.join('; '));
      assert.ok(problems[0]!.startsWith('SMPP_URL'), problems[0]);
    });
  }

  it('does not echo the SMPP password', () => {
    const problems = problemsOf({ SMPP_URL: 'http://id:hunter2@smsc:2775' });
    assert.doesNotMatch(problems.join('\n'), /hunter2/);
  });

  for (const [name, value] of [
    ['SMPP_ENQUIRE_LINK_MS', '10'],
    ['SMPP_WINDOW', '0'],
    ['SMPP_THROUGHPUT', 'fast'],
    ['SMS_DEFAULT_VALIDITY_MINUTES', '0'],
    ['SMS_DEFAULT_VALIDITY_MINUTES', '10081'],
    ['SMPP_RESPONSE_TIMEOUT_MS', '50'],
    ['SMPP_RECEIPT_ID_FORMAT', 'auto'],
  ] as const) {
    it(`rejects ${name}=${JSON.stringify(value)} naming the variable`, () => {
      const problems = problemsOf({ [name]: value });
      assert.equal(problems.length, 1, problems.join('; '));
      assert.ok(problems[0]!.startsWith(name), problems[0]);
    });
  }

  it('runs the built-in realtime server by default, with credentials left to the database', () => {
    const { realtime } = loadConfig({});
    assert.equal(realtime.driver, 'builtin');
    assert.deepEqual(realtime.app, { id: undefined, key: undefined, secret: undefined });
    assert.equal(realtime.external, undefined);
    assert.deepEqual(realtime.allowedOrigins, []);
    assert.equal(realtime.activityTimeoutSeconds, 30);
    assert.equal(realtime.pongTimeoutSeconds, 30);
    assert.deepEqual(realtime.limits, {
      maxChannelsPerConnection: 100,
      maxConnectionsPerIp: 1000,
      maxConnections: 50_000,
      maxSubscribesPerSecond: 20,
      maxFrameBytes: 10_240,
    });
    assert.equal(realtime.publicHost, undefined);
  });

  it('reads the realtime settings', () => {
    const { realtime } = loadConfig({
      REALTIME_APP_ID: '123',
      REALTIME_APP_KEY: 'abcdef0123456789',
      REALTIME_APP_SECRET: 's'.repeat(20),
      REALTIME_ALLOWED_ORIGINS: 'https://shop.example.com, http://localhost:8080/',
      REALTIME_PUBLIC_HOST: 'ws.example.com',
      REALTIME_PUBLIC_PORT: '443',
      REALTIME_PUBLIC_SCHEME: 'https',
      REALTIME_ACTIVITY_TIMEOUT: '120',
      REALTIME_PONG_TIMEOUT: '10',
      REALTIME_MAX_CHANNELS_PER_CONNECTION: '5',
      REALTIME_MAX_CONNECTIONS_PER_IP: '0',
      REALTIME_MAX_CONNECTIONS: '200000',
      REALTIME_MAX_SUBSCRIBES_PER_SECOND: '50',
      REALTIME_MAX_FRAME_BYTES: '4096',
    });
    assert.deepEqual(realtime.app, { id: '123', key: 'abcdef0123456789', secret: 's'.repeat(20) });
    assert.deepEqual(realtime.allowedOrigins, ['https://shop.example.com', 'http://localhost:8080']);
    assert.deepEqual([realtime.publicHost, realtime.publicPort, realtime.publicScheme], ['ws.example.com', 443, 'https']);
    assert.deepEqual([realtime.activityTimeoutSeconds, realtime.pongTimeoutSeconds], [120, 10]);
    assert.deepEqual(realtime.limits, {
      maxChannelsPerConnection: 5,
      maxConnectionsPerIp: 0,
      maxConnections: 200_000,
      maxSubscribesPerSecond: 50,
      maxFrameBytes: 4096,
    });
  });

  it('reads REALTIME_DRIVER=external with REALTIME_EXTERNAL_URL', () => {
    const { realtime } = loadConfig({ REALTIME_DRIVER: 'external', REALTIME_EXTERNAL_URL: 'https://k3y:s%2Fcret@api-eu.pusher.com/apps/42' });
    assert.deepEqual(realtime.external, { appId: '42', key: 'k3y', secret: 's/cret', host: 'api-eu.pusher.com', port: 443, scheme: 'https' });
    const plain = loadConfig({ REALTIME_DRIVER: 'external', REALTIME_EXTERNAL_URL: 'http://k:s@127.0.0.1:6001/apps/app-1/' }).realtime.external;
    assert.deepEqual([plain?.port, plain?.scheme, plain?.appId], [6001, 'http', 'app-1']);
  });

  it('refuses bad realtime settings, naming the variable and not echoing secrets', () => {
    assert.deepEqual(problemsOf({ REALTIME_DRIVER: 'external' }), [
      'REALTIME_EXTERNAL_URL is required when REALTIME_DRIVER=external (http(s)://KEY:SECRET@host:port/apps/APP_ID)',
    ]);
    for (const url of ['ws://k:s@h/apps/1', 'http://h:1/apps/1', 'http://k:hunter2@h/app/1', 'nope']) {
      const problems = problemsOf({ REALTIME_DRIVER: 'external', REALTIME_EXTERNAL_URL: url });
      assert.equal(problems.length, 1, url);
      assert.ok(problems[0]!.startsWith('REALTIME_EXTERNAL_URL'), problems[0]);
      assert.doesNotMatch(problems[0]!, /hunter2/);
    }
    const cases: Array<[Record<string, string>, string]> = [
      [{ REALTIME_DRIVER: 'pusher' }, 'REALTIME_DRIVER'],
      [{ REALTIME_APP_KEY: 'abcdef0123456789' }, 'REALTIME_APP_KEY and REALTIME_APP_SECRET'],
      [{ REALTIME_APP_KEY: 'has/slash', REALTIME_APP_SECRET: 's'.repeat(20) }, 'REALTIME_APP_KEY'],
      [{ REALTIME_APP_KEY: 'abcdef0123456789', REALTIME_APP_SECRET: 'short' }, 'REALTIME_APP_SECRET'],
      [{ REALTIME_APP_ID: 'a b' }, 'REALTIME_APP_ID'],
      [{ REALTIME_ALLOWED_ORIGINS: 'https://ok.example.com,shop.example.com' }, 'REALTIME_ALLOWED_ORIGINS'],
      [{ REALTIME_ALLOWED_ORIGINS: 'https://shop.example.com/path' }, 'REALTIME_ALLOWED_ORIGINS'],
      [{ REALTIME_PUBLIC_HOST: 'https://ws.example.com' }, 'REALTIME_PUBLIC_HOST'],
      [{ REALTIME_PUBLIC_PORT: '0' }, 'REALTIME_PUBLIC_PORT'],
      [{ REALTIME_PUBLIC_SCHEME: 'wss' }, 'REALTIME_PUBLIC_SCHEME'],
      [{ REALTIME_ACTIVITY_TIMEOUT: '0' }, 'REALTIME_ACTIVITY_TIMEOUT'],
      [{ REALTIME_PONG_TIMEOUT: 'soon' }, 'REALTIME_PONG_TIMEOUT'],
      [{ REALTIME_MAX_CHANNELS_PER_CONNECTION: '0' }, 'REALTIME_MAX_CHANNELS_PER_CONNECTION'],
      [{ REALTIME_MAX_CONNECTIONS_PER_IP: '-1' }, 'REALTIME_MAX_CONNECTIONS_PER_IP'],
      [{ REALTIME_MAX_CONNECTIONS: '0' }, 'REALTIME_MAX_CONNECTIONS'],
      [{ REALTIME_MAX_SUBSCRIBES_PER_SECOND: 'many' }, 'REALTIME_MAX_SUBSCRIBES_PER_SECOND'],
      // Up to 512 KiB: `ws` itself closes on frames over 1 MiB before the server could answer 4301.
      [{ REALTIME_MAX_FRAME_BYTES: String(2 * 1024 * 1024) }, 'REALTIME_MAX_FRAME_BYTES'],
      [{ REALTIME_MAX_FRAME_BYTES: '100' }, 'REALTIME_MAX_FRAME_BYTES'],
    ];
    for (const [env, name] of cases) {
      const problems = problemsOf(env);
      assert.equal(problems.length, 1, `${JSON.stringify(env)}: ${problems.join('; ')}`);
      assert.ok(problems[0]!.startsWith(name), problems[0]);
    }
    assert.doesNotMatch(problemsOf({ REALTIME_APP_KEY: 'abcdef0123456789', REALTIME_APP_SECRET: 'short' }).join('\n'), /short/);
  });
});

describe('loadConfig: TRUST_PROXY, sign-in lock, METRICS_TOKEN', () => {
  it('trusts no proxy by default, locks an e-mail after 10 wrong passwords for 15 minutes, leaves /metrics open', () => {
    const c = loadConfig({});
    assert.equal(c.trustProxy, false);
    assert.deepEqual(c.rateLimit.signInLock, { attempts: 10, minutes: 15 });
    assert.equal(c.metricsToken, undefined);
  });

  it('reads TRUST_PROXY as no proxy, a hop count or a list of proxy addresses', () => {
    for (const off of ['false', 'FALSE', '0', 'off', '']) assert.equal(loadConfig({ TRUST_PROXY: off }).trustProxy, false, off);
    assert.equal(loadConfig({ TRUST_PROXY: '1' }).trustProxy, 1);
    assert.equal(loadConfig({ TRUST_PROXY: '3' }).trustProxy, 3);
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.168.1.10,fd00::/8 ,::1' }).trustProxy, [
      '10.0.0.0/8',
      '192.168.1.10',
      'fd00::/8',
      '::1',
    ]);
    assert.deepEqual(loadConfig({ TRUST_PROXY: 'loopback,linklocal,uniquelocal' }).trustProxy, ['loopback', 'linklocal', 'uniquelocal']);
    assert.deepEqual(loadConfig({ TRUST_PROXY: '172.16.0.0/255.240.0.0' }).trustProxy, ['172.16.0.0/255.240.0.0']);
  });

  it('refuses TRUST_PROXY=true in any case, saying why and what to give instead', () => {
    for (const value of ['true', 'TRUE', 'True', 'yes', 'on']) {
      const problems = problemsOf({ TRUST_PROXY: value });
      assert.equal(problems.length, 1, problems.join('; '));
      assert.match(problems[0]!, /^TRUST_PROXY=\w+ is refused: .*client choose its own address.*X-Forwarded-For.*number of proxy hops.*addresses\/CIDRs/);
    }
  });

  for (const value of ['proxy.example.com', '10.0.0.1,,10.0.0.2', '10.0.0.256', '10.0.0.0/8/8', '::1/129', '10.0.0.0/255.0.255.0', 'fd00::/ffff::', '-1', '1.5']) {
    it(`refuses the proxy list ${JSON.stringify(value)}, naming the bad entry`, () => {
      const problems = problemsOf({ TRUST_PROXY: value });
      assert.equal(problems.length, 1, problems.join('; '));
      assert.match(problems[0]!, /^TRUST_PROXY must be a hop count or a comma-separated list of proxy addresses/);
      assert.match(problems[0]!, /\(bad entry "[^"]*"\)$/);
    });
  }

  it('reads SIGNIN_LOCK_ATTEMPTS, SIGNIN_LOCK_MINUTES and METRICS_TOKEN', () => {
    const c = loadConfig({ SIGNIN_LOCK_ATTEMPTS: '5', SIGNIN_LOCK_MINUTES: '60', METRICS_TOKEN: 'm'.repeat(16) });
    assert.deepEqual(c.rateLimit.signInLock, { attempts: 5, minutes: 60 });
    assert.equal(c.metricsToken, 'm'.repeat(16));
  });

  it('does not echo a bad METRICS_TOKEN', () => {
    assert.doesNotMatch(problemsOf({ METRICS_TOKEN: 'hunter2' }).join('\n'), /hunter2/);
  });
});
