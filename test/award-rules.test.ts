// The award arithmetic (DESIGN.md §6) on a table of cases, through the statement that
// computes and writes it (awards/award-statement.ts), on the suite's store:
//   points = amount / currency_amount × points_per_currency, rounded up if round_points_up
//            else down, + points_per_visit, clamped to min..max_points_per_purchase
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseAmount } from '../src/shared/money.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { assertLedgerConsistent, createCustomer, createProgramme, createShop, joinProgramme, type ProgrammeRules } from './helpers/loyalty.js';

const CASES: Array<[name: string, amount: string, rules: ProgrammeRules, expected: number]> = [
  ['1 point per euro, rounded down', '12.99', {}, 12],
  ['rounded up', '12.01', { roundPointsUp: true }, 13],
  ['an exact amount does not round up', '12.00', { roundPointsUp: true }, 12],
  ['10 points per 3 EUR, 9 EUR is exactly 30', '9.00', { pointsPerCurrency: '10', currencyAmount: '3' }, 30],
  ['10 points per 3 EUR, 10 EUR rounds down', '10', { pointsPerCurrency: '10', currencyAmount: '3' }, 33],
  ['10 points per 3 EUR, 10 EUR rounds up', '10', { pointsPerCurrency: '10', currencyAmount: '3', roundPointsUp: true }, 34],
  ['0.1 × 3 = 0.3 points → 0', '3', { pointsPerCurrency: '0.1' }, 0],
  ['0.1 × 30 = 3 exactly, rounded up stays 3 (a float gives 3.0000000000000004)', '30', { pointsPerCurrency: '0.1', roundPointsUp: true }, 3],
  ['per visit is added', '5', { pointsPerVisit: 10 }, 15],
  ['minimum lifts a small purchase', '0.50', { minPointsPerPurchase: 5 }, 5],
  ['minimum applies after per visit', '0.50', { minPointsPerPurchase: 5, pointsPerVisit: 2 }, 5],
  ['maximum caps a large purchase', '1000', { maxPointsPerPurchase: 100 }, 100],
  ['maximum caps per visit too', '95', { maxPointsPerPurchase: 100, pointsPerVisit: 10 }, 100],
  ['points disabled earns nothing, whatever the minimum', '100', { pointsEnabled: false, minPointsPerPurchase: 5 }, 0],
  ['the smallest amount rounds up to a point', '0.0001', { roundPointsUp: true }, 1],
  ['a large amount stays exact', '9999999.9999', {}, 9_999_999],
  ['tiny rates over a large amount: 10.0000000009… → 10', '999999999.9999', { pointsPerCurrency: '0.0001', currencyAmount: '9999.9999' }, 10],
  ['… and rounded up → 11', '999999999.9999', { pointsPerCurrency: '0.0001', currencyAmount: '9999.9999', roundPointsUp: true }, 11],
];

describe('award rules', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let shop: number;
  before(async () => {
    t = await startTestApp({}, undefined, { workers: false });
    p = await createPartner(t);
    shop = await createShop(t, p.id);
  });
  after(async () => {
    await assertLedgerConsistent(t);
    await t.close();
  });

  for (const [name, amount, rules, expected] of CASES) {
    it(name, async () => {
      const card = await joinProgramme(t, await createCustomer(t), await createProgramme(t, p.id, rules));
      const result = await t.app.context.services.awards.awardPurchase(
        t.app.context.database.db,
        p.id,
        { cardId: card.id, shopId: shop, amount: parseAmount(amount)! },
        false,
      );
      assert.ok(result.ok, JSON.stringify(result));
      assert.equal(result.value.points, expected);
      assert.equal(result.value.balance_after, expected);
    });
  }
});
