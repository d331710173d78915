// Shared setup for the SMS tests: a partner with approved senders and a topped-up balance
// (through the admin endpoints, over HTTP), sending, reading the account and the message
// history, and polling a message's status.
import assert from 'node:assert/strict';
import type { TestApp } from './app.js';
import { createPartner, type AdminFixture, type PartnerFixture } from './fixtures.js';
import { apiHeaders, bearer, request, type Response } from './http.js';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** Lithuanian mobile numbers; the simulator's test numbers end in 0001 (fails) and 0002 (no receipt). */
export const LT_OK = '+37061234567';
export const LT_FAILS = '+37060000001';
export const LT_SILENT = '+37060000002';
export const LV_OK = '+37120000000';
/** Germany is not in the default price table: the '*' price applies. */
export const DE_OK = '+4915123456789';

export interface SmsPartnerOptions {
  /** Sender names to approve (default ['Shop']). */
  senders?: string[];
  /** EUR top-up as text (default '10'); '0' or null for none. */
  balance?: string | null;
  name?: string;
}

export async function approveSender(t: TestApp, admin: AdminFixture, partnerId: number, name: string): Promise<Response> {
  return request(t.url, 'POST', `/en/admin/partners/${partnerId}/sms-senders`, { headers: bearer(admin.token), json: { name } });
}

export async function topUp(t: TestApp, admin: AdminFixture, partnerId: number, amount: number | string): Promise<Response> {
  return request(t.url, 'POST', `/en/admin/partners/sms-accounts/${partnerId}/top-up`, { headers: bearer(admin.token), json: { amount } });
}

/** A partner with approved senders and a balance, set up through the admin endpoints. */
export async function createSmsPartner(t: TestApp, admin: AdminFixture, opts: SmsPartnerOptions = {}): Promise<PartnerFixture> {
  const partner = await createPartner(t, opts.name);
  for (const name of opts.senders ?? ['Shop']) {
    const res = await approveSender(t, admin, partner.id, name);
    assert.equal(res.status, 201, res.text);
  }
  const balance = opts.balance === undefined ? '10' : opts.balance;
  if (balance !== null && Number(balance) > 0) {
    const res = await topUp(t, admin, partner.id, balance);
    assert.equal(res.status, 200, res.text);
  }
  return partner;
}

export interface SendOptions {
  locale?: 'en' | 'lt';
  headers?: Record<string, string>;
}

export function send(t: TestApp, partner: PartnerFixture, body: unknown, opts: SendOptions = {}): Promise<Response> {
  return request(t.url, 'POST', `/${opts.locale ?? 'en'}/sms/send`, {
    headers: { ...apiHeaders(partner.apiKey), ...opts.headers },
    json: body,
  });
}

/** A valid body for partner's 'Shop' sender; `over` replaces or adds fields. */
export const sendBody = (over: Record<string, unknown> = {}) => ({ source: 'Shop', destination: LT_OK, message: 'Hello', ...over });

export interface AccountView {
  partner_id: number;
  balance: number;
  currency: string;
  senders: string[];
  prices: Record<string, number>;
  transliterate: boolean;
}

export async function account(t: TestApp, partner: PartnerFixture): Promise<AccountView> {
  const res = await request(t.url, 'GET', '/en/partners/sms-account', { headers: bearer(partner.token) });
  assert.equal(res.status, 200, res.text);
  return res.body.data as AccountView;
}

export async function messages(t: TestApp, partner: PartnerFixture, query = ''): Promise<Response> {
  const res = await request(t.url, 'GET', `/en/partners/sms/messages${query}`, { headers: bearer(partner.token) });
  assert.equal(res.status, 200, res.text);
  return res;
}

export async function messageTotal(t: TestApp, partner: PartnerFixture): Promise<number> {
  return (await messages(t, partner)).body.meta.total as number;
}

export function status(t: TestApp, key: { key: string; secret: string }, messageId: string): Promise<Response> {
  return request(t.url, 'GET', `/en/sms/status/${encodeURIComponent(messageId)}`, { headers: apiHeaders(key) });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls GET /sms/status until the message has `wanted`; fails with the last body seen after `timeoutMs`. */
export async function waitForStatus(
  t: TestApp,
  key: { key: string; secret: string },
  messageId: string,
  wanted: string,
  timeoutMs = 5000,
): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  let last: Response | undefined;
  for (;;) {
    last = await status(t, key, messageId);
    assert.equal(last.status, 200, last.text);
    if (last.body.data.status === wanted) return last.body.data;
    if (Date.now() > deadline) assert.fail(`message ${messageId} not ${wanted} within ${timeoutMs} ms; last: ${last.text}`);
    await sleep(25);
  }
}

/** Shape A on /sms/*: HTTP 422, code VALIDATION_ERROR, errors keyed exactly by `fields`, each a non-empty string array. */
export function assertShapeA(res: Response, fields: string[], note = ''): void {
  assert.equal(res.status, 422, `${note} ${res.text}`);
  assert.equal(res.body.success, false, note);
  assert.equal(res.body.code, 'VALIDATION_ERROR', `${note} ${res.text}`);
  assert.equal(typeof res.body.message, 'string');
  assert.match(res.body.request_id, UUID);
  assert.ok(res.body.errors && typeof res.body.errors === 'object' && !Array.isArray(res.body.errors), `${note} errors is an object`);
  assert.deepEqual(Object.keys(res.body.errors).sort(), [...fields].sort(), `${note} ${res.text}`);
  for (const [field, msgs] of Object.entries(res.body.errors)) {
    assert.ok(Array.isArray(msgs) && msgs.length > 0 && msgs.every((m) => typeof m === 'string' && m.length > 0), `${note} ${field}`);
  }
}
