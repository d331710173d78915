// Steps the browser tests share, by role and label as DESIGN.md §11 names them.
import assert from 'node:assert/strict';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';

export async function signIn(page: Page, url: string, email: string, password: string, heading: string) {
  await page.goto(url);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

export async function openNav(page: Page, name: string) {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { level: 1, name }).waitFor();
  await page.getByText('Loading…').first().waitFor({ state: 'detached' });
}

/** The error shown next to a field (its aria-describedby), as a user reads it. */
export async function fieldError(page: Page, label: string, exact = true): Promise<string> {
  const input = page.getByLabel(label, { exact });
  await assert.doesNotReject(input.getAttribute('aria-invalid').then((v) => assert.equal(v, 'true', `${label} is not marked invalid`)));
  const ids = ((await input.getAttribute('aria-describedby')) ?? '').split(' ').filter((id) => id.endsWith('-error'));
  assert.equal(ids.length, 1, `${label} has no error message`);
  return (await page.locator(`[id="${ids[0]}"]`).innerText()).trim();
}

/**
 * axe-core (WCAG 2.1 A and AA rules) on the page as it is: the serious and critical violations.
 * One `axe.run` in the page (legacy mode): the default splits the run to reach cross-origin
 * frames, which the console has none of, and finishes it in a new tab with axe injected again
 * — the same rules and results for twice the time, on each of the suite's ~40 checks.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).setLegacyMode(true).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).slice(0, 5).join(', ')}`);
}

/** Content wider than the viewport (a page that scrolls sideways at 375 px is broken). */
export async function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}
