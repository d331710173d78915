// Webhook subscriptions in a real browser at 375 px, against the real app (DESIGN.md §14
// "Console", issue 24): a subscription without events is refused with the API's error next to
// the event picker; one for every event is added with a receiver started here as its URL,
// tested (the ping reaches the receiver and shows as delivered among the deliveries), paused
// and deleted. axe-core finds no serious or critical violation on each state of the page.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { DemoCredentials } from '../../src/modules/demo/demo.service.js';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';
import { launchBrowser, type Browser } from './helpers/browser.js';
import { openNav, signIn } from './helpers/console.js';
import { checkPage } from './helpers/pages.js';
import { seed } from './helpers/seed.js';

describe('partner console: webhook subscriptions (375 px)', () => {
  let t: TestApp;
  let demo: DemoCredentials;
  let browser: Browser;
  let page: Page;
  let receiver: http.Server;
  let receiverUrl = '';
  const received: Array<{ headers: http.IncomingHttpHeaders; body: any }> = [];

  before(async () => {
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    t = await startTestApp({ APP_TEST_PHONES: '+37060000000:123456', SMS_SIMULATOR_DELAY_MS: '50', ALLOW_PRIVATE_URLS: 'true' });
    demo = await seed(t);
    browser = await launchBrowser();
    page = await browser.page({ width: 375, height: 800 });
    await signIn(page, `${t.url}/dashboard/`, demo.partner.email, demo.partner.password, 'Overview');
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  it('refuses a subscription without events, with the error at the event picker', async () => {
    await openNav(page, 'Webhooks');
    const form = page.getByRole('form', { name: 'Add subscription' });
    await form.getByLabel('URL').fill(receiverUrl);
    await page.getByRole('button', { name: 'Add subscription' }).click();
    const summary = page.getByRole('alert').filter({ hasText: 'There is a problem' });
    await summary.waitFor();
    assert.match(await summary.innerText(), /Events/, 'the summary names the event picker');
    await checkPage(page, 'Webhooks with a field error at 375');
  });

  it('adds a subscription for every event, sends a test and shows the delivery', async () => {
    const form = page.getByRole('form', { name: 'Add subscription' });
    await form.getByLabel('URL').fill(receiverUrl);
    await form.getByLabel('All events (*)').check();
    await form.getByLabel('Description').fill('CRM');
    await page.getByRole('button', { name: 'Add subscription' }).click();
    await page.getByRole('status').filter({ hasText: 'added' }).waitFor();
    const table = page.getByRole('table', { name: 'Event subscriptions' });
    const row = table.getByRole('row').filter({ hasText: receiverUrl });
    await row.getByText('All events (*)').waitFor();
    await row.getByText('Active', { exact: true }).waitFor();
    await checkPage(page, 'Webhooks with a subscription at 375');

    await row.getByRole('button', { name: 'Send test' }).click();
    await page.getByRole('status').filter({ hasText: 'test event' }).waitFor();
    const deliveries = page.getByRole('table', { name: 'Deliveries' });
    await deliveries.getByRole('row').filter({ hasText: 'ping' }).getByText('Delivered').waitFor({ timeout: 10_000 });
    assert.equal(received.length, 1);
    assert.equal(received[0]!.body.type, 'ping');
    assert.equal(received[0]!.headers['x-loyalty-event'], 'ping');
    assert.match(String(received[0]!.headers['x-loyalty-signature']), /^t=\d+,v1=[0-9a-f]{64}$/);
    await checkPage(page, 'Webhooks with a delivery at 375');
  });

  it('pauses, edits and deletes the subscription', async () => {
    const table = page.getByRole('table', { name: 'Event subscriptions' });
    const row = table.getByRole('row').filter({ hasText: receiverUrl });
    await row.getByRole('button', { name: 'Pause' }).click();
    await row.getByText('Paused').waitFor();

    await row.getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: /Edit subscription/ });
    assert.equal(await form.getByLabel('Description').inputValue(), 'CRM', 'the form shows what was stored');
    await form.getByLabel('All events (*)').uncheck();
    await form.getByLabel('coupon.redeemed').check();
    await form.getByLabel('Active (send events)').check();
    await form.getByRole('button', { name: 'Save' }).click();
    await row.getByText('coupon.redeemed').waitFor();
    await row.getByText('Active', { exact: true }).waitFor();

    await row.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await table.getByText('No subscriptions yet', { exact: false }).waitFor();
    await checkPage(page, 'Webhooks after a delete at 375');
  });
});
