// Edge cases found in review: client input that must never be a 500, cards of a deleted
// programme that stay readable, reversals whose order matters (and is refused where it
// would create or lose points), and the award alias sharing its Idempotency-Key.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { assertLedgerConsistent, award, balanceOf, createCustomer, createProgramme, createShop, deduct, joinProgramme, TestClock } from './helpers/loyalty.js';

describe('ledger edge cases', () => {
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
  const reverse = (id: number) => request(t.url, 'POST', `/en/shop/transactions/${id}/reverse`, { headers: apiHeaders(p.apiKey) });

  it('a card of a deleted programme can still be read, spent and shared with a till', async () => {
    const programme = await createProgramme(t, p.id);
    const c = await createCustomer(t);
    const card = await joinProgramme(t, c, programme);
    await request(t.url, 'POST', '/en/shop/points', { headers: apiHeaders(p.apiKey), json: { card_id: card.id, points: 30, reason: 'x' } });
    assert.equal((await request(t.url, 'DELETE', `/en/partners/cards/${programme}`, { headers: bearer(p.token) })).status, 200);
    for (const path of [`/en/shop/loyalty-cards/info?card_id=${card.id}`, `/en/shop/loyalty-cards/balance?card_id=${card.id}`]) {
      const res = await request(t.url, 'GET', path, { headers: apiHeaders(p.apiKey) });
      assert.equal(res.status, 200, `${path}: ${res.text}`);
    }
    const info = await request(t.url, 'GET', `/en/shop/loyalty-cards/info?card_id=${card.id}`, { headers: apiHeaders(p.apiKey) });
    assert.equal(info.body.data.programme.is_active, false);
    assert.equal((await deduct(t, p, { card_id: card.id, shop_id: shop, points: 10 })).status, 201);
    const earn = await award(t, p, { card_id: card.id, shop_id: shop, amount: 5 });
    assert.equal(earn.status, 409, 'a deleted programme earns nothing');
    const gen = await request(t.url, 'POST', '/en/shop/qr-card/generate', { headers: apiHeaders(p.apiKey), json: {} });
    const share = await request(t.url, 'POST', '/en/app/qr-card/scan', { headers: bearer(c.token), json: { code: gen.body.data.qr_content, card_id: card.id } });
    assert.equal(share.status, 200, share.text);
    const status = await request(t.url, 'GET', `/en/shop/qr-card/status/${gen.body.data.session_id}`, { headers: apiHeaders(p.apiKey) });
    assert.equal(status.status, 200, status.text);
    assert.equal(status.body.data.card.card.points_balance, 20);
  });

  it('date filters at the edge of the calendar: the last day is no bound, year 0 is a 422', async () => {
    const ok = await request(t.url, 'GET', '/en/shop/points?to=9999-12-31', { headers: apiHeaders(p.apiKey) });
    assert.equal(ok.status, 200, ok.text);
    for (const q of ['from=0000-01-01', 'from=0000-01-01T00:00:00%2B01:00', 'from=9999-12-31T23:59:59-23:59', 'to=10000-01-01']) {
      const res = await request(t.url, 'GET', `/en/shop/points?${q}`, { headers: apiHeaders(p.apiKey) });
      assert.equal(res.status, 422, `${q}: ${res.text}`);
    }
  });

  it('text PostgreSQL cannot store (U+0000) is a 422 on its field, not a 500', async () => {
    const c = await createCustomer(t);
    const card = await joinProgramme(t, c, await createProgramme(t, p.id));
    const cases: Array<[string, Promise<{ status: number; body: { errors?: Record<string, unknown> } }>]> = [
      ['receipt_number', award(t, p, { card_id: card.id, shop_id: shop, amount: 1, receipt_number: 'a\u0000b' })],
      ['reason', request(t.url, 'POST', '/en/shop/points', { headers: apiHeaders(p.apiKey), json: { card_id: card.id, points: 5, reason: 'x\u0000' } })],
      ['card_number', request(t.url, 'GET', '/en/shop/loyalty-cards/info?card_number=%00', { headers: apiHeaders(p.apiKey) })],
      ['name', request(t.url, 'PUT', '/en/shop/auth/profile', { headers: bearer(c.token), json: { name: 'a\u0000' } })],
      ['device_name', request(t.url, 'POST', '/en/shop/auth/qr-login/generate', { headers: apiHeaders(p.apiKey), json: { device_name: 'a\u0000' } })],
      ['search', request(t.url, 'GET', '/en/partners/customers?search=%00', { headers: bearer(p.token) })],
    ];
    for (const [field, pending] of cases) {
      const res = await pending;
      assert.equal(res.status, 422, field);
      assert.ok(res.body.errors && field in res.body.errors, `${field}: ${JSON.stringify(res.body)}`);
    }
    assert.equal(await balanceOf(t, p, card.id), 0);
  });

  it('a redemption worth more than one transaction can hold is a 422, not a 500', async () => {
    const programme = await createProgramme(t, p.id, { pointsPerCurrencyRedemption: '1', currencyAmountRedemption: '1000000' });
    const card = await joinProgramme(t, await createCustomer(t), programme);
    await request(t.url, 'POST', '/en/shop/points', { headers: apiHeaders(p.apiKey), json: { card_id: card.id, points: 20000, reason: 'x' } });
    const res = await deduct(t, p, { card_id: card.id, shop_id: shop, points: 20000 });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.equal(res.body.code, 'OUT_OF_RANGE');
    assert.equal(await balanceOf(t, p, card.id), 20000);
  });

  it('voiding a spend, then refunding the purchase that funded it, leaves nothing', async () => {
    const card = await joinProgramme(t, await createCustomer(t), await createProgramme(t, p.id));
    const purchase = await award(t, p, { card_id: card.id, shop_id: shop, amount: 100 });
    const spend = await deduct(t, p, { card_id: card.id, shop_id: shop, points: 100 });
    assert.equal((await reverse(spend.body.data.id)).status, 201);
    assert.equal((await reverse(purchase.body.data.id)).status, 201);
    assert.equal(await balanceOf(t, p, card.id), 0);
  });

  it('a spend of points from a refunded purchase cannot be voided afterwards: it would create points', async () => {
    const card = await joinProgramme(t, await createCustomer(t), await createProgramme(t, p.id));
    const purchase = await award(t, p, { card_id: card.id, shop_id: shop, amount: 100 });
    const spend = await deduct(t, p, { card_id: card.id, shop_id: shop, points: 100 });
    const refund = await reverse(purchase.body.data.id);
    assert.equal(refund.body.data.points_not_recovered, 100);
    const voided = await reverse(spend.body.data.id);
    assert.equal(voided.status, 409);
    assert.equal(voided.body.code, 'INVALID_STATE');
    assert.equal(voided.body.errors[0].meta.status, 'earning_reversed');
    assert.equal(await balanceOf(t, p, card.id), 0);
  });

  it('voiding a spend whose lot has expired since gives the points back only to expire them again', async () => {
    const card = await joinProgramme(t, await createCustomer(t), await createProgramme(t, p.id, { pointsExpirationDays: 10 }));
    const purchase = await award(t, p, { card_id: card.id, shop_id: shop, amount: 100 }); // lot L, expires day 10
    const spend = await deduct(t, p, { card_id: card.id, shop_id: shop, points: 60 }); // from L
    clock.advanceDays(5);
    await request(t.url, 'POST', '/en/shop/points', { headers: apiHeaders(p.apiKey), json: { card_id: card.id, points: 100, reason: 'M', expires_in_days: null } });
    clock.advanceDays(6); // L's last 40 expire
    assert.equal(await balanceOf(t, p, card.id), 100);
    assert.equal((await reverse(spend.body.data.id)).status, 201); // 60 back into L, which has expired
    assert.equal(await balanceOf(t, p, card.id), 100);
    const refund = await reverse(purchase.body.data.id); // nothing of L is left to take
    assert.equal(refund.status, 201);
    assert.equal(refund.body.data.points, 0);
    assert.equal(await balanceOf(t, p, card.id), 100);
  });

  it('an Idempotency-Key used on transactions/create replays on its alias award-points', async () => {
    const card = await joinProgramme(t, await createCustomer(t), await createProgramme(t, p.id));
    const body = { card_id: card.id, shop_id: shop, amount: 12 };
    const first = await award(t, p, body, { 'idempotency-key': 'alias-1' });
    const retry = await request(t.url, 'POST', '/en/shop/transactions/award-points', {
      headers: { ...apiHeaders(p.apiKey), 'idempotency-key': 'alias-1' },
      json: body,
    });
    assert.equal(retry.status, 201, retry.text);
    assert.equal(retry.headers.get('idempotent-replayed'), 'true');
    assert.equal(retry.body.data.id, first.body.data.id);
    assert.equal(await balanceOf(t, p, card.id), 12);
  });
});
