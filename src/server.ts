// Process entry: config → app → listen → (demo seed) → banner; graceful SIGTERM.
// With WEB_CONCURRENCY=N above 1 this process is a supervisor (src/cluster.ts) and N workers
// run the service, sharing the port.
import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { buildApp } from './app.js';
import { announceReady, onOtherWorkersSmsQueued, roleOfThisProcess, runSupervisor, tellJobsWorkerSmsQueued } from './cluster.js';
import { baseUrlOf, ConfigError, loadConfig, type Config } from './config.js';
import { warmPending } from './infra/schema-compilers.js';
import { loadDemoCredentials, saveDemoCredentials } from './modules/demo/demo-credentials-file.js';
import type { DemoCredentials } from './modules/demo/demo.service.js';
import { VERSION } from './version.js';

function loadOrExit(): Config {
  try {
    return loadConfig(process.env, VERSION);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

/** Seed an empty database, or reprint what an earlier seed saved. */
async function demoCredentials(config: Config, seed: () => Promise<DemoCredentials | undefined>) {
  const fresh = await seed();
  if (fresh) {
    await saveDemoCredentials(config, fresh);
    return fresh;
  }
  return loadDemoCredentials(config);
}

function banner(baseUrl: string, config: Config, demo: DemoCredentials | undefined): string {
  const store = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `embedded PGlite in ${path.join(config.dataDir, 'pgdata')}`;
  const lines = [
    '',
    `Loyalty ${config.version} is listening on ${baseUrl}`,
    `  API docs:      ${baseUrl}/docs   (OpenAPI: ${baseUrl}/openapi.json)`,
    `  Dashboard:     ${baseUrl}/dashboard/   (admins: ${baseUrl}/dashboard/admin/)`,
    `  Store:         ${store}; Redis: ${config.redisUrl ? 'on' : 'off (in-process limits)'}`,
  ];
  if (demo) {
    lines.push(
      '',
      'Demo data (embedded defaults — do not use in production):',
      `  Admin:         ${demo.admin.email}${demo.admin.password ? ` / ${demo.admin.password}` : ' (password from LOYALTY_ADMIN_PASSWORD)'}`,
      `  Partner:       ${demo.partner.email} / ${demo.partner.password}  (partner id ${demo.partner.id}) — sign in at ${baseUrl}/dashboard/`,
      `  API key:       ${demo.api_key.key}`,
      `  API secret:    ${demo.api_key.secret}`,
      `  Shop:          #${demo.shop.id} ${demo.shop.name}; partner card programme #${demo.partner_card.id}`,
      `  SMS:           sender "${demo.sms.sender}" approved, balance ${demo.sms.balance_eur} EUR`,
    );
    if (demo.test_customer) lines.push(`  Test customer: ${demo.test_customer.phone} (OTP code ${demo.test_customer.otp_code})`);
    if (demo.offer) lines.push(`  Offer:         #${demo.offer.id} ${demo.offer.title}`);
    if (demo.game) lines.push(`  Game:          #${demo.game.id} ${demo.game.name}`);
    if (demo.coupon) lines.push(`  Coupon:        ${demo.coupon.code} (id ${demo.coupon.id}), held by ${demo.coupon.customer_phone}`);
    lines.push(
      '',
      'Try it:',
      `  curl -X POST ${baseUrl}/en/shop/validate-credentials \\`,
      `    -H "X-API-Key: ${demo.api_key.key}" \\`,
      `    -H "X-API-Secret: ${demo.api_key.secret}"`,
    );
  }
  lines.push('');
  return lines.join('\n');
}

async function main() {
  const config = loadOrExit();
  if (config.webConcurrency > 1 && cluster.isPrimary) return runSupervisor(config);
  // In a cluster one worker runs the background jobs; the others only serve (src/cluster.ts).
  const role = roleOfThisProcess();
  const { fastify, context } = await buildApp(config, role === 'requests' ? { workers: false, smsQueued: tellJobsWorkerSmsQueued } : {});
  if (role === 'jobs') onOtherWorkersSmsQueued(() => context.workers.smsDispatcher.wake());

  let closing = false;
  const shutdown = (signal: string, exitCode = 0) => {
    if (closing) return;
    closing = true;
    fastify.log.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    const force = setTimeout(() => {
      fastify.log.error('graceful shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    force.unref();
    fastify.close().then(
      () => process.exit(exitCode),
      (err: unknown) => {
        fastify.log.error({ err }, 'error while closing');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  // A worker whose supervisor is gone stops too, rather than serve on unsupervised.
  if (cluster.isWorker) process.once('disconnect', () => shutdown('disconnect'));

  let port: number;
  let demo: DemoCredentials | undefined;
  try {
    await fastify.listen({ host: config.host, port: config.port });
    port = (fastify.server.address() as AddressInfo).port;
    demo = config.demoSeed ? await demoCredentials(config, () => context.services.demo.seedIfEmpty()) : undefined;
  } catch (err) {
    // E.g. the port is taken: close the stores (and release the data directory) before exiting.
    await fastify.close().catch(() => undefined);
    throw err;
  }
  // Validators and serializers are compiled on first use (infra/schema-compilers.ts); compile
  // the rest now, between requests, so that no route pays it and a broken schema stops the node.
  // Not under NODE_ENV=test: the test suite starts servers by the dozen and calls a few routes
  // of each (test/openapi.test.ts compiles every route's schemas once).
  if (config.env !== 'test') warmPending(
    (err) => {
      fastify.log.error({ err }, 'a route schema does not compile');
      shutdown('schema', 1);
    },
    (compiled) => fastify.log.debug({ compiled }, 'route schemas compiled'),
  );
  const text = `${banner(baseUrlOf(config, port), config, demo)}\n`;
  // A worker hands its banner to the supervisor, which prints one for all.
  if (cluster.isWorker) announceReady(text);
  else process.stdout.write(text);
}

main().catch((err: unknown) => {
  process.stderr.write(`Loyalty failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
