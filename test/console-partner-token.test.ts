// The partner console's Imports page works with the partner's own JWT (DESIGN.md §11: the
// console talks to the API with the bearer token of partners/auth/login, never with API
// secrets): the XML import routes, shop/realtime/config and shop/wsvendor/token take it as
// well as API credentials, for that partner only. Other kinds of token stay refused.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createAdmin, createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { connectPusher, subscribe } from './helpers/realtime.js';

const FEED = '<products><product id="P1"><name>Beans</name><price>9.5</price></product></products>';

describe('partner JWT on the import and realtime routes', () => {
  let t: TestApp;
  let a: PartnerFixture;
  let b: PartnerFixture;

  before(async () => {
    t = await startTestApp();
    a = await createPartner(t, 'Partner A');
    b = await createPartner(t, 'Partner B');
  });
  after(async () => {
    await t.close();
  });

  async function waitDone(token: string, id: number) {
    for (let i = 0; i < 150; i++) {
      const res = await request(t.url, 'GET', `/en/shop/xml-import/${id}`, { headers: bearer(token) });
      assert.equal(res.status, 200, res.text);
      if (!['queued', 'running'].includes(res.body.data.status)) return res.body.data;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('import did not finish');
  }

  it("imports an uploaded feed with the partner's token; the import is the partner's, as with its API key", async () => {
    const form = new FormData();
    form.set('file', new Blob([FEED], { type: 'application/xml' }), 'feed.xml');
    const res = await fetch(`${t.url}/en/shop/xml-import/from-file`, { method: 'POST', headers: bearer(a.token), body: form });
    const body = (await res.json()) as { data: { import_id: number; status: string } };
    assert.equal(res.status, 202);
    assert.equal(body.data.status, 'queued');
    const record = await waitDone(a.token, body.data.import_id);
    assert.equal(record.status, 'completed');
    assert.equal(record.created, 1);
    // The same import through A's API credentials, and in A's history; B sees neither.
    assert.equal((await request(t.url, 'GET', `/en/shop/xml-import/${record.id}`, { headers: apiHeaders(a.apiKey) })).status, 200);
    const history = await request(t.url, 'GET', '/en/shop/xml-import/history', { headers: bearer(a.token) });
    assert.deepEqual(
      history.body.data.map((r: { id: number }) => r.id),
      [record.id],
    );
    assert.equal((await request(t.url, 'GET', `/en/shop/xml-import/${record.id}`, { headers: bearer(b.token) })).status, 404);
    const bHistory = await request(t.url, 'GET', '/en/shop/xml-import/history', { headers: bearer(b.token) });
    assert.equal(bHistory.body.meta.total, 0);
  });

  it('answers the URL form with field errors (422) for a partner token as for API credentials', async () => {
    const res = await request(t.url, 'POST', '/en/shop/xml-import/from-url', { headers: bearer(a.token), json: { url: 'http://127.0.0.1/feed.xml', every_minutes: 5 } });
    assert.equal(res.status, 422);
    assert.ok('every_minutes' in res.body.errors, res.text);
  });

  it('refuses a customer or admin token (403) and keeps 1004 for a call with no credentials', async () => {
    const none = await request(t.url, 'GET', '/en/shop/xml-import/history');
    assert.equal(none.status, 401);
    assert.equal(none.body.code, 1004);
    const admin = await createAdmin(t);
    const customer = await t.app.context.tokens.sign({ kind: 'customer', subject: 1 });
    for (const token of [admin.token, customer.token]) {
      const refused = await request(t.url, 'GET', '/en/shop/xml-import/history', { headers: bearer(token) });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.code, 'INSUFFICIENT_PERMISSIONS');
      const channel = await request(t.url, 'POST', '/en/shop/wsvendor/token', { headers: bearer(token), json: { socket_id: '1.2', channel_name: `private-partner.${a.id}` } });
      assert.equal(channel.status, 403);
      assert.equal(channel.body.code, 'INSUFFICIENT_PERMISSIONS');
    }
  });

  it("gives the realtime config and signs only the partner's own channel with its token", async () => {
    const cfg = await request(t.url, 'GET', '/en/shop/realtime/config', { headers: bearer(a.token) });
    assert.equal(cfg.status, 200, cfg.text);
    const viaKey = await request(t.url, 'GET', '/en/shop/realtime/config', { headers: apiHeaders(a.apiKey) });
    assert.deepEqual(cfg.body.data, viaKey.body.data);

    const own = await request(t.url, 'POST', '/en/shop/wsvendor/token', { headers: bearer(a.token), json: { socket_id: '123.456', channel_name: `private-partner.${a.id}` } });
    assert.equal(own.status, 200, own.text);
    const other = await request(t.url, 'POST', '/en/shop/wsvendor/token', { headers: bearer(a.token), json: { socket_id: '123.456', channel_name: `private-partner.${b.id}` } });
    assert.equal(other.status, 403);
    assert.equal(other.body.code, 'ACCESS_DENIED');

    // The signature is one the realtime server accepts: subscribe and receive with pusher-js.
    const pusher = await connectPusher(t, {
      channelAuthorization: {
        customHandler: ({ socketId, channelName }: { socketId: string; channelName: string }, cb: (e: Error | null, d: { auth: string } | null) => void) => {
          void request(t.url, 'POST', '/en/shop/wsvendor/token', { headers: bearer(a.token), json: { socket_id: socketId, channel_name: channelName } }).then((r) =>
            r.status === 200 ? cb(null, { auth: r.body.data.auth }) : cb(new Error(String(r.status)), null),
          );
        },
      },
    });
    try {
      const channel = await subscribe(pusher, `private-partner.${a.id}`);
      const got = new Promise((resolve) => channel.bind('import.progress', resolve));
      await t.app.context.realtime.publish(`private-partner.${a.id}`, 'import.progress', { import_id: 1, status: 'running', items_seen: 3 });
      assert.deepEqual(await got, { import_id: 1, status: 'running', items_seen: 3 });
    } finally {
      pusher.disconnect();
    }
  });
});
