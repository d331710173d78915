// Start the real application on a random port for a test file, over real HTTP.
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { buildApp, type App, type BuildOptions } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createTestDatabase, type TestDatabase } from './database.js';

export interface TestApp {
  url: string;
  app: App;
  config: Config;
  db: TestDatabase;
  close(): Promise<void>;
}

export type Env = Record<string, string | undefined>;

/** The environment a test app starts with; `overrides` win. Rate limits are off unless a test turns them on. */
export function testEnv(overrides: Env = {}): Env {
  return {
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    REDIS_URL: process.env.REDIS_URL,
    REDIS_KEY_PREFIX: `t${randomBytes(4).toString('hex')}:`,
    RATE_LIMIT_DISABLED: 'true',
    JWT_SECRET: randomBytes(32).toString('hex'),
    LOYALTY_DEMO_SEED: 'false',
    ...overrides,
  };
}

export async function startTestApp(
  overrides: Env = {},
  db?: TestDatabase,
  build: Omit<BuildOptions, 'database'> = {},
): Promise<TestApp> {
  const database = db ?? (await createTestDatabase());
  const config = loadConfig(testEnv(overrides), '0.0.0-test');
  const app = await buildApp(config, { ...build, database: database.database });
  await app.fastify.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.fastify.server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    app,
    config,
    db: database,
    close: async () => {
      await app.fastify.close();
      if (!db) await database.drop();
    },
  };
}
