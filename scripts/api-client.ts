// The typed API client's source: the OpenAPI document of the app built in-process on an
// in-memory PGlite (no server, no network), turned into TypeScript by openapi-typescript.
// `npm run client:generate` writes it to web/src/api/loyalty-api.d.ts (committed: the console
// and integrators use it); test/api-client.test.ts fails when the committed file is stale.
import { randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { VERSION } from '../src/version.js';
import { createTestDatabase } from '../test/helpers/database.js';

// From the real package.json, so that the tests' transpiled copy (.test-build/, where
// package.json is a link) reads and writes the committed file.
const ROOT = path.dirname(realpathSync(path.resolve(import.meta.dirname, '../package.json')));
export const CLIENT_TYPES_FILE = path.join(ROOT, 'web/src/api/loyalty-api.d.ts');

/** The OpenAPI document as /openapi.json serves it, from an app built in this process. */
export async function openapiDocument(): Promise<Record<string, unknown>> {
  // Always the embedded store: the document does not depend on it.
  const db = await createTestDatabase('');
  const config = loadConfig(
    { NODE_ENV: 'test', LOG_LEVEL: 'silent', LOYALTY_DEMO_SEED: 'false', JWT_SECRET: randomBytes(32).toString('hex') },
    VERSION,
  );
  const app = await buildApp(config, { database: db.database, workers: false });
  try {
    return app.fastify.swagger() as unknown as Record<string, unknown>;
  } finally {
    await app.fastify.close();
    await db.drop();
  }
}

export async function clientTypesSource(): Promise<string> {
  const doc = await openapiDocument();
  // The version changes with every release; the types do not depend on it.
  const info = { ...(doc.info as Record<string, unknown>), version: '—' };
  const ast = await openapiTS({ ...doc, info } as never, { alphabetize: false });
  return `${COMMENT_HEADER.replace(
    'Do not make direct changes to the file.',
    'Do not make direct changes to the file: run `npm run client:generate`.\n * Types of the Loyalty API (/openapi.json), for openapi-fetch — see docs/client.md.',
  )}${astToString(ast)}`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const source = await clientTypesSource();
  await writeFile(CLIENT_TYPES_FILE, source);
  process.stdout.write(`wrote ${path.relative(process.cwd(), CLIENT_TYPES_FILE)} (${source.length} characters)\n`);
}
