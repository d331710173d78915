// Wall-clock time in an IANA zone from the platform's tz database (Intl): what campaigns'
// schedules (DESIGN.md §12) and tiers' calendar years (§13) are counted in.

export interface ZoneParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** ISO weekday: 1 = Monday … 7 = Sunday. */
  weekday: number;
}

const zoneFormats = new Map<string, Intl.DateTimeFormat>();
const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

/** The wall-clock reading of `at` in `timeZone`. */
export function zoneParts(at: Date, timeZone: string): ZoneParts {
  let format = zoneFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      weekday: 'short',
    });
    zoneFormats.set(timeZone, format);
  }
  const p: Record<string, string> = {};
  for (const part of format.formatToParts(at)) p[part.type] = part.value;
  return {
    year: Number(p.year),
    month: Number(p.month),
    day: Number(p.day),
    hour: Number(p.hour),
    minute: Number(p.minute),
    second: Number(p.second),
    weekday: WEEKDAYS.indexOf(p.weekday!) + 1,
  };
}

/** The instant the local date y-m-d begins in `timeZone` (midnight, or the first instant after a gap). */
export function zonedMidnight(y: number, m: number, d: number, timeZone: string): Date {
  const wall = Date.UTC(y, m - 1, d);
  let guess = wall;
  // Two rounds settle the zone's offset, also across a change of it.
  for (let i = 0; i < 2; i++) {
    const p = zoneParts(new Date(guess), timeZone);
    guess += wall - Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  }
  return new Date(guess);
}

/**
 * An IANA zone name the runtime's time zone data knows ("UTC" included, which
 * Intl.supportedValuesOf('timeZone') leaves out), in its canonical spelling when only the
 * case differs; undefined otherwise. Offsets such as "+02:00" are not zones: they have no DST.
 */
export function canonicalTimeZone(name: string): string | undefined {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/.test(name)) return undefined;
  try {
    const resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
    return resolved.toLowerCase() === name.toLowerCase() ? resolved : name;
  } catch {
    return undefined;
  }
}
