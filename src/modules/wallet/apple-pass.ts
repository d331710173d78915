// The .pkpass of a card or a coupon (DESIGN.md §15), built and signed by passkit-generator:
// it writes pass.json, manifest.json (SHA-1 of every file) and `signature`, the detached
// PKCS#7 signature of the manifest with the partner's Pass Type ID certificate and Apple's
// WWDR certificate in the chain (docs/decisions.md "Wallet passes: the library").
import { PKPass } from 'passkit-generator';
import type { CouponView } from '../coupons/coupons.service.js';
import type { LoyaltyCardView } from '../loyalty-cards/loyalty-cards.service.js';
import type { PassFacts } from './wallet.repository.js';

/** A plain 58×58 icon for programmes without a PNG logo: Wallet refuses a pass without icon.png. */
const DEFAULT_ICON = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAADoAAAA6CAYAAADhu0ooAAAAdElEQVR4AeXBMQEAIAzAsK72uFGAfw1MSJM5930CJEIiJEIiJEIiJEIiJEIiJEIiJEIiJEIiJEIiJEIiJEIiJEIiJEIiJEIiJEIiJEIiJEIiJEIiJEIiJEIiJEIiJEIiJEIiJEIiJEIiJEIiJEIiJEIiJEIiJGIBKPICdlVebFYAAAAASUVORK5CYII=',
  'base64',
);

export interface AppleSigning {
  passTypeIdentifier: string;
  teamIdentifier: string;
  certificatePem: string;
  keyPem: string;
  wwdrPem: string;
}

export type Locale = 'en' | 'lt';

const LABELS = {
  points: { en: 'Points', lt: 'Taškai' },
  tier: { en: 'Tier', lt: 'Lygis' },
  card: { en: 'Card', lt: 'Kortelė' },
  balance_changed: { en: 'Points: %@', lt: 'Taškai: %@' },
  tier_changed: { en: 'Tier: %@', lt: 'Lygis: %@' },
  coupon: { en: 'Coupon', lt: 'Kuponas' },
  code: { en: 'Code', lt: 'Kodas' },
  expires: { en: 'Valid until', lt: 'Galioja iki' },
  status: { en: 'Status', lt: 'Būsena' },
} as const;

/** "#RRGGBB" → Wallet's "rgb(r, g, b)"; anything else is left to Wallet's default. */
export function rgb(hex: string | undefined): string | undefined {
  const m = hex === undefined ? null : /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  return m ? `rgb(${parseInt(m[1]!, 16)}, ${parseInt(m[2]!, 16)}, ${parseInt(m[3]!, 16)})` : undefined;
}

/** The programme logo when it is a PNG (Wallet takes PNG only). */
function logoPng(design: PassFacts['design']): Buffer | undefined {
  const m = /^data:image\/png;base64,(.+)$/.exec(design.logo ?? '');
  return m ? Buffer.from(m[1]!, 'base64') : undefined;
}

function newPass(
  signing: AppleSigning,
  facts: PassFacts,
  common: { serialNumber: string; description: string; logoText: string; token: string; webServiceURL: string; voided?: boolean },
) {
  const logo = logoPng(facts.design);
  const colours = {
    ...(rgb(facts.design.background_color) ? { backgroundColor: rgb(facts.design.background_color)! } : {}),
    ...(rgb(facts.design.text_color) ? { foregroundColor: rgb(facts.design.text_color)! } : {}),
    ...(rgb(facts.design.text_color_labels) ? { labelColor: rgb(facts.design.text_color_labels)! } : {}),
  };
  return new PKPass(
    { 'icon.png': logo ?? DEFAULT_ICON, ...(logo ? { 'logo.png': logo } : {}) },
    { wwdr: signing.wwdrPem, signerCert: signing.certificatePem, signerKey: signing.keyPem },
    {
      formatVersion: 1,
      passTypeIdentifier: signing.passTypeIdentifier,
      teamIdentifier: signing.teamIdentifier,
      serialNumber: common.serialNumber,
      description: common.description,
      organizationName: facts.partnerName,
      logoText: common.logoText,
      ...(common.voided ? { voided: true } : {}),
      webServiceURL: common.webServiceURL,
      authenticationToken: common.token,
      ...colours,
    },
  );
}

export function cardPass(
  signing: AppleSigning,
  card: LoyaltyCardView,
  facts: PassFacts,
  opts: { locale: Locale; token: string; webServiceURL: string },
): Buffer {
  const { locale } = opts;
  const title = facts.title[locale] || facts.title.en;
  const pass = newPass(signing, facts, { serialNumber: card.card_number, description: title, logoText: title, token: opts.token, webServiceURL: opts.webServiceURL });
  pass.type = 'storeCard';
  pass.primaryFields.push({ key: 'balance', label: LABELS.points[locale], value: card.points_balance, changeMessage: LABELS.balance_changed[locale] });
  pass.secondaryFields.push({
    key: 'tier',
    label: LABELS.tier[locale],
    value: card.tier ? card.tier.name[locale] || card.tier.name.en : '—',
    changeMessage: LABELS.tier_changed[locale],
  });
  pass.auxiliaryFields.push({ key: 'card_number', label: LABELS.card[locale], value: card.card_number });
  // The till scans what the app shows: the card's qr_content.
  pass.setBarcodes({ format: 'PKBarcodeFormatQR', message: card.qr_content, messageEncoding: 'iso-8859-1', altText: card.card_number });
  return pass.getAsBuffer();
}

export function couponSerial(couponId: number): string {
  return `coupon-${couponId}`;
}

export function couponPass(
  signing: AppleSigning,
  coupon: CouponView,
  facts: PassFacts,
  opts: { locale: Locale; token: string; webServiceURL: string },
): Buffer {
  const { locale } = opts;
  const what = coupon.offer?.title ?? coupon.game?.reward_description ?? LABELS.coupon[locale];
  const pass = newPass(signing, facts, {
    serialNumber: couponSerial(coupon.id),
    description: what,
    logoText: facts.title[locale] || facts.title.en,
    token: opts.token,
    webServiceURL: opts.webServiceURL,
    // A used or expired coupon stays in the wallet, greyed out.
    voided: coupon.status !== 'active' && coupon.status !== 'pending',
  });
  pass.type = 'coupon';
  pass.primaryFields.push({ key: 'offer', label: LABELS.coupon[locale], value: what });
  pass.secondaryFields.push({ key: 'code', label: LABELS.code[locale], value: coupon.code });
  if (coupon.expires_at) {
    pass.auxiliaryFields.push({ key: 'expires', label: LABELS.expires[locale], value: coupon.expires_at, dateStyle: 'PKDateStyleMedium' });
    pass.setExpirationDate(new Date(coupon.expires_at));
  }
  pass.auxiliaryFields.push({ key: 'status', label: LABELS.status[locale], value: coupon.status });
  pass.setBarcodes({ format: 'PKBarcodeFormatQR', message: coupon.qr_code, messageEncoding: 'iso-8859-1', altText: coupon.code });
  return pass.getAsBuffer();
}
