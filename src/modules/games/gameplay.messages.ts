// Gameplay's user-facing messages, registered in src/messages.ts.
export const gameplayMessages = {
  'gameplay.started': { en: 'Game started', lt: 'Žaidimas pradėtas' },
  'gameplay.progressed': { en: 'Progress saved', lt: 'Eiga išsaugota' },
  'gameplay.claimed': { en: 'Reward claimed', lt: 'Prizas atsiimtas' },
  'gameplay.inactive': { en: 'The game is not active', lt: 'Žaidimas neaktyvus' },
  'gameplay.not_started': { en: 'The game starts at {starts_at}', lt: 'Žaidimas prasideda {starts_at}' },
  'gameplay.ended': { en: 'The game ended at {ends_at}', lt: 'Žaidimas baigėsi {ends_at}' },
  'gameplay.no_card': { en: "You hold no card in this game's programme", lt: 'Neturite šio žaidimo programos kortelės' },
  'gameplay.no_rewards': { en: 'The game has no rewards to draw', lt: 'Žaidimas neturi prizų' },
  'gameplay.daily_quota': {
    en: 'You have played this game {limit} time(s) today, the most allowed; try again in {seconds} seconds',
    lt: 'Šiandien šį žaidimą žaidėte {limit} k. – daugiau neleidžiama; bandykite po {seconds} s',
  },
  'gameplay.invalid_state': { en: 'The play is {status}', lt: 'Žaidimo būsena: {status}' },
  'gameplay.not_finished': { en: 'The play is not finished yet ({status})', lt: 'Žaidimas dar nebaigtas ({status})' },
  'resource.game_session': { en: 'Game session', lt: 'Žaidimo sesija' },
} as const;

type GameplayMessages = typeof gameplayMessages;
declare module '../../shared/i18n.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this module's keys
  interface Messages extends GameplayMessages {}
}
