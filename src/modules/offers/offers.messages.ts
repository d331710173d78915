// The offers module's user-facing messages, registered in src/messages.ts.
export const offersMessages = {
  'offers.created': { en: 'Offer created', lt: 'Pasiūlymas sukurtas' },
  'offers.updated': { en: 'Offer updated', lt: 'Pasiūlymas atnaujintas' },
  'offers.deleted': { en: 'Offer deleted', lt: 'Pasiūlymas ištrintas' },
  'offers.claimed': { en: 'Offer claimed; here is your coupon', lt: 'Pasiūlymas gautas; štai jūsų kuponas' },
  'offers.value_required': { en: 'Required when discount_type is {type}', lt: 'Privalomas, kai discount_type yra {type}' },
  'offers.percent_over_100': { en: 'A percent discount may not be greater than 100', lt: 'Procentinė nuolaida negali būti didesnė nei 100' },
  'offers.ends_before_starts': { en: 'Must be after starts_at', lt: 'Turi būti vėliau nei starts_at' },
  'offers.card_not_owned': { en: 'No partner card with this id belongs to you', lt: 'Jums nepriklauso partnerio kortelė su šiuo id' },
  'offers.points_need_card': {
    en: 'An offer that costs points needs partner_card_id: the programme whose points it takes',
    lt: 'Pasiūlymui, kainuojančiam taškus, reikia partner_card_id – programos, kurios taškai nurašomi',
  },
  'offers.shops_not_owned': { en: 'These shops are not yours: {ids}', lt: 'Šios parduotuvės ne jūsų: {ids}' },
  'offers.expired': { en: 'The offer ended at {expired_at}', lt: 'Pasiūlymas baigėsi {expired_at}' },
  'offers.inactive': { en: 'The offer is not active', lt: 'Pasiūlymas neaktyvus' },
  'offers.not_started': { en: 'The offer starts at {starts_at}', lt: 'Pasiūlymas prasideda {starts_at}' },
  'offers.sold_out': { en: 'The offer is sold out', lt: 'Pasiūlymas išparduotas' },
  'offers.claim_limit': { en: 'You have claimed this offer {limit} time(s), the most allowed', lt: 'Šį pasiūlymą jau gavote {limit} k. – daugiau neleidžiama' },
  'offers.no_card': { en: "You hold no card in this offer's programme", lt: 'Neturite šio pasiūlymo programos kortelės' },
  'resource.offer': { en: 'Offer', lt: 'Pasiūlymas' },
} as const;

type OffersMessages = typeof offersMessages;
declare module '../../shared/i18n.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this module's keys
  interface Messages extends OffersMessages {}
}
