// Commission (DESIGN.md §7; docs/decisions.md "Commission"): rate versions, figures computed
// from the points ledger at the rate in force on each transaction's day, lock / unlock /
// force-sync and the COMMISSION_LOCKED rule, over real HTTP on a real database.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createAdmin, createPartner, type AdminFixture, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request, type Response } from './helpers/http.js';
import { createCard, purchase, reversePurchase, type LedgerCard } from './helpers/ledger.js';
import { award, createCustomer, createProgramme, createShop, deduct, joinProgramme, TestClock } from './helpers/loyalty.js';

let t: TestApp;
let admin: AdminFixture;

before(async () => {
  t = await startTestApp();
  admin = await createAdmin(t);
});
after(() => t.close());

const asAdmin = (method: string, path: string, json?: unknown) => request(t.url, method, path, { headers: bearer(admin.token), json });
const at = (iso: string) => new Date(iso);
const month = (offset: number) => {
  const d = new Date();
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + offset, 1)).toISOString().slice(0, 7);
};

function assertLocked(res: Response, period: string, field: string) {
  assert.equal(res.status, 409, res.text);
  assert.equal(res.body.success, false);
  assert.equal(res.body.code, 'COMMISSION_LOCKED');
  assert.equal(typeof res.body.request_id, 'string');
  assert.equal(res.body.errors.length, 1);
  const [item] = res.body.errors;
  assert.equal(item.code, 'COMMISSION_LOCKED');
  assert.equal(item.field, field);
  assert.equal(typeof item.message, 'string');
  assert.ok(item.message.includes(period), item.message);
  assert.deepEqual(item.meta, { period });
}

function assertShapeA(res: Response, fields: string[]) {
  assert.equal(res.status, 422, res.text);
  assert.equal(res.body.code, 422);
  assert.deepEqual(Object.keys(res.body.errors).sort(), [...fields].sort(), res.text);
}

function assertInvalidState(res: Response, status: string) {
  assert.equal(res.status, 409, res.text);
  assert.equal(res.body.code, 'INVALID_STATE');
  assert.equal(res.body.errors[0].code, 'INVALID_STATE');
  assert.equal(res.body.errors[0].field, 'period');
  assert.equal(res.body.errors[0].meta.status, status);
}

describe('commission rates', () => {
  let p: PartnerFixture;
  before(async () => {
    p = await createPartner(t);
  });
  const rates = (id = p.id) => asAdmin('GET', `/en/admin/partners/${id}/commission/rates`);

  it('starts with no rate, then keeps every version append-only, the latest-starting first', async () => {
    const empty = await rates();
    assert.equal(empty.status, 200, empty.text);
    assert.deepEqual(empty.body.data, { current: null, history: [] });

    const first = await asAdmin('PUT', `/en/admin/partners/${p.id}/commission/rates`, { rate_percent: 5, valid_from: '2023-01-01' });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.code, 200);
    assert.deepEqual(first.body.data.current, { rate_percent: 5, valid_from: '2023-01-01' });

    // No valid_from: in force from today (UTC).
    const today = new Date().toISOString().slice(0, 10);
    const second = await asAdmin('PUT', `/en/admin/partners/${p.id}/commission/rates`, { rate_percent: 7.25 });
    assert.equal(second.status, 200, second.text);
    assert.deepEqual(second.body.data.current, { rate_percent: 7.25, valid_from: today });

    // A future version is history, not current.
    const future = await asAdmin('PUT', `/en/admin/partners/${p.id}/commission/rates`, { rate_percent: 0, valid_from: '2999-01-01' });
    assert.equal(future.status, 200, future.text);
    const res = await rates();
    assert.deepEqual(res.body.data.current, { rate_percent: 7.25, valid_from: today });
    assert.deepEqual(
      res.body.data.history.map((h: { rate_percent: number; valid_from: string }) => [h.rate_percent, h.valid_from]),
      [
        [0, '2999-01-01'],
        [7.25, today],
        [5, '2023-01-01'],
      ],
    );
    for (const h of res.body.data.history) {
      assert.deepEqual(Object.keys(h).sort(), ['created_at', 'id', 'rate_percent', 'valid_from']);
    }
  });

  it('refuses a rate outside 0..100, with more than 2 decimals, or a bad date (422 on the field)', async () => {
    const before = (await rates()).body.data;
    const cases: Array<[unknown, string]> = [
      [{ rate_percent: 100.01 }, 'rate_percent'],
      [{ rate_percent: -1 }, 'rate_percent'],
      [{ rate_percent: 12.345 }, 'rate_percent'],
      [{ rate_percent: '5' }, 'rate_percent'],
      [{}, 'rate_percent'],
      [{ rate_percent: 5, valid_from: '2024-02-30' }, 'valid_from'],
      [{ rate_percent: 5, valid_from: '01.02.2024' }, 'valid_from'],
      [{ rate_percent: 5, valid_from: '0000-01-01' }, 'valid_from'],
      [{ rate_percent: 5, valid_from: '3000-01-01' }, 'valid_from'],
    ];
    for (const [body, field] of cases) assertShapeA(await asAdmin('PUT', `/en/admin/partners/${p.id}/commission/rates`, body), [field]);
    assert.deepEqual((await rates()).body.data, before);
    const edge = await asAdmin('PUT', `/en/admin/partners/${p.id}/commission/rates`, { rate_percent: 100, valid_from: '2998-01-01' });
    assert.equal(edge.status, 200, edge.text);
  });
});

describe('commission figures', () => {
  let p: PartnerFixture;
  let other: PartnerFixture;
  let card: LedgerCard;
  let firstPurchase: number;

  before(async () => {
    p = await createPartner(t);
    other = await createPartner(t);
    card = await createCard(t, p.id, at('2024-01-10T00:00:00Z'));
    // 2.5 % from January, 3.75 % from 15 March.
    for (const [rate_percent, valid_from] of [
      [2.5, '2024-01-01'],
      [3.75, '2024-03-15'],
    ] as const) {
      const res = await asAdmin('PUT', `/en/admin/partners/${p.id}/commission/rates`, { rate_percent, valid_from });
      assert.equal(res.status, 200, res.text);
    }
    firstPurchase = await purchase(t, card, '100.0000', at('2024-03-02T10:00:00Z'));
    await purchase(t, card, '33.3333', at('2024-03-10T23:59:59.999Z'));
    await purchase(t, card, '80.1000', at('2024-03-15T00:00:00Z'));
    await purchase(t, card, '19.9900', at('2024-03-20T12:00:00Z'));
    await purchase(t, card, '0.0038', at('2024-03-31T23:59:59.999Z'));
    await reversePurchase(t, card, firstPurchase, '100.0000', at('2024-03-21T08:00:00Z'));
    // Outside March, and another partner's March: not counted.
    await purchase(t, card, '50.0000', at('2024-02-29T23:59:59.999Z'));
    await purchase(t, card, '70.0000', at('2024-04-01T00:00:00Z'));
    await purchase(t, await createCard(t, other.id), '999.0000', at('2024-03-05T00:00:00Z'));
  });

  // By hand:
  //   purchases 100 + 33.3333 + 80.10 + 19.99 + 0.0038 = 233.4271; reversed 100; base 133.4271
  //   commission  100     × 2.5 %  =  2.5
  //             33.3333   × 2.5 %  =  0.8333325
  //             80.10     × 3.75 % =  3.00375
  //             19.99     × 3.75 % =  0.749625
  //              0.0038   × 3.75 % =  0.0001425
  //           −100        × 2.5 %  = −2.5         (the reversal, at the rate of the purchase it reverses)
  //                             sum =  4.58685    → half up to 4 decimals: 4.5869
  const MARCH = {
    period: '2024-03',
    purchase_amount: 233.4271,
    reversed_amount: 100,
    returned_amount: 0,
    base_amount: 133.4271,
    commission_amount: 4.5869,
    purchases_count: 5,
    reversals_count: 1,
    returns_count: 0,
  };
  const figures = (data: Record<string, unknown>) => {
    const { status: _s, stored: _st, computed_at: _c, locked_at: _l, ...rest } = data;
    return rest;
  };

  it('computes a month to the cent across a mid-month rate change and a reversal', async () => {
    const live = await asAdmin('GET', `/en/admin/partners/${p.id}/commission?period=2024-03`);
    assert.equal(live.status, 200, live.text);
    assert.deepEqual(figures(live.body.data), MARCH);
    assert.equal(live.body.data.stored, false);
    assert.equal(live.body.data.computed_at, null);
    assert.equal(live.body.data.status, 'open');

    const synced = await asAdmin('POST', `/en/admin/partners/${p.id}/commission/force-sync`, { period: '2024-03' });
    assert.equal(synced.status, 200, synced.text);
    assert.deepEqual(figures(synced.body.data), MARCH);
    assert.equal(synced.body.data.stored, true);
    assert.match(synced.body.data.computed_at, /^\d{4}-\d{2}-\d{2}T/);

    // Idempotent: the same ledger gives the same figures.
    const again = await asAdmin('POST', `/en/admin/partners/${p.id}/commission/force-sync`, { period: '2024-03' });
    assert.deepEqual(figures(again.body.data), MARCH);
    const stored = await asAdmin('GET', `/en/admin/partners/${p.id}/commission?period=2024-03`);
    assert.deepEqual(figures(stored.body.data), MARCH);
    assert.equal(stored.body.data.stored, true);

    const list = await asAdmin('GET', `/en/admin/partners/${p.id}/commission/periods`);
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.body.data.map((x: { period: string }) => x.period), ['2024-03']);
    assert.equal(list.body.meta.total, 1);

    // February had one purchase of 50 at 2.5 %.
    const feb = await asAdmin('GET', `/en/admin/partners/${p.id}/commission?period=2024-02`);
    assert.equal(feb.body.data.base_amount, 50);
    assert.equal(feb.body.data.commission_amount, 1.25);
  });

  it('freezes the figures at lock time; rate changes reaching into the month and syncs are 409 COMMISSION_LOCKED', async () => {
    const locked = await asAdmin('POST', `/en/admin/partners/${p.id}/commission/lock`, { period: '2024-03' });
    assert.equal(locked.status, 200, locked.text);
    assert.equal(locked.body.data.status, 'locked');
    assert.match(locked.body.data.locked_at, /^\d{4}-/);
    assert.deepEqual(figures(locked.body.data), MARCH);

    const status = await asAdmin('GET', `/en/admin/partners/${p.id}/commission/lock-status`);
    assert.equal(status.status, 200, status.text);
    assert.deepEqual(status.body.data.locked_periods, ['2024-03']);
    assert.equal(status.body.data.periods[0].commission_amount, 4.5869);

    // A purchase recorded late into March changes nothing stored.
    await purchase(t, card, '1000.0000', at('2024-03-25T00:00:00Z'));

    const ratesBefore = (await asAdmin('GET', `/en/admin/partners/${p.id}/commission/rates`)).body.data;
    // 10 Feb: in force until 15 March, so over half of March.
    for (const valid_from of ['2024-03-20', '2024-03-31', '2024-02-10', '2024-01-01']) {
      assertLocked(await asAdmin('PUT', `/en/admin/partners/${p.id}/commission/rates`, { rate_percent: 9, valid_from }), '2024-03', 'valid_from');
    }
    assertLocked(await asAdmin('POST', `/en/admin/partners/${p.id}/commission/force-sync`, { period: '2024-03' }), '2024-03', 'period');
    assertInvalidState(await asAdmin('POST', `/en/admin/partners/${p.id}/commission/lock`, { period: '2024-03' }), 'locked');

    assert.deepEqual((await asAdmin('GET', `/en/admin/partners/${p.id}/commission/rates`)).body.data, ratesBefore);
    const frozen = await asAdmin('GET', `/en/admin/partners/${p.id}/commission?period=2024-03`);
    assert.deepEqual(figures(frozen.body.data), MARCH);
    assert.equal(frozen.body.data.status, 'locked');

    // A version that starts after the locked month leaves it alone.
    const april = await asAdmin('PUT', `/en/admin/partners/${p.id}/commission/rates`, { rate_percent: 4, valid_from: '2024-04-01' });
    assert.equal(april.status, 200, april.text);
    // …after which a version on 31 March would apply to one March day only: still refused.
    assertLocked(await asAdmin('PUT', `/en/admin/partners/${p.id}/commission/rates`, { rate_percent: 9, valid_from: '2024-03-31' }), '2024-03', 'valid_from');
  });

  it('unlock allows rate changes and syncs again', async () => {
    const unlocked = await asAdmin('POST', `/en/admin/partners/${p.id}/commission/unlock`, { period: '2024-03' });
    assert.equal(unlocked.status, 200, unlocked.text);
    assert.equal(unlocked.body.data.status, 'open');
    assert.deepEqual((await asAdmin('GET', `/en/admin/partners/${p.id}/commission/lock-status`)).body.data.locked_periods, []);
    assertInvalidState(await asAdmin('POST', `/en/admin/partners/${p.id}/commission/unlock`, { period: '2024-03' }), 'open');
    assertInvalidState(await asAdmin('POST', `/en/admin/partners/${p.id}/commission/unlock`, { period: '2020-01' }), 'open');

    const rate = await asAdmin('PUT', `/en/admin/partners/${p.id}/commission/rates`, { rate_percent: 10, valid_from: '2024-03-25' });
    assert.equal(rate.status, 200, rate.text);
    const synced = await asAdmin('POST', `/en/admin/partners/${p.id}/commission/force-sync`, { period: '2024-03' });
    assert.equal(synced.status, 200, synced.text);
    // From 25 March 10 %: the late purchase of 1000 adds 100, and the 0.0038 of 31 March now
    // costs 0.00038 instead of 0.0001425; the reversal of 21 March stays at its 2 March
    // purchase's 2.5 %: 4.58685 + 100 + 0.0002375 = 104.5870875 → 104.5871.
    assert.equal(synced.body.data.base_amount, 1133.4271);
    assert.equal(synced.body.data.commission_amount, 104.5871);
    assert.equal(synced.body.data.purchases_count, 6);
  });

  it('lock defaults to the previous month and refuses the current or a future month (422)', async () => {
    const q = await createPartner(t);
    assertShapeA(await asAdmin('POST', `/en/admin/partners/${q.id}/commission/lock`, { period: month(0) }), ['period']);
    assertShapeA(await asAdmin('POST', `/en/admin/partners/${q.id}/commission/lock`, { period: month(3) }), ['period']);
    assertShapeA(await asAdmin('POST', `/en/admin/partners/${q.id}/commission/lock`, { period: '2024-13' }), ['period']);
    assertShapeA(await asAdmin('POST', `/en/admin/partners/${q.id}/commission/lock`, { period: '0000-01' }), ['period']);
    assertShapeA(await asAdmin('GET', `/en/admin/partners/${q.id}/commission?period=1969-12`), ['period']);
    assertShapeA(await asAdmin('POST', `/en/admin/partners/${q.id}/commission/unlock`, {}), ['period']);
    const res = await request(t.url, 'POST', `/en/admin/partners/${q.id}/commission/lock`, { headers: bearer(admin.token) });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.period, month(-1));
    assert.deepEqual((await asAdmin('GET', `/en/admin/partners/${q.id}/commission/lock-status`)).body.data.locked_periods, [month(-1)]);
  });

  it('force-sync defaults to the current month and refuses a future one', async () => {
    const q = await createPartner(t);
    const res = await asAdmin('POST', `/en/admin/partners/${q.id}/commission/force-sync`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.period, month(0));
    assert.equal(res.body.data.base_amount, 0);
    assertShapeA(await asAdmin('POST', `/en/admin/partners/${q.id}/commission/force-sync`, { period: month(1) }), ['period']);
  });

  it('serialises concurrent syncs and a lock of one month: the lock wins once, the figures agree', async () => {
    const q = await createPartner(t);
    const c = await createCard(t, q.id, at('2024-05-01T00:00:00Z'));
    await asAdmin('PUT', `/en/admin/partners/${q.id}/commission/rates`, { rate_percent: 1.5, valid_from: '2024-01-01' });
    await purchase(t, c, '10.0000', at('2024-05-03T00:00:00Z'));
    await purchase(t, c, '20.0000', at('2024-05-04T00:00:00Z'));
    const calls = [
      ...Array.from({ length: 4 }, () => asAdmin('POST', `/en/admin/partners/${q.id}/commission/force-sync`, { period: '2024-05' })),
      asAdmin('POST', `/en/admin/partners/${q.id}/commission/lock`, { period: '2024-05' }),
      asAdmin('POST', `/en/admin/partners/${q.id}/commission/lock`, { period: '2024-05' }),
    ];
    const results = await Promise.all(calls);
    const locks = results.slice(4);
    assert.deepEqual(locks.map((r) => r.status).sort(), [200, 409]);
    for (const r of results.slice(0, 4)) {
      assert.ok(r.status === 200 || (r.status === 409 && r.body.code === 'COMMISSION_LOCKED'), r.text);
      if (r.status === 200) assert.equal(r.body.data.commission_amount, 0.45);
    }
    const final = await asAdmin('GET', `/en/admin/partners/${q.id}/commission?period=2024-05`);
    assert.equal(final.body.data.status, 'locked');
    assert.equal(final.body.data.base_amount, 30);
    assert.equal(final.body.data.commission_amount, 0.45);
    // One lock took effect: what it answered is what is stored, and the loser saw that lock.
    const winner = locks.find((r) => r.status === 200)!;
    const loser = locks.find((r) => r.status === 409)!;
    assert.deepEqual(final.body.data, winner.body.data);
    assertInvalidState(loser, 'locked');
    assert.equal(loser.body.errors[0].meta.locked_at, winner.body.data.locked_at);
    const status = await asAdmin('GET', `/en/admin/partners/${q.id}/commission/lock-status`);
    assert.deepEqual(status.body.data.periods, [{ period: '2024-05', locked_at: winner.body.data.locked_at, base_amount: 30, commission_amount: 0.45 }]);
    const periods = await asAdmin('GET', `/en/admin/partners/${q.id}/commission/periods`);
    assert.deepEqual(periods.body.data, [winner.body.data]);
  });

  it('answers 404 for an unknown partner on every commission route', async () => {
    const id = 2_000_000_000;
    const calls: Array<[string, string, unknown?]> = [
      ['GET', `/en/admin/partners/${id}/commission/rates`],
      ['PUT', `/en/admin/partners/${id}/commission/rates`, { rate_percent: 1 }],
      ['POST', `/en/admin/partners/${id}/commission/lock`, { period: '2024-01' }],
      ['POST', `/en/admin/partners/${id}/commission/unlock`, { period: '2024-01' }],
      ['GET', `/en/admin/partners/${id}/commission/lock-status`],
      ['POST', `/en/admin/partners/${id}/commission/force-sync`, { period: '2024-01' }],
      ['GET', `/en/admin/partners/${id}/commission?period=2024-01`],
      ['GET', `/en/admin/partners/${id}/commission/periods`],
    ];
    for (const [method, path, json] of calls) {
      const res = await asAdmin(method, path, json);
      assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
      assert.equal(res.body.code, 'RESOURCE_NOT_FOUND');
    }
  });

  it('speaks Lithuanian on /lt/', async () => {
    const q = await createPartner(t);
    await asAdmin('POST', `/en/admin/partners/${q.id}/commission/lock`, { period: '2023-01' });
    const res = await asAdmin('POST', `/lt/admin/partners/${q.id}/commission/force-sync`, { period: '2023-01' });
    assert.equal(res.status, 409);
    assert.match(res.body.errors[0].message, /užrakintas/);
  });
});

// The rows above are written directly; here every row comes from the real award and reverse
// paths (POST /{locale}/shop/transactions/create, …/{id}/reverse), on an app whose clock the
// test moves, so that the commission is computed from what those paths really store.
describe('commission of purchases recorded through the API', () => {
  const clock = new TestClock(Date.parse('2026-03-02T10:00:00Z'));
  let app: TestApp;
  let adminToken: string;
  let p: PartnerFixture;
  let shop: number;
  let cardId: number;
  /** Every purchase or purchase reversal made, with the rate (in hundredths of a percent) it is charged at. */
  const booked: Array<{ units: bigint; rateHundredths: bigint }> = [];

  const admin = (method: string, path: string, json?: unknown) => request(app.url, method, path, { headers: bearer(adminToken), json });
  /** "19.99" → 199900n (ten-thousandths of a euro). */
  const units = (eur: string) => {
    const [whole, frac = ''] = eur.split('.');
    return BigInt(whole!) * 10_000n + BigInt(frac.padEnd(4, '0'));
  };
  const eur = (u: bigint) => Number(u) / 10_000;

  let marchPurchase = 0;
  async function buy(amount: string, rateHundredths: bigint): Promise<number> {
    const res = await award(app, p, { card_id: cardId, shop_id: shop, amount: Number(amount) });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.data.type, 'purchase');
    booked.push({ units: units(amount), rateHundredths });
    return res.body.data.id;
  }

  async function refund(purchaseId: number, amount: string, rateHundredths: bigint) {
    const res = await request(app.url, 'POST', `/en/shop/transactions/${purchaseId}/reverse`, { headers: apiHeaders(p.apiKey), json: {} });
    assert.equal(res.status, 201, res.text);
    booked.push({ units: -units(amount), rateHundredths });
  }

  /** Σ amount × rate, exact, then half away from zero to 4 decimals (docs/decisions.md). */
  function expected() {
    const purchased = booked.filter((b) => b.units > 0n).reduce((a, b) => a + b.units, 0n);
    const reversed = -booked.filter((b) => b.units < 0n).reduce((a, b) => a + b.units, 0n);
    // units (10⁻⁴ EUR) × hundredths of a percent (10⁻⁴) = 10⁻⁸ EUR; to 10⁻⁴ EUR, rounded.
    const exact = booked.reduce((a, b) => a + b.units * b.rateHundredths, 0n);
    const sign = exact < 0n ? -1n : 1n;
    const commission = sign * ((sign * exact + 5_000n) / 10_000n);
    return {
      period: '2026-03',
      purchase_amount: eur(purchased),
      reversed_amount: eur(reversed),
      returned_amount: 0,
      base_amount: eur(purchased - reversed),
      commission_amount: eur(commission),
      purchases_count: booked.filter((b) => b.units > 0n).length,
      reversals_count: booked.filter((b) => b.units < 0n).length,
      returns_count: 0,
    };
  }
  const figures = (data: Record<string, unknown>) => {
    const { status: _s, stored: _st, computed_at: _c, locked_at: _l, ...rest } = data;
    return rest;
  };

  before(async () => {
    app = await startTestApp({}, undefined, { clock });
    adminToken = (await createAdmin(app)).token;
    p = await createPartner(app);
    shop = await createShop(app, p.id);
    const programme = await createProgramme(app, p.id, { pointsRedemptionEnabled: true });
    cardId = (await joinProgramme(app, await createCustomer(app), programme)).id;
    // 2.5 % from 1 March, 4 % from 15 March.
    for (const [rate_percent, valid_from] of [
      [2.5, '2026-03-01'],
      [4, '2026-03-15'],
    ] as const) {
      const res = await admin('PUT', `/en/admin/partners/${p.id}/commission/rates`, { rate_percent, valid_from });
      assert.equal(res.status, 200, res.text);
    }
  });
  after(() => app?.close());

  it('equals rate × net purchase amounts: each purchase at the rate of its day, each refund at the rate of the purchase it refunds; redemptions and adjustments do not count', async () => {
    // 2 March (2.5 %).
    const first = await buy('100.00', 250n);
    const second = await buy('33.3333', 250n);
    // 10 March (2.5 %): a purchase, and a redemption with its own EUR amount and its reversal.
    clock.advanceDays(8);
    marchPurchase = await buy('19.99', 250n);
    const redeemed = await deduct(app, p, { card_id: cardId, shop_id: shop, points: 100 });
    assert.equal(redeemed.status, 201, redeemed.text);
    assert.ok(redeemed.body.data.amount > 0, 'a redemption carries the EUR value redeemed');
    const undone = await request(app.url, 'POST', `/en/shop/transactions/${redeemed.body.data.id}/reverse`, { headers: apiHeaders(p.apiKey), json: {} });
    assert.equal(undone.status, 201, undone.text);
    const adjusted = await request(app.url, 'POST', '/en/shop/points', { headers: apiHeaders(p.apiKey), json: { card_id: cardId, points: 5, reason: 'goodwill' } });
    assert.equal(adjusted.status, 201, adjusted.text);
    // 16 March (4 %): the refund of the 2 March purchase counts at that purchase's 2.5 %, not at
    // today's 4 % — a partner cannot buy low and refund high to push its commission down.
    clock.advanceDays(6);
    await refund(first, '100.00', 250n);
    await buy('80.10', 400n);
    // Another partner's March purchase is not this partner's commission.
    const other = await createPartner(app);
    const otherProgramme = await createProgramme(app, other.id);
    const otherCard = await joinProgramme(app, await createCustomer(app), otherProgramme);
    assert.equal((await award(app, other, { card_id: otherCard.id, shop_id: await createShop(app, other.id), amount: 999 })).status, 201);
    // 1 April: a purchase and the refund of a March one belong to April.
    clock.advanceDays(16);
    clock.advanceMs(-10 * 3600_000);
    assert.equal(clock.now().toISOString(), '2026-04-01T00:00:00.000Z');
    const april = await award(app, p, { card_id: cardId, shop_id: shop, amount: 70 });
    assert.equal(april.status, 201, april.text);
    const late = await request(app.url, 'POST', `/en/shop/transactions/${second}/reverse`, { headers: apiHeaders(p.apiKey), json: {} });
    assert.equal(late.status, 201, late.text);

    const want = expected();
    // By hand: 2.5 + 0.8333325 + 0.49975 − 2.5 + 3.204 = 4.5370825 → 4.5371 on a base of 133.4233.
    assert.deepEqual([want.base_amount, want.commission_amount], [133.4233, 4.5371]);

    const live = await admin('GET', `/en/admin/partners/${p.id}/commission?period=2026-03`);
    assert.equal(live.status, 200, live.text);
    assert.equal(live.body.data.stored, false);
    assert.deepEqual(figures(live.body.data), want);

    const synced = await admin('POST', `/en/admin/partners/${p.id}/commission/force-sync`, { period: '2026-03' });
    assert.equal(synced.status, 200, synced.text);
    assert.equal(synced.body.data.stored, true);
    assert.deepEqual(figures(synced.body.data), want);
    const stored = await admin('GET', `/en/admin/partners/${p.id}/commission?period=2026-03`);
    assert.deepEqual(figures(stored.body.data), want);
    const periods = await admin('GET', `/en/admin/partners/${p.id}/commission/periods`);
    assert.deepEqual(periods.body.data.map(figures), [want]);

    // Locked (March has ended on this clock): the same figures, frozen.
    const locked = await admin('POST', `/en/admin/partners/${p.id}/commission/lock`, { period: '2026-03' });
    assert.equal(locked.status, 200, locked.text);
    assert.deepEqual(figures(locked.body.data), want);
    const status = await admin('GET', `/en/admin/partners/${p.id}/commission/lock-status`);
    assert.deepEqual(status.body.data.periods, [
      { period: '2026-03', locked_at: locked.body.data.locked_at, base_amount: want.base_amount, commission_amount: want.commission_amount },
    ]);

    // April so far: 70 at 4 % less the refund of 33.3333 at its March purchase's 2.5 % =
    // 2.8 − 0.8333325 = 1.9666675 → 1.9667 (at April's 4 % it would read 1.4667).
    const aprilFigures = await admin('GET', `/en/admin/partners/${p.id}/commission?period=2026-04`);
    assert.equal(aprilFigures.status, 200, aprilFigures.text);
    assert.deepEqual(
      [aprilFigures.body.data.purchase_amount, aprilFigures.body.data.reversed_amount, aprilFigures.body.data.base_amount, aprilFigures.body.data.commission_amount],
      [70, 33.3333, 36.6667, 1.9667],
    );
  });

  it('is net of returns like reversals: at the rate of the purchase, in the month of the return; a locked month never changes', async () => {
    const lockedBefore = (await admin('GET', `/en/admin/partners/${p.id}/commission?period=2026-03`)).body.data;
    const statusBefore = (await admin('GET', `/en/admin/partners/${p.id}/commission/lock-status`)).body.data;
    const returnOf = async (id: number, amount: number) => {
      const res = await request(app.url, 'POST', `/en/shop/transactions/${id}/return`, { headers: apiHeaders(p.apiKey), json: { amount } });
      assert.equal(res.status, 201, res.text);
    };
    // April: goods of the locked March's 19.99 purchase (2.5 %) come back, 9.99 of them; then
    // 20 of a new 70 purchase (4 %), whose reversal afterwards undoes only the 50 left.
    clock.advanceDays(1);
    await returnOf(marchPurchase, 9.99);
    const aprilSale = await award(app, p, { card_id: cardId, shop_id: shop, amount: 70 });
    assert.equal(aprilSale.status, 201, aprilSale.text);
    await returnOf(aprilSale.body.data.id, 20);
    const voided = await request(app.url, 'POST', `/en/shop/transactions/${aprilSale.body.data.id}/reverse`, { headers: apiHeaders(p.apiKey), json: {} });
    assert.equal(voided.status, 201, voided.text);
    assert.equal(voided.body.data.amount, -50);

    // By hand, April: purchases 70 + 70; reversed 33.3333 (March, 2.5 %) + 50 (4 %); returned
    // 9.99 (March, 2.5 %) + 20 (4 %). Commission 2.8 + 2.8 − 0.8333325 − 2 − 0.24975 − 0.8
    // = 1.7169175 → 1.7169 (without the returns it would read 2.7666675 → 2.7667).
    const want = {
      period: '2026-04',
      purchase_amount: 140,
      reversed_amount: 83.3333,
      returned_amount: 29.99,
      base_amount: 26.6767,
      commission_amount: 1.7169,
      purchases_count: 2,
      reversals_count: 2,
      returns_count: 2,
    };
    const live = await admin('GET', `/en/admin/partners/${p.id}/commission?period=2026-04`);
    assert.equal(live.status, 200, live.text);
    assert.deepEqual(figures(live.body.data), want);
    const synced = await admin('POST', `/en/admin/partners/${p.id}/commission/force-sync`, { period: '2026-04' });
    assert.equal(synced.status, 200, synced.text);
    assert.deepEqual(figures(synced.body.data), want);

    // March, locked before its goods came back, reads exactly as it did.
    assert.deepEqual((await admin('GET', `/en/admin/partners/${p.id}/commission?period=2026-03`)).body.data, lockedBefore);
    assert.deepEqual((await admin('GET', `/en/admin/partners/${p.id}/commission/lock-status`)).body.data, statusBefore);
  });
});
