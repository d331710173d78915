// The typed client (web/src/api/loyalty-api.d.ts) is generated from the OpenAPI document of
// the app as built in this process; it must be what `npm run client:generate` writes now,
// so a changed route fails here before it breaks the console or an integrator.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { before, describe, it } from 'node:test';
import { CLIENT_TYPES_FILE, clientTypesSource } from '../scripts/api-client.js';

describe('generated API client', () => {
  let fresh: string;
  before(async () => {
    fresh = await clientTypesSource();
  });

  it('is up to date with the API (run `npm run client:generate` if not)', async () => {
    const committed = await readFile(CLIENT_TYPES_FILE, 'utf8');
    if (committed !== fresh) {
      const a = committed.split('\n');
      const b = fresh.split('\n');
      const line = a.findIndex((l, i) => l !== b[i]);
      assert.fail(`web/src/api/loyalty-api.d.ts is stale from line ${line + 1}:\n- ${a[line]}\n+ ${b[line]}\nRun \`npm run client:generate\`.`);
    }
  });

  it('types the API’s operations', () => {
    const source = fresh;
    for (const path of ['"/{locale}/partners/api-keys"', '"/{locale}/shop/transactions/create"', '"/{locale}/admin/partners/stats"']) {
      assert.ok(source.includes(path), path);
    }
  });
});
