// The partner console in a real browser (Chromium via playwright-core) against the real
// app over HTTP, on the store this run uses (PGlite, or PostgreSQL with DATABASE_URL).
// What a partner does first: sign in, issue an API key and use it, set up a shop and a
// card programme (seeing the API's field errors), switch language, lose the session.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';
import { TokenService } from '../../src/infra/tokens.js';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';
import { createPartner, type PartnerFixture } from '../../test/helpers/fixtures.js';
import { apiHeaders, bearer, request } from '../../test/helpers/http.js';
import { launchBrowser, type Browser } from './helpers/browser.js';
import { fieldError, openNav, signIn } from './helpers/console.js';

describe('partner console', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let partner: PartnerFixture;

  before(async () => {
    t = await startTestApp();
    partner = await createPartner(t, 'Kavinė Pupa');
    browser = await launchBrowser();
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url });
    page = await browser.page();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('serves the console with a CSP that allows no inline script', async () => {
    const res = await fetch(`${t.url}/dashboard/`);
    assert.equal(res.status, 200);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    const html = await res.text();
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'an inline script in the page');
  });

  it('refuses a wrong password with the API’s message, then signs in', async () => {
    const expected = await request(t.url, 'POST', '/en/partners/auth/login', { json: { email: partner.email, password: 'not-the-password' } });
    assert.equal(expected.status, 401);
    await page.goto(`${t.url}/dashboard/`);
    await page.getByLabel('Email').fill(partner.email);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const summary = page.getByRole('alert');
    await summary.waitFor();
    assert.match(await summary.innerText(), new RegExp(expected.body.message));
    await page.getByLabel('Password').fill(partner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    assert.equal(await page.getByText(partner.name).first().isVisible(), true);
  });

  it('creates an API key whose secret is shown once, uses it over HTTP, revokes it', async () => {
    await openNav(page, 'API keys');
    await page.getByLabel('Name', { exact: true }).fill('Till 1, Vilnius');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const key = (await page.getByTestId('api-key').innerText()).trim();
    const secret = (await page.getByTestId('api-secret').innerText()).trim();
    assert.match(key, /^lk_/);
    assert.match(secret, /^lsk_/);

    await page.getByRole('button', { name: 'Copy secret' }).click();
    await page.getByText('Copied', { exact: true }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);

    const valid = await request(t.url, 'POST', '/en/shop/validate-credentials', { headers: apiHeaders({ key, secret }) });
    assert.equal(valid.status, 200);
    assert.deepEqual(valid.body.data, { valid: true, partner: { id: partner.id, name: partner.name } });

    // Never again: not after a reload, not in the list.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    await page.getByRole('cell', { name: 'Till 1, Vilnius' }).waitFor();
    assert.equal((await page.content()).includes(secret), false);

    const row = page.getByRole('row').filter({ hasText: 'Till 1, Vilnius' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await row.waitFor({ state: 'detached' });
    const refused = await request(t.url, 'POST', '/en/shop/validate-credentials', { headers: apiHeaders({ key, secret }) });
    assert.equal(refused.status, 401);
    assert.equal(refused.body.code, 1001);
    // The fixture's own key is untouched.
    assert.equal((await request(t.url, 'POST', '/en/shop/validate-credentials', { headers: apiHeaders(partner.apiKey) })).status, 200);
  });

  it('shows the API’s field errors next to the shop fields, then creates the shop', async () => {
    const expected = await request(t.url, 'POST', '/en/partners/shops', { headers: bearer(partner.token), json: { name: '', lat: 200 } });
    assert.equal(expected.status, 422);
    await openNav(page, 'Shops');
    await page.getByLabel('Latitude').fill('200');
    await page.getByRole('button', { name: 'Create shop' }).click();
    await page.getByRole('alert').waitFor();
    assert.equal(await fieldError(page, 'Name'), expected.body.errors.name.join(' '));
    assert.equal(await fieldError(page, 'Latitude'), expected.body.errors.lat.join(' '));
    // The summary links to the fields.
    await page.getByRole('alert').getByRole('link', { name: /^Latitude:/ }).click();
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('name')), 'lat');

    await page.getByLabel('Name', { exact: true }).fill('Pupa Gedimino');
    await page.getByLabel('City').fill('Vilnius');
    await page.getByLabel('Latitude').fill('54.6872');
    await page.getByLabel('Longitude').fill('25.2797');
    await page.getByRole('button', { name: 'Create shop' }).click();
    await page.getByRole('status').filter({ hasText: 'Shop “Pupa Gedimino” created.' }).waitFor();
    await page.getByRole('cell', { name: 'Pupa Gedimino' }).waitFor();
    const shops = await request(t.url, 'GET', '/en/partners/shops', { headers: bearer(partner.token) });
    assert.deepEqual(
      shops.body.data.map((s: any) => [s.name, s.city, s.lat, s.lng]),
      [['Pupa Gedimino', 'Vilnius', 54.6872, 25.2797]],
    );
  });

  it('shows a card programme’s field errors (Shape A, dotted fields), then creates it', async () => {
    await openNav(page, 'Card programmes');
    await page.getByLabel('Title (English)').fill('Coffee card');
    await page.getByLabel('Background colour').fill('blue');
    await page.getByRole('button', { name: 'Create card programme' }).click();
    await page.getByRole('alert').waitFor();
    const expected = await request(t.url, 'POST', '/en/partners/cards', {
      headers: bearer(partner.token),
      json: { title: { en: 'Coffee card', lt: '' }, description: {}, terms_conditions: {}, card_design: { background_color: 'blue' } },
    });
    assert.equal(expected.status, 422);
    assert.equal(await fieldError(page, 'Title (Lithuanian)'), expected.body.errors['title.lt'].join(' '));
    assert.equal(await fieldError(page, 'Background colour'), expected.body.errors['card_design.background_color'].join(' '));
    assert.equal((await request(t.url, 'GET', '/en/partners/cards', { headers: bearer(partner.token) })).body.data.length, 0, 'nothing was created');

    await page.getByLabel('Title (Lithuanian)').fill('Kavos kortelė');
    await page.getByLabel('Background colour').fill('#6B3E26');
    await page.getByLabel('Pupa Gedimino').check();
    await page.getByRole('button', { name: 'Create card programme' }).click();
    await page.getByRole('link', { name: 'Coffee card' }).waitFor();
    const cards = await request(t.url, 'GET', '/en/partners/cards', { headers: bearer(partner.token) });
    assert.equal(cards.body.data.length, 1);
    const full = await request(t.url, 'GET', `/en/partners/cards/${cards.body.data[0].id}`, { headers: bearer(partner.token) });
    assert.deepEqual(full.body.data.title, { en: 'Coffee card', lt: 'Kavos kortelė' });
    assert.equal(full.body.data.card_design.background_color, '#6B3E26');
    assert.equal(full.body.data.shop_ids.length, 1);
  });

  it('saving a card programme keeps what the form does not show, and what it did not change', async () => {
    const [card] = (await request(t.url, 'GET', '/en/partners/cards', { headers: bearer(partner.token) })).body.data;
    const png = `data:image/png;base64,${Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(56, 7)]).toString('base64')}`;
    const set = await request(t.url, 'PUT', `/en/partners/cards/${card.id}`, {
      headers: bearer(partner.token),
      json: { card_design: { background_color: '#6B3E26', logo: png, background_image: png, background_color_opacity: 0.5 } },
    });
    assert.equal(set.status, 200, set.text);
    await page.goto(`${t.url}/dashboard/card-programmes/${card.id}`);
    await page.getByLabel('Title (English)').waitFor();
    // Changed through the API while the form is open: the console's save must not undo it.
    assert.equal((await request(t.url, 'PUT', `/en/partners/cards/${card.id}`, { headers: bearer(partner.token), json: { points_per_visit: 7 } })).status, 200);
    await page.getByLabel('Title (English)').fill('Coffee club');
    await page.getByLabel('Text colour', { exact: true }).fill('#FFFFFF');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const full = (await request(t.url, 'GET', `/en/partners/cards/${card.id}`, { headers: bearer(partner.token) })).body.data;
    assert.deepEqual(full.title, { en: 'Coffee club', lt: 'Kavos kortelė' });
    assert.deepEqual(full.card_design, { background_color: '#6B3E26', text_color: '#FFFFFF', logo: png, background_image: png, background_color_opacity: 0.5 });
    assert.equal(full.points_per_visit, 7, 'a field the partner did not touch is not sent back');
    await openNav(page, 'Card programmes');
  });

  it('switches every text and the API’s messages to Lithuanian, and back', async () => {
    await page.getByRole('button', { name: 'LT', exact: true }).click();
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'lt');
    await page.getByRole('navigation').getByRole('link', { name: 'Apžvalga' }).waitFor();
    await page.getByRole('heading', { level: 1, name: 'Kortelių programos' }).waitFor();
    await page.getByRole('button', { name: 'Atsijungti' }).click();
    await page.getByRole('button', { name: 'Prisijungti' }).waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'lt');
    const expected = await request(t.url, 'POST', '/lt/partners/auth/login', { json: { email: partner.email, password: 'neteisingas' } });
    await page.getByLabel('El. paštas').fill(partner.email);
    await page.getByLabel('Slaptažodis').fill('neteisingas');
    await page.getByRole('button', { name: 'Prisijungti' }).click();
    await page.getByRole('alert').filter({ hasText: expected.body.message }).waitFor();
    assert.notEqual(expected.body.message, (await request(t.url, 'POST', '/en/partners/auth/login', { json: { email: partner.email, password: 'x' } })).body.message);

    await page.getByRole('button', { name: 'EN', exact: true }).click();
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'en');
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
  });

  it('returns to sign-in when the token has expired, and after signing out', async () => {
    await signIn(page, `${t.url}/dashboard/shops`, partner.email, partner.password, 'Shops');
    // A token the server no longer accepts, though the page thinks it valid (clock skew, a
    // shortened lifetime): the first call's 401 ends the session.
    const expired = await new TokenService(t.config.jwtSecret!, { access: -60, customer: 0, qrCustomer: 0 }).sign({ kind: 'partner', subject: partner.id });
    await page.evaluate((token) => {
      const key = 'loyalty.partner.session';
      const s = JSON.parse(localStorage.getItem(key)!);
      localStorage.setItem(key, JSON.stringify({ ...s, token, expires_at: new Date(Date.now() + 3600_000).toISOString() }));
    }, expired.token);
    await page.goto(`${t.url}/dashboard/customers`);
    await page.getByText('Your session has ended. Sign in again.').waitFor();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    assert.equal(await page.evaluate(() => localStorage.getItem('loyalty.partner.session')), null);

    // A stored session past its expiry is not even tried.
    await page.evaluate(() => localStorage.setItem('loyalty.partner.session', JSON.stringify({ token: 'x', expires_at: '2020-01-01T00:00:00Z', account: { id: 1, name: 'x', email: 'x' } })));
    await page.reload();
    await page.getByText('Your session has ended. Sign in again.').waitFor();

    await signIn(page, `${t.url}/dashboard/`, partner.email, partner.password, 'Overview');
    const signedOut = await page.evaluate(() => JSON.parse(localStorage.getItem('loyalty.partner.session')!).token as string);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    // Signing out revoked the token on the server too (partners/auth/logout), not only here.
    let me = await request(t.url, 'GET', '/en/partners/auth/me', { headers: bearer(signedOut) });
    for (let i = 0; i < 50 && me.status === 200; i++) {
      await sleep(40);
      me = await request(t.url, 'GET', '/en/partners/auth/me', { headers: bearer(signedOut) });
    }
    assert.equal(me.status, 401, 'the signed-out token still works');
    assert.equal(await page.getByText('Your session has ended').count(), 0);
    assert.equal(await page.evaluate(() => localStorage.getItem('loyalty.partner.session')), null);
  });

  it('produced no script errors, CSP violations or failed requests', () => {
    assert.deepEqual(browser.problems, []);
  });
});
