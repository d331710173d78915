// The coupons module's user-facing messages, registered in src/messages.ts.
export const couponsMessages = {
  'coupons.verified': { en: 'Coupon reserved for this shop for 10 minutes', lt: 'Kuponas šiai parduotuvei rezervuotas 10 minučių' },
  'coupons.redeemed': { en: 'Coupon redeemed', lt: 'Kuponas panaudotas' },
  'coupons.released': { en: 'Coupon reservation released', lt: 'Kupono rezervacija atšaukta' },
  'coupons.rolled_back': { en: 'Coupon redemption rolled back; the coupon is active again', lt: 'Kupono panaudojimas atšauktas; kuponas vėl galioja' },
  'coupons.used': { en: 'The coupon has already been used', lt: 'Kuponas jau panaudotas' },
  'coupons.expired': { en: 'The coupon expired at {expired_at}', lt: 'Kupono galiojimas baigėsi {expired_at}' },
  'coupons.pending_elsewhere': {
    en: 'The coupon is reserved at another shop (#{shop_id}) until the reservation is released or lapses',
    lt: 'Kuponas rezervuotas kitoje parduotuvėje (#{shop_id}), kol rezervacija bus atšaukta arba baigsis',
  },
  'coupons.not_pending': { en: 'The coupon is not reserved at this shop', lt: 'Kuponas nerezervuotas šioje parduotuvėje' },
  'coupons.store_denied': { en: 'The coupon is not valid at this shop', lt: 'Kuponas šioje parduotuvėje negalioja' },
  'coupons.not_used': { en: 'Only a redeemed coupon can be rolled back; this one is {status}', lt: 'Atšaukti galima tik panaudotą kuponą; šis yra {status}' },
  'coupons.used_elsewhere': { en: 'The coupon was redeemed at another shop', lt: 'Kuponas panaudotas kitoje parduotuvėje' },
  'coupons.rollback_window_passed': {
    en: 'A redemption can be rolled back within 24 hours only',
    lt: 'Panaudojimą galima atšaukti tik per 24 valandas',
  },
  'resource.coupon': { en: 'Coupon', lt: 'Kuponas' },
} as const;

type CouponsMessages = typeof couponsMessages;
declare module '../../shared/i18n.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this module's keys
  interface Messages extends CouponsMessages {}
}
