// The wallet module's user-facing messages, registered in src/messages.ts.
export const walletMessages = {
  'wallet.apple_saved': { en: 'Apple Wallet configuration saved', lt: 'Apple Wallet nustatymai išsaugoti' },
  'wallet.google_saved': { en: 'Google Wallet configuration saved', lt: 'Google Wallet nustatymai išsaugoti' },
  'wallet.not_configured': {
    en: 'This partner has not configured {wallet}',
    lt: 'Šis partneris nenustatė {wallet}',
  },
  'wallet.secrets_key_missing': {
    en: 'LOYALTY_SECRETS_KEY is not set on this server: wallet secrets cannot be stored',
    lt: 'Šiame serveryje nenustatytas LOYALTY_SECRETS_KEY: piniginės paslapčių išsaugoti negalima',
  },
  'wallet.certificate_invalid': {
    en: 'Must be a PEM certificate, or a base64 PKCS#12 file that opens with the passphrase',
    lt: 'Turi būti PEM sertifikatas arba base64 PKCS#12 failas, atsidarantis su slaptafraze',
  },
  'wallet.certificate_expired': { en: 'The certificate has expired', lt: 'Sertifikato galiojimas baigėsi' },
  'wallet.private_key_required': {
    en: 'Required with a PEM certificate',
    lt: 'Privalomas, kai sertifikatas yra PEM',
  },
  'wallet.private_key_invalid': {
    en: 'Must be a PEM private key (with its passphrase if it is encrypted)',
    lt: 'Turi būti PEM privatusis raktas (su slaptafraze, jei jis užšifruotas)',
  },
  'wallet.private_key_rsa': { en: 'Must be an RSA key', lt: 'Turi būti RSA raktas' },
  'wallet.private_key_mismatch': { en: 'Does not belong to the certificate', lt: 'Nepriklauso sertifikatui' },
  'wallet.pass_type_mismatch': {
    en: "Differs from the certificate's pass type identifier",
    lt: 'Nesutampa su sertifikato pass type identifikatoriumi',
  },
  'wallet.wwdr_not_issuer': {
    en: 'Did not issue the pass certificate (use the WWDR certificate generation that signed it)',
    lt: 'Neišdavė pass sertifikato (naudokite tą WWDR sertifikato kartą, kuri jį pasirašė)',
  },
  'wallet.service_account_json': {
    en: 'Must be the JSON key file of a Google service account',
    lt: 'Turi būti Google paslaugos paskyros JSON rakto failas',
  },
  'wallet.service_account_email': { en: 'The key file has no client_email', lt: 'Rakto faile nėra client_email' },
  'wallet.file_too_large': { en: 'The file is larger than {limit}', lt: 'Failas didesnis nei {limit}' },
  'wallet.iterations_limit': {
    en: 'The file asks for more than {limit} key-derivation iterations (export it again with fewer)',
    lt: 'Failas prašo daugiau nei {limit} rakto išvedimo iteracijų (eksportuokite jį iš naujo su mažiau)',
  },
  'wallet.kdf_unsupported': {
    en: 'The file is encrypted with a key derivation other than PBKDF2',
    lt: 'Failas užšifruotas ne PBKDF2 rakto išvedimu',
  },
  'wallet.key_too_large': { en: 'RSA keys may have at most {limit} bits', lt: 'RSA raktas gali turėti ne daugiau kaip {limit} bitų' },
  'wallet.key_curve': { en: 'EC keys must be on P-256 or P-384', lt: 'EC raktas turi būti P-256 arba P-384 kreivės' },
  'wallet.key_type': { en: 'Must be an RSA or EC key', lt: 'Turi būti RSA arba EC raktas' },
  'wallet.busy': { en: 'Too many passes are being signed right now: try again in a moment', lt: 'Šiuo metu pasirašoma per daug kortelių: bandykite po akimirkos' },
  'resource.wallet_pass': { en: 'Pass', lt: 'Kortelė' },
} as const;

type WalletMessages = typeof walletMessages;
declare module '../../shared/i18n.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this module's keys
  interface Messages extends WalletMessages {}
}
