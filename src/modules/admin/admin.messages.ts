// The admin module's user-facing messages (statistics, e-mail to partners), registered in
// src/messages.ts.
export const adminMessages = {
  'admin.stats': { en: 'Statistics', lt: 'Statistika' },
  'admin.stats_from_after_to': { en: 'Must not be after "to"', lt: 'Negali būti vėlesnė nei „to“' },
  'admin.stats_range_too_long': {
    en: 'The range may span at most {limit} days',
    lt: 'Laikotarpis negali būti ilgesnis nei {limit} d.',
  },
  'admin.email_queued': {
    en: 'E-mail accepted for delivery',
    lt: 'El. laiškas priimtas siųsti',
  },
  'admin.single_line': { en: 'Must be a single line', lt: 'Turi būti viena eilutė' },
} as const;

type AdminMessages = typeof adminMessages;
declare module '../../shared/i18n.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this module's keys
  interface Messages extends AdminMessages {}
}
