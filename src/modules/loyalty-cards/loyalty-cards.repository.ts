// SQL for loyalty cards. Reads take the owner — the partner (API credentials) or the
// customer (customer JWT, optionally narrowed to one partner) — in every signature.
import { and, asc, count, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../infra/db/index.js';
import { loyaltyCards } from './loyalty-cards.tables.js';

export type LoyaltyCardRow = typeof loyaltyCards.$inferSelect;

export interface CardOwner {
  partnerId?: number;
  customerId?: number;
}

export interface CardFilter {
  customerId?: number;
  partnerCardId?: number;
  cardNumber?: string;
}

function ownerConditions(owner: CardOwner): SQL[] {
  const out: SQL[] = [];
  if (owner.partnerId !== undefined) out.push(eq(loyaltyCards.partnerId, owner.partnerId));
  if (owner.customerId !== undefined) out.push(eq(loyaltyCards.customerId, owner.customerId));
  if (out.length === 0) throw new Error('card owner required');
  return out;
}

function filterConditions(f: CardFilter): SQL[] {
  const out: SQL[] = [];
  if (f.customerId !== undefined) out.push(eq(loyaltyCards.customerId, f.customerId));
  if (f.partnerCardId !== undefined) out.push(eq(loyaltyCards.partnerCardId, f.partnerCardId));
  if (f.cardNumber !== undefined) out.push(eq(loyaltyCards.cardNumber, f.cardNumber));
  return out;
}

export const loyaltyCardsRepository = {
  /** Insert unless the customer already has a card in the programme or the number is taken. */
  async insert(db: Executor, values: typeof loyaltyCards.$inferInsert): Promise<LoyaltyCardRow | undefined> {
    const [row] = await db.insert(loyaltyCards).values(values).onConflictDoNothing().returning();
    return row;
  },
  async find(db: Executor, owner: CardOwner, id: number): Promise<LoyaltyCardRow | undefined> {
    const [row] = await db
      .select()
      .from(loyaltyCards)
      .where(and(eq(loyaltyCards.id, id), ...ownerConditions(owner)));
    return row;
  },
  async findOne(db: Executor, owner: CardOwner, filter: CardFilter): Promise<LoyaltyCardRow | undefined> {
    const [row] = await db
      .select()
      .from(loyaltyCards)
      .where(and(...ownerConditions(owner), ...filterConditions(filter)))
      .limit(1);
    return row;
  },
  async list(db: Executor, owner: CardOwner, filter: CardFilter, limit: number, offset: number) {
    const where = and(...ownerConditions(owner), ...filterConditions(filter));
    const rows = await db.select().from(loyaltyCards).where(where).orderBy(asc(loyaltyCards.id)).limit(limit).offset(offset);
    const [total] = await db.select({ n: count() }).from(loyaltyCards).where(where);
    return { rows, total: total?.n ?? 0 };
  },
  async ofCustomers(db: Executor, partnerId: number, customerIds: number[]): Promise<LoyaltyCardRow[]> {
    if (customerIds.length === 0) return [];
    return db
      .select()
      .from(loyaltyCards)
      .where(and(eq(loyaltyCards.partnerId, partnerId), inArray(loyaltyCards.customerId, customerIds)))
      .orderBy(asc(loyaltyCards.id));
  },
  /**
   * The customer's card with the partner — in programme `partnerCardId`, or (null) the oldest
   * in any of the partner's programmes — locked FOR UPDATE when `lock` is set.
   */
  async cardOf(db: Executor, customerId: number, partnerId: number, partnerCardId: number | null, lock: boolean): Promise<LoyaltyCardRow | undefined> {
    const query = db
      .select()
      .from(loyaltyCards)
      .where(
        and(
          eq(loyaltyCards.customerId, customerId),
          eq(loyaltyCards.partnerId, partnerId),
          partnerCardId === null ? undefined : eq(loyaltyCards.partnerCardId, partnerCardId),
        ),
      )
      .orderBy(asc(loyaltyCards.id))
      .limit(1);
    const [row] = lock ? await query.for('update') : await query;
    return row;
  },
  async partnerIdsOf(db: Executor, customerId: number): Promise<number[]> {
    const rows = await db.selectDistinct({ id: loyaltyCards.partnerId }).from(loyaltyCards).where(eq(loyaltyCards.customerId, customerId));
    return rows.map((r) => r.id);
  },
  async numberTaken(db: Executor, partnerId: number, cardNumber: string): Promise<boolean> {
    const [row] = await db
      .select({ id: loyaltyCards.id })
      .from(loyaltyCards)
      .where(and(eq(loyaltyCards.partnerId, partnerId), eq(loyaltyCards.cardNumber, cardNumber)));
    return row !== undefined;
  },
};

export const loyaltyCardsTotals = {
  /** Number of cards and their total balance, for summaries. */
  async totals(db: Executor, owner: CardOwner, filter: CardFilter): Promise<{ cards: number; points: number }> {
    const [row] = await db
      .select({ cards: count(), points: sql<string>`coalesce(sum(${loyaltyCards.pointsBalance}), 0)` })
      .from(loyaltyCards)
      .where(and(...ownerConditions(owner), ...filterConditions(filter)));
    return { cards: row?.cards ?? 0, points: Number(row?.points ?? 0) };
  },
};
