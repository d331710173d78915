// The partner console with data on it, in a real browser: the overview's per-day figures
// match the ledger, transactions filter and export as CSV, SMS statuses arrive live (the
// `sms.status` events on the partner's private channel) until delivered, a message's
// attachment downloads; and the console works by keyboard alone.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { WebSocket } from 'playwright-core';
import { apiHeaders, request } from '../../test/helpers/http.js';
import { openNav, signIn } from './helpers/console.js';
import { PARTNER_PAGES, seededApp } from './helpers/pages.js';

describe('partner console with data', () => {
  const s = seededApp();

  it('shows the partner’s figures: overview per day, transactions, SMS status, the message with its file', async () => {
    const { t, demo, browser } = s;
    const page = await browser.context.newPage();
    await signIn(page, `${t.url}/dashboard/`, demo.partner.email, demo.partner.password, 'Overview');
    const today = new Date().toISOString().slice(0, 10);
    const kpi = (label: string) => page.locator('.kpis > div').filter({ has: page.getByText(label, { exact: true }) }).locator('dd');
    await page.getByRole('figure').first().waitFor();
    // Each figure has its own request: read it once it has loaded ('…' until then).
    const figure = async (label: string) => {
      await kpi(label).filter({ hasNotText: '…' }).waitFor();
      return kpi(label).innerText();
    };
    assert.equal(await figure('Transactions, 30 days'), '2');
    assert.equal(await figure('Customers'), '1');
    // The chart's figures, as the table under it gives them to screen readers.
    const pointsFigure = page.getByRole('figure').filter({ hasText: 'Points awarded and deducted per day' });
    await pointsFigure.getByText('Figures of').click();
    const todayRow = pointsFigure.getByRole('row').filter({ has: page.getByRole('rowheader', { name: today }) });
    // Today, as the ledger has it: awarded = every positive entry that is not a reversal;
    // deducted = points spent at a till or on an offer (the demo seed's coupon was bought
    // with points).
    const history = await request(t.url, 'GET', '/en/shop/points?card_id=1&per_page=100', { headers: apiHeaders(demo.api_key) });
    assert.equal(history.status, 200, history.text);
    const entries = (history.body.data as Array<{ type: string; points: number; created_at: string }>).filter((e) => e.created_at.startsWith(today));
    const awarded = entries.filter((e) => e.points > 0 && e.type !== 'reversal').reduce((sum, e) => sum + e.points, 0);
    const deducted = entries.filter((e) => e.type === 'deduct' || e.type === 'redeem').reduce((sum, e) => sum - e.points, 0);
    assert.ok(deducted > 0, history.text);
    assert.deepEqual(await todayRow.getByRole('cell').allInnerTexts(), [String(awarded), String(deducted)]);
    // Coupons redeemed and new cards per day come from the same endpoint (GET partners/stats).
    assert.equal(await kpi('New cards, 30 days').innerText(), '1');

    await openNav(page, 'Transactions');
    await page.getByLabel('Type').selectOption('purchase');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('cell', { name: 'R-2' }).waitFor();
    assert.match(page.url(), /type=purchase/);
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export CSV' }).click();
    const csv = await (await download).path().then((p) => import('node:fs/promises').then((fs) => fs.readFile(p!, 'utf8')));
    assert.match(csv, /R-1/);
    assert.match(csv, /R-2/);
    // A filtered list opened from its link shows the filter it applies.
    await page.reload();
    await page.getByRole('cell', { name: 'R-2' }).waitFor();
    assert.equal(await page.getByLabel('Type').inputValue(), 'purchase');

    const frames: string[] = [];
    page.on('websocket', (ws) => ws.on('framereceived', (f) => frames.push(String(f.payload))));
    await openNav(page, 'SMS');
    await page.getByRole('cell', { name: '+37060000123' }).waitFor();
    await page.getByText('Statuses update live.').waitFor();
    // A message sent from a till while the page is open appears and is delivered live.
    const sent = await request(t.url, 'POST', '/en/sms/send', {
      headers: apiHeaders(demo.api_key),
      json: { source: demo.sms.sender, destination: '+37060000456', message: 'See you tomorrow.' },
    });
    assert.equal(sent.status, 200, sent.text);
    const row = page.getByRole('row').filter({ hasText: '+37060000456' });
    await row.getByText('Delivered', { exact: true }).waitFor({ timeout: 20_000 });
    const statuses = frames
      .map((f) => JSON.parse(f) as { event: string; channel?: string; data?: string })
      .filter((f) => f.event === 'sms.status')
      .map((f) => ({ channel: f.channel, ...(JSON.parse(f.data!) as { message_id: string; status: string }) }))
      .filter((e) => e.message_id === sent.body.data.message_id);
    assert.deepEqual(
      statuses.map((e) => [e.channel, e.status]),
      [
        [`private-partner.${demo.partner.id}`, 'sent'],
        [`private-partner.${demo.partner.id}`, 'delivered'],
      ],
      'the statuses came over the socket',
    );

    await openNav(page, 'Messages');
    const file = page.waitForEvent('download');
    await page.getByRole('button', { name: 'senders.csv' }).click();
    assert.equal(await (await file).suggestedFilename(), 'senders.csv');
    await page.close();
  });

  it('works by keyboard: every navigation link is reachable, a form submits with Enter', async () => {
    const { t, browser } = s;
    const page = await browser.context.newPage();
    // Signed in by the test above (the session is kept in this browser's storage).
    await page.goto(`${t.url}/dashboard/api-keys`);
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    await page.locator('body').focus();
    const reached = new Set<string>();
    for (let i = 0; i < 40 && reached.size < PARTNER_PAGES.length; i++) {
      await page.keyboard.press('Tab');
      const name = await page.evaluate(() => (document.activeElement?.closest('nav') ? document.activeElement.textContent : null));
      if (name) reached.add(name);
    }
    assert.deepEqual([...reached].sort(), [...PARTNER_PAGES].sort());
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press('Tab');
      if (await page.evaluate(() => document.activeElement?.getAttribute('name') === 'name')) break;
    }
    await page.keyboard.type('Keyboard till');
    await page.keyboard.press('Enter');
    await page.getByTestId('api-secret').waitFor();
    await page.close();
  });

  it('moves quickly between the pages with live updates on one socket, without a console error, and closes it on sign-out', async () => {
    const { t, browser } = s;
    const page = await browser.context.newPage();
    const before = browser.problems.length;
    const sockets: WebSocket[] = [];
    page.on('websocket', (ws) => sockets.push(ws));
    // Signed in by the first test (the session is kept in this browser's storage).
    await page.goto(`${t.url}/dashboard/`);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    // The first channel authorisation is held until the page that asked for it is gone.
    let release: (() => Promise<void>) | undefined;
    const authorising = new Promise<void>((resolve) => {
      void page.route('**/shop/wsvendor/token', async (route) => {
        if (release) return route.continue();
        release = () => route.continue();
        resolve();
      });
    });
    await openNav(page, 'Imports');
    await authorising;
    await openNav(page, 'SMS');
    const answered = page.waitForResponse((r) => r.url().includes('/shop/wsvendor/token'));
    await release!();
    await (await answered).finished();
    await page.getByText('Statuses update live.').waitFor();
    // Back and forth without waiting for anything but the page itself.
    for (let i = 0; i < 4; i++) {
      await openNav(page, 'Imports');
      await openNav(page, 'Overview');
      await openNav(page, 'SMS');
    }
    await page.getByText('Statuses update live.').waitFor();
    assert.equal(sockets.length, 1, 'the pages share one connection');
    assert.equal(sockets[0]!.isClosed(), false);
    // Signing out closes it.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    if (!sockets[0]!.isClosed()) await sockets[0]!.waitForEvent('close');
    await page.unroute('**/shop/wsvendor/token');
    assert.deepEqual(browser.problems.slice(before), []);
    await page.close();
  });

  it('produced no script errors, CSP violations or failed requests', () => {
    assert.deepEqual(s.browser.problems, []);
    assert.deepEqual(s.browser.httpErrors, []);
  });
});
