// The games module's user-facing messages, registered in src/messages.ts.
export const gamesMessages = {
  'games.created': { en: 'Game created', lt: 'Žaidimas sukurtas' },
  'games.updated': { en: 'Game updated', lt: 'Žaidimas atnaujintas' },
  'games.probability_sum': {
    en: 'The reward probabilities must add up to exactly 1; they add up to {sum}',
    lt: 'Prizų tikimybių suma turi būti lygiai 1; dabar ji yra {sum}',
  },
  'games.required_for_reward_type': {
    en: 'Required when reward_type is {type}',
    lt: 'Privalomas, kai reward_type yra {type}',
  },
  'games.only_for_reward_type': {
    en: 'Only allowed when reward_type is {type}',
    lt: 'Leidžiamas tik kai reward_type yra {type}',
  },
  'games.percent_over_100': {
    en: 'A percent discount may not be greater than 100',
    lt: 'Procentinė nuolaida negali būti didesnė nei 100',
  },
  'games.ends_before_starts': { en: 'Must be after starts_at', lt: 'Turi būti vėliau nei starts_at' },
  'games.card_not_owned': {
    en: 'No partner card with this id belongs to you',
    lt: 'Jums nepriklauso partnerio kortelė su šiuo id',
  },
  'resource.game': { en: 'Game', lt: 'Žaidimas' },
} as const;

type GamesMessages = typeof gamesMessages;
declare module '../../shared/i18n.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this module's keys
  interface Messages extends GamesMessages {}
}
