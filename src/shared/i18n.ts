// The message catalogue: every user-facing message in both locales of the spec. The core
// messages (envelope, errors, validation) live here; each module keeps its own beside its
// code and hands them over at the composition root (src/messages.ts), so shared/ knows no
// module. Keys stay typed: a module's messages file augments `Messages` below.
export const LOCALES = ['lt', 'en'] as const;
export type Locale = (typeof LOCALES)[number];

export function isLocale(v: unknown): v is Locale {
  return v === 'lt' || v === 'en';
}

const core = {
  // success messages
  'ok': { en: 'OK', lt: 'Gerai' },
  'ok.created': { en: 'Created', lt: 'Sukurta' },
  'ok.updated': { en: 'Updated', lt: 'Atnaujinta' },
  'ok.deleted': { en: 'Deleted', lt: 'Ištrinta' },
  'ok.accepted': { en: 'Accepted', lt: 'Priimta' },
  'auth.credentials_valid': { en: 'API credentials are valid', lt: 'API prisijungimo duomenys galioja' },
  'auth.logged_in': { en: 'Logged in', lt: 'Prisijungta' },
  'auth.logged_out': { en: 'Signed out; this token no longer works', lt: 'Atsijungta; šis prieigos raktas nebegalioja' },
  'auth.password_changed': {
    en: 'Password changed; tokens issued before the change no longer work',
    lt: 'Slaptažodis pakeistas; prieš pakeitimą išduoti prieigos raktai nebegalioja',
  },
  'error.current_password_wrong': { en: 'The current password is wrong', lt: 'Dabartinis slaptažodis neteisingas' },
  'error.profile_scoped_token': {
    en: "A token from a partner's QR login cannot change the customer's profile; use the app",
    lt: 'Prisijungus per partnerio QR kodą kliento profilio keisti negalima; naudokite programėlę',
  },
  'health.ok': { en: 'Service is healthy', lt: 'Paslauga veikia' },
  'health.degraded': { en: 'Service is degraded', lt: 'Paslauga veikia su sutrikimais' },
  'api_keys.created': {
    en: 'API key created; the secret is shown only once',
    lt: 'API raktas sukurtas; slaptažodis rodomas tik vieną kartą',
  },
  'api_keys.revoked': { en: 'API key revoked', lt: 'API raktas atšauktas' },
  'webhooks.secret_rotated': {
    en: 'Webhook secret rotated; the previous one no longer signs',
    lt: 'Webhook slaptasis raktas pakeistas; ankstesniuoju nebepasirašoma',
  },

  // errors: request shape
  'error.malformed_json': { en: 'The request body is not valid JSON', lt: 'Užklausos turinys nėra tinkamas JSON' },
  'error.body_too_large': {
    en: 'The request body is larger than {limit} bytes',
    lt: 'Užklausos turinys didesnis nei {limit} baitų',
  },
  'error.unsupported_media_type': {
    en: 'Unsupported content type; send application/json',
    lt: 'Nepalaikomas turinio tipas; siųskite application/json',
  },
  'error.bad_request': { en: 'Malformed request', lt: 'Netinkama užklausa' },
  'error.bad_url': {
    en: 'The URL path is not valid: it has a byte sequence that is not UTF-8',
    lt: 'Netinkamas URL kelias: jame yra baitų seka, kuri nėra UTF-8',
  },
  'error.request_timeout': {
    en: 'The request was not received in time',
    lt: 'Užklausa nebuvo gauta laiku',
  },
  'error.headers_too_large': {
    en: 'The request line and headers are too large (at most 16 KiB)',
    lt: 'Užklausos eilutė ir antraštės per didelės (ne daugiau kaip 16 KiB)',
  },
  'error.json_too_deep': {
    en: 'The JSON body is nested deeper than {limit} levels',
    lt: 'JSON turinys įdėtas giliau nei {limit} lygių',
  },
  'error.validation': { en: 'The given data was invalid', lt: 'Pateikti duomenys netinkami' },
  'error.route_not_found': { en: 'Route not found', lt: 'Maršrutas nerastas' },
  'error.resource_not_found': { en: '{resource} not found', lt: 'Nerasta: {resource}' },
  'error.internal': {
    en: 'Internal server error; retry later and quote the request_id if it persists',
    lt: 'Vidinė serverio klaida; bandykite vėliau ir nurodykite request_id, jei klaida kartojasi',
  },
  'error.unavailable': { en: 'Service temporarily unavailable', lt: 'Paslauga laikinai nepasiekiama' },

  // errors: authentication and authorisation
  'error.api_credentials_missing': {
    en: 'API key and secret are required (X-API-Key and X-API-Secret headers)',
    lt: 'Būtini API raktas ir slaptažodis (antraštės X-API-Key ir X-API-Secret)',
  },
  'error.api_credentials_invalid': { en: 'Invalid API credentials', lt: 'Neteisingi API prisijungimo duomenys' },
  'error.token_missing': {
    en: 'Authentication required: send Authorization: Bearer <token>',
    lt: 'Reikia prisijungti: siųskite Authorization: Bearer <žetonas>',
  },
  'error.token_malformed': { en: 'The bearer token is malformed', lt: 'Netinkamo formato prieigos žetonas' },
  'error.token_expired': { en: 'The token has expired', lt: 'Prieigos žetono galiojimas baigėsi' },
  'error.token_invalid': { en: 'The token is not valid', lt: 'Prieigos žetonas negalioja' },
  'error.login_failed': { en: 'Invalid e-mail or password', lt: 'Neteisingas el. paštas arba slaptažodis' },
  'error.insufficient_permissions': {
    en: 'This credential does not give access to this resource',
    lt: 'Šie prisijungimo duomenys nesuteikia prieigos prie šio ištekliaus',
  },
  'error.rate_limited': {
    en: 'Too many requests; retry after {seconds} seconds',
    lt: 'Per daug užklausų; bandykite po {seconds} s',
  },

  // errors: idempotency and conflicts
  'error.idempotency_key_invalid': {
    en: 'Idempotency-Key must be 1 to 255 printable ASCII characters',
    lt: 'Idempotency-Key turi būti nuo 1 iki 255 spausdinamų ASCII simbolių',
  },
  'error.idempotency_key_reused': {
    en: 'This Idempotency-Key was already used with a different request',
    lt: 'Šis Idempotency-Key jau panaudotas kitai užklausai',
  },
  'error.idempotency_in_progress': {
    en: 'A request with this Idempotency-Key is still being processed',
    lt: 'Užklausa su šiuo Idempotency-Key dar vykdoma',
  },
  'error.access_denied': { en: 'Access denied', lt: 'Prieiga uždrausta' },
  'error.invalid_state': {
    en: 'The resource is not in a state that allows this',
    lt: 'Ištekliaus būsena neleidžia šio veiksmo',
  },
  'error.commission_locked': {
    en: 'The commission period is locked',
    lt: 'Komisinio mokesčio laikotarpis užrakintas',
  },
  'error.insufficient_balance': { en: 'Insufficient points balance', lt: 'Nepakankamas taškų likutis' },
  'error.out_of_range': { en: 'A value is out of the allowed range', lt: 'Reikšmė už leistinų ribų' },
  'error.expired_offer': { en: 'The offer has expired', lt: 'Pasiūlymo galiojimas baigėsi' },
  'error.quota_exceeded': { en: 'The quota or balance is exceeded', lt: 'Viršyta kvota arba likutis' },
  'error.daily_quota_exceeded': { en: 'The daily limit is reached', lt: 'Pasiektas dienos limitas' },
  'error.sender_not_approved': {
    en: 'Sender name not approved for this account; approved senders: {senders}',
    lt: 'Siuntėjo vardas šiai paskyrai nepatvirtintas; patvirtinti siuntėjai: {senders}',
  },
  'error.duplicate_value': { en: 'The value is already taken', lt: 'Ši reikšmė jau naudojama' },
  'error.email_taken': { en: 'This e-mail is already registered', lt: 'Šis el. paštas jau užregistruotas' },

  // validation messages (Shape A)
  'validation.required': { en: 'This field is required', lt: 'Šis laukas privalomas' },
  'validation.type': { en: 'Must be of type {type}', lt: 'Turi būti tipo {type}' },
  'validation.min_length': {
    en: 'Must be at least {limit} characters long',
    lt: 'Turi būti bent {limit} simbolių ilgio',
  },
  'validation.max_length': {
    en: 'May not be longer than {limit} characters',
    lt: 'Negali būti ilgesnis nei {limit} simbolių',
  },
  'validation.minimum': { en: 'Must be at least {limit}', lt: 'Turi būti ne mažiau nei {limit}' },
  'validation.maximum': { en: 'May not be greater than {limit}', lt: 'Negali būti daugiau nei {limit}' },
  'validation.exclusive_minimum': { en: 'Must be greater than {limit}', lt: 'Turi būti daugiau nei {limit}' },
  'validation.exclusive_maximum': { en: 'Must be less than {limit}', lt: 'Turi būti mažiau nei {limit}' },
  'validation.pattern': { en: 'Has an invalid format', lt: 'Netinkamas formatas' },
  'validation.format': { en: 'Must be a valid {format}', lt: 'Turi būti tinkamas {format}' },
  'validation.enum': { en: 'Must be one of: {values}', lt: 'Turi būti viena iš reikšmių: {values}' },
  'validation.min_items': { en: 'Must have at least {limit} items', lt: 'Turi būti bent {limit} elementų' },
  'validation.max_items': { en: 'May not have more than {limit} items', lt: 'Negali būti daugiau nei {limit} elementų' },
  'validation.unique_items': { en: 'Items must be unique', lt: 'Elementai turi būti unikalūs' },
  'validation.additional_properties': { en: 'Unknown field', lt: 'Nežinomas laukas' },
  'validation.invalid': { en: 'Is invalid', lt: 'Netinkama reikšmė' },
  'validation.decimal_places': {
    en: 'May have at most {limit} decimal places',
    lt: 'Gali būti ne daugiau kaip {limit} skaitmenys po kablelio',
  },
  'validation.decimal_text_3': {
    en: 'Must be a decimal no greater than 1000000000 with at most 3 decimal places',
    lt: 'Turi būti dešimtainis skaičius ne didesnis nei 1000000000, ne daugiau kaip 3 skaitmenys po kablelio',
  },
  'validation.decimal_text_4': {
    en: 'Must be a decimal no greater than 1000000000 with at most 4 decimal places',
    lt: 'Turi būti dešimtainis skaičius ne didesnis nei 1000000000, ne daugiau kaip 4 skaitmenys po kablelio',
  },
  'validation.unstorable_text': {
    en: 'May not contain NUL characters or unpaired surrogates',
    lt: 'Negali būti NUL simbolių ar neporinių surogatų',
  },
  'validation.not_blank': { en: 'May not be blank', lt: 'Negali būti tuščias' },
  'validation.email': { en: 'Must be a valid e-mail address', lt: 'Turi būti tinkamas el. pašto adresas' },
  'validation.password_too_short': {
    en: 'Must be at least {limit} characters long',
    lt: 'Turi būti bent {limit} simbolių ilgio',
  },

  // resource names used in 404 messages
  'resource.partner': { en: 'Partner', lt: 'Partneris' },
  'resource.shop': { en: 'Shop', lt: 'Parduotuvė' },
  'resource.api_key': { en: 'API key', lt: 'API raktas' },
  'resource.resource': { en: 'Resource', lt: 'Išteklius' },
  'resource.webhook_delivery': { en: 'Webhook delivery', lt: 'Webhook pristatymas' },
} as const;

export type MessageSet = Record<string, Record<Locale, string>>;
type CoreMessages = typeof core;

/**
 * Every message key. A module adds its own with
 * `declare module '…/shared/i18n.js' { interface Messages extends MyMessages {} }`
 * and registers the texts in src/messages.ts.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the augmentation point
export interface Messages extends CoreMessages {}

export type MessageKey = keyof Messages & string;
export type MessageParams = Record<string, string | number>;

const catalogue: MessageSet = { ...core };

/** Adds message sets to the catalogue (src/messages.ts, once at start); a key may be defined once. */
export function registerMessages(...sets: MessageSet[]): void {
  for (const set of sets) {
    for (const [key, texts] of Object.entries(set)) {
      const existing = catalogue[key];
      if (existing && (existing.en !== texts.en || existing.lt !== texts.lt)) {
        throw new Error(`message ${key} is defined twice with different texts`);
      }
      catalogue[key] = texts;
    }
  }
}

export function t(locale: Locale, key: MessageKey, params?: MessageParams): string {
  const texts = catalogue[key];
  // A key the types know but nobody registered is a wiring mistake (src/messages.test.ts
  // catches it); the key itself is still better than a crash on an error path.
  if (!texts) return key;
  const template = texts[locale];
  if (!params) return template;
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = params[name];
    if (value === undefined) return whole;
    // Resource names are message keys themselves, translated in the same locale.
    if (typeof value === 'string' && value.startsWith('resource.') && catalogue[value]) {
      return catalogue[value]![locale];
    }
    return String(value);
  });
}

/** Exposed for the completeness test only. */
export const messageCatalogue: Readonly<MessageSet> = catalogue;
