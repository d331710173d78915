// The points ledger over real HTTP (DESIGN.md §6): cards and welcome bonuses, awards by the
// programme's rules, receipts, idempotent retries, deductions and redemption rules,
// reversals that restore exactly what they took, FIFO expiry on a controlled clock, bulk
// all-or-nothing, exports — and after every step the balance equals the sum of the ledger.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import {
  assertLedgerConsistent,
  award,
  balanceOf,
  createCustomer,
  createProgramme,
  createShop,
  deduct,
  joinProgramme,
  TestClock,
} from './helpers/loyalty.js';

const TX_KEYS = ['amount', 'balance_after', 'card_id', 'created_at', 'id', 'points', 'reason', 'receipt_number', 'returns_id', 'reverses_id', 'shop_id', 'type', 'user_id'];
/** An award answers with its lines and the breakdown of its points too (DESIGN.md §12). */
const AWARD_KEYS = [...TX_KEYS, 'breakdown', 'items'].sort();

describe('points ledger', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let shop: number;
  const clock = new TestClock();

  before(async () => {
    t = await startTestApp({}, undefined, { clock });
    p = await createPartner(t);
    shop = await createShop(t, p.id);
  });
  after(async () => {
    await assertLedgerConsistent(t);
    await t.close();
  });

  describe('loyalty cards', () => {
    it('joining a programme issues a Luhn-checked card with the welcome bonus as a ledger entry', async () => {
      const programme = await createProgramme(t, p.id, { initialBonusPoints: 50 });
      const c = await createCustomer(t);
      const res = await request(t.url, 'POST', '/en/shop/loyalty-cards', { headers: bearer(c.token), json: { partner_card_id: programme } });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.code, 201);
      const card = res.body.data;
      for (const key of ['id', 'card_number', 'user_id', 'partner_card_id', 'points_balance', 'qr_content', 'created_at']) assert.ok(key in card, key);
      assert.match(card.card_number, /^9\d{15}$/);
      assert.equal(card.user_id, c.id);
      assert.equal(card.partner_card_id, programme);
      assert.equal(card.points_balance, 50);
      assert.equal(card.qr_content, card.card_number);

      const history = await request(t.url, 'GET', '/en/shop/transactions', { headers: bearer(c.token) });
      assert.equal(history.status, 200);
      assert.deepEqual(
        history.body.data.map((x: { type: string; points: number }) => [x.type, x.points]),
        [['bonus', 50]],
      );
      await assertLedgerConsistent(t);

      const again = await request(t.url, 'POST', '/en/shop/loyalty-cards', { headers: bearer(c.token), json: { partner_card_id: programme } });
      assert.equal(again.status, 409);
      assert.equal(again.body.code, 'DUPLICATE_VALUE');
      assert.equal(again.body.errors[0].field, 'partner_card_id');
    });

    it('refuses an unknown, inactive or other partner\'s programme', async () => {
      const c = await createCustomer(t);
      const missing = await request(t.url, 'POST', '/en/shop/loyalty-cards', { headers: bearer(c.token), json: { partner_card_id: 999999 } });
      assert.equal(missing.status, 404);
      assert.equal(missing.body.code, 'RESOURCE_NOT_FOUND');

      const inactive = await createProgramme(t, p.id, { isActive: false });
      const res = await request(t.url, 'POST', '/en/shop/loyalty-cards', { headers: bearer(c.token), json: { partner_card_id: inactive } });
      assert.equal(res.status, 409);
      assert.equal(res.body.code, 'INVALID_STATE');

      // A QR-login token of another partner cannot join this partner's programme.
      const other = await createPartner(t);
      const scoped = await createCustomer(t, other.id);
      const programme = await createProgramme(t, p.id);
      const foreign = await request(t.url, 'POST', '/en/shop/loyalty-cards', { headers: bearer(scoped.token), json: { partner_card_id: programme } });
      assert.equal(foreign.status, 404);
    });

    it('attaches a third-party card number, unique within the partner', async () => {
      const programme = await createProgramme(t, p.id);
      const [a, b] = [await createCustomer(t), await createCustomer(t)];
      const res = await request(t.url, 'POST', '/en/shop/loyalty-cards/third-party', {
        headers: bearer(a.token),
        json: { partner_card_id: programme, card_number: 'EXT-0042' },
      });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.data.card_number, 'EXT-0042');
      assert.equal(res.body.data.source, 'third_party');
      const taken = await request(t.url, 'POST', '/en/shop/loyalty-cards/third-party', {
        headers: bearer(b.token),
        json: { partner_card_id: programme, card_number: 'EXT-0042' },
      });
      assert.equal(taken.status, 409);
      assert.equal(taken.body.code, 'DUPLICATE_VALUE');
      assert.equal(taken.body.errors[0].field, 'card_number');
      const bad = await request(t.url, 'POST', '/en/shop/loyalty-cards/third-party', {
        headers: bearer(b.token),
        json: { partner_card_id: programme, card_number: 'no spaces!' },
      });
      assert.equal(bad.status, 422);
      assert.ok('card_number' in bad.body.errors);
    });

    it('auto_assign: meeting a partner issues a card in each active auto-assigning programme, once', async () => {
      const partner = await createPartner(t);
      const auto = await createProgramme(t, partner.id, { autoAssign: true, initialBonusPoints: 25 });
      await createProgramme(t, partner.id, { autoAssign: false });
      await createProgramme(t, partner.id, { autoAssign: true, isActive: false });
      const c = await createCustomer(t);
      const { loyaltyCards } = t.app.context.services;
      const db = t.app.context.database.db;
      const first = await db.transaction((tx) => loyaltyCards.ensureMembership(tx, c.id, partner.id));
      assert.deepEqual(first.map((x) => [x.partner_card_id, x.points_balance]), [[auto, 25]]);
      const second = await db.transaction((tx) => loyaltyCards.ensureMembership(tx, c.id, partner.id));
      assert.deepEqual(second, []);
      const own = await request(t.url, 'GET', `/en/shop/loyalty-cards/${c.id}`, { headers: bearer(c.token) });
      assert.deepEqual(own.body.data.map((x: { partner_card_id: number }) => x.partner_card_id), [auto]);
      await assertLedgerConsistent(t);
    });

    it('a till finds a card by number (info, balance); a customer lists only their own cards', async () => {
      const programme = await createProgramme(t, p.id, { initialBonusPoints: 7, pointsPerCurrency: '2', currencyAmount: '1' });
      const c = await createCustomer(t);
      const card = await joinProgramme(t, c, programme);

      const info = await request(t.url, 'GET', `/en/shop/loyalty-cards/info?card_number=${card.card_number}`, { headers: apiHeaders(p.apiKey) });
      assert.equal(info.status, 200, info.text);
      assert.equal(info.body.data.card.id, card.id);
      assert.equal(info.body.data.user.id, c.id);
      assert.equal(info.body.data.user.phone, c.phone);
      assert.equal(info.body.data.programme.points_per_euro, 2);

      const balance = await request(t.url, 'GET', `/en/shop/loyalty-cards/balance?card_id=${card.id}`, { headers: apiHeaders(p.apiKey) });
      assert.equal(balance.status, 200);
      assert.equal(balance.body.data.points_balance, 7);

      const noLookup = await request(t.url, 'GET', '/en/shop/loyalty-cards/info', { headers: apiHeaders(p.apiKey) });
      assert.equal(noLookup.status, 422);
      const unknown = await request(t.url, 'GET', '/en/shop/loyalty-cards/info?card_number=0000', { headers: apiHeaders(p.apiKey) });
      assert.equal(unknown.status, 404);

      const one = await request(t.url, 'GET', `/en/shop/loyalty-cards/${card.id}`, { headers: apiHeaders(p.apiKey) });
      assert.equal(one.status, 200);
      assert.equal(one.body.data.card_number, card.card_number);

      const own = await request(t.url, 'GET', `/en/shop/loyalty-cards/${c.id}`, { headers: bearer(c.token) });
      assert.equal(own.status, 200);
      assert.deepEqual(own.body.data.map((x: { id: number }) => x.id), [card.id]);
      assert.equal(own.body.meta.total, 1);
      const someoneElse = await createCustomer(t);
      const notOwn = await request(t.url, 'GET', `/en/shop/loyalty-cards/${someoneElse.id}`, { headers: bearer(c.token) });
      assert.equal(notOwn.status, 404);

      const list = await request(t.url, 'GET', `/en/shop/loyalty-cards?user_id=${c.id}`, { headers: apiHeaders(p.apiKey) });
      assert.equal(list.status, 200);
      assert.deepEqual(list.body.data.map((x: { id: number }) => x.id), [card.id]);
    });
  });

  describe('awards', () => {
    it('awards by the programme rules and answers with the transaction shape', async () => {
      const programme = await createProgramme(t, p.id, { pointsPerCurrency: '10', currencyAmount: '3', pointsPerVisit: 1 });
      const card = await joinProgramme(t, await createCustomer(t), programme);
      const res = await award(t, p, { card_id: card.id, shop_id: shop, amount: 10, receipt_number: 'R-1' });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.code, 201);
      assert.deepEqual(Object.keys(res.body.data).sort(), AWARD_KEYS);
      assert.equal(res.body.data.type, 'purchase');
      assert.equal(res.body.data.points, 34); // 10 / 3 × 10 = 33.3 → 33, + 1 per visit
      assert.equal(res.body.data.amount, 10);
      assert.equal(res.body.data.balance_after, 34);
      assert.equal(res.body.data.receipt_number, 'R-1');

      const alias = await request(t.url, 'POST', '/en/shop/transactions/award-points', {
        headers: apiHeaders(p.apiKey),
        json: { card_id: card.id, shop_id: shop, amount: '3.00' },
      });
      assert.equal(alias.status, 201, alias.text);
      assert.equal(alias.body.data.points, 11);
      assert.equal(alias.body.data.balance_after, 45);
      assert.equal(await balanceOf(t, p, card.id), 45);
      await assertLedgerConsistent(t);
    });

    it('a receipt earns once per shop: the retry is 409 DUPLICATE_VALUE and changes nothing', async () => {
      const programme = await createProgramme(t, p.id);
      const card = await joinProgramme(t, await createCustomer(t), programme);
      const other = await createShop(t, p.id, 'Second shop');
      assert.equal((await award(t, p, { card_id: card.id, shop_id: shop, amount: 5, receipt_number: 'DUP-1' })).status, 201);
      const dup = await award(t, p, { card_id: card.id, shop_id: shop, amount: 5, receipt_number: 'DUP-1' });
      assert.equal(dup.status, 409);
      assert.equal(dup.body.code, 'DUPLICATE_VALUE');
      assert.equal(dup.body.errors[0].field, 'receipt_number');
      assert.equal((await award(t, p, { card_id: card.id, shop_id: other, amount: 5, receipt_number: 'DUP-1' })).status, 201);
      assert.equal(await balanceOf(t, p, card.id), 10);
    });

    it('an idempotent retry awards once and replays the first response', async () => {
      const programme = await createProgramme(t, p.id);
      const card = await joinProgramme(t, await createCustomer(t), programme);
      const body = { card_id: card.id, shop_id: shop, amount: 20 };
      const first = await award(t, p, body, { 'idempotency-key': 'till-7-sale-1' });
      const retry = await award(t, p, body, { 'idempotency-key': 'till-7-sale-1' });
      assert.equal(first.status, 201);
      assert.equal(retry.status, 201);
      assert.equal(retry.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual({ ...retry.body, request_id: undefined }, { ...first.body, request_id: undefined });
      assert.equal(await balanceOf(t, p, card.id), 20);
      const changed = await award(t, p, { ...body, amount: 21 }, { 'idempotency-key': 'till-7-sale-1' });
      assert.equal(changed.status, 422);
      assert.equal(changed.body.code, 'INVALID_VALUE');
      assert.equal(await balanceOf(t, p, card.id), 20);
    });

    it('refuses bad amounts, unknown cards and shops, and inactive programmes, changing nothing', async () => {
      const programme = await createProgramme(t, p.id);
      const card = await joinProgramme(t, await createCustomer(t), programme);
      for (const amount of [0, -5, 0.00001, '1.23456', 'abc', 2_000_000_000]) {
        const res = await award(t, p, { card_id: card.id, shop_id: shop, amount });
        assert.equal(res.status, 422, `${amount}: ${res.text}`);
        assert.ok('amount' in res.body.errors, `${amount}`);
      }
      const missing = await award(t, p, { card_id: 999999, shop_id: shop, amount: 1 });
      assert.equal(missing.status, 404);
      assert.equal(missing.body.errors[0].field, 'card_id');
      const noShop = await award(t, p, { card_id: card.id, shop_id: 999999, amount: 1 });
      assert.equal(noShop.status, 404);
      assert.equal(noShop.body.errors[0].field, 'shop_id');
      const required = await award(t, p, {});
      assert.equal(required.status, 422);
      assert.deepEqual(Object.keys(required.body.errors).sort(), ['amount', 'card_id', 'shop_id']);

      const inactive = await createProgramme(t, p.id);
      const card2 = await joinProgramme(t, await createCustomer(t), inactive);
      await t.app.context.database.db.execute(`update partner_cards set is_active = false where id = ${inactive}` as never);
      const refused = await award(t, p, { card_id: card2.id, shop_id: shop, amount: 10 });
      assert.equal(refused.status, 409);
      assert.equal(refused.body.code, 'INVALID_STATE');
      assert.equal(await balanceOf(t, p, card.id), 0);
    });
  });

  describe('deductions and reversals', () => {
    it('INSUFFICIENT_BALANCE names available and requested points', async () => {
      const programme = await createProgramme(t, p.id);
      const card = await joinProgramme(t, await createCustomer(t), programme);
      await award(t, p, { card_id: card.id, shop_id: shop, amount: 30 });
      const res = await deduct(t, p, { card_id: card.id, shop_id: shop, points: 31 });
      assert.equal(res.status, 422);
      assert.equal(res.body.code, 'INSUFFICIENT_BALANCE');
      assert.deepEqual(res.body.errors[0].meta, { available_points: 30, requested_points: 31 });
      assert.equal(res.body.errors[0].field, 'points');
      const ok = await deduct(t, p, { card_id: card.id, shop_id: shop, points: 30, reason: 'Discount' });
      assert.equal(ok.status, 201, ok.text);
      assert.deepEqual(Object.keys(ok.body.data).sort(), TX_KEYS);
      assert.equal(ok.body.data.type, 'deduct');
      assert.equal(ok.body.data.points, -30);
      assert.equal(ok.body.data.balance_after, 0);
      assert.equal(ok.body.data.amount, 0.3); // 100 points per euro by default
    });

    it('applies the redemption rules: disabled, minimum, maximum', async () => {
      const off = await createProgramme(t, p.id, { pointsRedemptionEnabled: false });
      const cardOff = await joinProgramme(t, await createCustomer(t), off);
      await award(t, p, { card_id: cardOff.id, shop_id: shop, amount: 100 });
      const disabled = await deduct(t, p, { card_id: cardOff.id, shop_id: shop, points: 10 });
      assert.equal(disabled.status, 409);
      assert.equal(disabled.body.code, 'INVALID_STATE');

      const ranged = await createProgramme(t, p.id, { minPointsForRedemption: 20, maxPointsPerRedemption: 50 });
      const card = await joinProgramme(t, await createCustomer(t), ranged);
      await award(t, p, { card_id: card.id, shop_id: shop, amount: 100 });
      const low = await deduct(t, p, { card_id: card.id, shop_id: shop, points: 19 });
      assert.equal(low.status, 422);
      assert.equal(low.body.code, 'OUT_OF_RANGE');
      assert.deepEqual(low.body.errors[0].meta, { min_points: 20, max_points: 50 });
      const high = await deduct(t, p, { card_id: card.id, shop_id: shop, points: 51 });
      assert.equal(high.status, 422);
      assert.equal(high.body.code, 'OUT_OF_RANGE');
      assert.equal((await deduct(t, p, { card_id: card.id, shop_id: shop, points: 50 })).status, 201);
      assert.equal(await balanceOf(t, p, card.id), 50);
    });

    it('reversing a deduction restores exactly the lots it drew from; a second reversal is 409', async () => {
      const programme = await createProgramme(t, p.id, { pointsExpirationDays: 30 });
      const card = await joinProgramme(t, await createCustomer(t), programme);
      await award(t, p, { card_id: card.id, shop_id: shop, amount: 40 });
      clock.advanceDays(1);
      await award(t, p, { card_id: card.id, shop_id: shop, amount: 60 });
      const spent = await deduct(t, p, { card_id: card.id, shop_id: shop, points: 70 });
      assert.equal(spent.status, 201);
      const before = await request(t.url, 'GET', `/en/shop/points/card/${card.id}/balance`, { headers: apiHeaders(p.apiKey) });
      assert.deepEqual(before.body.data.expiring.map((e: { points: number }) => e.points), [30]);

      const rev = await request(t.url, 'POST', `/en/shop/transactions/${spent.body.data.id}/reverse`, { headers: apiHeaders(p.apiKey), json: { reason: 'void' } });
      assert.equal(rev.status, 201, rev.text);
      assert.equal(rev.body.data.type, 'reversal');
      assert.equal(rev.body.data.points, 70);
      assert.equal(rev.body.data.reverses_id, spent.body.data.id);
      assert.equal(rev.body.data.points_not_recovered, 0);
      const after = await request(t.url, 'GET', `/en/shop/points/card/${card.id}/balance`, { headers: apiHeaders(p.apiKey) });
      assert.equal(after.body.data.points_balance, 100);
      assert.deepEqual(after.body.data.expiring.map((e: { points: number }) => e.points), [40, 60]);
      await assertLedgerConsistent(t);

      const twice = await request(t.url, 'POST', `/en/shop/transactions/${spent.body.data.id}/reverse`, { headers: apiHeaders(p.apiKey) });
      assert.equal(twice.status, 409);
      assert.equal(twice.body.code, 'INVALID_STATE');
      const ofReversal = await request(t.url, 'POST', `/en/shop/transactions/${rev.body.data.id}/reverse`, { headers: apiHeaders(p.apiKey) });
      assert.equal(ofReversal.status, 409);
    });

    it('reversing a purchase takes back its points, never below zero, and its amount', async () => {
      const programme = await createProgramme(t, p.id);
      const card = await joinProgramme(t, await createCustomer(t), programme);
      const bought = await award(t, p, { card_id: card.id, shop_id: shop, amount: 50, receipt_number: 'REFUND-1' });
      await deduct(t, p, { card_id: card.id, shop_id: shop, points: 40 });
      const rev = await request(t.url, 'POST', `/en/shop/transactions/${bought.body.data.id}/reverse`, { headers: apiHeaders(p.apiKey) });
      assert.equal(rev.status, 201, rev.text);
      assert.equal(rev.body.data.points, -10);
      assert.equal(rev.body.data.points_not_recovered, 40);
      assert.equal(rev.body.data.amount, -50);
      assert.equal(rev.body.data.balance_after, 0);
      await assertLedgerConsistent(t);
    });
  });

  describe('expiry', () => {
    it('spends first-to-expire first and expires lots on their day, lazily and by the sweep', async () => {
      const programme = await createProgramme(t, p.id, { pointsExpirationDays: 10 });
      const c = await createCustomer(t);
      const card = await joinProgramme(t, c, programme);
      const lot = async (points: number, body: Record<string, unknown> = {}) => {
        const res = await request(t.url, 'POST', '/en/shop/points', {
          headers: apiHeaders(p.apiKey),
          json: { card_id: card.id, points, reason: 'lot', ...body },
        });
        assert.equal(res.status, 201, res.text);
      };
      const day0 = clock.now().getTime();
      await lot(30, { expires_in_days: null }); // never expires: spent last
      await lot(100); // expires day 10
      clock.advanceDays(3);
      await lot(50); // expires day 13
      clock.advanceDays(2);
      await lot(20, { expires_in_days: 2 }); // expires day 7: first to expire
      // Spend 130: 20 (day 7) + 100 (day 10) + 10 (day 13); the never-expiring lot is untouched.
      assert.equal((await deduct(t, p, { card_id: card.id, shop_id: shop, points: 130 })).status, 201);
      const now = await request(t.url, 'GET', `/en/shop/points/card/${card.id}/balance`, { headers: apiHeaders(p.apiKey) });
      assert.equal(now.body.data.points_balance, 70);
      assert.deepEqual(now.body.data.expiring, [{ points: 40, expires_at: new Date(day0 + 13 * 86_400_000).toISOString() }]);

      clock.advanceDays(8.5); // day 13.5: the day-13 lot (40 left) has expired
      assert.equal(await balanceOf(t, p, card.id), 30);
      const history = await request(t.url, 'GET', `/en/shop/points?card_id=${card.id}&type=expire`, { headers: apiHeaders(p.apiKey) });
      assert.deepEqual(history.body.data.map((x: { points: number }) => x.points), [-40]);
      await assertLedgerConsistent(t);

      // A card nobody reads is expired by the sweep job.
      const quiet = await joinProgramme(t, await createCustomer(t), programme);
      await request(t.url, 'POST', '/en/shop/points', { headers: apiHeaders(p.apiKey), json: { card_id: quiet.id, points: 5, reason: 'x' } });
      clock.advanceDays(11);
      await t.app.context.workers.expirySweeper.runOnce();
      const swept = await request(t.url, 'GET', `/en/shop/points?card_id=${quiet.id}&type=expire`, { headers: apiHeaders(p.apiKey) });
      assert.deepEqual(swept.body.data.map((x: { points: number }) => x.points), [-5]);
      assert.equal(await balanceOf(t, p, quiet.id), 0);
      await assertLedgerConsistent(t);
    });
  });

  describe('manual and bulk adjustments', () => {
    it('bulk is all or nothing and reports every failing row', async () => {
      const programme = await createProgramme(t, p.id);
      const a = await joinProgramme(t, await createCustomer(t), programme);
      const b = await joinProgramme(t, await createCustomer(t), programme);
      const bad = await request(t.url, 'POST', '/en/shop/points/bulk', {
        headers: apiHeaders(p.apiKey),
        json: {
          rows: [
            { card_id: a.id, points: 10, reason: 'gift' },
            { card_id: b.id, points: -5, reason: 'fix' },
            { card_id: 999999, points: 1, reason: 'ghost' },
          ],
        },
      });
      assert.equal(bad.status, 422, bad.text);
      assert.equal(bad.body.code, 'INSUFFICIENT_BALANCE');
      assert.deepEqual(bad.body.errors.map((e: { field: string }) => e.field), ['rows.1.points', 'rows.2.card_id']);
      assert.equal(await balanceOf(t, p, a.id), 0, 'the good row was not applied');

      const good = await request(t.url, 'POST', '/en/shop/points/bulk', {
        headers: apiHeaders(p.apiKey),
        json: { rows: [{ card_id: a.id, points: 10, reason: 'gift' }, { card_id: b.id, points: 3, reason: 'gift' }, { card_id: a.id, points: -4, reason: 'fix' }] },
      });
      assert.equal(good.status, 201, good.text);
      assert.equal(good.body.data.count, 3);
      assert.equal(await balanceOf(t, p, a.id), 6);
      assert.equal(await balanceOf(t, p, b.id), 3);

      const tooMany = await request(t.url, 'POST', '/en/shop/points/bulk', {
        headers: apiHeaders(p.apiKey),
        json: { rows: Array.from({ length: 1001 }, () => ({ card_id: a.id, points: 1, reason: 'x' })) },
      });
      assert.equal(tooMany.status, 422);
      assert.ok('rows' in tooMany.body.errors);
      const zero = await request(t.url, 'POST', '/en/shop/points', { headers: apiHeaders(p.apiKey), json: { card_id: a.id, points: 0, reason: 'x' } });
      assert.equal(zero.status, 422);
      assert.equal(await balanceOf(t, p, a.id), 6);
    });
  });

  describe('customer history and exports', () => {
    it('customers read only their own transactions; summaries and CSV exports add up', async () => {
      const programme = await createProgramme(t, p.id, { initialBonusPoints: 5 });
      const c = await createCustomer(t);
      const other = await createCustomer(t);
      const card = await joinProgramme(t, c, programme);
      const otherCard = await joinProgramme(t, other, programme);
      await award(t, p, { card_id: card.id, shop_id: shop, amount: 20, receipt_number: '=HYPERLINK("x")' });
      await deduct(t, p, { card_id: card.id, shop_id: shop, points: 10 });
      const theirs = await award(t, p, { card_id: otherCard.id, shop_id: shop, amount: 1 });

      const list = await request(t.url, 'GET', '/en/shop/transactions?per_page=2', { headers: bearer(c.token) });
      assert.equal(list.status, 200);
      assert.deepEqual(list.body.data.map((x: { type: string }) => x.type), ['deduct', 'purchase']);
      assert.deepEqual(list.body.meta, { current_page: 1, per_page: 2, total: 3, last_page: 2 });

      const foreign = await request(t.url, 'GET', `/en/shop/transactions/${theirs.body.data.id}`, { headers: bearer(c.token) });
      assert.equal(foreign.status, 404);
      const mine = await request(t.url, 'GET', `/en/shop/transactions/${list.body.data[0].id}`, { headers: bearer(c.token) });
      assert.equal(mine.status, 200);

      const summary = await request(t.url, 'GET', '/en/shop/transactions/summary', { headers: bearer(c.token) });
      assert.equal(summary.status, 200, summary.text);
      assert.equal(summary.body.data.points_earned, 25);
      assert.equal(summary.body.data.points_spent, 10);
      assert.equal(summary.body.data.points_balance, 15);
      assert.equal(summary.body.data.purchase_amount, 20);

      const csv = await fetch(`${t.url}/en/shop/transactions/export`, { method: 'POST', headers: bearer(c.token) });
      assert.equal(csv.status, 200);
      assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
      const lines = (await csv.text()).trim().split('\r\n');
      assert.equal(lines[0], 'id,created_at,type,points,amount,balance_after,card_id,user_id,shop_id,receipt_number,reason,reverses_id,returns_id');
      assert.equal(lines.length, 4);
      assert.ok(lines.some((l) => l.includes(`"'=HYPERLINK(""x"")"`)), 'a formula is neutralised and quoted');

      const partnerCsv = await fetch(`${t.url}/en/shop/transactions/export`, {
        method: 'POST',
        headers: { ...apiHeaders(p.apiKey), 'content-type': 'application/json' },
        body: JSON.stringify({ card_id: otherCard.id }),
      });
      assert.equal((await partnerCsv.text()).trim().split('\r\n').length, 3);

      const refused = await request(t.url, 'GET', '/en/shop/transactions', { headers: apiHeaders(p.apiKey) });
      assert.equal(refused.status, 401);
    });

    it('the CSV export names the entry a reversal reverses and the one a return returns', async () => {
      const card = await joinProgramme(t, await createCustomer(t), await createProgramme(t, p.id));
      const sale = (await award(t, p, { card_id: card.id, shop_id: shop, amount: 30 })).body.data;
      const voided = (await award(t, p, { card_id: card.id, shop_id: shop, amount: 5 })).body.data;
      const back = await request(t.url, 'POST', `/en/shop/transactions/${sale.id}/return`, { headers: apiHeaders(p.apiKey), json: { amount: 10 } });
      assert.equal(back.status, 201, back.text);
      const reversal = await request(t.url, 'POST', `/en/shop/transactions/${voided.id}/reverse`, { headers: apiHeaders(p.apiKey), json: {} });
      assert.equal(reversal.status, 201, reversal.text);

      const csv = await fetch(`${t.url}/en/shop/transactions/export`, {
        method: 'POST',
        headers: { ...apiHeaders(p.apiKey), 'content-type': 'application/json' },
        body: JSON.stringify({ card_id: card.id }),
      });
      const [header, ...rows] = (await csv.text()).trim().split('\r\n');
      const columns = header!.split(',');
      const byId = new Map(rows.map((r) => [Number(r.split(',')[0]), Object.fromEntries(r.split(',').map((v, i) => [columns[i], v]))]));
      const refs = (id: number) => [byId.get(id)!.type, byId.get(id)!.reverses_id, byId.get(id)!.returns_id];
      assert.deepEqual(refs(sale.id), ['purchase', '', '']);
      assert.deepEqual(refs(back.body.data.id), ['return', '', String(sale.id)]);
      assert.deepEqual(refs(reversal.body.data.id), ['reversal', String(voided.id), '']);
      // The same file from the console's export.
      const partnerCsv = await fetch(`${t.url}/en/partners/transactions/export?card_id=${card.id}`, { headers: bearer(p.token) });
      assert.equal((await partnerCsv.text()).trim(), [header, ...rows].join('\r\n'));
    });
  });
});
