// The `loyalty` CLI as an operator runs it: a child process, one JSON document on stdout,
// exit 0 on success, 1 on failure, 2 on a usage error. Runs against a fresh embedded data
// directory, or a fresh PostgreSQL database when DATABASE_URL is set.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildApp, type App } from '../src/app.js';
import { openDatabase } from '../src/infra/db/index.js';
import { sql } from 'drizzle-orm';
import { loadConfig } from '../src/config.js';
import type { DemoCredentials } from '../src/modules/demo/demo.service.js';
import { testEnv, type Env } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { nodeEntry } from './helpers/entry.js';
import { apiHeaders, request } from './helpers/http.js';

/** What the commands print (one document; fields by command). */
interface CliDoc {
  ok: boolean;
  error?: string;
  usage?: string;
  problems?: string[];
  migrated?: boolean;
  created?: boolean;
  admin?: { id: number; email: string; name: string; created_at: string };
  seeded?: boolean;
  credentials?: DemoCredentials;
  cards?: number;
  transactions?: number;
  differences?: Array<{ check: string; card_id?: number; expected: number; actual: number }>;
}

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  json: CliDoc;
}


function runCli(args: string[], env: Env, input?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeEntry('src/cli/index.ts'), ...args], {
      env: env as NodeJS.ProcessEnv,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      let json: CliDoc;
      try {
        // The whole of stdout is one JSON document: no log line may be mixed in.
        json = JSON.parse(stdout);
      } catch {
        reject(new Error(`stdout of "loyalty ${args.join(' ')}" is not one JSON document:\n${stdout}\nstderr:\n${stderr}`));
        return;
      }
      resolve({ code, stdout, stderr, json });
    });
    child.stdin.end(input ?? '');
  });
}

describe('loyalty CLI', () => {
  let dataDir: string;
  let db: TestDatabase | undefined;
  let env: Env;

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'loyalty-cli-'));
    const childEnv: Env = { ...process.env, NODE_ENV: 'test', LOYALTY_DATA_DIR: dataDir };
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'LOYALTY_ADMIN_EMAIL', 'LOYALTY_ADMIN_PASSWORD', 'LOYALTY_DEMO_SEED']) delete childEnv[name];
    if (process.env.DATABASE_URL) {
      db = await createTestDatabase();
      childEnv.DATABASE_URL = db.url;
    }
    env = childEnv;
  });
  after(async () => {
    await db?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const run = (args: string[], input?: string, extraEnv: Env = {}) => runCli(args, { ...env, ...extraEnv }, input);

  describe('usage errors (no store needed)', { concurrency: true }, () => {
    it('prints usage as JSON with no command or --help', async () => {
      const results = await Promise.all([run([]), run(['--help'])]);
      for (const r of results) {
        assert.equal(r.code, 0);
        assert.equal(r.json.ok, true);
        assert.match(r.json.usage ?? '', /migrate/);
      }
    });

    it('answers an unknown command or option with exit 2 and JSON', async () => {
      const [unknown, option] = await Promise.all([run(['frobnicate']), run(['migrate', '--bogus'])]);
      assert.equal(unknown.code, 2);
      assert.equal(unknown.json.ok, false);
      assert.match(unknown.json.error ?? '', /unknown command "frobnicate"/);
      assert.match(unknown.json.usage ?? '', /admin create/);

      assert.equal(option.code, 2);
      assert.equal(option.json.ok, false);
    });

    it('refuses a short password or a bad e-mail with exit 2, before touching the store', async () => {
      const [short, noEmail, badEmail] = await Promise.all([
        run(['admin', 'create', '--email', 'a@b.c', '--password', 'short']),
        run(['admin', 'create', '--password', 'longenough1']),
        run(['admin', 'create', '--email', 'not-an-email', '--password', 'longenough1']),
      ]);
      assert.equal(short.code, 2);
      assert.equal(short.json.ok, false);
      assert.match(short.json.error ?? '', /10 characters/);
      assert.equal(noEmail.code, 2);
      assert.equal(badEmail.code, 2);
      // Nothing was created: the store was never opened.
      assert.deepEqual(await readdir(dataDir), []);
    });

    it('reports a bad configuration with exit 1, naming the variable', async () => {
      const r = await run(['migrate'], undefined, { DATABASE_URL: 'mysql://x' });
      assert.equal(r.code, 1);
      assert.equal(r.json.ok, false);
      assert.match((r.json.problems ?? []).join('\n'), /DATABASE_URL/);
    });
  });

  describe('with a store', () => {

    it('migrate → {ok: true, migrated: true}', async () => {
      const r = await run(['migrate']);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(r.json, { ok: true, migrated: true });
    });

    it('admin create makes an admin once; the second time is exit 1', async () => {
      const r = await run(['admin', 'create', '--email', 'a@b.c', '--password', 'longenough1', '--name', 'Ops']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.json.ok, true);
      assert.equal(r.json.created, true);
      assert.ok(r.json.admin);
      assert.equal(typeof r.json.admin.id, 'number');
      assert.equal(r.json.admin.email, 'a@b.c');
      assert.equal(r.json.admin.name, 'Ops');
      assert.ok(!Number.isNaN(Date.parse(r.json.admin.created_at)));
      assert.doesNotMatch(r.stdout, /longenough1|argon|password/i);

      const again = await run(['admin', 'create', '--email', 'a@b.c', '--password', 'longenough1']);
      assert.equal(again.code, 1);
      assert.equal(again.json.ok, false);
      assert.match(again.json.error ?? '', /already exists/);
    });

    it('admin create --password-stdin reads the password from standard input', async () => {
      const r = await run(['admin', 'create', '--email', 'stdin@b.c', '--password-stdin'], 'from-stdin-pass\n');
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.json.created, true);
      assert.equal(r.json.admin?.email, 'stdin@b.c');

      const empty = await run(['admin', 'create', '--email', 'empty@b.c', '--password-stdin'], '');
      assert.equal(empty.code, 2);
    });

    let seeded: DemoCredentials | undefined;
    it('demo seed fills an empty store once; the second time seeded is false', async () => {
      const r = await run(['demo', 'seed']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.json.ok, true);
      assert.equal(r.json.seeded, true);
      const c = r.json.credentials;
      assert.ok(c);
      assert.match(c.api_key.key, /^lk_/);
      assert.match(c.api_key.secret, /^lsk_/);
      assert.equal(typeof c.partner.id, 'number');
      assert.equal(typeof c.partner.email, 'string');
      assert.equal(typeof c.admin.email, 'string');
      assert.equal(typeof c.shop.id, 'number');
      seeded = c;
      // On the embedded store the credentials are kept for `npm start` to print again.
      const saved = path.join(dataDir, 'demo-credentials.json');
      if (db) {
        assert.equal(existsSync(saved), false, 'nothing is written for PostgreSQL');
      } else {
        assert.deepEqual(JSON.parse(await readFile(saved, 'utf8')).api_key, c.api_key);
        assert.equal((await stat(saved)).mode & 0o777, 0o600);
      }

      const again = await run(['demo', 'seed']);
      assert.equal(again.code, 0);
      assert.equal(again.json.ok, true);
      assert.equal(again.json.seeded, false);
      assert.equal(again.json.credentials, undefined);
    });

    // The service on the store the commands left, for the next two tests: opening the store is
    // the slow part, so they share one start. It must be closed before the next command, which
    // opens the store itself.
    let app: App | undefined;
    const appConfig = () => loadConfig(testEnv({ LOYALTY_DATA_DIR: dataDir, DATABASE_URL: db?.url }), '0.0.0-test');
    after(() => app?.fastify.close());

    it('left a store the service can use: the admins log in and the demo key works', async () => {
      assert.ok(seeded, 'demo seed ran');
      app = await buildApp(appConfig());
      await app.fastify.listen({ host: '127.0.0.1', port: 0 });
      const url = `http://127.0.0.1:${(app.fastify.server.address() as AddressInfo).port}`;
      for (const [email, password] of [
        ['a@b.c', 'longenough1'],
        ['stdin@b.c', 'from-stdin-pass'],
        [seeded.admin.email, seeded.admin.password],
      ]) {
        const login = await request(url, 'POST', '/en/admin/auth/login', { json: { email, password } });
        assert.equal(login.status, 200, `${email}: ${login.text}`);
      }
      const partner = await request(url, 'POST', '/en/partners/auth/login', {
        json: { email: seeded.partner.email, password: seeded.partner.password },
      });
      assert.equal(partner.status, 200);
      const valid = await request(url, 'POST', '/en/shop/validate-credentials', { headers: apiHeaders(seeded.api_key) });
      assert.equal(valid.status, 200);
      assert.equal(valid.body.data.partner.id, seeded.partner.id);
    });

    it('ledger verify passes on a consistent ledger and exits 1 naming the card whose balance was tampered with', async () => {
      assert.ok(seeded, 'demo seed ran');
      assert.ok(app, 'the service started on the store');
      const config = appConfig();
      let cardId: number;
      try {
        const { services, database } = app.context;
        const customer = await services.customers.findOrCreateByPhone(database.db, '+37061111111');
        const card = await database.db.transaction(async (tx) => {
          const created = await services.loyaltyCards.create(tx, customer.id, { partnerCardId: seeded!.partner_card.id });
          assert.ok(created.ok);
          const awarded = await services.awards.awardPurchase(tx, seeded!.partner.id, { cardId: created.value.id, shopId: seeded!.shop.id, amount: 123_4500n });
          assert.ok(awarded.ok);
          return created.value;
        });
        cardId = card.id;
      } finally {
        await app.fastify.close();
        app = undefined;
      }

      const good = await run(['ledger', 'verify']);
      assert.equal(good.code, 0, good.stderr);
      assert.equal(good.json.ok, true);
      // The demo's coupon holder has a card too: its welcome bonus and the coupon's points.
      assert.equal(good.json.cards, 2);
      assert.equal(good.json.transactions, 4);
      assert.deepEqual(good.json.differences, []);

      const store = await openDatabase(config);
      try {
        await store.db.execute(sql`update loyalty_cards set points_balance = points_balance + 7 where id = ${cardId}`);
      } finally {
        await store.close();
      }
      const bad = await run(['ledger', 'verify']);
      assert.equal(bad.code, 1);
      assert.equal(bad.json.ok, false);
      const checks = (bad.json.differences ?? []).map((d) => `${d.check}:${d.card_id}:${d.actual - d.expected}`).sort();
      assert.deepEqual(checks, [`card_vs_lots:${cardId}:7`, `card_vs_transactions:${cardId}:7`]);
    });
  });
});
