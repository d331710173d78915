// What an edit form sends: only what changed (DESIGN.md §11, issue 33: a save must never lose
// what the form does not show).
/**
 * The fields of a form's body that differ from what was loaded (compared as JSON): an edit's
 * PUT sends only these, so it never overwrites what the form does not show or did not touch.
 */
export function changedFields<T extends object>(body: T, loaded: object): Partial<T> {
  const before = loaded as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (value !== undefined && JSON.stringify(value) !== JSON.stringify(before[key])) out[key] = value;
  }
  return out as Partial<T>;
}
