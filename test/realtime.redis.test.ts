// Realtime across nodes (DESIGN.md §1): two apps on one database and one Redis, with the
// same app credentials (kept in system_settings). An event published on node 2 reaches
// pusher-js clients on node 1 exactly once, and node 2's own clients exactly once too.
// Runs only with REDIS_URL (scripts/test.mjs).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import PusherServer from 'pusher';
import { signChannel } from '../src/infra/realtime/signing.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { collectEvents, connectPusher, dataOf, nextEvent, RawClient, sentinel, subscribe, type Pusher } from './helpers/realtime.js';

describe('realtime fan-out between two nodes through Redis', () => {
  let db: TestDatabase;
  let node1: TestApp;
  let node2: TestApp;
  const clients: Pusher[] = [];
  const raws: RawClient[] = [];

  before(async () => {
    assert.ok(process.env.REDIS_URL, 'REDIS_URL must be set for this test');
    db = await createTestDatabase();
    // One deployment: the same Redis key prefix; the app credentials come from the shared database.
    const shared = { REDIS_KEY_PREFIX: `t${randomBytes(4).toString('hex')}:` };
    node1 = await startTestApp(shared, db);
    node2 = await startTestApp(shared, db);
  });
  after(async () => {
    for (const c of clients) c.disconnect();
    for (const r of raws) r.close();
    await node1?.close();
    await node2?.close();
    await db?.drop();
  });

  it('gives both nodes the same generated app credentials', () => {
    assert.deepEqual(node1.app.context.realtime.app, node2.app.context.realtime.app);
    assert.match(node1.app.context.realtime.app.key, /^[0-9a-f]{20}$/);
  });

  it('delivers a publish on node 2 to a pusher-js client on node 1, and to one on node 2, exactly once each', async () => {
    const on1 = await connectPusher(node1);
    const on2 = await connectPusher(node2);
    clients.push(on1, on2);
    const ch1 = await subscribe(on1, 'qr-login.multi');
    const ch2 = await subscribe(on2, 'qr-login.multi');
    const seen1 = collectEvents(ch1, 'status_update');
    const seen2 = collectEvents(ch2, 'status_update');
    // Every copy of an event travels either straight to a node's own sockets or through the
    // one Redis topic. A sentinel published through Redis after the event arrives behind
    // every Redis copy of it: node 2's sentinel closes the window on node 1's client and
    // node 1's on node 2's (each node delivers its own publishes locally, at once).
    const closeWindows = () => Promise.all([sentinel(node2, ch1), sentinel(node1, ch2)]);
    let got = [nextEvent(ch1, 'status_update'), nextEvent(ch2, 'status_update')];
    await node2.app.context.realtime.publish('qr-login.multi', 'status_update', { status: 'authenticated', seq: 1 });
    assert.deepEqual(await Promise.all(got), [
      { status: 'authenticated', seq: 1 },
      { status: 'authenticated', seq: 1 },
    ]);
    await closeWindows();
    assert.deepEqual(seen1, [{ status: 'authenticated', seq: 1 }]);
    assert.deepEqual(seen2, [{ status: 'authenticated', seq: 1 }]);

    // The other way round, and through node 1's HTTP events API with the official SDK.
    const u = new URL(node1.url);
    const { id, key, secret } = node1.app.context.realtime.app;
    got = [nextEvent(ch1, 'status_update'), nextEvent(ch2, 'status_update')];
    await new PusherServer({ appId: id, key, secret, host: u.hostname, port: u.port, useTLS: false }).trigger('qr-login.multi', 'status_update', { seq: 2 });
    assert.deepEqual(await Promise.all(got), [{ seq: 2 }, { seq: 2 }]);
    await closeWindows();
    assert.equal(seen1.length, 2);
    assert.equal(seen2.length, 2);
  });

  it('relays client events and honours socket_id exclusion across nodes', async () => {
    const channel = 'private-partner.1.till';
    const { key, secret } = node1.app.context.realtime.app;
    const a = await RawClient.connect(node1);
    const b = await RawClient.connect(node2);
    raws.push(a.client, b.client);
    for (const x of [a, b]) {
      x.client.send({ event: 'pusher:subscribe', data: { channel, auth: signChannel(key, secret, x.socketId, channel) } });
      await x.client.next('pusher_internal:subscription_succeeded');
    }
    // A sentinel on the channel from the given node, through Redis to the other node's socket.
    const passSentinel = async (from: TestApp, to: RawClient) => {
      await from.app.context.realtime.publish(channel, 'sentinel', { from: from.url });
      return to.until('sentinel');
    };
    a.client.send({ event: 'client-hello', channel, data: { from: 'node1' } });
    assert.deepEqual(dataOf(await b.client.next('client-hello')), { from: 'node1' });
    // Node 1 delivered the hello locally (not to a) and then published it to Redis, where
    // b got it: an echo to a, from node 1 or back from Redis, is ahead of node 2's sentinel.
    assert.deepEqual(await passSentinel(node2, a.client), [], 'not echoed to the sender');
    await b.client.until('sentinel');

    // Published on node 1, leaving out a socket that lives on node 2.
    await node1.app.context.realtime.publish(channel, 'server-news', { n: 1 }, { socketId: b.socketId });
    assert.deepEqual(dataOf(await a.client.next('server-news')), { n: 1 });
    assert.deepEqual(await passSentinel(node1, b.client), [], 'node 2 honours the exclusion');
    await a.client.until('sentinel');
  });
});
