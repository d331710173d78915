import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { couponQrContent, displayCode, newCouponCode, normalizeCouponCode } from './coupon-code.js';

describe('coupon codes', () => {
  it('are 12 Crockford base32 characters, shown in three groups of four', () => {
    const code = newCouponCode();
    assert.match(code, /^[0-9A-HJKMNP-TV-Z]{12}$/);
    assert.match(displayCode(code), /^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/);
  });

  it('do not repeat and use the whole alphabet (60 random bits)', () => {
    const codes = Array.from({ length: 5000 }, newCouponCode);
    assert.equal(new Set(codes).size, codes.length);
    const seen = new Set(codes.join(''));
    assert.equal(seen.size, 32);
  });

  it('are found whatever the case, dashes or spaces, and through the QR link', () => {
    const code = '7K3M9Q2XHV4T';
    for (const input of ['7K3M-9Q2X-HV4T', '7k3m9q2xhv4t', ' 7k3m 9q2x hv4t ', couponQrContent('loyalty://app', code), 'https://x.example/coupon/7k3m-9q2x-hv4t']) {
      assert.equal(normalizeCouponCode(input), code, input);
    }
  });

  it("read O as 0 and I or L as 1, as Crockford's alphabet intends", () => {
    assert.equal(normalizeCouponCode('OOOO-IIII-LLLL'), '000011111111');
  });

  it('refuse what cannot be a code', () => {
    for (const input of ['', '7K3M-9Q2X-HV4', '7K3M-9Q2X-HV4TT', '7K3M-9Q2X-HV4U', 'loyalty://app/coupon/', '💥💥💥']) {
      assert.equal(normalizeCouponCode(input), undefined, input);
    }
  });
});
