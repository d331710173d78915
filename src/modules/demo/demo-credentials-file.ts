// On the embedded store the demo credentials are kept beside the data (mode 0600) so that a
// restart — or `npm start` after `loyalty demo seed` — can print them again: the secret is
// otherwise stored only hashed. Nothing is written for a PostgreSQL database.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../config.js';
import type { DemoCredentials } from './demo.service.js';

const fileOf = (config: Config) => path.join(config.dataDir, 'demo-credentials.json');

export async function saveDemoCredentials(config: Config, credentials: DemoCredentials): Promise<void> {
  if (config.databaseUrl) return;
  await writeFile(fileOf(config), JSON.stringify(credentials, null, 2), { mode: 0o600 });
}

export async function loadDemoCredentials(config: Config): Promise<DemoCredentials | undefined> {
  const file = fileOf(config);
  if (config.databaseUrl || !existsSync(file)) return undefined;
  return JSON.parse(await readFile(file, 'utf8')) as DemoCredentials;
}
