// Two nodes on one PostgreSQL database: a token signed out, or made stale by a password change,
// on node 1 is refused by node 2, which checks tokens from memory (no query per request) and
// learns of revocations through PostgreSQL NOTIFY when they commit.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { createPartner } from './helpers/fixtures.js';
import { bearer, request, type Response } from './helpers/http.js';

// As in revoke-across-nodes: the notification arrives asynchronously after the commit.
const PROPAGATION_MS = 500;

describe('token revocation across nodes', () => {
  let db: TestDatabase;
  let node1: TestApp;
  let node2: TestApp;

  before(async () => {
    db = await createTestDatabase();
    const shared = { JWT_SECRET: randomBytes(32).toString('hex') };
    node1 = await startTestApp(shared, db);
    node2 = await startTestApp(shared, db);
  });
  after(async () => {
    await node1?.close();
    await node2?.close();
    await db?.drop();
  });

  const me = (node: TestApp, token: string) => request(node.url, 'GET', '/en/partners/auth/me', { headers: bearer(token) });

  /** Calls `node` with `token` until it is refused or the propagation window has passed. */
  async function untilRefused(node: TestApp, token: string): Promise<Response> {
    const deadline = Date.now() + PROPAGATION_MS;
    for (;;) {
      const res = await me(node, token);
      if (res.status !== 200 || Date.now() >= deadline) return res;
      await sleep(20);
    }
  }

  const login = async (node: TestApp, email: string, password: string): Promise<string> => {
    const res = await request(node.url, 'POST', '/en/partners/auth/login', { json: { email, password } });
    assert.equal(res.status, 200, res.text);
    return res.body.data.token;
  };

  it('runs on PostgreSQL with two apps on one database', () => {
    assert.equal(node1.app.context.database.kind, 'postgres');
    assert.equal(node2.app.context.database.kind, 'postgres');
  });

  it('a token signed out on node 1 is refused on node 2; the account\'s other token is not', async () => {
    const p = await createPartner(node1);
    const token = await login(node1, p.email, p.password);
    const other = await login(node2, p.email, p.password);
    assert.equal((await me(node2, token)).status, 200);

    assert.equal((await request(node1.url, 'POST', '/en/partners/auth/logout', { headers: bearer(token) })).status, 200);
    assert.equal((await me(node1, token)).status, 401, 'refused at once where it was signed out');
    const onNode2 = await untilRefused(node2, token);
    assert.equal(onNode2.status, 401, `node 2 still accepts the token ${PROPAGATION_MS} ms after the sign-out`);
    assert.equal(onNode2.body.code, 'INVALID_CREDENTIALS');
    assert.equal((await me(node2, other)).status, 200);
    assert.equal((await me(node1, other)).status, 200);
  });

  it('a password change on node 2 revokes the older tokens on node 1', async () => {
    const p = await createPartner(node1);
    const older = await login(node1, p.email, p.password);
    assert.equal((await me(node1, older)).status, 200);
    const changed = await request(node2.url, 'POST', '/en/partners/auth/password', {
      headers: bearer(older),
      json: { current_password: p.password, new_password: 'a-new-password-9' },
    });
    assert.equal(changed.status, 200, changed.text);
    const onNode1 = await untilRefused(node1, older);
    assert.equal(onNode1.status, 401, `node 1 still accepts the older token ${PROPAGATION_MS} ms after the change`);
    assert.equal((await me(node1, p.token)).status, 401);
    assert.equal((await me(node1, changed.body.data.token)).status, 200, 'the token the change handed out works on both');
    assert.equal((await me(node2, changed.body.data.token)).status, 200);
  });

  it('a node started after a revocation reads it from the database', async () => {
    const p = await createPartner(node1);
    const token = await login(node1, p.email, p.password);
    assert.equal((await request(node1.url, 'POST', '/en/partners/auth/logout', { headers: bearer(token) })).status, 200);
    const node3 = await startTestApp({ JWT_SECRET: node1.config.jwtSecret }, db);
    try {
      const res = await me(node3, token);
      assert.equal(res.status, 401);
      assert.equal(res.body.code, 'INVALID_CREDENTIALS');
      assert.equal((await me(node3, p.token)).status, 200);
    } finally {
      await node3.close();
    }
  });
});
