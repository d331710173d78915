// Import-sourced offers end to end (DESIGN.md §8, §9): a feed with a discounted product gives
// the partner an offer (`source: "import"`, `discount_type: "price"`) that tills and apps
// list and customers claim like any other; re-importing an unchanged feed changes no offer;
// the offer ends when the discount or the product leaves the feed, and comes back with it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { importFeed } from './helpers/catalog.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { createCustomer, createProgramme, joinProgramme } from './helpers/loyalty.js';

const feed = (items: Array<{ id: string; name: string; price: string; sale?: string }>) =>
  `<?xml version="1.0" encoding="UTF-8"?><products>${items
    .map((i) => `<product><id>${i.id}</id><name>${i.name}</name><price>${i.price}</price>${i.sale ? `<sale_price>${i.sale}</sale_price>` : ''}<currency>EUR</currency></product>`)
    .join('')}</products>`;

describe('import-sourced offers', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let other: PartnerFixture;

  const liveOffers = async (key = p.apiKey) => {
    const res = await request(t.url, 'GET', '/en/shop/offers?per_page=100', { headers: apiHeaders(key) });
    assert.equal(res.status, 200, res.text);
    return res.body.data as Array<Record<string, any>>;
  };
  const syncStatus = async () => (await request(t.url, 'GET', '/en/shop/sync-status', { headers: apiHeaders(p.apiKey) })).body.data;

  before(async () => {
    t = await startTestApp();
    p = await createPartner(t);
    other = await createPartner(t);
  });
  after(() => t.close());

  it('a discounted product carries one live offer, listed and claimable; the other partner sees none', async () => {
    const done = await importFeed(t, p.apiKey, feed([{ id: 'A1', name: 'Puodelis', price: '12.99', sale: '9.99' }, { id: 'A2', name: 'Šaukštas', price: '3.50' }]));
    assert.equal(done.status, 'completed', JSON.stringify(done));
    const offers = await liveOffers();
    assert.equal(offers.length, 1);
    const [offer] = offers;
    assert.equal(offer!.source, 'import');
    assert.equal(offer!.discount_type, 'price');
    assert.equal(offer!.discount_value, 9.99);
    assert.equal(offer!.title, 'Puodelis');
    assert.equal(offer!.points_cost, 0);
    const product = (await request(t.url, 'GET', '/en/shop/products?q=Puodelis', { headers: apiHeaders(p.apiKey) })).body.data[0];
    assert.deepEqual(offer!.product_ids, [product.id]);
    assert.deepEqual(await liveOffers(other.apiKey), []);

    // A customer with a card of the partner claims it like any offer.
    const customer = await createCustomer(t);
    await joinProgramme(t, customer, await createProgramme(t, p.id));
    const claim = await request(t.url, 'POST', `/en/shop/offers/${offer!.id}/claim`, { headers: bearer(customer.token) });
    assert.equal(claim.status, 201, claim.text);
    assert.equal(claim.body.data.coupon.offer.id, offer!.id);
  });

  it('an unchanged re-import changes no offer; a changed discount updates the same offer', async () => {
    const before = await syncStatus();
    await importFeed(t, p.apiKey, feed([{ id: 'A1', name: 'Puodelis', price: '12.99', sale: '9.99' }, { id: 'A2', name: 'Šaukštas', price: '3.50' }]));
    assert.deepEqual(await syncStatus(), before, 'no offer row touched');
    const [was] = await liveOffers();

    await importFeed(t, p.apiKey, feed([{ id: 'A1', name: 'Puodelis', price: '12.99', sale: '8.49' }, { id: 'A2', name: 'Šaukštas', price: '3.50' }]));
    const now = await liveOffers();
    assert.equal(now.length, 1);
    assert.equal(now[0]!.id, was!.id);
    assert.equal(now[0]!.discount_value, 8.49);
    assert.equal((await syncStatus()).total_offers, before.total_offers);
  });

  it('ends when the discount leaves the feed, and comes back (the same offer) with it', async () => {
    const [was] = await liveOffers();
    await importFeed(t, p.apiKey, feed([{ id: 'A1', name: 'Puodelis', price: '12.99' }, { id: 'A2', name: 'Šaukštas', price: '3.50' }]));
    assert.deepEqual(await liveOffers(), []);
    const ended = await syncStatus();
    assert.equal(ended.expired_offers, 1);
    assert.equal(ended.active_offers, 0);

    await importFeed(t, p.apiKey, feed([{ id: 'A1', name: 'Puodelis', price: '12.99', sale: '9.49' }, { id: 'A2', name: 'Šaukštas', price: '3.50' }]));
    const back = await liveOffers();
    assert.deepEqual(back.map((o) => o.id), [was!.id]);
    assert.equal(back[0]!.discount_value, 9.49);
  });

  it('ends when the product leaves a replace-mode feed', async () => {
    await importFeed(t, p.apiKey, feed([{ id: 'A2', name: 'Šaukštas', price: '3.50' }]), { mode: 'replace' });
    assert.deepEqual(await liveOffers(), []);
  });
});
