// The QR sessions module's user-facing messages, registered in src/messages.ts.
export const qrMessages = {
  'qr.created': { en: 'QR session created', lt: 'QR sesija sukurta' },
  'qr.status': { en: 'QR session status', lt: 'QR sesijos būsena' },
  'qr.scanned': { en: 'QR code scanned', lt: 'QR kodas nuskaitytas' },
  'qr.confirmed': { en: 'Login confirmed', lt: 'Prisijungimas patvirtintas' },
  'qr.rejected': { en: 'Login rejected', lt: 'Prisijungimas atmestas' },
  'qr.card_shared': { en: 'Card shared', lt: 'Kortelė pateikta' },
  'qr.invalid_state': {
    en: 'The QR session is {status}: this is no longer possible',
    lt: 'QR sesijos būsena – {status}: šis veiksmas nebegalimas',
  },
  'qr.scanned_by_other': {
    en: 'The QR session was opened by another customer',
    lt: 'QR sesiją atidarė kitas klientas',
  },
  'qr.app_link_sent': { en: 'App link sent', lt: 'Programėlės nuoroda išsiųsta' },
  'qr.app_link_text': {
    en: 'Get the {partner} app: {url}',
    lt: 'Atsisiųskite {partner} programėlę: {url}',
  },
  'qr.no_sender': {
    en: 'No approved sender name; give source or ask for a sender to be approved',
    lt: 'Nėra patvirtinto siuntėjo vardo; nurodykite source arba paprašykite patvirtinti siuntėją',
  },
  'resource.qr_session': { en: 'QR session', lt: 'QR sesija' },
} as const;

type QrMessages = typeof qrMessages;
declare module '../../shared/i18n.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this module's keys
  interface Messages extends QrMessages {}
}
