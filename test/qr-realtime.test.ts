// QR login and QR card over the realtime channel, with the official pusher-js client against
// the running server: the till subscribes to the channel generate gave it and learns each
// change — the login's token within a second of the confirm.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { award, createCustomer, createProgramme, createShop, joinProgramme, TestClock } from './helpers/loyalty.js';
import { collectEvents, connectPusher, nextEvent, sentinel, subscribe, type Pusher } from './helpers/realtime.js';

describe('QR sessions over realtime', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let pusher: Pusher;
  const clock = new TestClock();

  before(async () => {
    t = await startTestApp({}, undefined, { clock });
    p = await createPartner(t, 'Kavinė');
    pusher = await connectPusher(t);
  });
  after(async () => {
    pusher.disconnect();
    await t.close();
  });

  const generate = async () => {
    const res = await request(t.url, 'POST', '/en/shop/auth/qr-login/generate', { headers: apiHeaders(p.apiKey), json: { device_name: 'Till 1' } });
    assert.equal(res.status, 200, res.text);
    return res.body.data as { session_id: string; qr_content: string; channel: string };
  };

  it('the till receives scanned, then authenticated with user and token within 1 s of the confirm', async () => {
    const session = await generate();
    const channel = await subscribe(pusher, session.channel);
    const c = await createCustomer(t);

    const scanned = nextEvent<Record<string, unknown>>(channel, 'status_update');
    assert.equal((await request(t.url, 'POST', '/en/app/qr-login/scan', { headers: bearer(c.token), json: { code: session.qr_content } })).status, 200);
    assert.deepEqual(await scanned, { status: 'scanned', seq: 1 });

    const authenticated = nextEvent<{ status: string; seq: number; user: { id: number }; token: string }>(channel, 'status_update', 1000);
    const started = Date.now();
    const confirm = await request(t.url, 'POST', '/en/app/qr-login/confirm', { headers: bearer(c.token), json: { code: session.qr_content } });
    assert.equal(confirm.status, 200);
    const event = await authenticated;
    assert.ok(Date.now() - started < 1000, `event after ${Date.now() - started} ms`);
    assert.equal(event.status, 'authenticated');
    assert.equal(event.seq, 2);
    assert.equal(event.user.id, c.id);
    const me = await request(t.url, 'GET', '/en/shop/auth/me', { headers: bearer(event.token) });
    assert.equal(me.status, 200, 'the token from the event works');
    assert.equal(me.body.data.id, c.id);
  });

  it('a rejection and an expiry are announced on the channel', async () => {
    const rejected = await generate();
    const ch1 = await subscribe(pusher, rejected.channel);
    const got = nextEvent(ch1, 'status_update');
    await request(t.url, 'POST', '/en/app/qr-login/reject', { headers: bearer((await createCustomer(t)).token), json: { code: rejected.qr_content } });
    assert.deepEqual(await got, { status: 'rejected', seq: 1 });

    const expiring = await generate();
    const ch2 = await subscribe(pusher, expiring.channel);
    const seen = collectEvents(ch2, 'status_update');
    const expired = nextEvent(ch2, 'status_update');
    clock.advanceMs(5 * 60_000 + 1);
    await t.app.context.workers.qrExpiry.runOnce();
    assert.deepEqual(await expired, { status: 'expired', seq: 1 });
    // A second run finds nothing to announce: whatever it published is ahead of the sentinel.
    await t.app.context.workers.qrExpiry.runOnce();
    await sentinel(t, ch2);
    assert.equal(seen.length, 1, 'announced once');
  });

  it('a shared card reaches the till with its balance and redemption settings', async () => {
    const shop = await createShop(t, p.id);
    const c = await createCustomer(t);
    const card = await joinProgramme(t, c, await createProgramme(t, p.id, { pointsRedemptionEnabled: true }));
    await award(t, p, { card_id: card.id, shop_id: shop, amount: 15 });
    const gen = await request(t.url, 'POST', '/en/shop/qr-card/generate', { headers: apiHeaders(p.apiKey), json: { device_name: 'Till 1' } });
    const { channel: name, qr_content } = gen.body.data;
    const channel = await subscribe(pusher, name);
    const got = nextEvent<{ status: string; card: { card: { id: number; points_balance: number }; programme: { points_redemption_enabled: boolean } } }>(channel, 'status_update');
    const share = await request(t.url, 'POST', '/en/app/qr-card/scan', { headers: bearer(c.token), json: { code: qr_content, card_id: card.id } });
    assert.equal(share.status, 200, share.text);
    const event = await got;
    assert.equal(event.status, 'scanned');
    assert.equal(event.card.card.id, card.id);
    assert.equal(event.card.card.points_balance, 15);
    assert.equal(event.card.programme.points_redemption_enabled, true);
  });

  it('a client event forged on a QR channel never reaches the till', async () => {
    const session = await generate();
    const till = await subscribe(pusher, session.channel);
    const seen = collectEvents(till, 'client-status_update');
    const attacker = await connectPusher(t);
    try {
      const channel = await subscribe(attacker, session.channel);
      channel.trigger('client-status_update', { status: 'authenticated', token: 'forged' });
      // The server handles the attacker's frames in order: once this later subscription is
      // answered, the forged event has been refused (or relayed, ahead of the sentinel).
      await subscribe(attacker, `${session.channel}-after`);
      await sentinel(t, till);
      assert.deepEqual(seen, []);
    } finally {
      attacker.disconnect();
    }
  });
});
