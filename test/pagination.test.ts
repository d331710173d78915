// Pagination (DESIGN.md §3): page (default 1), per_page (default 20, max 100; more → 422),
// lists answer meta {current_page, per_page, total, last_page}. Exercised on
// GET /{locale}/partners/shops, ordered by id.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { bearer, request, type Response } from './helpers/http.js';

describe('pagination of GET /{locale}/partners/shops', () => {
  let t: TestApp;
  let partner: PartnerFixture;
  let empty: PartnerFixture;
  /** The 25 shop ids in creation order. */
  const ids: number[] = [];

  before(async () => {
    t = await startTestApp();
    partner = await createPartner(t);
    empty = await createPartner(t);
    for (let i = 1; i <= 25; i++) {
      const shop = await t.app.context.services.shops.create(partner.id, { name: `Shop ${String(i).padStart(2, '0')}` });
      ids.push(shop.id);
    }
    // Another partner's shops never count.
    const other = await createPartner(t);
    for (let i = 0; i < 3; i++) await t.app.context.services.shops.create(other.id, { name: `Other ${i}` });
  });
  after(() => t.close());

  const list = (query = '', who: PartnerFixture = partner) =>
    request(t.url, 'GET', `/en/partners/shops${query}`, { headers: bearer(who.token) });

  function assertPage(res: Response, meta: { current_page: number; per_page: number; total: number; last_page: number }, items: number[]) {
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.success, true);
    assert.deepEqual(res.body.meta, meta);
    assert.deepEqual(
      res.body.data.map((s: { id: number }) => s.id),
      items,
    );
  }

  function assertInvalid(res: Response, field: string) {
    assert.equal(res.status, 422, res.text);
    assert.equal(res.body.success, false);
    assert.equal(res.body.code, 422);
    assert.equal(typeof res.body.errors, 'object');
    assert.ok(!Array.isArray(res.body.errors), 'Shape A');
    assert.ok(Array.isArray(res.body.errors[field]) && res.body.errors[field].length > 0, `errors.${field}: ${res.text}`);
  }

  it('defaults to page 1 of 20', async () => {
    const res = await list();
    assertPage(res, { current_page: 1, per_page: 20, total: 25, last_page: 2 }, ids.slice(0, 20));
    assert.equal(res.body.data[0].name, 'Shop 01');
    assert.ok(res.body.data.every((s: { partner_id: number }) => s.partner_id === partner.id));
  });

  it('gives the remaining 5 on page 2', async () => {
    assertPage(await list('?page=2'), { current_page: 2, per_page: 20, total: 25, last_page: 2 }, ids.slice(20));
  });

  it('returns everything with per_page=100 (the maximum)', async () => {
    assertPage(await list('?per_page=100'), { current_page: 1, per_page: 100, total: 25, last_page: 1 }, ids);
  });

  it('orders by id, and consecutive pages neither overlap nor skip', async () => {
    const seen: number[] = [];
    for (let page = 1; page <= 4; page++) {
      const res = await list(`?page=${page}&per_page=7`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.meta, { current_page: page, per_page: 7, total: 25, last_page: 4 });
      assert.equal(res.body.data.length, page < 4 ? 7 : 4);
      seen.push(...res.body.data.map((s: { id: number }) => s.id));
    }
    assert.deepEqual(seen, ids);
    assert.deepEqual(
      [...seen].sort((a, b) => a - b),
      seen,
    );
  });

  it('gives per_page=1 pages one shop each, last_page = total', async () => {
    assertPage(await list('?per_page=1&page=25'), { current_page: 25, per_page: 1, total: 25, last_page: 25 }, [ids[24]!]);
  });

  it('answers a page past the end with no items and the true meta', async () => {
    assertPage(await list('?page=3'), { current_page: 3, per_page: 20, total: 25, last_page: 2 }, []);
    assertPage(await list('?page=1000&per_page=100'), { current_page: 1000, per_page: 100, total: 25, last_page: 1 }, []);
  });

  it('answers an empty list with total 0 and last_page 1', async () => {
    assertPage(await list('', empty), { current_page: 1, per_page: 20, total: 0, last_page: 1 }, []);
    assertPage(await list('?page=2&per_page=5', empty), { current_page: 2, per_page: 5, total: 0, last_page: 1 }, []);
  });

  it('rejects per_page over 100 with 422 and errors.per_page', async () => {
    assertInvalid(await list('?per_page=101'), 'per_page');
    assertInvalid(await list('?per_page=1000000'), 'per_page');
  });

  it('rejects per_page and page below 1 or not integers', async () => {
    for (const q of ['per_page=0', 'per_page=-5', 'per_page=abc', 'per_page=2.5']) assertInvalid(await list(`?${q}`), 'per_page');
    for (const q of ['page=0', 'page=-1', 'page=abc', 'page=1.5']) assertInvalid(await list(`?${q}`), 'page');
    const both = await list('?page=0&per_page=101');
    assertInvalid(both, 'page');
    assertInvalid(both, 'per_page');
  });

  it('answers in the locale of the path', async () => {
    const en = await list('?per_page=101');
    const lt = await request(t.url, 'GET', '/lt/partners/shops?per_page=101', { headers: bearer(partner.token) });
    assertInvalid(lt, 'per_page');
    assert.notEqual(lt.body.errors.per_page[0], en.body.errors.per_page[0]);
  });
});
