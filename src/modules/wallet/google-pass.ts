// Google Wallet (DESIGN.md §15): the save link is a JWT signed RS256 with the partner's service
// account key (jose) carrying the loyalty class (the programme) and object (the card) — or the
// offer class and object of a coupon — and later changes PATCH the object through the REST API
// (GOOGLE_WALLET_API_URL), authenticated with a self-signed service-account JWT (Google's
// "JWT access" without the OAuth token exchange: no call to a URL taken from the key file).
import { createPrivateKey } from 'node:crypto';
import { SignJWT } from 'jose';
import type { CouponView } from '../coupons/coupons.service.js';
import type { LoyaltyCardView } from '../loyalty-cards/loyalty-cards.service.js';
import type { Locale } from './apple-pass.js';
import type { ServiceAccount } from './wallet-credentials.js';
import type { PassFacts } from './wallet.repository.js';

export const SAVE_URL_BASE = 'https://pay.google.com/gp/v/save/';
const WALLET_AUDIENCE = 'https://walletobjects.googleapis.com/';

const ids = {
  programmeClass: (issuerId: string, facts: PassFacts) => `${issuerId}.loyalty-programme-${facts.partnerCardId}`,
  cardObject: (issuerId: string, cardId: number) => `${issuerId}.loyalty-card-${cardId}`,
  offerClass: (issuerId: string, coupon: CouponView) => `${issuerId}.loyalty-offer-${coupon.offer?.id ?? `game-${coupon.game?.id ?? 0}`}`,
  couponObject: (issuerId: string, couponId: number) => `${issuerId}.loyalty-coupon-${couponId}`,
};
export const googleObjectId = ids.cardObject;

const text = (t: { en: string; lt: string }, locale: Locale) => t[locale] || t.en;

export function loyaltyClass(issuerId: string, facts: PassFacts, locale: Locale) {
  return {
    id: ids.programmeClass(issuerId, facts),
    issuerName: facts.partnerName,
    programName: text(facts.title, locale),
    reviewStatus: 'UNDER_REVIEW',
    ...(facts.design.background_color && /^#[0-9a-f]{6}$/i.test(facts.design.background_color) ? { hexBackgroundColor: facts.design.background_color } : {}),
  };
}

export function loyaltyObject(issuerId: string, card: LoyaltyCardView, facts: PassFacts, locale: Locale) {
  return {
    id: ids.cardObject(issuerId, card.id),
    classId: ids.programmeClass(issuerId, facts),
    state: 'ACTIVE',
    accountId: card.card_number,
    loyaltyPoints: { label: locale === 'lt' ? 'Taškai' : 'Points', balance: { int: card.points_balance } },
    ...(card.tier ? { secondaryLoyaltyPoints: { label: locale === 'lt' ? 'Lygis' : 'Tier', balance: { string: text(card.tier.name, locale) } } } : {}),
    // The till scans what the app shows: the card's qr_content.
    barcode: { type: 'QR_CODE', value: card.qr_content, alternateText: card.card_number },
  };
}

function offerClass(issuerId: string, coupon: CouponView, facts: PassFacts, locale: Locale) {
  return {
    id: ids.offerClass(issuerId, coupon),
    issuerName: facts.partnerName,
    provider: facts.partnerName,
    title: coupon.offer?.title ?? coupon.game?.reward_description ?? text(facts.title, locale),
    redemptionChannel: 'INSTORE',
    reviewStatus: 'UNDER_REVIEW',
  };
}

function offerObject(issuerId: string, coupon: CouponView, facts: PassFacts, locale: Locale) {
  return {
    id: ids.couponObject(issuerId, coupon.id),
    classId: offerClass(issuerId, coupon, facts, locale).id,
    state: coupon.status === 'active' || coupon.status === 'pending' ? 'ACTIVE' : coupon.status === 'expired' ? 'EXPIRED' : 'COMPLETED',
    barcode: { type: 'QR_CODE', value: coupon.qr_code, alternateText: coupon.code },
    ...(coupon.expires_at ? { validTimeInterval: { end: { date: coupon.expires_at } } } : {}),
  };
}

async function sign(account: ServiceAccount, claims: Record<string, unknown>, audience: string): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(account.private_key_id ? { kid: account.private_key_id } : {}) })
    .setIssuer(account.client_email)
    .setAudience(audience)
    .setIssuedAt()
    .sign(createPrivateKey(account.private_key));
}

export async function cardSaveUrl(account: ServiceAccount, issuerId: string, card: LoyaltyCardView, facts: PassFacts, locale: Locale): Promise<string> {
  const jwt = await sign(
    account,
    { typ: 'savetowallet', origins: [], payload: { loyaltyClasses: [loyaltyClass(issuerId, facts, locale)], loyaltyObjects: [loyaltyObject(issuerId, card, facts, locale)] } },
    'google',
  );
  return `${SAVE_URL_BASE}${jwt}`;
}

export async function couponSaveUrl(account: ServiceAccount, issuerId: string, coupon: CouponView, facts: PassFacts, locale: Locale): Promise<string> {
  const jwt = await sign(
    account,
    { typ: 'savetowallet', origins: [], payload: { offerClasses: [offerClass(issuerId, coupon, facts, locale)], offerObjects: [offerObject(issuerId, coupon, facts, locale)] } },
    'google',
  );
  return `${SAVE_URL_BASE}${jwt}`;
}

/** PATCH a loyalty object; resolves with the HTTP status, rejects on a network error or timeout. */
export async function patchLoyaltyObject(apiUrl: string, account: ServiceAccount, object: { id: string }, timeoutMs: number): Promise<number> {
  const token = await new SignJWT({ sub: account.client_email })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(account.private_key_id ? { kid: account.private_key_id } : {}) })
    .setIssuer(account.client_email)
    .setAudience(WALLET_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(createPrivateKey(account.private_key));
  const res = await fetch(`${apiUrl}/walletobjects/v1/loyaltyObject/${encodeURIComponent(object.id)}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(object),
    signal: AbortSignal.timeout(timeoutMs),
    redirect: 'manual',
  });
  await res.arrayBuffer().catch(() => undefined);
  return res.status;
}
