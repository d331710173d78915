// QR login across nodes (DESIGN.md §1): two apps on one database and one Redis. A pusher-js
// client on node 1 receives the event of a confirm made on node 2. Runs only with REDIS_URL.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { createPartner } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { createCustomer } from './helpers/loyalty.js';
import { collectEvents, connectPusher, nextEvent, sentinel, subscribe, type Pusher } from './helpers/realtime.js';

describe('QR login across two nodes', () => {
  let db: TestDatabase;
  let node1: TestApp;
  let node2: TestApp;
  let pusher: Pusher | undefined;

  before(async () => {
    db = await createTestDatabase();
    const shared = { REDIS_KEY_PREFIX: `t${randomBytes(4).toString('hex')}:` };
    node1 = await startTestApp(shared, db);
    node2 = await startTestApp(shared, db);
  });
  after(async () => {
    pusher?.disconnect();
    await node1?.close();
    await node2?.close();
    await db?.drop();
  });

  it('a confirm on node 2 reaches the pusher-js client on node 1, once', async () => {
    const p = await createPartner(node1);
    const gen = await request(node1.url, 'POST', '/en/shop/auth/qr-login/generate', { headers: apiHeaders(p.apiKey), json: { device_name: 'Till' } });
    const { channel: name, qr_content, session_id } = gen.body.data;
    pusher = await connectPusher(node1);
    const channel = await subscribe(pusher, name);
    const seen = collectEvents(channel, 'status_update');
    const got = nextEvent<{ status: string; token: string }>(channel, 'status_update', 1000);

    const c = await createCustomer(node2);
    const confirm = await request(node2.url, 'POST', '/en/app/qr-login/confirm', { headers: bearer(c.token), json: { code: qr_content } });
    assert.equal(confirm.status, 200, confirm.text);
    const event = await got;
    assert.equal(event.status, 'authenticated');
    assert.equal(typeof event.token, 'string');
    // Published by node 2 after the confirm answered: it follows the confirm's publishes
    // through Redis, so a second status_update would be ahead of it.
    await sentinel(node2, channel);
    assert.equal(seen.length, 1);

    // The poll on node 1 sees the same session state, and hands the token out once.
    const poll = () => request(node1.url, 'POST', `/en/shop/auth/qr-login/poll/${session_id}`, { headers: apiHeaders(p.apiKey) });
    assert.equal(typeof (await poll()).body.data.token, 'string');
    assert.equal((await poll()).body.data.token, undefined);
  });
});
