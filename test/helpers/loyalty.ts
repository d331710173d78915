// Loyalty-core fixtures: programmes with chosen rules, customers with tokens, cards —
// created through the services or, for programme rules the card API does not own, the
// table itself. What is under test is then driven over real HTTP.
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { partnerCards } from '../../src/modules/partner-cards/partner-cards.tables.js';
import { verifyLedger } from '../../src/cli/ledger-verify.js';
import type { Clock } from '../../src/shared/time.js';
import type { TestApp } from './app.js';
import type { PartnerFixture } from './fixtures.js';
import { apiHeaders, bearer, request } from './http.js';

export type ProgrammeRules = Partial<typeof partnerCards.$inferInsert>;

export async function createProgramme(t: TestApp, partnerId: number, rules: ProgrammeRules = {}): Promise<number> {
  const [row] = await t.app.context.database.db
    .insert(partnerCards)
    .values({
      partnerId,
      title: { en: 'Card', lt: 'Kortelė' },
      description: { en: 'd', lt: 'd' },
      termsConditions: { en: 't', lt: 't' },
      cardDesign: {},
      pointsRedemptionEnabled: true,
      ...rules,
    })
    .returning({ id: partnerCards.id });
  return row!.id;
}

export async function createShop(t: TestApp, partnerId: number, name = 'Shop'): Promise<number> {
  return (await t.app.context.services.shops.create(partnerId, { name })).id;
}

export interface CustomerFixture {
  id: number;
  phone: string;
  token: string;
}

/** A customer with an app token (not partner-scoped), or scoped to `partnerId` like a QR-login token. */
export async function createCustomer(t: TestApp, partnerId?: number): Promise<CustomerFixture> {
  const phone = `+3706${String(randomInt(0, 10_000_000)).padStart(7, '0')}`;
  const customer = await t.app.context.services.customers.findOrCreateByPhone(t.app.context.database.db, phone);
  const { token } = await t.app.context.tokens.sign({ kind: 'customer', subject: customer.id, ...(partnerId !== undefined ? { partnerId } : {}) });
  return { id: customer.id, phone: customer.phone, token };
}

export interface CardFixture {
  id: number;
  card_number: string;
  points_balance: number;
}

export async function joinProgramme(t: TestApp, customer: CustomerFixture, programmeId: number): Promise<CardFixture> {
  const res = await request(t.url, 'POST', '/en/shop/loyalty-cards', { headers: bearer(customer.token), json: { partner_card_id: programmeId } });
  assert.equal(res.status, 201, res.text);
  return res.body.data;
}

export function award(t: TestApp, p: PartnerFixture, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return request(t.url, 'POST', '/en/shop/transactions/create', { headers: { ...apiHeaders(p.apiKey), ...headers }, json: body });
}

export function deduct(t: TestApp, p: PartnerFixture, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return request(t.url, 'POST', '/en/shop/transactions/deduct-points', { headers: { ...apiHeaders(p.apiKey), ...headers }, json: body });
}

export async function balanceOf(t: TestApp, p: PartnerFixture, cardId: number): Promise<number> {
  const res = await request(t.url, 'GET', `/en/shop/points/card/${cardId}/balance`, { headers: apiHeaders(p.apiKey) });
  assert.equal(res.status, 200, res.text);
  return res.body.data.points_balance;
}

/** The ledger invariants hold: every balance equals its ledger (see ledger-verify.ts). */
export async function assertLedgerConsistent(t: TestApp): Promise<void> {
  const report = await verifyLedger(t.app.context.database.db, 100, t.app.context.clock.now());
  assert.deepEqual(report.differences, []);
}

/** A clock the test moves. */
export class TestClock implements Clock {
  private ms: number;
  constructor(start = Date.parse('2026-03-01T10:00:00Z')) {
    this.ms = start;
  }
  now(): Date {
    return new Date(this.ms);
  }
  advanceDays(days: number): void {
    this.ms += days * 86_400_000;
  }
  advanceMs(ms: number): void {
    this.ms += ms;
  }
}
