// The award and redemption arithmetic on a table of cases (DESIGN.md §6).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAmount } from '../../shared/money.js';
import { purchasePoints, redemptionValue, type EarnRules, type RedemptionRules } from './points-rules.js';

const base: EarnRules = {
  pointsEnabled: true,
  pointsPerCurrency: '1',
  currencyAmount: '1',
  roundPointsUp: false,
  minPointsPerPurchase: 0,
  maxPointsPerPurchase: null,
  pointsPerVisit: 0,
};

describe('purchasePoints', () => {
  const cases: Array<[string, string, Partial<EarnRules>, number]> = [
    ['1 point per euro, rounded down', '12.99', {}, 12],
    ['rounded up', '12.01', { roundPointsUp: true }, 13],
    ['an exact amount does not round up', '12.00', { roundPointsUp: true }, 12],
    ['10 points per 3 EUR (exact thirds, no float error)', '9.00', { pointsPerCurrency: '10', currencyAmount: '3' }, 30],
    ['10 points per 3 EUR, 10 EUR rounds down', '10', { pointsPerCurrency: '10', currencyAmount: '3' }, 33],
    ['10 points per 3 EUR, 10 EUR rounds up', '10', { pointsPerCurrency: '10', currencyAmount: '3', roundPointsUp: true }, 34],
    ['0.1 × 3 is exactly 0.3 points → 0', '3', { pointsPerCurrency: '0.1' }, 0],
    ['0.1 × 30 = 3 exactly (a float would give 2.9999…)', '30', { pointsPerCurrency: '0.1' }, 3],
    ['per visit is added', '5', { pointsPerVisit: 10 }, 15],
    ['minimum lifts a small purchase', '0.50', { minPointsPerPurchase: 5 }, 5],
    ['minimum applies after per visit', '0.50', { minPointsPerPurchase: 5, pointsPerVisit: 2 }, 5],
    ['maximum caps a large purchase', '1000', { maxPointsPerPurchase: 100 }, 100],
    ['maximum caps per visit too', '95', { maxPointsPerPurchase: 100, pointsPerVisit: 10 }, 100],
    ['points disabled earns nothing, whatever the minimum', '100', { pointsEnabled: false, minPointsPerPurchase: 5 }, 0],
    ['smallest amount', '0.0001', { roundPointsUp: true }, 1],
    ['a large amount stays exact', '999999999.9999', {}, 999_999_999],
  ];
  for (const [name, amount, rules, expected] of cases) {
    it(name, () => {
      assert.equal(purchasePoints(parseAmount(amount)!, { ...base, ...rules }), BigInt(expected));
    });
  }
});

describe('redemptionValue', () => {
  const rules: RedemptionRules = {
    pointsRedemptionEnabled: true,
    pointsPerCurrencyRedemption: '100',
    currencyAmountRedemption: '1',
    minPointsForRedemption: 0,
    maxPointsPerRedemption: null,
  };
  it('100 points per euro', () => {
    assert.equal(redemptionValue(250, rules), parseAmount('2.5'));
  });
  it('rounds down to 4 decimals: a redemption is never worth more than its points', () => {
    // 1 point at 3 points per 1 EUR = 0.33333… → 0.3333
    assert.equal(redemptionValue(1, { ...rules, pointsPerCurrencyRedemption: '3' }), parseAmount('0.3333'));
  });
});
