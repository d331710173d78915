// Two nodes on one database (both modes: on PostgreSQL two apps on one database, each with its
// own caches; embedded, two apps on one PGlite): each node remembers that a bearer token's
// account may act, and that an API key is good (infra/account-cache.ts, api-keys.service.ts),
// so neither asks the database per request. An account suspended or deleted in SQL — there is
// no endpoint for it, an operator does it — is still refused on the next request on every node,
// through the database's own notification (migration 0024), where the answer was cached.
//
// "Next request": the request sent once the commit's notification has been delivered. The test
// listens on the same channel through the same database connection as the nodes, and its
// listener runs after theirs, so when it has heard the change the nodes have too; it never
// polls or sleeps. (The same asynchronous delivery as API-key and token revocation: a request
// that reaches a node in the instant between the commit and the notification is answered from
// memory, as there.)
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { ACCOUNTS_CHANNEL } from '../src/infra/account-cache.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { createAdmin, createPartner } from './helpers/fixtures.js';
import { apiHeaders, bearer, request, type Response } from './helpers/http.js';

/** What the test has heard on the channel, and who waits for what. */
function hearChanges(db: TestDatabase) {
  const heard: string[] = [];
  const waiting: Array<{ payload: string; resolve: () => void }> = [];
  const ready = db.database.listen(
    ACCOUNTS_CHANNEL,
    (payload) => {
      heard.push(payload);
      for (const w of waiting.filter((w) => w.payload === payload)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve();
      }
    },
    () => undefined,
  );
  return {
    ready,
    /** Resolves once `payload` has been delivered (at once when it already was since `from`). */
    until(payload: string, from: number): Promise<void> {
      if (heard.slice(from).includes(payload)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no "${payload}" on ${ACCOUNTS_CHANNEL} within 5 s`)), 5000);
        waiting.push({ payload, resolve: () => (clearTimeout(timer), resolve()) });
      });
    },
    get count() {
      return heard.length;
    },
  };
}

function assertRefused(res: Response, status: number, code: number | string, label: string) {
  assert.equal(res.status, status, `${label}: ${res.text}`);
  assert.equal(res.body.success, false, label);
  assert.equal(res.body.code, code, label);
}

describe('suspended and deleted accounts across nodes, after their answers are cached', () => {
  let db: TestDatabase;
  let node1: TestApp;
  let node2: TestApp;
  let changes: ReturnType<typeof hearChanges>;
  /** The account lookups each node made (node 2's), by kind. */
  const lookups = { partner: 0, admin: 0, customer: 0 };

  before(async () => {
    db = await createTestDatabase();
    const shared = { JWT_SECRET: randomBytes(32).toString('hex') };
    node1 = await startTestApp(shared, db);
    node2 = await startTestApp(shared, db);
    changes = hearChanges(db);
    await changes.ready;
    // Count node 2's database lookups (the cache calls the services' methods).
    const s = node2.app.context.services;
    const count = <T extends (id: number) => Promise<boolean>>(kind: keyof typeof lookups, fn: T) =>
      ((id: number) => {
        lookups[kind]++;
        return fn(id);
      }) as T;
    s.partners.isActive = count('partner', s.partners.isActive.bind(s.partners));
    s.admin.exists = count('admin', s.admin.exists.bind(s.admin));
    s.customers.exists = count('customer', s.customers.exists.bind(s.customers));
  });
  after(async () => {
    await node1?.close();
    await node2?.close();
    await db?.drop();
  });

  const shops = (node: TestApp, token: string) => request(node.url, 'GET', '/en/partners/shops', { headers: bearer(token) });
  const validate = (node: TestApp, key: { key: string; secret: string }) =>
    request(node.url, 'POST', '/en/shop/validate-credentials', { headers: apiHeaders(key) });

  /** Runs `statement` and waits until every node has heard `payload`. */
  async function change(statement: ReturnType<typeof sql>, payload: string) {
    const from = changes.count;
    await db.database.db.execute(statement);
    await changes.until(payload, from);
  }

  it('runs two apps on one database', () => {
    assert.equal(node1.app.context.database, node2.app.context.database);
    assert.notEqual(node1.url, node2.url);
  });

  it('a suspended partner\'s token and API key are refused on the next request on both nodes, though cached', async () => {
    const p = await createPartner(node1);
    const other = await createPartner(node1);
    for (const node of [node1, node2]) {
      assert.equal((await shops(node, p.token)).status, 200);
      assert.equal((await validate(node, p.apiKey)).status, 200);
      assert.equal((await shops(node, other.token)).status, 200);
    }
    // Answered from memory now: no more lookups on node 2.
    const before = lookups.partner;
    for (let i = 0; i < 3; i++) {
      assert.equal((await shops(node2, p.token)).status, 200);
      assert.equal((await validate(node2, p.apiKey)).status, 200);
    }
    assert.equal(lookups.partner, before, 'node 2 asked the database for a cached partner');

    await change(sql`update partners set status = 'suspended' where id = ${p.id}`, `partner ${p.id}`);

    for (const [name, node] of [['node 1', node1], ['node 2', node2]] as const) {
      assertRefused(await shops(node, p.token), 401, 'INVALID_CREDENTIALS', `${name}, token`);
      assertRefused(await validate(node, p.apiKey), 401, 1001, `${name}, API key`);
      // And it stays refused; another partner is not affected.
      assertRefused(await shops(node, p.token), 401, 'INVALID_CREDENTIALS', `${name}, token again`);
      assert.equal((await shops(node, other.token)).status, 200, `${name}, the other partner`);
      assert.equal((await validate(node, other.apiKey)).status, 200, `${name}, the other partner's key`);
    }

    // Active again: accepted again on both nodes (a refusal is not cached).
    await change(sql`update partners set status = 'active' where id = ${p.id}`, `partner ${p.id}`);
    for (const node of [node1, node2]) {
      assert.equal((await shops(node, p.token)).status, 200);
      assert.equal((await validate(node, p.apiKey)).status, 200);
    }
  });

  it('a cached API key carries the partner\'s new name once it changed (the same notification)', async () => {
    const p = await createPartner(node1);
    const named = async (node: TestApp) => {
      const res = await validate(node, p.apiKey);
      assert.equal(res.status, 200, res.text);
      return res.body.data.partner.name as string;
    };
    assert.equal(await named(node2), p.name);
    await change(sql`update partners set name = 'Renamed Ltd' where id = ${p.id}`, `partner ${p.id}`);
    assert.equal(await named(node2), 'Renamed Ltd');
    assert.equal(await named(node1), 'Renamed Ltd');
  });

  it('a deleted admin\'s token is refused on the next request on both nodes, though cached', async () => {
    const admin = await createAdmin(node1);
    const list = (node: TestApp) => request(node.url, 'GET', '/en/admin/partners', { headers: bearer(admin.token) });
    for (const node of [node1, node2, node2]) assert.equal((await list(node)).status, 200);
    const before = lookups.admin;
    assert.equal((await list(node2)).status, 200);
    assert.equal(lookups.admin, before, 'node 2 asked the database for a cached admin');

    await change(sql`delete from admins where id = ${admin.id}`, `admin ${admin.id}`);
    for (const [name, node] of [['node 1', node1], ['node 2', node2]] as const) {
      assertRefused(await list(node), 401, 'INVALID_CREDENTIALS', name);
    }
  });

  it('a deleted customer\'s token is refused on the next request on both nodes, though cached', async () => {
    const phone = `+3706${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
    const customer = await node1.app.context.services.customers.findOrCreateByPhone(node1.app.context.database.db, phone);
    const { token } = await node1.app.context.tokens.sign({ kind: 'customer', subject: customer.id });
    const me = (node: TestApp) => request(node.url, 'GET', '/en/shop/auth/me', { headers: bearer(token) });
    for (const node of [node1, node2, node2]) assert.equal((await me(node)).status, 200);
    const before = lookups.customer;
    assert.equal((await me(node2)).status, 200);
    assert.equal(lookups.customer, before, 'node 2 asked the database for a cached customer');

    await change(sql`delete from customers where id = ${customer.id}`, `customer ${customer.id}`);
    for (const [name, node] of [['node 1', node1], ['node 2', node2]] as const) {
      assertRefused(await me(node), 401, 'INVALID_CREDENTIALS', name);
    }
  });
});
