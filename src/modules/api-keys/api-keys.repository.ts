import { and, count, desc, eq, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../../infra/db/index.js';
import { partners } from '../partners/partners.tables.js';
import { apiKeys } from './api-keys.tables.js';

export type ApiKeyRow = typeof apiKeys.$inferSelect;

export const API_KEYS_CHANNEL = 'api_keys_changed';

export const apiKeysRepository = {
  async insert(db: Executor, values: { partnerId: number; name: string; key: string; secretHash: string }): Promise<ApiKeyRow> {
    const [row] = await db.insert(apiKeys).values(values).returning();
    return row!;
  },

  async listActive(db: Executor, partnerId: number, limit: number, offset: number) {
    const where = and(eq(apiKeys.partnerId, partnerId), isNull(apiKeys.revokedAt));
    const rows = await db.select().from(apiKeys).where(where).orderBy(desc(apiKeys.id)).limit(limit).offset(offset);
    const [total] = await db.select({ n: count() }).from(apiKeys).where(where);
    return { rows, total: total?.n ?? 0 };
  },

  /** Revoke one of the partner's keys; other partners' keys are invisible (undefined). */
  async revoke(db: Executor, partnerId: number, id: number): Promise<ApiKeyRow | undefined> {
    const [row] = await db
      .update(apiKeys)
      .set({ revokedAt: sql`now()` })
      .where(and(eq(apiKeys.id, id), eq(apiKeys.partnerId, partnerId), isNull(apiKeys.revokedAt)))
      .returning();
    if (row) {
      // Delivered to every node's LISTEN when this transaction commits.
      await db.execute(sql`select pg_notify(${API_KEYS_CHANNEL}, ${row.key})`);
    }
    return row;
  },

  /**
   * The credential lookup of every API request (on a cache miss): one indexed row, with its
   * partner's status, name and limits. It joins the partners table directly rather than
   * asking the partners service, to stay a single query on the hot path.
   */
  async findActiveByKey(db: Executor, key: string) {
    const [row] = await db
      .select({
        id: apiKeys.id,
        secretHash: apiKeys.secretHash,
        partnerId: partners.id,
        partnerName: partners.name,
        rateLimitPerHour: partners.rateLimitPerHour,
        rateLimitPerMinute: partners.rateLimitPerMinute,
      })
      .from(apiKeys)
      .innerJoin(partners, eq(partners.id, apiKeys.partnerId))
      .where(and(eq(apiKeys.key, key), isNull(apiKeys.revokedAt), eq(partners.status, 'active')));
    return row;
  },
};
