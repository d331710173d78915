// The campaigns module's user-facing messages, registered in src/messages.ts.
export const campaignsMessages = {
  'campaigns.created': { en: 'Campaign created', lt: 'Kampanija sukurta' },
  'campaigns.updated': { en: 'Campaign updated', lt: 'Kampanija atnaujinta' },
  'campaigns.deleted': { en: 'Campaign deleted', lt: 'Kampanija ištrinta' },
  'campaigns.card_not_owned': { en: 'No partner card with this id belongs to you', lt: 'Jums nepriklauso partnerio kortelė su šiuo id' },
  'campaigns.shops_not_owned': { en: 'These shops are not yours: {ids}', lt: 'Šios parduotuvės ne jūsų: {ids}' },
  'campaigns.products_not_owned': { en: 'These products are not in your catalogue: {ids}', lt: 'Šių prekių nėra jūsų kataloge: {ids}' },
  'campaigns.categories_not_owned': { en: 'These categories are not in your catalogue: {ids}', lt: 'Šių kategorijų nėra jūsų kataloge: {ids}' },
  'campaigns.tiers_not_in_programme': { en: "These are not tiers of the campaign's programme: {ids}", lt: 'Tai ne kampanijos programos lygiai: {ids}' },
  'campaigns.too_many': {
    en: 'A programme has at most {limit} campaigns that have not ended',
    lt: 'Programoje gali būti ne daugiau kaip {limit} nepasibaigusių kampanijų',
  },
  'campaigns.ends_before_starts': { en: 'Must be after starts_at', lt: 'Turi būti vėliau nei starts_at' },
  'campaigns.multiplier_range': {
    en: 'A multiplier must be greater than 1 and at most {max}',
    lt: 'Daugiklis turi būti didesnis nei 1 ir ne didesnis nei {max}',
  },
  'campaigns.bonus_whole': { en: 'A bonus is a whole number of points, at least 1', lt: 'Premija – sveikas taškų skaičius, ne mažiau nei 1' },
  'campaigns.time_format': { en: 'Must be a time "HH:MM" from 00:00 to 23:59', lt: 'Turi būti laikas „HH:MM“ nuo 00:00 iki 23:59' },
  'campaigns.time_pair': { en: 'from_time and to_time are set together, or both null', lt: 'from_time ir to_time nurodomi kartu arba abu null' },
  'campaigns.times_equal': { en: 'Must differ from from_time', lt: 'Turi skirtis nuo from_time' },
  'campaigns.time_zone': { en: 'Must be an IANA time zone, such as Europe/Vilnius or UTC', lt: 'Turi būti IANA laiko juosta, pvz., Europe/Vilnius arba UTC' },
  'resource.campaign': { en: 'Campaign', lt: 'Kampanija' },
} as const;

type CampaignsMessages = typeof campaignsMessages;
declare module '../../shared/i18n.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this module's keys
  interface Messages extends CampaignsMessages {}
}
