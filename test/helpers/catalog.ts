// Feeds for the catalog tests: upload a fixture (or any bytes) and wait for its import to
// finish, as a client would (polling its history record).
import { readFileSync } from 'node:fs';
import type { TestApp } from './app.js';
import { apiHeaders, request, type Response } from './http.js';

export const FEEDS = new URL('../fixtures/feeds/', import.meta.url);
export const fixtureFeed = (name: string): Buffer => readFileSync(new URL(name, FEEDS));

type Key = { key: string; secret: string };

/** POST from-file with a raw body (`query`: mode, mapping, filename). */
export function uploadFeed(t: TestApp, key: Key, body: Buffer | string, query: Record<string, string> = {}, headers: Record<string, string> = {}): Promise<Response> {
  const qs = new URLSearchParams(query).toString();
  return request(t.url, 'POST', `/en/shop/xml-import/from-file${qs ? `?${qs}` : ''}`, {
    headers: { ...apiHeaders(key), 'content-type': 'application/xml', ...headers },
    raw: body,
  });
}

const FINAL = new Set(['completed', 'failed', 'unchanged']);

/** The import's record once it reached a final status. */
export async function waitForImport(t: TestApp | { url: string }, key: Key, importId: number, timeoutMs = 30_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await request(t.url, 'GET', `/en/shop/xml-import/${importId}`, { headers: apiHeaders(key) });
    if (res.status !== 200) throw new Error(`import ${importId}: ${res.status} ${res.text}`);
    if (FINAL.has(res.body.data.status)) return res.body.data;
    if (Date.now() > deadline) throw new Error(`import ${importId} still ${res.body.data.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Upload and wait: the finished import record. */
export async function importFeed(t: TestApp, key: Key, body: Buffer | string, query: Record<string, string> = {}): Promise<any> {
  const res = await uploadFeed(t, key, body, query);
  if (res.status !== 202) throw new Error(`upload: ${res.status} ${res.text}`);
  return waitForImport(t, key, res.body.data.import_id);
}

/** Every product of the partner (active by default), by xml_id or sku. */
export async function allProducts(t: TestApp, key: Key, query = ''): Promise<any[]> {
  const out: any[] = [];
  for (let page = 1; ; page++) {
    const res = await request(t.url, 'GET', `/en/shop/products?per_page=100&page=${page}${query ? `&${query}` : ''}`, { headers: apiHeaders(key) });
    if (res.status !== 200) throw new Error(`products: ${res.status} ${res.text}`);
    out.push(...res.body.data);
    if (page >= res.body.meta.last_page) return out;
  }
}
