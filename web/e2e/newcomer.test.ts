// The newcomer's path (issue 14, "done when"): start the server as `npm start` does, open
// the dashboard link it prints, sign in with the demo partner it prints, issue an API key
// and use it — nothing but the banner and the console. A newcomer sets nothing: the child
// gets none of this run's store settings (childEnv), so it is the embedded store in both modes.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { apiHeaders, request } from '../../test/helpers/http.js';
import { childEnv, startServerProcess, type ServerProcess } from '../../test/helpers/server-process.js';
import { launchBrowser, type Browser } from './helpers/browser.js';

describe('newcomer: npm start → dashboard → API key', () => {
  let dataDir: string;
  let server: ServerProcess;
  let browser: Browser;

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'loyalty-newcomer-'));
    server = await startServerProcess(childEnv({ LOYALTY_DATA_DIR: dataDir, RATE_LIMIT_DISABLED: 'true' }), 100_000);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.kill();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('signs in with the printed credentials, issues a key and uses it', async () => {
    const out = server.stdout();
    const link = /Dashboard: +(\S+)/.exec(out)?.[1];
    const [, email, password] = /Partner: +(\S+) \/ (\S+)/.exec(out) ?? [];
    assert.ok(link && email && password, out);
    const page = await browser.page();
    await page.goto(link.replace('localhost', '127.0.0.1'));
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation').getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Name', { exact: true }).fill('My first till');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const key = (await page.getByTestId('api-key').innerText()).trim();
    const secret = (await page.getByTestId('api-secret').innerText()).trim();
    const res = await request(server.url, 'POST', '/en/shop/validate-credentials', { headers: apiHeaders({ key, secret }) });
    assert.equal(res.status, 200);
    assert.equal(res.body.data.valid, true);
    assert.deepEqual(browser.problems, []);
  });
});
