import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isValidLuhn, issueCardNumber, luhnCheckDigit } from './card-number.js';

describe('card numbers', () => {
  it('computes the Luhn check digit of known numbers', () => {
    // Published test numbers: 79927398713 and the Visa test card 4111111111111111.
    assert.equal(luhnCheckDigit('7992739871'), 3);
    assert.equal(luhnCheckDigit('411111111111111'), 1);
    assert.equal(isValidLuhn('79927398713'), true);
    assert.equal(isValidLuhn('79927398710'), false);
  });

  it('issues 16-digit numbers starting with 9 that pass the check, and catches every single-digit typo', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const n = issueCardNumber();
      assert.match(n, /^9\d{15}$/);
      assert.equal(isValidLuhn(n), true);
      seen.add(n);
      const pos = i % 16;
      const wrong = String((Number(n[pos]) + 1 + (i % 9)) % 10);
      assert.equal(isValidLuhn(n.slice(0, pos) + wrong + n.slice(pos + 1)), false);
    }
    assert.ok(seen.size > 195, 'numbers are random');
  });
});
