// QR login and QR card identification over real HTTP, polled (the realtime side is in
// realtime-qr tests): the scan code is not the session id, transitions are atomic, the
// token is handed out once, expiry follows the clock, and sessions belong to one partner.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { eq } from 'drizzle-orm';
import { smsMessages } from '../src/modules/sms/sms.tables.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { award, createCustomer, createProgramme, createShop, joinProgramme, TestClock, type CustomerFixture } from './helpers/loyalty.js';

describe('QR sessions', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let other: PartnerFixture;
  let shop: number;
  const clock = new TestClock();

  before(async () => {
    t = await startTestApp({ SMS_SIMULATOR_DELAY_MS: '0', APP_DOWNLOAD_URL: 'https://apps.example.com/loyalty' }, undefined, { clock });
    p = await createPartner(t, 'Kavinė');
    other = await createPartner(t, 'Other');
    shop = await createShop(t, p.id, 'Kavinė Vilnius');
  });
  after(() => t.close());

  const generate = (body: unknown = { device_name: 'Till 3' }, who = p) =>
    request(t.url, 'POST', '/en/shop/auth/qr-login/generate', { headers: apiHeaders(who.apiKey), json: body });
  const poll = (sessionId: string, who = p) => request(t.url, 'POST', `/en/shop/auth/qr-login/poll/${sessionId}`, { headers: apiHeaders(who.apiKey) });
  const app = (action: 'scan' | 'confirm' | 'reject', c: CustomerFixture, code: string) =>
    request(t.url, 'POST', `/en/app/qr-login/${action}`, { headers: bearer(c.token), json: { code } });
  const codeOf = (qrContent: string) => qrContent.slice(qrContent.lastIndexOf('/') + 1);

  describe('QR login', () => {
    it('generates a session whose QR carries a scan code, never the session id', async () => {
      const res = await generate({ device_name: 'Till 3', shop_id: shop });
      assert.equal(res.status, 200, res.text);
      const d = res.body.data;
      assert.deepEqual(Object.keys(d).sort(), ['channel', 'expires_at', 'qr_code', 'qr_content', 'session_id']);
      assert.match(d.session_id, /^[A-Za-z0-9_-]{22,}$/);
      assert.equal(d.channel, `qr-login.${d.session_id}`);
      assert.match(d.qr_content, /^loyalty:\/\/app\/qr-login\/[A-Za-z0-9_-]{22,}$/);
      assert.ok(!d.qr_content.includes(d.session_id));
      assert.match(d.qr_code, /^data:image\/png;base64,/);
      const png = Buffer.from(d.qr_code.split(',')[1], 'base64');
      assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      assert.equal(Date.parse(d.expires_at) - clock.now().getTime(), 5 * 60_000);

      const pending = await poll(d.session_id);
      assert.equal(pending.status, 200);
      assert.equal(pending.body.data.status, 'pending');
      assert.equal(pending.body.data.token, undefined);
    });

    it('scan shows who asks; confirm authenticates; the poll hands the partner-scoped token out once', async () => {
      const programme = await createProgramme(t, p.id, { autoAssign: true, initialBonusPoints: 10 });
      const { session_id, qr_content } = (await generate({ device_name: 'Web shop', shop_id: shop })).body.data;
      const c = await createCustomer(t);

      const scan = await app('scan', c, qr_content); // the whole link works as well as the code
      assert.equal(scan.status, 200, scan.text);
      assert.deepEqual(scan.body.data.partner, { id: p.id, name: 'Kavinė' });
      assert.equal(scan.body.data.device_name, 'Web shop');
      assert.equal(scan.body.data.shop.name, 'Kavinė Vilnius');
      assert.equal((await poll(session_id)).body.data.status, 'scanned');

      const confirm = await app('confirm', c, codeOf(qr_content));
      assert.equal(confirm.status, 200, confirm.text);
      assert.equal(confirm.body.data.status, 'authenticated');

      const first = await poll(session_id);
      assert.equal(first.body.data.status, 'authenticated');
      assert.equal(first.body.data.user.id, c.id);
      const token = first.body.data.token as string;
      assert.equal(typeof token, 'string');
      const claims = decodeJwt(token);
      assert.equal(claims.kind, 'customer');
      assert.equal(claims.sub, String(c.id));
      assert.equal(claims.pid, p.id);
      const second = await poll(session_id);
      assert.equal(second.body.data.status, 'authenticated');
      assert.equal(second.body.data.token, undefined, 'the token is not handed out twice');

      // The token works, and meeting the partner assigned its auto-assign programme.
      const cards = await request(t.url, 'GET', `/en/shop/loyalty-cards/${c.id}`, { headers: bearer(token) });
      assert.equal(cards.status, 200);
      assert.deepEqual(cards.body.data.map((x: { partner_card_id: number; points_balance: number }) => [x.partner_card_id, x.points_balance]), [[programme, 10]]);

      const again = await app('confirm', c, codeOf(qr_content));
      assert.equal(again.status, 409);
      assert.equal(again.body.code, 'INVALID_STATE');
      assert.equal(again.body.errors[0].meta.status, 'authenticated');
    });

    it('a session scanned by one customer cannot be taken over by another', async () => {
      const { qr_content } = (await generate()).body.data;
      const [a, b] = [await createCustomer(t), await createCustomer(t)];
      assert.equal((await app('scan', a, qr_content)).status, 200);
      const takeover = await app('confirm', b, qr_content);
      assert.equal(takeover.status, 409);
      assert.equal(takeover.body.code, 'INVALID_STATE');
      assert.equal((await app('scan', b, qr_content)).status, 409);
      assert.equal((await app('confirm', a, qr_content)).status, 200);
    });

    it("a QR-login token (scoped to one partner) cannot act in the app; the token is handed out only while fresh", async () => {
      const { session_id, qr_content } = (await generate()).body.data;
      const c = await createCustomer(t);
      const scoped = await t.app.context.tokens.sign({ kind: 'customer', subject: c.id, partnerId: other.id });
      const refused = await request(t.url, 'POST', '/en/app/qr-login/confirm', { headers: bearer(scoped.token), json: { code: qr_content } });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.code, 'INSUFFICIENT_PERMISSIONS');
      assert.equal((await poll(session_id)).body.data.status, 'pending');

      assert.equal((await app('confirm', c, qr_content)).status, 200);
      clock.advanceMs(5 * 60_000 + 1000);
      const late = await poll(session_id);
      assert.equal(late.body.data.status, 'authenticated');
      assert.equal(late.body.data.token, undefined, 'a till polling long after the confirm gets no token');
    });

    it('rejection ends the session', async () => {
      const { session_id, qr_content } = (await generate()).body.data;
      const c = await createCustomer(t);
      const res = await app('reject', c, qr_content);
      assert.equal(res.status, 200);
      assert.equal(res.body.data.status, 'rejected');
      assert.equal((await poll(session_id)).body.data.status, 'rejected');
      assert.equal((await app('confirm', c, qr_content)).status, 409);
    });

    it('expires after 5 minutes: poll says expired and confirm is refused; the job records it', async () => {
      const { session_id, qr_content } = (await generate()).body.data;
      const c = await createCustomer(t);
      clock.advanceMs(5 * 60_000 + 1000);
      assert.equal((await poll(session_id)).body.data.status, 'expired');
      const late = await app('confirm', c, qr_content);
      assert.equal(late.status, 409);
      assert.equal(late.body.code, 'INVALID_STATE');
      assert.equal(late.body.errors[0].meta.status, 'expired');
      await t.app.context.workers.qrExpiry.runOnce();
      assert.equal((await poll(session_id)).body.data.status, 'expired');
    });

    it('parallel confirms by six customers: exactly one wins, and only the winner meets the partner', async () => {
      // A partner of its own, with an auto-assign programme: meeting it is the confirm's effect.
      const q = await createPartner(t);
      const programme = await createProgramme(t, q.id, { autoAssign: true, initialBonusPoints: 25 });
      const { session_id, qr_content } = (await generate(undefined, q)).body.data;
      const customers = await Promise.all(Array.from({ length: 6 }, () => createCustomer(t)));
      const results = await Promise.all(customers.map((c) => app('confirm', c, qr_content)));
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 409, 409, 409, 409, 409]);
      const w = results.findIndex((r) => r.status === 200);
      const winner = customers[w]!;
      assert.equal(results[w]!.body.data.status, 'authenticated');
      assert.equal(results[w]!.body.data.user.id, winner.id);
      for (const loser of results.filter((r) => r.status === 409)) {
        assert.equal(loser.body.code, 'INVALID_STATE');
        assert.equal(loser.body.errors[0].meta.status, 'authenticated');
      }

      // The till sees the winner, and the token is theirs.
      const polled = await poll(session_id, q);
      assert.equal(polled.body.data.status, 'authenticated');
      // The till's user is the app's, plus the customer's cards with the partner (DESIGN.md §13).
      const { cards: tillCards, ...tillUser } = polled.body.data.user;
      assert.deepEqual(tillUser, results[w]!.body.data.user);
      assert.deepEqual(
        tillCards.map((x: { user_id: number; partner_id: number }) => [x.user_id, x.partner_id]),
        [[winner.id, q.id]],
      );
      assert.equal(decodeJwt(polled.body.data.token as string).sub, String(winner.id));
      // One card in the programme, the winner's, with one welcome bonus.
      const cards = await request(t.url, 'GET', `/en/shop/loyalty-cards?partner_card_id=${programme}`, { headers: apiHeaders(q.apiKey) });
      assert.equal(cards.status, 200, cards.text);
      assert.deepEqual(
        cards.body.data.map((x: { user_id: number; points_balance: number }) => [x.user_id, x.points_balance]),
        [[winner.id, 25]],
      );
    });

    it("sessions are the partner's own; bad input is a clear error", async () => {
      const { session_id, qr_content } = (await generate()).body.data;
      assert.equal((await poll(session_id, other)).status, 404);
      assert.equal((await poll('no-such-session')).status, 404);
      assert.equal((await app('scan', await createCustomer(t), 'not-a-code')).status, 404);
      assert.equal((await app('scan', await createCustomer(t), qr_content)).status, 200);

      const missing = await generate({});
      assert.equal(missing.status, 422);
      assert.ok('device_name' in missing.body.errors);
      const foreignShop = await generate({ device_name: 'x', shop_id: shop }, other);
      assert.equal(foreignShop.status, 404);
      assert.equal(foreignShop.body.errors[0].field, 'shop_id');
      assert.equal((await request(t.url, 'POST', '/en/shop/auth/qr-login/generate', { json: { device_name: 'x' } })).status, 401);
      const noCustomer = await request(t.url, 'POST', '/en/app/qr-login/confirm', { headers: apiHeaders(p.apiKey), json: { code: 'x' } });
      assert.equal(noCustomer.status, 401);
    });
  });

  describe('QR card', () => {
    it('a customer shares one of their cards; the till sees its balance and redemption settings', async () => {
      const programme = await createProgramme(t, p.id, { pointsRedemptionEnabled: true, minPointsForRedemption: 20 });
      const c = await createCustomer(t);
      const card = await joinProgramme(t, c, programme);
      await award(t, p, { card_id: card.id, shop_id: shop, amount: 42 });
      const foreignCard = await joinProgramme(t, c, await createProgramme(t, other.id));

      const gen = await request(t.url, 'POST', '/en/shop/qr-card/generate', { headers: apiHeaders(p.apiKey) });
      assert.equal(gen.status, 200, gen.text);
      const { session_id, qr_content, channel } = gen.body.data;
      assert.equal(channel, `qr-card.${session_id}`);
      assert.match(qr_content, /^loyalty:\/\/app\/qr-card\//);
      const status = () => request(t.url, 'GET', `/en/shop/qr-card/status/${session_id}`, { headers: apiHeaders(p.apiKey) });
      assert.deepEqual([(await status()).body.data.status, (await status()).body.data.card], ['pending', null]);

      const share = (cardId: number, who = c) =>
        request(t.url, 'POST', '/en/app/qr-card/scan', { headers: bearer(who.token), json: { code: codeOf(qr_content), card_id: cardId } });
      assert.equal((await share(foreignCard.id)).status, 404, "another partner's card is not offered to this till");
      assert.equal((await share(card.id, await createCustomer(t))).status, 404, "someone else's card");
      const ok = await share(card.id);
      assert.equal(ok.status, 200, ok.text);
      const seen = (await status()).body.data;
      assert.equal(seen.status, 'scanned');
      assert.equal(seen.card.card.id, card.id);
      assert.equal(seen.card.card.points_balance, 42);
      assert.equal(seen.card.programme.points_redemption_enabled, true);
      assert.equal(seen.card.programme.min_points_for_redemption, 20);
      assert.equal((await share(card.id)).status, 409);
      assert.equal((await request(t.url, 'GET', `/en/shop/qr-card/status/${session_id}`, { headers: apiHeaders(other.apiKey) })).status, 404);
    });
  });

  describe('send-app-link', () => {
    it("sends the link through the partner's SMS account and sender", async () => {
      const noSender = await request(t.url, 'POST', '/en/shop/auth/send-app-link', { headers: apiHeaders(p.apiKey), json: { phone: '+37061234567' } });
      assert.equal(noSender.status, 422);
      assert.ok('source' in noSender.body.errors);

      const { smsAccounts } = t.app.context.services;
      await t.app.context.database.db.transaction((tx) => smsAccounts.open(tx, p.id, { balance: '5.0000', senders: ['Kavine'] }));
      const res = await request(t.url, 'POST', '/lt/shop/auth/send-app-link', { headers: apiHeaders(p.apiKey), json: { phone: '+37061234567' } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.status, 'queued');
      assert.equal(res.body.data.source, 'Kavine');
      const [msg] = await t.app.context.database.db.select().from(smsMessages).where(eq(smsMessages.id, res.body.data.message_id));
      assert.equal(msg!.partnerId, p.id);
      assert.match(msg!.body, /https:\/\/apps\.example\.com\/loyalty/);
      assert.match(msg!.body, /programėlę/);

      const badPhone = await request(t.url, 'POST', '/en/shop/auth/send-app-link', { headers: apiHeaders(p.apiKey), json: { phone: '123' } });
      assert.equal(badPhone.status, 422);
      assert.ok('phone' in badPhone.body.errors);
      const unapproved = await request(t.url, 'POST', '/en/shop/auth/send-app-link', { headers: apiHeaders(p.apiKey), json: { phone: '+37061234567', source: 'Nope' } });
      assert.equal(unapproved.status, 422);
      assert.equal(unapproved.body.code, 2001);
    });
  });
});
