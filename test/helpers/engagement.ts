// Offers, coupons and games for tests, driven over real HTTP the way a partner dashboard, a
// till and an app drive them.
import assert from 'node:assert/strict';
import type { TestApp } from './app.js';
import type { PartnerFixture } from './fixtures.js';
import { apiHeaders, bearer, request } from './http.js';
import type { CustomerFixture } from './loyalty.js';

/** The spec's coupon list item plus DESIGN.md §8's fields, and nothing else. */
export const COUPON_KEYS = [
  'card_id',
  'categories',
  'code',
  'created_at',
  'expires_at',
  'game',
  'id',
  'is_pending',
  'is_used',
  'offer',
  'partner_id',
  'pending_until',
  'products',
  'qr_code',
  'requires_product_selection',
  'status',
  'used_at',
  'used_shop_id',
  'user',
];

export const OFFER_KEYS = [
  'category_ids',
  'claims_count',
  'coupon_validity_days',
  'created_at',
  'description',
  'discount_type',
  'discount_value',
  'ends_at',
  'featured',
  'id',
  'is_active',
  'max_claims',
  'max_claims_per_customer',
  'partner_card_id',
  'points_cost',
  'product_ids',
  'reward_details',
  'reward_type',
  'shop_ids',
  'source',
  'starts_at',
  'title',
  'updated_at',
];

export const keysOf = (o: object) => Object.keys(o).sort();

export async function createOffer(t: TestApp, p: PartnerFixture, body: Record<string, unknown>): Promise<any> {
  const res = await request(t.url, 'POST', '/en/partners/offers', { headers: bearer(p.token), json: { title: 'Free coffee', discount_type: 'gift', ...body } });
  assert.equal(res.status, 201, res.text);
  return res.body.data;
}

export function claim(t: TestApp, c: CustomerFixture, offerId: number, headers: Record<string, string> = {}) {
  return request(t.url, 'POST', `/en/shop/offers/${offerId}/claim`, { headers: { ...bearer(c.token), ...headers } });
}

/** A claimed coupon (asserts the claim succeeded). */
export async function claimCoupon(t: TestApp, c: CustomerFixture, offerId: number): Promise<any> {
  const res = await claim(t, c, offerId);
  assert.equal(res.status, 201, res.text);
  return res.body.data.coupon;
}

export function verify(t: TestApp, p: PartnerFixture, couponCode: string, shopId: number) {
  return request(t.url, 'POST', '/en/shop/coupons/verify', { headers: apiHeaders(p.apiKey), json: { coupon_code: couponCode, shop_id: shopId } });
}

export function couponAction(t: TestApp, p: PartnerFixture, id: number, action: 'redeem' | 'release' | 'rollback', body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return request(t.url, 'POST', `/en/shop/coupons/${id}/${action}`, { headers: { ...apiHeaders(p.apiKey), ...headers }, json: body });
}

export async function createGame(t: TestApp, p: PartnerFixture, body: Record<string, unknown> = {}): Promise<any> {
  const res = await request(t.url, 'POST', '/en/partners/games', {
    headers: bearer(p.token),
    json: {
      type: 'spin_wheel',
      name: 'Wheel',
      rewards: [
        { label: '10 points', probability: 0.5, reward_type: 'points', points: 10 },
        { label: '5% off', probability: 0.3, reward_type: 'coupon', coupon: { title: '5% off coffee', discount_type: 'percent', discount_value: 5 } },
        { label: 'Try again', probability: 0.2, reward_type: 'none' },
      ],
      ...body,
    },
  });
  assert.equal(res.status, 201, res.text);
  return res.body.data;
}

export function startGame(t: TestApp, c: CustomerFixture, gameId: number, headers: Record<string, string> = {}) {
  return request(t.url, 'POST', `/en/shop/games/${gameId}/start`, { headers: { ...bearer(c.token), ...headers } });
}

export function progress(t: TestApp, auth: Record<string, string>, key: string, body: Record<string, unknown>) {
  return request(t.url, 'POST', `/en/shop/games/sessions/${key}/progress`, { headers: auth, json: body });
}

export function claimReward(t: TestApp, auth: Record<string, string>, key: string, headers: Record<string, string> = {}) {
  return request(t.url, 'POST', `/en/shop/games/sessions/${key}/claim-reward`, { headers: { ...auth, ...headers } });
}

/** Shape B error: status, code, the one item's field and meta. */
export function assertRefused(res: { status: number; body: any; text: string }, status: number, code: string, meta?: Record<string, unknown>, label = '') {
  assert.equal(res.status, status, `${label} ${res.text}`);
  assert.equal(res.body.success, false);
  assert.equal(res.body.code, code, label);
  assert.ok(Array.isArray(res.body.errors) && res.body.errors.length === 1, `${label} Shape B: ${res.text}`);
  if (meta) assert.deepEqual(res.body.errors[0].meta, meta, label);
}
