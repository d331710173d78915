// The customers module's user-facing messages, registered in src/messages.ts.
export const customersMessages = {
  'otp.sent': { en: 'Sign-in code sent', lt: 'Prisijungimo kodas išsiųstas' },
  'otp.sms_text': {
    en: 'Your sign-in code is {code}. It expires in {minutes} minutes. Do not share it.',
    lt: 'Jūsų prisijungimo kodas: {code}. Galioja {minutes} min. Niekam jo nesakykite.',
  },
  'otp.resend_too_soon': {
    en: 'A code was sent recently; request a new one after {seconds} seconds',
    lt: 'Kodas ką tik išsiųstas; naują galėsite gauti po {seconds} s',
  },
  'otp.wrong_code': {
    en: 'The code is wrong; {left} attempts left',
    lt: 'Neteisingas kodas; liko bandymų: {left}',
  },
  'otp.too_many_attempts': {
    en: 'Too many wrong codes; request a new code',
    lt: 'Per daug neteisingų kodų; paprašykite naujo kodo',
  },
  'otp.expired': { en: 'The code has expired; request a new one', lt: 'Kodo galiojimas baigėsi; paprašykite naujo' },
  'otp.no_code': {
    en: 'No valid code for this number; request a code first',
    lt: 'Šiam numeriui galiojančio kodo nėra; pirmiausia paprašykite kodo',
  },
  'customers.profile_updated': { en: 'Profile updated', lt: 'Profilis atnaujintas' },
  'validation.date_in_future': { en: 'May not be in the future', lt: 'Negali būti ateityje' },
  'resource.customer': { en: 'Customer', lt: 'Klientas' },
} as const;

type CustomersMessages = typeof customersMessages;
declare module '../../shared/i18n.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this module's keys
  interface Messages extends CustomersMessages {}
}
