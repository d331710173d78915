// The partner-cards module's user-facing messages, registered in src/messages.ts.
export const partnerCardsMessages = {
  'partner_cards.created': { en: 'Partner card created', lt: 'Partnerio kortelė sukurta' },
  'partner_cards.updated': { en: 'Partner card updated', lt: 'Partnerio kortelė atnaujinta' },
  'partner_cards.deleted': { en: 'Partner card deleted', lt: 'Partnerio kortelė ištrinta' },
  'partner_cards.language_keys': {
    en: 'Keys must be two-letter language codes such as en or lt',
    lt: 'Raktai turi būti dviejų raidžių kalbų kodai, pvz. en arba lt',
  },
  'partner_cards.colour': { en: 'Must be a colour in #RRGGBB form', lt: 'Turi būti spalva #RRGGBB formatu' },
  'partner_cards.image_data_uri': {
    en: 'Must be a PNG, JPEG, GIF or WebP image as a base64 data URI (data:image/png;base64,...)',
    lt: 'Turi būti PNG, JPEG, GIF arba WebP paveikslėlis base64 data URI formatu (data:image/png;base64,...)',
  },
  'partner_cards.image_base64': { en: 'The image data is not valid base64', lt: 'Paveikslėlio duomenys nėra tinkamas base64' },
  'partner_cards.image_type_mismatch': {
    en: 'The image content is not a {type} image',
    lt: 'Paveikslėlio turinys nėra {type} paveikslėlis',
  },
  'partner_cards.image_too_large': {
    en: 'The image may not be larger than {limit} bytes',
    lt: 'Paveikslėlis negali būti didesnis nei {limit} baitų',
  },
  'partner_cards.max_below_min': {
    en: 'Must be at least {field} ({min})',
    lt: 'Turi būti ne mažiau nei {field} ({min})',
  },
  'partner_cards.shops_not_owned': {
    en: 'These shops do not exist or are not yours: {ids}',
    lt: 'Šių parduotuvių nėra arba jos ne jūsų: {ids}',
  },
  'resource.partner_card': { en: 'Partner card', lt: 'Partnerio kortelė' },
} as const;

type PartnerCardsMessages = typeof partnerCardsMessages;
declare module '../../shared/i18n.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this module's keys
  interface Messages extends PartnerCardsMessages {}
}
