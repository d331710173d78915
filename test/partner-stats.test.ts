// GET /{locale}/partners/stats: a partner's own figures per UTC day (the console's Overview
// charts): every day of the range, zeros where nothing happened, only the caller's figures.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { utcDay, addDays } from '../src/shared/calendar.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { claimCoupon, couponAction, createOffer } from './helpers/engagement.js';
import { createAdmin, createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { award, createCustomer, createProgramme, createShop, deduct, joinProgramme } from './helpers/loyalty.js';
import { createSmsPartner, LT_OK, send } from './helpers/sms.js';

describe('partner statistics per day', () => {
  let t: TestApp;
  let a: PartnerFixture;
  let b: PartnerFixture;
  const today = utcDay(new Date());
  const yesterday = addDays(today, -1);
  let awarded = 0;

  before(async () => {
    t = await startTestApp();
    const admin = await createAdmin(t);
    a = await createSmsPartner(t, admin);
    b = await createPartner(t, 'Partner B');
    const programme = await createProgramme(t, a.id);
    const shop = await createShop(t, a.id);
    const customer = await createCustomer(t);
    const card = await joinProgramme(t, customer, programme);
    const purchase = await award(t, a, { card_id: card.id, shop_id: shop, amount: 30 });
    assert.equal(purchase.status, 201, purchase.text);
    awarded = purchase.body.data.points;
    assert.ok(awarded > 5);
    assert.equal((await deduct(t, a, { card_id: card.id, shop_id: shop, points: 5 })).status, 201);
    const offer = await createOffer(t, a, { title: 'Gift', discount_type: 'gift' });
    const coupon = await claimCoupon(t, customer, offer.id);
    assert.equal((await couponAction(t, a, coupon.id, 'redeem', { shop_id: shop })).status, 200);
    assert.equal((await send(t, a, { source: 'Shop', destination: LT_OK, message: 'Hello' })).status, 200);
  });
  after(async () => {
    await t.close();
  });

  it('gives every day of the range, with the figures on the day they happened', async () => {
    const res = await request(t.url, 'GET', `/en/partners/stats?from=${yesterday}&to=${today}`, { headers: bearer(a.token) });
    assert.equal(res.status, 200, res.text);
    const { by_day: days, totals } = res.body.data;
    assert.deepEqual(
      days.map((d: { day: string }) => d.day),
      [yesterday, today],
    );
    assert.deepEqual(days[0], { day: yesterday, transactions: 0, points_awarded: 0, points_deducted: 0, coupons_redeemed: 0, new_cards: 0, sms_spend: 0 });
    const day = days[1];
    assert.equal(day.transactions, 2);
    assert.equal(day.points_awarded, awarded);
    assert.equal(day.points_deducted, 5);
    assert.equal(day.coupons_redeemed, 1);
    assert.equal(day.new_cards, 1);
    assert.ok(day.sms_spend > 0, res.text);
    const account = await request(t.url, 'GET', '/en/partners/sms-account', { headers: bearer(a.token) });
    assert.equal(day.sms_spend, Number((10 - account.body.data.balance).toFixed(4)));
    const { day: _day, ...figures } = day;
    assert.deepEqual(totals, figures);
  });

  it('shows another partner none of it', async () => {
    const res = await request(t.url, 'GET', `/en/partners/stats?from=${today}&to=${today}`, { headers: bearer(b.token) });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data.totals, { transactions: 0, points_awarded: 0, points_deducted: 0, coupons_redeemed: 0, new_cards: 0, sms_spend: 0 });
  });

  it('defaults to the last 30 days and refuses a reversed or too long range with 422 on the field', async () => {
    const res = await request(t.url, 'GET', '/en/partners/stats', { headers: bearer(a.token) });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.by_day.length, 30);
    assert.equal(res.body.data.to, today);
    const reversed = await request(t.url, 'GET', `/en/partners/stats?from=${today}&to=${yesterday}`, { headers: bearer(a.token) });
    assert.equal(reversed.status, 422);
    assert.deepEqual(Object.keys(reversed.body.errors), ['from']);
    const long = await request(t.url, 'GET', '/en/partners/stats?from=2020-01-01&to=2021-06-01', { headers: bearer(a.token) });
    assert.equal(long.status, 422);
    assert.deepEqual(Object.keys(long.body.errors), ['to']);
    const bad = await request(t.url, 'GET', '/en/partners/stats?from=yesterday', { headers: bearer(a.token) });
    assert.equal(bad.status, 422);
    assert.deepEqual(Object.keys(bad.body.errors), ['from']);
  });

  it('is net of reversals and returns: points taken back lower points_awarded, points given back lower points_deducted', async () => {
    const totals = async () => (await request(t.url, 'GET', `/en/partners/stats?from=${yesterday}&to=${today}`, { headers: bearer(a.token) })).body.data.totals;
    const before = await totals();
    const programme = await createProgramme(t, a.id);
    const shop = await createShop(t, a.id);
    const card = await joinProgramme(t, await createCustomer(t), programme);
    const post = async (path: string, json: Record<string, unknown>) => {
      const res = await request(t.url, 'POST', path, { headers: apiHeaders(a.apiKey), json });
      assert.equal(res.status, 201, res.text);
      return res.body.data as { id: number; points: number };
    };
    const sale = await post('/en/shop/transactions/create', { card_id: card.id, shop_id: shop, amount: 30 });
    const voided = await post('/en/shop/transactions/create', { card_id: card.id, shop_id: shop, amount: 12 });
    const spend = await post('/en/shop/transactions/deduct-points', { card_id: card.id, shop_id: shop, points: 6 });
    const returned = await post(`/en/shop/transactions/${sale.id}/return`, { amount: 10 });
    const reversal = await post(`/en/shop/transactions/${voided.id}/reverse`, {});
    const givenBack = await post(`/en/shop/transactions/${spend.id}/return`, { points: 2 });
    assert.ok(returned.points < 0 && reversal.points < 0 && givenBack.points === 2);
    const after = await totals();
    assert.equal(after.points_awarded - before.points_awarded, sale.points + voided.points + returned.points + reversal.points);
    assert.equal(after.points_deducted - before.points_deducted, 6 - 2);
    // Transactions stay the till's purchases and deductions.
    assert.equal(after.transactions - before.transactions, 3);
  });

  it('needs a partner token', async () => {
    assert.equal((await request(t.url, 'GET', '/en/partners/stats')).status, 401);
    const customer = await createCustomer(t);
    const res = await request(t.url, 'GET', '/en/partners/stats', { headers: bearer(customer.token) });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'INSUFFICIENT_PERMISSIONS');
  });
});
