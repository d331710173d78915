// The commission module's user-facing messages, registered in src/messages.ts.
export const commissionMessages = {
  'commission.rate_added': { en: 'Commission rate version added', lt: 'Pridėta nauja komisinio tarifo versija' },
  'commission.locked': { en: 'Commission period locked', lt: 'Komisinio mokesčio laikotarpis užrakintas' },
  'commission.unlocked': { en: 'Commission period unlocked', lt: 'Komisinio mokesčio laikotarpis atrakintas' },
  'commission.synced': { en: 'Commission recomputed and stored', lt: 'Komisinis mokestis perskaičiuotas ir išsaugotas' },
  'commission.period_locked': {
    en: 'The commission period {period} is locked; unlock it first',
    lt: 'Komisinio mokesčio laikotarpis {period} užrakintas; pirmiausia jį atrakinkite',
  },
  'commission.already_locked': {
    en: 'The commission period {period} is already locked',
    lt: 'Komisinio mokesčio laikotarpis {period} jau užrakintas',
  },
  'commission.not_locked': {
    en: 'The commission period {period} is not locked',
    lt: 'Komisinio mokesčio laikotarpis {period} neužrakintas',
  },
  'commission.period_not_ended': {
    en: 'Must be a month that has ended (not the current or a future month)',
    lt: 'Turi būti pasibaigęs mėnuo (ne einamasis ir ne būsimas)',
  },
  'commission.period_in_future': { en: 'May not be a future month', lt: 'Negali būti būsimas mėnuo' },
  'commission.rate_decimals': {
    en: 'Must be a percentage from 0 to 100 with at most 2 decimals',
    lt: 'Turi būti procentai nuo 0 iki 100, ne daugiau kaip 2 skaitmenys po kablelio',
  },
  'commission.period_format': { en: 'Must be a month as YYYY-MM', lt: 'Turi būti mėnuo formatu YYYY-MM' },
} as const;

type CommissionMessages = typeof commissionMessages;
declare module '../../shared/i18n.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this module's keys
  interface Messages extends CommissionMessages {}
}
