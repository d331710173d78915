// Chromium from Debian's `chromium` package, driven by playwright-core (never a browser
// download): headless, sandbox off (containers), no background traffic, a fresh profile.
// Every page records console errors, page errors, failed requests and CSP violations, so a
// test can assert that a flow produced none.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface Browser {
  context: BrowserContext;
  /** A new tab at the given viewport; its problems are collected in `problems`. */
  page(viewport?: { width: number; height: number }): Promise<Page>;
  /** Script errors, console errors and warnings (CSP violations among them), failed requests, 5xx answers. */
  problems: string[];
  /** 4xx answers the browser logged ("Failed to load resource"): expected where a test provokes an API error. */
  httpErrors: string[];
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  const profile = await mkdtemp(path.join(tmpdir(), 'loyalty-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-dev-shm-usage',
    ],
    viewport: { width: 1280, height: 900 },
    locale: 'en-GB',
    timezoneId: 'UTC',
  });
  const problems: string[] = [];
  const httpErrors: string[] = [];
  const watch = (page: Page) => {
    page.on('console', (msg) => {
      if (msg.type() !== 'error' && msg.type() !== 'warning') return;
      const text = `console ${msg.type()}: ${msg.text()} (${msg.location().url})`;
      if (/Failed to load resource: the server responded with a status of 4\d\d/.test(msg.text())) httpErrors.push(text);
      else problems.push(text);
    });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message} (${page.url()})`));
    page.on('requestfailed', (req) => {
      // A download or an aborted navigation is not a failure of the page.
      if (req.failure()?.errorText === 'net::ERR_ABORTED') return;
      problems.push(`request failed: ${req.method()} ${req.url()} ${req.failure()?.errorText}`);
    });
  };
  for (const p of context.pages()) watch(p);
  context.on('page', watch);
  return {
    context,
    problems,
    httpErrors,
    async page(viewport) {
      const existing = context.pages().find((p) => p.url() === 'about:blank');
      const page = existing ?? (await context.newPage());
      if (viewport) await page.setViewportSize(viewport);
      return page;
    },
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
