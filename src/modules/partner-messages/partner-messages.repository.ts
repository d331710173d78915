// SQL of the admin–partner message thread; every function takes the partner (the thread).
import { and, asc, count, desc, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../../infra/db/index.js';
import { partnerMessageAttachments, partnerMessages } from './partner-messages.tables.js';

export type MessageRow = typeof partnerMessages.$inferSelect;
export type AttachmentRow = typeof partnerMessageAttachments.$inferSelect;
export type Sender = MessageRow['sender'];

export const partnerMessagesRepository = {
  async insertMessage(tx: Executor, values: { partnerId: number; sender: Sender; adminId: number | null; body: string }): Promise<MessageRow> {
    const [row] = await tx.insert(partnerMessages).values(values).returning();
    return row!;
  },

  async insertAttachments(
    tx: Executor,
    rows: Array<{ messageId: number; partnerId: number; filename: string; contentType: string; sizeBytes: number; sha256: string; storageKey: string }>,
  ): Promise<AttachmentRow[]> {
    if (rows.length === 0) return [];
    return tx.insert(partnerMessageAttachments).values(rows).returning();
  },

  /** A page of the thread, newest first. */
  async page(db: Executor, partnerId: number, limit: number, offset: number): Promise<{ rows: MessageRow[]; total: number }> {
    const rows = await db
      .select()
      .from(partnerMessages)
      .where(eq(partnerMessages.partnerId, partnerId))
      .orderBy(desc(partnerMessages.id))
      .limit(limit)
      .offset(offset);
    const [total] = await db.select({ n: count() }).from(partnerMessages).where(eq(partnerMessages.partnerId, partnerId));
    return { rows, total: total?.n ?? 0 };
  },

  /** Marks the given messages from `sender` as read now (those not read yet); returns the ones changed. */
  markRead(db: Executor, partnerId: number, sender: Sender, ids: number[]): Promise<Array<{ id: number; readAt: Date | null }>> {
    if (ids.length === 0) return Promise.resolve([]);
    return db
      .update(partnerMessages)
      .set({ readAt: sql`now()` })
      .where(
        and(
          eq(partnerMessages.partnerId, partnerId),
          eq(partnerMessages.sender, sender),
          inArray(partnerMessages.id, ids),
          isNull(partnerMessages.readAt),
        ),
      )
      .returning({ id: partnerMessages.id, readAt: partnerMessages.readAt });
  },

  attachmentsOf(db: Executor, partnerId: number, messageIds: number[]): Promise<AttachmentRow[]> {
    if (messageIds.length === 0) return Promise.resolve([]);
    return db
      .select()
      .from(partnerMessageAttachments)
      .where(and(eq(partnerMessageAttachments.partnerId, partnerId), inArray(partnerMessageAttachments.messageId, messageIds)))
      .orderBy(asc(partnerMessageAttachments.id));
  },

  async findAttachment(db: Executor, partnerId: number, messageId: number, attachmentId: number): Promise<AttachmentRow | undefined> {
    const [row] = await db
      .select()
      .from(partnerMessageAttachments)
      .where(
        and(
          eq(partnerMessageAttachments.partnerId, partnerId),
          eq(partnerMessageAttachments.messageId, messageId),
          eq(partnerMessageAttachments.id, attachmentId),
        ),
      );
    return row;
  },
};
