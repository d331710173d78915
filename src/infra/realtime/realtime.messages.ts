// Messages of the realtime routes, in both locales (registered in src/messages.ts).
export const realtimeMessages = {
  'realtime.channel_not_allowed': {
    en: 'These credentials may only authorise their own partner channels (private-partner.{partner_id} and private-partner.{partner_id}.*)',
    lt: 'Šiais prisijungimo duomenimis galima autorizuoti tik savo partnerio kanalus (private-partner.{partner_id} ir private-partner.{partner_id}.*)',
  },
  'validation.socket_id': { en: 'Must look like 1234.5678 (the socket_id pusher-js reports)', lt: 'Turi atrodyti kaip 1234.5678 (pusher-js pateikiamas socket_id)' },
  'validation.channel_name': {
    en: 'Must be 1 to 164 characters of A-Z, a-z, 0-9 and _ - = @ , . ;',
    lt: 'Turi būti nuo 1 iki 164 simbolių iš A-Z, a-z, 0-9 ir _ - = @ , . ;',
  },
} as const;

type RealtimeMessages = typeof realtimeMessages;
declare module '../../shared/i18n.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this module's keys
  interface Messages extends RealtimeMessages {}
}
