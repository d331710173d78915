// SQL for QR sessions. Every state change is one conditional UPDATE (… WHERE status IN
// (allowed) AND expires_at > now RETURNING *): two confirms race on the row, one wins.
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Executor } from '../../infra/db/index.js';
import { qrCardSessions, qrLoginSessions, type QrCardStatus, type QrLoginStatus } from './qr.tables.js';

export type QrLoginRow = typeof qrLoginSessions.$inferSelect;
export type QrCardRow = typeof qrCardSessions.$inferSelect;

export const qrRepository = {
  async insertLogin(db: Executor, values: typeof qrLoginSessions.$inferInsert): Promise<QrLoginRow> {
    const [row] = await db.insert(qrLoginSessions).values(values).returning();
    return row!;
  },
  async findLogin(db: Executor, partnerId: number, id: string): Promise<QrLoginRow | undefined> {
    const [row] = await db
      .select()
      .from(qrLoginSessions)
      .where(and(eq(qrLoginSessions.id, id), eq(qrLoginSessions.partnerId, partnerId)));
    return row;
  },
  async findLoginByCode(db: Executor, codeHash: string): Promise<QrLoginRow | undefined> {
    const [row] = await db.select().from(qrLoginSessions).where(eq(qrLoginSessions.scanCodeHash, codeHash));
    return row;
  },
  /**
   * Move a live session from one of `from` to `to`. A session already scanned by a customer
   * can only be moved on by that customer.
   */
  async transitionLogin(
    db: Executor,
    codeHash: string,
    customerId: number,
    from: QrLoginStatus[],
    to: QrLoginStatus,
    now: Date,
    set: Partial<typeof qrLoginSessions.$inferInsert>,
  ): Promise<QrLoginRow | undefined> {
    const [row] = await db
      .update(qrLoginSessions)
      .set({ ...set, status: to, customerId, seq: sql`${qrLoginSessions.seq} + 1` })
      .where(
        and(
          eq(qrLoginSessions.scanCodeHash, codeHash),
          inArray(qrLoginSessions.status, from),
          sql`${qrLoginSessions.expiresAt} > ${now.toISOString()}::timestamptz`,
          sql`(${qrLoginSessions.customerId} is null or ${qrLoginSessions.customerId} = ${customerId})`,
        ),
      )
      .returning();
    return row;
  },
  /** Claim the one hand-out of the token; false if it was already handed out. */
  async claimToken(db: Executor, id: string, now: Date): Promise<boolean> {
    const rows = await db
      .update(qrLoginSessions)
      .set({ tokenIssuedAt: now })
      .where(and(eq(qrLoginSessions.id, id), eq(qrLoginSessions.status, 'authenticated'), sql`${qrLoginSessions.tokenIssuedAt} is null`))
      .returning({ id: qrLoginSessions.id });
    return rows.length > 0;
  },
  /** Mark live sessions past their expiry as expired (claimed with SKIP LOCKED: one node each). */
  async expireLogins(db: Executor, now: Date, limit: number): Promise<QrLoginRow[]> {
    return db
      .update(qrLoginSessions)
      .set({ status: 'expired', seq: sql`${qrLoginSessions.seq} + 1` })
      .where(
        inArray(
          qrLoginSessions.id,
          sql`(select id from ${qrLoginSessions} where ${qrLoginSessions.status} in ('pending', 'scanned')
                and ${qrLoginSessions.expiresAt} <= ${now.toISOString()}::timestamptz
                order by ${qrLoginSessions.expiresAt} limit ${limit} for update skip locked)`,
        ),
      )
      .returning();
  },

  async insertCard(db: Executor, values: typeof qrCardSessions.$inferInsert): Promise<QrCardRow> {
    const [row] = await db.insert(qrCardSessions).values(values).returning();
    return row!;
  },
  async findCard(db: Executor, partnerId: number, id: string): Promise<QrCardRow | undefined> {
    const [row] = await db
      .select()
      .from(qrCardSessions)
      .where(and(eq(qrCardSessions.id, id), eq(qrCardSessions.partnerId, partnerId)));
    return row;
  },
  async findCardByCode(db: Executor, codeHash: string): Promise<QrCardRow | undefined> {
    const [row] = await db.select().from(qrCardSessions).where(eq(qrCardSessions.scanCodeHash, codeHash));
    return row;
  },
  async shareCard(db: Executor, codeHash: string, cardId: number, now: Date): Promise<QrCardRow | undefined> {
    const [row] = await db
      .update(qrCardSessions)
      .set({ status: 'scanned' satisfies QrCardStatus, cardId, scannedAt: now, seq: sql`${qrCardSessions.seq} + 1` })
      .where(
        and(
          eq(qrCardSessions.scanCodeHash, codeHash),
          eq(qrCardSessions.status, 'pending'),
          sql`${qrCardSessions.expiresAt} > ${now.toISOString()}::timestamptz`,
        ),
      )
      .returning();
    return row;
  },
  async expireCards(db: Executor, now: Date, limit: number): Promise<QrCardRow[]> {
    return db
      .update(qrCardSessions)
      .set({ status: 'expired', seq: sql`${qrCardSessions.seq} + 1` })
      .where(
        inArray(
          qrCardSessions.id,
          sql`(select id from ${qrCardSessions} where ${qrCardSessions.status} = 'pending'
                and ${qrCardSessions.expiresAt} <= ${now.toISOString()}::timestamptz
                order by ${qrCardSessions.expiresAt} limit ${limit} for update skip locked)`,
        ),
      )
      .returning();
  },
};
