// Accounts for tests, created through the services (fast) — the HTTP behaviour under
// test is then exercised over real HTTP.
import { randomBytes } from 'node:crypto';
import type { TestApp } from './app.js';

export interface PartnerFixture {
  id: number;
  name: string;
  email: string;
  password: string;
  token: string;
  apiKey: { id: number; key: string; secret: string };
}

export interface AdminFixture {
  id: number;
  email: string;
  password: string;
  token: string;
}

const unique = () => randomBytes(4).toString('hex');

export async function createAdmin(t: TestApp): Promise<AdminFixture> {
  const email = `admin-${unique()}@example.com`;
  const password = `admin-password-${unique()}`;
  const { admin } = await t.app.context.services.admin.ensure({ email, password });
  const { token } = await t.app.context.tokens.sign({ kind: 'admin', subject: admin.id });
  return { id: admin.id, email, password, token };
}

export async function createPartner(t: TestApp, name = `Partner ${unique()}`): Promise<PartnerFixture> {
  const email = `partner-${unique()}@example.com`;
  const password = `partner-password-${unique()}`;
  const created = await t.app.context.services.partners.create({ name, email, password });
  if (!created.ok) throw new Error('fixture partner not created');
  const partner = created.value;
  const { token } = await t.app.context.tokens.sign({ kind: 'partner', subject: partner.id });
  const apiKey = await t.app.context.services.apiKeys.create(partner.id, 'test key');
  return { id: partner.id, name, email, password, token, apiKey: { id: apiKey.id, key: apiKey.key, secret: apiKey.secret } };
}
