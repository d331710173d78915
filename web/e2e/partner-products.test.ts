// Products in a real browser at 375 px, against the real app (DESIGN.md §9, §11): a YML feed
// (test/fixtures/feeds/yml.xml) and a small feed with a nameless item are imported on the
// Imports page; its problem is listed with item, line and column; an import's link opens the
// Products page filtered to that import; search (sku, ean) and filters (category, stock,
// inactive) narrow the list; the product view shows its fields, categories, the import that
// last contained it (a link back to that import) and the import-sourced offer that names it.
// axe-core finds no serious or critical violation on each page with its data on it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { DemoCredentials } from '../../src/modules/demo/demo.service.js';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';
import { launchBrowser, type Browser } from './helpers/browser.js';
import { openNav, signIn } from './helpers/console.js';
import { checkPage } from './helpers/pages.js';
import { seed } from './helpers/seed.js';

const YML = readFileSync(new URL('../../test/fixtures/feeds/yml.xml', import.meta.url));
const EXTRA = `<?xml version="1.0" encoding="UTF-8"?>
<products>
  <product><id>X-1</id><name>Popierinis maišelis</name><price>0.10</price></product>
  <product><id>X-2</id><price>5</price></product>
</products>
`;

describe('partner console: products (375 px)', () => {
  let t: TestApp;
  let demo: DemoCredentials;
  let browser: Browser;
  let page: Page;
  let ymlImport = 0;

  const upload = async (name: string, buffer: Buffer) => {
    await page.getByLabel('Feed file').setInputFiles({ name, mimeType: 'application/xml', buffer });
    await page.getByRole('button', { name: 'Upload and import' }).click();
    const row = page.getByRole('row').filter({ hasText: name });
    await row.getByText('Done').waitFor({ timeout: 20_000 });
    return row;
  };
  const productRows = () => page.getByRole('region', { name: 'Products' }).locator('tbody tr');
  const rowNames = async () => (await productRows().allInnerTexts()).map((r) => r.split('\t')[1]?.trim() ?? '');
  /** The list's names once they are these (the earlier rows stay on screen while it reloads). */
  const expectNames = async (expected: string[]) => {
    let names: string[] = [];
    for (let i = 0; i < 100; i++) {
      names = await rowNames();
      if (JSON.stringify([...names].sort()) === JSON.stringify([...expected].sort())) return;
      await page.waitForTimeout(50);
    }
    assert.deepEqual(names.sort(), [...expected].sort());
  };
  const search = async (expected: string[]) => {
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expectNames(expected);
  };

  before(async () => {
    t = await startTestApp();
    demo = await seed(t);
    browser = await launchBrowser();
    page = await browser.page({ width: 375, height: 800 });
    await signIn(page, `${t.url}/dashboard/`, demo.partner.email, demo.partner.password, 'Overview');
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('imports two feeds; a problem is listed with its item, line and column', async () => {
    await openNav(page, 'Imports');
    const yml = await upload('yml.xml', YML);
    assert.match(await yml.innerText(), /2 read, 2 new, 0 updated, 0 skipped/);
    ymlImport = Number((await yml.locator('td').first().innerText()).trim());
    assert.ok(ymlImport > 0);
    const extra = await upload('extra.xml', Buffer.from(EXTRA));
    assert.match(await extra.innerText(), /2 read, 1 new, 0 updated, 1 skipped/);
    await extra.locator('summary').click();
    assert.match(await extra.locator('details li').first().innerText(), /^Item 2, line 4, column \d+: /);
    await checkPage(page, 'Imports with a problem open at 375');
  });

  it("follows an import's link to the products it brought", async () => {
    await page.getByRole('row').filter({ hasText: 'yml.xml' }).getByRole('link', { name: `Products of import ${ymlImport}` }).click();
    await page.getByRole('heading', { level: 1, name: 'Products' }).waitFor();
    await page.getByText('Loading…').first().waitFor({ state: 'detached' });
    assert.match(page.url(), new RegExp(`/dashboard/products\\?import_id=${ymlImport}$`));
    await page.getByRole('status').filter({ hasText: `Products whose last import was import ${ymlImport}.` }).waitFor();
    await expectNames(['Belaidės ausinės', 'Išmanusis telefonas X']);
    await checkPage(page, 'Products of an import at 375');
    await page.getByRole('button', { name: 'Show all products' }).click();
    await page.getByRole('row').filter({ hasText: 'Popierinis maišelis' }).waitFor();
  });

  it('searches by sku and ean and filters by category, stock and inactive', async () => {
    await page.getByLabel('Search', { exact: true }).fill('ACM-X');
    await search(['Išmanusis telefonas X']);
    await page.getByLabel('Search', { exact: true }).fill('4770000000028');
    await search(['Išmanusis telefonas X']);
    assert.match(await productRows().first().innerText(), /ACM-X/);
    await page.getByLabel('Search', { exact: true }).fill('Popierinis');
    await search(['Popierinis maišelis']);

    await page.getByLabel('Search', { exact: true }).fill('');
    await page.getByLabel('Category').selectOption({ label: 'Elektronika > Ausinės' });
    await search(['Belaidės ausinės']);
    // The parent category lists what is under it.
    await page.getByLabel('Category').selectOption({ label: 'Elektronika' });
    await search(['Belaidės ausinės', 'Išmanusis telefonas X']);
    await page.getByLabel('Stock').selectOption({ label: 'Out of stock' });
    await search(['Belaidės ausinės']);
    assert.match(page.url(), /in_stock=false/);
    await checkPage(page, 'Products filtered at 375');
    await page.getByLabel('Stock').selectOption({ label: 'In stock' });
    await page.getByLabel('Inactive only').check();
    await search(['']);
    await page.getByRole('cell', { name: 'No products match.' }).waitFor();
    await page.getByLabel('Inactive only').uncheck();
    await search(['Išmanusis telefonas X']);
  });

  it('opens a product: its fields, categories, last import and the offer naming it', async () => {
    await page.getByRole('link', { name: 'Išmanusis telefonas X' }).click();
    await page.getByRole('heading', { level: 1, name: 'Išmanusis telefonas X' }).waitFor();
    await page.getByText('Loading…').first().waitFor({ state: 'detached' });
    const fact = async (label: string) => (await page.locator('dl.facts > div').filter({ has: page.getByText(label, { exact: true }) }).locator('dd').innerText()).trim();
    assert.equal(await fact('Feed id (xml_id)'), 'A-1');
    assert.equal(await fact('SKU'), 'ACM-X');
    assert.equal(await fact('EAN'), '4770000000028');
    assert.equal(await fact('Brand'), 'Acme');
    assert.equal(await fact('Price'), '249 EUR');
    assert.equal(await fact('Discounted price'), '199 EUR');
    assert.equal(await fact('Stock'), 'In stock');
    assert.equal(await fact('Picture'), 'https://demo.example.lt/img/a-1.jpg');
    assert.equal(await fact('Shop page'), 'https://demo.example.lt/p/a-1');
    assert.equal(await fact('Categories'), 'Telefonai');
    assert.equal(await fact('Last import'), `Import ${ymlImport}`);
    assert.match(await page.locator('.pre-line').innerText(), /6,1 colio ekranas/);
    const offers = page.getByRole('region', { name: 'Offers naming this product' });
    assert.match(await offers.locator('tbody tr').first().innerText(), /Išmanusis telefonas X \(from import\)/);
    assert.equal(await offers.locator('tbody tr').count(), 1);
    await checkPage(page, 'A product at 375');

    await page.getByRole('link', { name: `Import ${ymlImport}` }).click();
    await page.getByRole('heading', { level: 1, name: 'Imports' }).waitFor();
    const detail = page.getByRole('region', { name: `Import ${ymlImport}` });
    await detail.getByText('2 read, 2 new, 0 updated, 0 skipped').waitFor();
    await detail.getByText('No problems.').waitFor();
    await detail.getByRole('link', { name: `Products of import ${ymlImport}` }).waitFor();
    await checkPage(page, 'One import at 375');
  });

  it('a replace import that would deactivate most products deactivates nothing unless the box says so', async () => {
    // Active imported products now: the two of yml.xml and X-1. A feed of X-1 alone would
    // deactivate 2 of 3 — more than half — so it deactivates nothing and says why.
    const only = Buffer.from('<?xml version="1.0" encoding="UTF-8"?>\n<products><product><id>X-1</id><name>Popierinis maišelis</name><price>0.10</price></product></products>\n');
    await openNav(page, 'Imports');
    const fileForm = page.getByRole('region', { name: 'Upload a feed' });
    await fileForm.getByLabel('Mode').selectOption('replace');
    const guarded = await upload('only-one.xml', only);
    assert.match(await guarded.innerText(), /1 read, 0 new, 0 updated, 0 skipped, 0 deactivated/);
    await guarded.locator('summary').click();
    assert.match(await guarded.locator('details li').first().innerText(), /2 of 3 .*more than half, so none was deactivated/);
    // Ticked: the same feed deactivates the two.
    await fileForm.getByLabel('Mode').selectOption('replace');
    await fileForm.getByLabel(/may deactivate more than half/).check();
    const allowed = await upload('only-one-again.xml', only);
    assert.match(await allowed.innerText(), /1 read, 0 new, 0 updated, 0 skipped, 2 deactivated/);
    await checkPage(page, 'Imports after a replace at 375');
  });

  it('produced no script errors, CSP violations or failed requests', () => {
    assert.deepEqual(browser.problems, []);
  });
});
