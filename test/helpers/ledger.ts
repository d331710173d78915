// Ledger rows for reporting tests, inserted directly (the points services are another
// module's): a customer with a loyalty card in a partner's programme, and transactions with
// chosen types, amounts and times, following the ledger's semantics (points.tables.ts).
import { randomInt } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { customers, loyaltyCards, partnerCards, pointsTransactions } from '../../src/schema.js';
import type { PointsTransactionType } from '../../src/modules/points/points.tables.js';
import type { TestApp } from './app.js';

export interface LedgerCard {
  partnerId: number;
  cardId: number;
  customerId: number;
}

const db = (t: TestApp) => t.app.context.database.db;

/** A new customer holding a new card of a new programme of `partnerId`, created at `at`. */
export async function createCard(t: TestApp, partnerId: number, at: Date = new Date(), customerId?: number): Promise<LedgerCard> {
  const [programme] = await db(t)
    .insert(partnerCards)
    .values({ partnerId, title: { en: 'Card', lt: 'Kortelė' }, description: {}, termsConditions: {}, cardDesign: {} })
    .returning();
  let customer = customerId;
  if (customer === undefined) {
    const [row] = await db(t)
      .insert(customers)
      .values({ phone: `+3706${String(randomInt(0, 10_000_000)).padStart(7, '0')}`, createdAt: at })
      .returning();
    customer = row!.id;
  }
  const [card] = await db(t)
    .insert(loyaltyCards)
    .values({ partnerId, partnerCardId: programme!.id, customerId: customer, cardNumber: String(randomInt(1e9, 9e9)), createdAt: at })
    .returning();
  return { partnerId, cardId: card!.id, customerId: customer };
}

export interface LedgerRow {
  type: PointsTransactionType;
  points: number;
  /** EUR as decimal text. */
  amount?: string;
  at: Date;
  reversesId?: number;
  returnsId?: number;
}

/** Appends a ledger row (balance_after is the running sum; reporting ignores it). */
export async function addTransaction(t: TestApp, card: LedgerCard, row: LedgerRow): Promise<number> {
  const [{ balance }] = (
    (await db(t).execute(
      sql`select coalesce(sum(points), 0)::int as balance from points_transactions where card_id = ${card.cardId}`,
    )) as unknown as { rows: Array<{ balance: number }> }
  ).rows as [{ balance: number }];
  const [inserted] = await db(t)
    .insert(pointsTransactions)
    .values({
      partnerId: card.partnerId,
      cardId: card.cardId,
      customerId: card.customerId,
      type: row.type,
      points: row.points,
      amount: row.amount ?? null,
      balanceAfter: Math.max(0, balance + row.points),
      reversesId: row.reversesId ?? null,
      returnsId: row.returnsId ?? null,
      createdAt: row.at,
    })
    .returning({ id: pointsTransactions.id });
  return inserted!.id;
}

/** A purchase of `amount` EUR earning `points`. */
export const purchase = (t: TestApp, card: LedgerCard, amount: string, at: Date, points = 10) =>
  addTransaction(t, card, { type: 'purchase', points, amount, at });

/** The reversal of purchase `purchaseId` (amount = minus the purchase amount). */
export const reversePurchase = (t: TestApp, card: LedgerCard, purchaseId: number, amount: string, at: Date, points = 10) =>
  addTransaction(t, card, { type: 'reversal', points: -points, amount: `-${amount}`, at, reversesId: purchaseId });
