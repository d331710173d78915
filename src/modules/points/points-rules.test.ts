// The redemption arithmetic (DESIGN.md §6). The award's, computed in SQL, is test/award-rules.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAmount } from '../../shared/money.js';
import { redemptionValue, type RedemptionRules } from './points-rules.js';

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
