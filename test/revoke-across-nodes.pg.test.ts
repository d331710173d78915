// Two nodes on one PostgreSQL database (DESIGN.md §1, §2): revoking an API key on one
// node takes effect on the other, although the other has the key cached.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request, type Response } from './helpers/http.js';

// Node 2 learns of the revoke through PostgreSQL LISTEN/NOTIFY, which is delivered when
// the revoking transaction commits — asynchronously, so the other node may take a moment.
// We poll node 2 for at most this long before asserting; past it, the key is still
// usable on node 2 and the test fails.
const PROPAGATION_MS = 500;

describe('API-key revocation across nodes', () => {
  let db: TestDatabase;
  let node1: TestApp;
  let node2: TestApp;
  let partner: PartnerFixture;

  before(async () => {
    db = await createTestDatabase();
    // The nodes of one deployment share JWT_SECRET, so a partner token works on both.
    const shared = { JWT_SECRET: randomBytes(32).toString('hex') };
    node1 = await startTestApp(shared, db);
    node2 = await startTestApp(shared, db);
    partner = await createPartner(node1);
  });
  after(async () => {
    await node1?.close();
    await node2?.close();
    await db?.drop();
  });

  const validate = (node: TestApp, key: { key: string; secret: string }) =>
    request(node.url, 'POST', '/en/shop/validate-credentials', { headers: apiHeaders(key) });

  /** Calls `node` with `key` until it is refused or the propagation window has passed. */
  async function untilRefused(node: TestApp, key: { key: string; secret: string }): Promise<Response> {
    const deadline = Date.now() + PROPAGATION_MS;
    for (;;) {
      const res = await validate(node, key);
      if (res.status !== 200 || Date.now() >= deadline) return res;
      await sleep(20);
    }
  }

  it('runs on PostgreSQL with two apps on one database', () => {
    assert.equal(node1.app.context.database.kind, 'postgres');
    assert.equal(node2.app.context.database.kind, 'postgres');
    assert.notEqual(node1.url, node2.url);
  });

  it('a key revoked on node 1 is refused on node 2, where it was cached', async () => {
    const issued = await request(node1.url, 'POST', '/en/partners/api-keys', { headers: bearer(partner.token), json: { name: 'Till' } });
    assert.equal(issued.status, 201);
    const key = issued.body.data as { id: number; key: string; secret: string };
    const other = partner.apiKey;

    // Warm node 2's cache for both keys.
    for (const k of [key, other]) {
      assert.equal((await validate(node2, k)).status, 200);
      assert.equal((await validate(node2, k)).status, 200);
    }

    const revoked = await request(node1.url, 'DELETE', `/en/partners/api-keys/${key.id}`, { headers: bearer(partner.token) });
    assert.equal(revoked.status, 200);

    // Node 1 refuses it at once.
    const onNode1 = await validate(node1, key);
    assert.equal(onNode1.status, 401);
    assert.equal(onNode1.body.code, 1001);

    const onNode2 = await untilRefused(node2, key);
    assert.equal(onNode2.status, 401, `node 2 still accepts the key ${PROPAGATION_MS} ms after the revoke`);
    assert.equal(onNode2.body.code, 1001);
    // And it stays refused.
    const again = await validate(node2, key);
    assert.equal(again.status, 401);
    assert.equal(again.body.code, 1001);

    // Only that key: the partner's other key keeps working on both nodes.
    assert.equal((await validate(node2, other)).status, 200);
    assert.equal((await validate(node1, other)).status, 200);
  });

  it('works the other way round too: revoked on node 2, refused on node 1', async () => {
    const issued = await request(node2.url, 'POST', '/en/partners/api-keys', { headers: bearer(partner.token), json: { name: 'Till 2' } });
    assert.equal(issued.status, 201);
    const key = issued.body.data as { id: number; key: string; secret: string };
    assert.equal((await validate(node1, key)).status, 200);

    const revoked = await request(node2.url, 'DELETE', `/en/partners/api-keys/${key.id}`, { headers: bearer(partner.token) });
    assert.equal(revoked.status, 200);

    const onNode1 = await untilRefused(node1, key);
    assert.equal(onNode1.status, 401, `node 1 still accepts the key ${PROPAGATION_MS} ms after the revoke`);
    assert.equal(onNode1.body.code, 1001);
    // Revoking it again on the other node finds nothing to revoke.
    const twice = await request(node1.url, 'DELETE', `/en/partners/api-keys/${key.id}`, { headers: bearer(partner.token) });
    assert.equal(twice.status, 404);
    assert.equal(twice.body.code, 'RESOURCE_NOT_FOUND');
  });
});
