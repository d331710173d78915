// The tiers module's user-facing messages, registered in src/messages.ts.
export const tiersMessages = {
  'tiers.created': { en: 'Tier created', lt: 'Lygis sukurtas' },
  'tiers.updated': { en: 'Tier updated', lt: 'Lygis atnaujintas' },
  'tiers.deleted': { en: 'Tier deleted', lt: 'Lygis ištrintas' },
  'tiers.color': { en: 'Must be a colour in #RRGGBB form', lt: 'Turi būti spalva #RRGGBB formatu' },
  'tiers.threshold_taken': {
    en: 'Another tier of this programme has this threshold',
    lt: 'Kitas šios programos lygis jau turi šią ribą',
  },
  'tiers.too_many': {
    en: 'A programme has at most {limit} tiers',
    lt: 'Programa gali turėti ne daugiau kaip {limit} lygių',
  },
  'tiers.time_zone': { en: 'Must be an IANA time zone, such as Europe/Vilnius or UTC', lt: 'Turi būti IANA laiko juosta, pvz., Europe/Vilnius arba UTC' },
  'resource.tier': { en: 'Tier', lt: 'Lygis' },
} as const;

type TiersMessages = typeof tiersMessages;
declare module '../../shared/i18n.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this module's keys
  interface Messages extends TiersMessages {}
}
