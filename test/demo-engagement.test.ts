// The demo data a first start seeds includes one offer, one game and one coupon of that
// offer held by the test customer, and the README's quick start works on them: a till
// verifies the printed coupon code at the demo shop and redeems it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { apiHeaders, request } from './helpers/http.js';
import type { DemoCredentials } from '../src/modules/demo/demo.service.js';

describe('demo engagement data', () => {
  let t: TestApp;
  let demo: DemoCredentials;

  before(async () => {
    t = await startTestApp({ APP_TEST_PHONES: '+37060000000:123456' });
    demo = (await t.app.context.services.demo.seedIfEmpty())!;
    assert.ok(demo, 'seeded');
  });
  after(() => t.close());

  it('has an offer, a game and a coupon for the test customer', async () => {
    assert.equal(demo.offer?.title, 'Free coffee');
    assert.equal(demo.game?.name, 'Demo wheel');
    assert.match(demo.coupon!.code, /^[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/);
    assert.equal(demo.coupon!.customer_phone, '+37060000000');
    const key = apiHeaders(demo.api_key);
    const offers = await request(t.url, 'GET', '/en/shop/offers/featured', { headers: key });
    assert.deepEqual(offers.body.data.map((o: any) => o.id), [demo.offer!.id]);
    const games = await request(t.url, 'GET', '/en/shop/games', { headers: key });
    assert.deepEqual(games.body.data.map((g: any) => g.id), [demo.game!.id]);
  });

  it("the quick start: the till verifies the printed code at the demo shop, then redeems it", async () => {
    const key = apiHeaders(demo.api_key);
    const verified = await request(t.url, 'POST', '/en/shop/coupons/verify', { headers: key, json: { coupon_code: demo.coupon!.code, shop_id: demo.shop.id } });
    assert.equal(verified.status, 200, verified.text);
    assert.equal(verified.body.data.coupon.status, 'pending');
    assert.equal(verified.body.data.coupon.offer.title, 'Free coffee');
    // The coupon cost 20 of the programme's 50 welcome points.
    assert.equal(verified.body.data.user.points_balance, 30);
    const redeemed = await request(t.url, 'POST', `/en/shop/coupons/${demo.coupon!.id}/redeem`, { headers: key, json: { shop_id: demo.shop.id } });
    assert.equal(redeemed.status, 200, redeemed.text);
    assert.equal(redeemed.body.data.coupon.status, 'used');
  });

  it('is not seeded twice', async () => {
    assert.equal(await t.app.context.services.demo.seedIfEmpty(), undefined);
  });
});
