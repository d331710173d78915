// Data for the console's pages (browser tests, screenshots, the dashboard benchmark): the demo
// partner, one customer with a card and two purchases, an SMS, a message with a file.
import assert from 'node:assert/strict';
import type { DemoCredentials } from '../../../src/modules/demo/demo.service.js';
import type { TestApp } from '../../../test/helpers/app.js';
import { apiHeaders, bearer, request, type Response } from '../../../test/helpers/http.js';

/** The app must run with APP_TEST_PHONES=+37060000000:123456. */
/** The demo partner, one customer with a card and two purchases, an SMS, a message with a file. */
export async function seed(t: TestApp): Promise<DemoCredentials> {
  const demo = (await t.app.context.services.demo.seedIfEmpty())!;
  const api = apiHeaders(demo.api_key);
  assert.equal((await request(t.url, 'POST', '/en/app/auth/otp/request', { json: { phone: '+37060000000' } })).status, 200);
  const login = await request(t.url, 'POST', '/en/app/auth/otp/verify', { json: { phone: '+37060000000', code: '123456' } });
  assert.equal(login.status, 200, login.text);
  // The demo seed gave the test customer a card (it holds the demo coupon): use it.
  const cards = await request(t.url, 'GET', `/en/shop/loyalty-cards/${login.body.data.user.id}`, { headers: bearer(login.body.data.token) });
  assert.equal(cards.status, 200, cards.text);
  const card = (cards.body.data as Array<{ id: number; partner_card_id: number }>).find((c) => c.partner_card_id === demo.partner_card.id);
  assert.ok(card, cards.text);
  for (const [amount, receipt] of [[12.5, 'R-1'], [40, 'R-2']] as const) {
    const purchase: Response = await request(t.url, 'POST', '/en/shop/transactions/create', { headers: api, json: { card_id: card.id, shop_id: demo.shop.id, amount, receipt_number: receipt } });
    assert.equal(purchase.status, 201, purchase.text);
  }
  const sms = await request(t.url, 'POST', '/en/sms/send', { headers: api, json: { source: demo.sms.sender, destination: '+37060000123', message: 'Your coffee is on us today.' } });
  assert.equal(sms.status, 200, sms.text);
  const form = new FormData();
  form.set('body', 'Please approve the sender name "Pupa".');
  form.append('files', new Blob(['name,phone\n'], { type: 'text/csv' }), 'senders.csv');
  const partnerLogin = await request(t.url, 'POST', '/en/partners/auth/login', { json: { email: demo.partner.email, password: demo.partner.password } });
  const msg = await fetch(`${t.url}/en/partners/messages`, { method: 'POST', headers: bearer(partnerLogin.body.data.token), body: form });
  assert.equal(msg.status, 201, await msg.text());
  return demo;
}

