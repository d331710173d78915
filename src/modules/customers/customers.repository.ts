// SQL for customers and their sign-in codes.
import { and, count, desc, eq, ilike, or, sql } from 'drizzle-orm';
import type { Executor } from '../../infra/db/index.js';
import { customers, otpChallenges } from './customers.tables.js';

export type CustomerRow = typeof customers.$inferSelect;
export type OtpChallengeRow = typeof otpChallenges.$inferSelect;
export type ProfileFields = Partial<Pick<typeof customers.$inferInsert, 'name' | 'email' | 'birthDate' | 'language'>>;

export const customersRepository = {
  async findById(db: Executor, id: number): Promise<CustomerRow | undefined> {
    const [row] = await db.select().from(customers).where(eq(customers.id, id));
    return row;
  },
  /** The customer of a phone number, created on first use (concurrent first uses meet on the unique index). */
  async findOrCreateByPhone(db: Executor, phone: string, now: Date): Promise<CustomerRow> {
    const [inserted] = await db.insert(customers).values({ phone, createdAt: now, updatedAt: now }).onConflictDoNothing().returning();
    if (inserted) return inserted;
    const [row] = await db.select().from(customers).where(eq(customers.phone, phone));
    return row!;
  },
  async updateProfile(db: Executor, id: number, fields: ProfileFields, now: Date): Promise<CustomerRow | undefined> {
    const [row] = await db
      .update(customers)
      .set({ ...fields, updatedAt: now })
      .where(eq(customers.id, id))
      .returning();
    return row;
  },

  async lockChallenge(db: Executor, phone: string): Promise<OtpChallengeRow | undefined> {
    const [row] = await db.select().from(otpChallenges).where(eq(otpChallenges.phone, phone)).for('update');
    return row;
  },
  /** Insert the first challenge of a phone; undefined when a concurrent request inserted it first. */
  async insertChallenge(db: Executor, row: typeof otpChallenges.$inferInsert): Promise<OtpChallengeRow | undefined> {
    const [inserted] = await db.insert(otpChallenges).values(row).onConflictDoNothing().returning();
    return inserted;
  },
  async updateChallenge(db: Executor, phone: string, set: Partial<typeof otpChallenges.$inferInsert>): Promise<void> {
    await db.update(otpChallenges).set(set).where(eq(otpChallenges.phone, phone));
  },
};

export const partnerCustomersRepository = {
  /**
   * Customers holding at least one of the partner's cards, newest first, optionally matching
   * `search` in name, phone or e-mail. (Reads loyalty_cards for the holding test: this is the
   * partner's view of its customers, and one query keeps the page and its total consistent.)
   */
  async list(db: Executor, partnerId: number, search: string | undefined, limit: number, offset: number) {
    const holds = sql`exists (select 1 from loyalty_cards lc where lc.customer_id = ${customers.id} and lc.partner_id = ${partnerId})`;
    const pattern = search === undefined ? undefined : `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const where =
      pattern === undefined
        ? holds
        : and(holds, or(ilike(customers.name, pattern), ilike(customers.phone, pattern), ilike(customers.email, pattern)));
    const rows = await db.select().from(customers).where(where).orderBy(desc(customers.id)).limit(limit).offset(offset);
    const [total] = await db.select({ n: count() }).from(customers).where(where);
    return { rows, total: total?.n ?? 0 };
  },
};
