// The rate limit holds across nodes (DESIGN.md §1, §3): two server processes sharing one
// PostgreSQL database and one Redis spend one budget per API key, whichever node a request
// reaches. Runs only with REDIS_URL (scripts/test.mjs) and needs DATABASE_URL too: two
// processes cannot share an in-memory PGlite.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { startTestApp, testEnv, type Env } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { nodeEntry } from './helpers/entry.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, request, type Response } from './helpers/http.js';

const LIMIT = 6;
const START_TIMEOUT_MS = 180_000;

interface Node {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/** The server in a child process (test/helpers/entry.ts); resolves once the banner names the port. */
function startNode(env: Env): Promise<Node> {
  const clean: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) clean[k] = v;
  const child = spawn(process.execPath, nodeEntry('src/server.ts'), {
    env: clean,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const output = () => out;
  return new Promise<Node>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start within ${START_TIMEOUT_MS} ms:\n${out}`));
    }, START_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /is listening on http:\/\/localhost:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.off('exit', onExit);
        resolve({ child, url: `http://127.0.0.1:${m[1]}`, output });
      }
    };
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${out}`));
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.once('exit', onExit);
  });
}

async function stopNode(node: Node): Promise<void> {
  const { child } = node;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

function assertLimited(res: Response, where: string) {
  assert.equal(res.status, 429, `${where}: expected 429, got ${res.status} ${res.text}`);
  assert.equal(res.body.success, false);
  assert.equal(res.body.code, 1003);
  assert.match(res.headers.get('retry-after') ?? '', /^[1-9]\d*$/, `${where}: Retry-After`);
  assert.ok(Number(res.headers.get('retry-after')) <= 60);
  assert.equal(res.headers.get('x-ratelimit-limit'), String(LIMIT));
  assert.equal(res.headers.get('x-ratelimit-remaining'), '0');
  assert.match(res.headers.get('x-ratelimit-reset') ?? '', /^[1-9]\d*$/);
}

describe('rate limits shared by two processes through Redis', () => {
  let db: TestDatabase | undefined;
  const nodes: Node[] = [];
  let partner: PartnerFixture;
  let secondKey: { key: string; secret: string };

  before(async () => {
    assert.ok(process.env.REDIS_URL, 'REDIS_URL must be set for this test');
    assert.ok(
      process.env.DATABASE_URL,
      'rate-limit.redis.test.ts needs DATABASE_URL (PostgreSQL) as well as REDIS_URL: two server processes cannot share an embedded PGlite',
    );
    db = await createTestDatabase();
    assert.ok(db.url, 'createTestDatabase() gave no PostgreSQL URL');

    // Accounts through the services of a short-lived in-process app on the same database.
    const setup = await startTestApp({}, db);
    try {
      partner = await createPartner(setup);
      secondKey = await setup.app.context.services.apiKeys.create(partner.id, 'burst key');
    } finally {
      await setup.close();
    }

    const env = testEnv({
      DATABASE_URL: db.url,
      REDIS_URL: process.env.REDIS_URL,
      RATE_LIMIT_DISABLED: 'false',
      RATE_LIMIT_API_PER_MINUTE: String(LIMIT),
      PORT: '0',
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: undefined,
    });
    // Only what node needs from the outside; the rest is the test environment (the same
    // REDIS_KEY_PREFIX and JWT_SECRET for both nodes).
    const base: Env = { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR };
    const started = await Promise.allSettled([startNode({ ...base, ...env }), startNode({ ...base, ...env })]);
    for (const s of started) if (s.status === 'fulfilled') nodes.push(s.value);
    for (const s of started) if (s.status === 'rejected') throw s.reason;
  });

  after(async () => {
    await Promise.all(nodes.map(stopNode));
    await db?.drop();
  });

  it(`lets exactly ${LIMIT} requests through in total, alternating between the nodes`, async () => {
    const [a, b] = nodes as [Node, Node];
    assert.notEqual(a.url, b.url);
    for (let i = 0; i < 12; i++) {
      const node = i % 2 === 0 ? a : b;
      const where = `request ${i + 1} to node ${i % 2 === 0 ? 'A' : 'B'}`;
      const res = await request(node.url, 'POST', '/en/shop/validate-credentials', { headers: apiHeaders(partner.apiKey) });
      if (i < LIMIT) {
        assert.equal(res.status, 200, `${where}: ${res.text}\n${node.output()}`);
        assert.equal(res.body.data.partner.id, partner.id);
        // One counter: each node sees the other's requests.
        assert.equal(res.headers.get('x-ratelimit-limit'), String(LIMIT), where);
        assert.equal(res.headers.get('x-ratelimit-remaining'), String(LIMIT - 1 - i), where);
      } else {
        assertLimited(res, where);
      }
    }
  });

  it(`lets exactly ${LIMIT} of a parallel burst through, split over both nodes`, async () => {
    const [a, b] = nodes as [Node, Node];
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        request((i % 2 === 0 ? a : b).url, 'POST', '/en/shop/validate-credentials', { headers: apiHeaders(secondKey) }),
      ),
    );
    const ok = responses.filter((r) => r.status === 200);
    assert.equal(ok.length, LIMIT, responses.map((r) => r.status).join(' '));
    // Each remaining value is handed out once.
    assert.deepEqual(
      ok.map((r) => Number(r.headers.get('x-ratelimit-remaining'))).sort((x, y) => x - y),
      Array.from({ length: LIMIT }, (_, i) => i),
    );
    responses.filter((r) => r.status !== 200).forEach((r, i) => assertLimited(r, `refused request ${i + 1}`));
  });
});
