// Games at the till and in the app (DESIGN.md §8): the live games with plays_left_today, a
// play from start to claimed — the reward hidden until completion, points through the ledger
// (type game), a coupon by the coupon rules, a losing segment — the daily limit (429
// DAILY_QUOTA_EXCEEDED with Retry-After to the next UTC midnight), refusals, the history,
// expiry, and every transition as status_update on game-session.{key}, received with the
// official pusher-js client.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { assertLedgerConsistent, balanceOf, createCustomer, createProgramme, joinProgramme, TestClock, type CustomerFixture } from './helpers/loyalty.js';
import { assertRefused, claimReward, COUPON_KEYS, createGame, keysOf, progress, startGame } from './helpers/engagement.js';
import { collectEvents, connectPusher, nextEvent, subscribe, type Pusher } from './helpers/realtime.js';

describe('gameplay', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let programme: number;
  let pusher: Pusher;
  // 2026-03-01T10:00:00Z: 14 hours to the next UTC midnight.
  const clock = new TestClock();

  /** A game whose one reward (probability 1) is `reward`. */
  const certain = (reward: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    createGame(t, p, { partner_card_id: programme, rewards: [{ label: 'Prize', probability: 1, ...reward }], plays_per_customer_per_day: 10, ...extra });

  const member = async () => {
    const c = await createCustomer(t);
    const card = await joinProgramme(t, c, programme);
    return { c, card };
  };

  const play = async (c: CustomerFixture, gameId: number) => {
    const res = await startGame(t, c, gameId);
    assert.equal(res.status, 201, res.text);
    return res.body.data as { session_key: string; channel: string };
  };

  before(async () => {
    t = await startTestApp({}, undefined, { clock });
    p = await createPartner(t, 'Kavinė');
    programme = await createProgramme(t, p.id, { defaultCouponValidityDays: 5 });
    pusher = await connectPusher(t);
  });
  after(async () => {
    pusher.disconnect();
    await t.close();
  });

  it('lists live games; plays_left_today only with a customer token', async () => {
    const fresh = await createPartner(t);
    const live = await createGame(t, fresh, { plays_per_customer_per_day: 2 });
    await createGame(t, fresh, { is_active: false });
    await createGame(t, fresh, { ends_at: new Date(clock.now().getTime() - 1000).toISOString(), starts_at: '2020-01-01T00:00:00Z' });
    const asTill = await request(t.url, 'GET', '/en/shop/games', { headers: apiHeaders(fresh.apiKey) });
    assert.equal(asTill.status, 200, asTill.text);
    assert.deepEqual(asTill.body.meta, { current_page: 1, per_page: 20, total: 1, last_page: 1 });
    const [g] = asTill.body.data;
    assert.deepEqual(keysOf(g), ['description', 'ends_at', 'id', 'name', 'partner_card_id', 'rewards', 'type']);
    assert.equal(g.id, live.id);
    assert.deepEqual(g.rewards, live.rewards.map((r: any) => ({ id: r.id, label: r.label, reward_type: r.reward_type })));

    const c = await createCustomer(t);
    await joinProgramme(t, c, await createProgramme(t, fresh.id));
    const asApp = await request(t.url, 'GET', '/en/shop/games', { headers: bearer(c.token) });
    assert.deepEqual(asApp.body.data.map((x: any) => [x.id, x.plays_left_today]), [[live.id, 2]]);
    await play(c, live.id);
    // A POS with a signed-in customer sends both.
    const both = await request(t.url, 'GET', '/en/shop/games', { headers: { ...apiHeaders(fresh.apiKey), ...bearer(c.token) } });
    assert.deepEqual(both.body.data.map((x: any) => [x.id, x.plays_left_today]), [[live.id, 1]]);
    const badToken = await request(t.url, 'GET', '/en/shop/games', { headers: { ...apiHeaders(fresh.apiKey), authorization: 'Bearer nope' } });
    assert.equal(badToken.status, 401);
  });

  it('a points prize: hidden until completed, then claimed once through the ledger; every step announced', async () => {
    const game = await certain({ reward_type: 'points', points: 25 });
    const { c, card } = await member();
    const started = await startGame(t, c, game.id);
    assert.equal(started.status, 201, started.text);
    const s = started.body.data;
    assert.deepEqual(keysOf(s), ['channel', 'expires_at', 'game_id', 'session_key', 'status']);
    assert.equal(s.status, 'started');
    assert.equal(s.game_id, game.id);
    assert.equal(s.channel, `game-session.${s.session_key}`);
    assert.ok(Buffer.from(s.session_key, 'base64url').length >= 16, '≥ 128 bits');
    assert.equal(s.expires_at, new Date(clock.now().getTime() + 30 * 60_000).toISOString());

    const channel = await subscribe(pusher, s.channel);
    const seen = collectEvents<any>(channel, 'status_update');
    let next = nextEvent<any>(channel, 'status_update');
    const half = await progress(t, bearer(c.token), s.session_key, { progress: 50 });
    assert.equal(half.status, 200, half.text);
    assert.deepEqual(half.body.data, { status: 'in_progress', progress: 50 });
    assert.deepEqual(await next, { status: 'in_progress', progress: 50 });

    assertRefused(await claimReward(t, bearer(c.token), s.session_key), 409, 'INVALID_STATE', { status: 'in_progress' }, 'before completion');

    next = nextEvent<any>(channel, 'status_update');
    const done = await progress(t, bearer(c.token), s.session_key, { progress: 90, completed: true });
    const reward = { id: game.rewards[0].id, label: 'Prize', reward_type: 'points', points: 25 };
    assert.deepEqual(done.body.data, { status: 'finished', progress: 100, reward });
    assert.deepEqual(await next, { status: 'finished', progress: 100, reward });
    const again = await progress(t, bearer(c.token), s.session_key, { progress: 100, completed: true });
    assert.deepEqual(again.body.data, done.body.data, 'a retried completion answers the same');

    next = nextEvent<any>(channel, 'status_update');
    const claimed = await claimReward(t, bearer(c.token), s.session_key);
    assert.equal(claimed.status, 200, claimed.text);
    assert.deepEqual(keysOf(claimed.body.data), ['reward', 'transaction']);
    assert.deepEqual(claimed.body.data.reward, reward);
    assert.equal(claimed.body.data.transaction.type, 'game');
    assert.equal(claimed.body.data.transaction.points, 25);
    assert.equal(claimed.body.data.transaction.card_id, card.id);
    assert.deepEqual(await next, { status: 'claimed', progress: 100, reward });
    assert.equal(await balanceOf(t, p, card.id), 25);
    assertRefused(await claimReward(t, bearer(c.token), s.session_key), 409, 'INVALID_STATE', { status: 'claimed' }, 'second claim');
    assertRefused(await progress(t, bearer(c.token), s.session_key, { progress: 10 }), 409, 'INVALID_STATE', { status: 'claimed' });
    assert.equal(await balanceOf(t, p, card.id), 25);
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(seen.map((e) => e.status), ['in_progress', 'finished', 'claimed'], 'each transition announced once; nothing for refusals');
    await assertLedgerConsistent(t);
  });

  it("a coupon prize issues a coupon by the coupon rules: the game's validity, else the programme's", async () => {
    const withValidity = await certain({ reward_type: 'coupon', coupon: { title: 'Coffee', discount_type: 'percent', discount_value: 20 } }, { coupon_validity_days: 3 });
    const without = await certain({ reward_type: 'coupon', coupon: { title: 'Cake', discount_type: 'fixed', discount_value: 2.5 } });
    const { c, card } = await member();
    for (const [game, days, description] of [
      [withValidity, 3, 'Coffee (20% off)'],
      [without, 5, 'Cake (2.5 EUR off)'],
    ] as const) {
      const s = await play(c, game.id);
      await progress(t, bearer(c.token), s.session_key, { progress: 100, completed: true });
      const res = await claimReward(t, bearer(c.token), s.session_key);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(keysOf(res.body.data), ['coupon', 'reward']);
      const coupon = res.body.data.coupon;
      assert.deepEqual(keysOf(coupon), COUPON_KEYS);
      assert.equal(coupon.offer, null);
      assert.deepEqual(coupon.game, { id: game.id, name: game.name, type: 'spin_wheel', reward_description: description });
      assert.equal(coupon.card_id, card.id);
      assert.equal(coupon.expires_at, new Date(clock.now().getTime() + days * 86_400_000).toISOString());
      // The till verifies it like any coupon, and sees the game.
      const shop = (await t.app.context.services.shops.create(p.id, { name: 'S' })).id;
      const v = await request(t.url, 'POST', '/en/shop/coupons/verify', { headers: apiHeaders(p.apiKey), json: { coupon_code: coupon.code, shop_id: shop } });
      assert.equal(v.status, 200, v.text);
      assert.deepEqual(v.body.data.game, coupon.game);
      assert.equal(v.body.data.coupon.offer, null);
    }
  });

  it('a losing segment claims to {reward} alone; the till (API credentials) may drive the play', async () => {
    const game = await certain({ reward_type: 'none' });
    const { c, card } = await member();
    const s = await play(c, game.id);
    const done = await progress(t, apiHeaders(p.apiKey), s.session_key, { progress: 100, completed: true });
    assert.equal(done.status, 200, done.text);
    const res = await claimReward(t, apiHeaders(p.apiKey), s.session_key);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data, { reward: { id: game.rewards[0].id, label: 'Prize', reward_type: 'none' } });
    assert.equal(await balanceOf(t, p, card.id), 0);
  });

  it('the daily limit: 429 DAILY_QUOTA_EXCEEDED with Retry-After to the next UTC midnight; a new day plays again', async () => {
    const game = await certain({ reward_type: 'none' }, { plays_per_customer_per_day: 2 });
    const { c } = await member();
    await play(c, game.id);
    await play(c, game.id);
    const over = await startGame(t, c, game.id);
    const seconds = Math.ceil((Date.parse('2026-03-02T00:00:00Z') - clock.now().getTime()) / 1000);
    assertRefused(over, 429, 'DAILY_QUOTA_EXCEEDED', { limit: 2, retry_after: seconds });
    assert.equal(over.headers.get('retry-after'), String(seconds));
    const games = await request(t.url, 'GET', '/en/shop/games?per_page=100', { headers: bearer(c.token) });
    assert.equal(games.body.data.find((g: any) => g.id === game.id).plays_left_today, 0);
    clock.advanceDays(1);
    assert.equal((await startGame(t, c, game.id)).status, 201);
  });

  it('refuses inactive, unstarted, ended games and customers without a card; 404 for an unknown game', async () => {
    const { c } = await member();
    const inactive = await certain({ reward_type: 'none' }, { is_active: false });
    assertRefused(await startGame(t, c, inactive.id), 409, 'INVALID_STATE', { reason: 'inactive' });
    const later = new Date(clock.now().getTime() + 3_600_000).toISOString();
    const notYet = await certain({ reward_type: 'none' }, { starts_at: later });
    assertRefused(await startGame(t, c, notYet.id), 409, 'INVALID_STATE', { reason: 'not_started', starts_at: later });
    const ended = new Date(clock.now().getTime() - 1000).toISOString();
    const over = await certain({ reward_type: 'none' }, { starts_at: '2020-01-01T00:00:00Z', ends_at: ended });
    assertRefused(await startGame(t, c, over.id), 409, 'INVALID_STATE', { reason: 'ended', ends_at: ended });
    const stranger = await createCustomer(t);
    const open = await certain({ reward_type: 'none' });
    assertRefused(await startGame(t, stranger, open.id), 409, 'INVALID_STATE', { reason: 'no_card' });
    // A game without a programme takes a card in any of the partner's programmes.
    const anyCard = await createGame(t, p, { rewards: [{ label: 'x', probability: 1, reward_type: 'none' }] });
    assertRefused(await startGame(t, stranger, anyCard.id), 409, 'INVALID_STATE', { reason: 'no_card' });
    assert.equal((await startGame(t, c, anyCard.id)).status, 201);
    assertRefused(await startGame(t, c, 9_999_999), 404, 'RESOURCE_NOT_FOUND');
    assert.equal((await request(t.url, 'POST', `/en/shop/games/${open.id}/start`, { headers: apiHeaders(p.apiKey) })).status, 401);
  });

  it('a play expires 30 minutes after its start: refused, announced, shown expired', async () => {
    const game = await certain({ reward_type: 'points', points: 5 });
    const { c } = await member();
    const s = await play(c, game.id);
    await progress(t, bearer(c.token), s.session_key, { progress: 100, completed: true });
    const channel = await subscribe(pusher, s.channel);
    const expired = nextEvent<any>(channel, 'status_update');
    clock.advanceMs(30 * 60_000);
    assertRefused(await claimReward(t, bearer(c.token), s.session_key), 409, 'INVALID_STATE', { status: 'expired' });
    await t.app.context.workers.gameSessionExpiry.runOnce();
    assert.deepEqual(await expired, { status: 'expired', progress: 100 });
    const history = await request(t.url, 'GET', '/en/shop/user/games/history', { headers: bearer(c.token) });
    assert.equal(history.body.data[0].status, 'expired');
  });

  it('history: newest first, the reward hidden until the play completed', async () => {
    const game = await certain({ reward_type: 'points', points: 7 });
    const { c } = await member();
    const first = await play(c, game.id);
    await progress(t, bearer(c.token), first.session_key, { progress: 100, completed: true });
    await claimReward(t, bearer(c.token), first.session_key);
    const second = await play(c, game.id);
    const res = await request(t.url, 'GET', '/en/shop/user/games/history', { headers: bearer(c.token) });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.meta, { current_page: 1, per_page: 20, total: 2, last_page: 1 });
    const [newest, oldest] = res.body.data;
    assert.deepEqual(keysOf(newest), ['claimed_at', 'finished_at', 'game', 'reward', 'session_key', 'started_at', 'status']);
    assert.equal(newest.session_key, second.session_key);
    assert.equal(newest.status, 'started');
    assert.equal(newest.reward, null);
    assert.deepEqual(newest.game, { id: game.id, name: game.name, type: 'spin_wheel' });
    assert.equal(oldest.status, 'claimed');
    assert.deepEqual(oldest.reward, { id: game.rewards[0].id, label: 'Prize', reward_type: 'points', points: 7 });
    assert.equal(oldest.claimed_at, clock.now().toISOString());
  });

  it("someone else's session is 404; the key must look like one", async () => {
    const game = await certain({ reward_type: 'points', points: 5 });
    const { c } = await member();
    const s = await play(c, game.id);
    const { c: intruder } = await member();
    assertRefused(await progress(t, bearer(intruder.token), s.session_key, { progress: 100, completed: true }), 404, 'RESOURCE_NOT_FOUND');
    assertRefused(await claimReward(t, bearer(intruder.token), s.session_key), 404, 'RESOURCE_NOT_FOUND');
    assert.equal((await progress(t, bearer(c.token), 'short', { progress: 1 })).status, 404);
    const bad = await progress(t, bearer(c.token), s.session_key, { progress: 101 });
    assert.equal(bad.status, 422);
    assert.deepEqual(keysOf(bad.body.errors), ['progress']);
  });
});
