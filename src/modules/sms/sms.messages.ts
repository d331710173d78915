// The SMS module's user-facing messages, registered in src/messages.ts.
export const smsMessages = {
  'sms.queued': { en: 'Message queued for delivery', lt: 'Žinutė įtraukta į siuntimo eilę' },
  'sms.status': { en: 'Message status', lt: 'Žinutės būsena' },
  'sms.consent_registered': { en: 'Marketing consent registered', lt: 'Rinkodaros sutikimas užregistruotas' },
  'sms.consent_revoked': { en: 'Marketing consent revoked', lt: 'Rinkodaros sutikimas atšauktas' },
  'sms.account_updated': { en: 'SMS account updated', lt: 'SMS paskyra atnaujinta' },
  'sms.sender_approved': { en: 'Sender name approved', lt: 'Siuntėjo vardas patvirtintas' },
  'sms.sender_revoked': { en: 'Sender name approval revoked', lt: 'Siuntėjo vardo patvirtinimas atšauktas' },
  'sms.invalid_destination': {
    en: 'Must be a valid mobile number in international (E.164) form, e.g. +37061234567',
    lt: 'Turi būti tinkamas mobiliojo telefono numeris tarptautiniu (E.164) formatu, pvz. +37061234567',
  },
  'sms.invalid_phone': {
    en: 'Must be a valid phone number in international (E.164) form, e.g. +37061234567',
    lt: 'Turi būti tinkamas telefono numeris tarptautiniu (E.164) formatu, pvz. +37061234567',
  },
  'sms.invalid_source': {
    en: 'Only letters, digits and spaces, at most 11 characters',
    lt: 'Tik raidės, skaitmenys ir tarpai, ne daugiau kaip 11 simbolių',
  },
  'sms.receipt_url_required': {
    en: 'Required when receipt is true',
    lt: 'Privalomas, kai receipt yra true',
  },
  'sms.receipt_url_private': {
    en: 'Must be a public address ({reason})',
    lt: 'Turi būti viešas adresas ({reason})',
  },
  'sms.scheduled_in_past': { en: 'Must be in the future', lt: 'Turi būti ateityje' },
  'sms.validity_in_past': {
    en: 'Must be in the future and after the scheduled time',
    lt: 'Turi būti ateityje ir vėliau nei suplanuotas laikas',
  },
  'sms.validity_both': {
    en: 'Give either validity or validityMinutes, not both',
    lt: 'Nurodykite arba validity, arba validityMinutes, bet ne abu',
  },
  'sms.balance_too_low': {
    en: 'The SMS balance ({balance} EUR) does not cover this message ({required} EUR)',
    lt: 'SMS likutis ({balance} EUR) nepadengia šios žinutės kainos ({required} EUR)',
  },
  'sms.invalid_amount': {
    en: 'Must be a positive amount in EUR with at most 4 decimals',
    lt: 'Turi būti teigiama suma eurais, ne daugiau kaip 4 skaitmenys po kablelio',
  },
  'sms.sender_already_approved': { en: 'This sender name is already approved', lt: 'Šis siuntėjo vardas jau patvirtintas' },
  'resource.sms_message': { en: 'Message', lt: 'Žinutė' },
  'resource.consent': { en: 'Consent record', lt: 'Sutikimo įrašas' },
  'resource.sms_sender': { en: 'Sender name', lt: 'Siuntėjo vardas' },
} as const;

type SmsMessages = typeof smsMessages;
declare module '../../shared/i18n.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this module's keys
  interface Messages extends SmsMessages {}
}
