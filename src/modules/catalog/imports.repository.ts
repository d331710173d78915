// SQL for import jobs and feed subscriptions. Reads for the partner take the owning partner.
// The job side: claims (FOR UPDATE SKIP LOCKED, one running import per partner by a partial
// unique index), leases the running node keeps extending, checkpoints written with each batch
// and fenced by the claim's attempt number — a node that lost its claim changes nothing.
import { and, count, desc, eq, sql } from 'drizzle-orm';
import { isUniqueViolation, type Db, type Executor, type Tx } from '../../infra/db/index.js';
import { catalogFeeds, catalogImports, catalogProducts, type FieldMapping, type ImportMode, type ImportSource, type ImportStatus, type StoredImportError } from './catalog.tables.js';

export type ImportRow = typeof catalogImports.$inferSelect;
export type FeedRow = typeof catalogFeeds.$inferSelect;

/** Notified (on commit) when an import is queued, so that a node's worker wakes at once. */
export const IMPORTS_CHANNEL = 'loyalty_catalog_imports';

const rowsOf = <T>(result: unknown): T[] => (result as { rows: T[] }).rows;
const msFromNow = (ms: number) => sql`now() + ${Math.max(0, Math.round(ms))} * interval '1 millisecond'`;

export interface NewImport {
  partnerId: number;
  feedId?: number | null;
  source: ImportSource;
  url?: string | null;
  filename?: string | null;
  fileKey?: string | null;
  mode: ImportMode;
  mapping: FieldMapping | null;
  allowMassDeactivation?: boolean;
}

export interface Checkpoint {
  itemsSeen: number;
  created: number;
  updated: number;
  unchanged: number;
  skipped: number;
  errorsCount: number;
  errors: StoredImportError[];
}

export interface Finish extends Checkpoint {
  status: Extract<ImportStatus, 'completed' | 'failed' | 'unchanged'>;
  deactivated: number;
}

export const importsRepository = {
  async insert(db: Executor, values: NewImport): Promise<ImportRow> {
    const [row] = await db.insert(catalogImports).values(values).returning();
    await db.execute(sql`select pg_notify(${IMPORTS_CHANNEL}, '')`);
    return row!;
  },

  /** An import refused before it could run (a file over the limit): recorded as failed at once. */
  async insertFailed(db: Executor, values: NewImport, error: StoredImportError): Promise<ImportRow> {
    const [row] = await db
      .insert(catalogImports)
      .values({ ...values, status: 'failed', startedAt: sql`now()`, finishedAt: sql`now()`, errorsCount: 1, errors: [error] })
      .returning();
    return row!;
  },

  async find(db: Executor, partnerId: number, id: number): Promise<ImportRow | undefined> {
    const [row] = await db
      .select()
      .from(catalogImports)
      .where(and(eq(catalogImports.partnerId, partnerId), eq(catalogImports.id, id)));
    return row;
  },

  async findById(db: Executor, id: number): Promise<ImportRow | undefined> {
    const [row] = await db.select().from(catalogImports).where(eq(catalogImports.id, id));
    return row;
  },

  async list(db: Executor, partnerId: number, limit: number, offset: number) {
    const rows = await db
      .select()
      .from(catalogImports)
      .where(eq(catalogImports.partnerId, partnerId))
      .orderBy(desc(catalogImports.id))
      .limit(limit)
      .offset(offset);
    const [total] = await db.select({ n: count() }).from(catalogImports).where(eq(catalogImports.partnerId, partnerId));
    return { rows, total: total?.n ?? 0 };
  },

  async stats(db: Executor, partnerId: number) {
    const [row] = rowsOf<{
      imports_total: number;
      completed: number;
      failed: number;
      last_import_at: Date | string | null;
      items_imported_total: number;
      products_total: number;
      products_active: number;
    }>(
      await db.execute(sql`
        select count(*)::int as imports_total,
          count(*) filter (where status = 'completed')::int as completed,
          count(*) filter (where status = 'failed')::int as failed,
          max(finished_at) as last_import_at,
          coalesce(sum(created + updated + unchanged), 0)::int as items_imported_total,
          (select count(*)::int from ${catalogProducts} where partner_id = ${partnerId}) as products_total,
          (select count(*)::int from ${catalogProducts} where partner_id = ${partnerId} and is_active) as products_active
        from ${catalogImports} where partner_id = ${partnerId}`),
    );
    return row!;
  },

  /**
   * Claims the oldest claimable import: queued, or running with its lease run out (its node
   * died), of a partner with no other running import. Returns undefined when there is none,
   * or when another node claimed one of this partner's imports at the same moment.
   */
  async claim(db: Db, leaseMs: number): Promise<ImportRow | undefined> {
    try {
      return await db.transaction(async (tx) => {
        const [candidate] = rowsOf<{ id: number }>(
          await tx.execute(sql`
            select id from ${catalogImports} i
            where (i.status = 'queued' or (i.status = 'running' and i.lease_until < now()))
              and not exists (select 1 from ${catalogImports} r
                              where r.partner_id = i.partner_id and r.status = 'running' and r.id <> i.id)
            order by i.id
            limit 1
            for update skip locked`),
        );
        if (!candidate) return undefined;
        const [row] = await tx
          .update(catalogImports)
          .set({
            status: 'running',
            attempts: sql`${catalogImports.attempts} + 1`,
            leaseUntil: msFromNow(leaseMs),
            startedAt: sql`coalesce(${catalogImports.startedAt}, now())`,
          })
          .where(eq(catalogImports.id, candidate.id))
          .returning();
        return row;
      });
    } catch (err) {
      // Another node made another import of this partner running first: not ours to take now.
      if (isUniqueViolation(err)) return undefined;
      throw err;
    }
  },

  /** Extends the claim `attempt` holds; false when it no longer holds it. */
  async extendLease(db: Executor, id: number, attempt: number, leaseMs: number): Promise<boolean> {
    const rows = await db
      .update(catalogImports)
      .set({ leaseUntil: msFromNow(leaseMs) })
      .where(and(eq(catalogImports.id, id), eq(catalogImports.attempts, attempt), eq(catalogImports.status, 'running')))
      .returning({ id: catalogImports.id });
    return rows.length > 0;
  },

  /** Writes progress with a batch (in its transaction); false when the claim was lost. */
  async checkpoint(tx: Tx, id: number, attempt: number, c: Checkpoint, leaseMs: number): Promise<boolean> {
    const rows = await tx
      .update(catalogImports)
      .set({
        itemsSeen: c.itemsSeen,
        created: c.created,
        updated: c.updated,
        unchanged: c.unchanged,
        skipped: c.skipped,
        errorsCount: c.errorsCount,
        errors: c.errors,
        leaseUntil: msFromNow(leaseMs),
      })
      .where(and(eq(catalogImports.id, id), eq(catalogImports.attempts, attempt), eq(catalogImports.status, 'running')))
      .returning({ id: catalogImports.id });
    return rows.length > 0;
  },

  /** The final state (in the transaction of the last batch); false when the claim was lost. */
  async finish(tx: Executor, id: number, attempt: number, f: Finish): Promise<ImportRow | undefined> {
    const [row] = await tx
      .update(catalogImports)
      .set({
        status: f.status,
        finishedAt: sql`now()`,
        itemsSeen: f.itemsSeen,
        created: f.created,
        updated: f.updated,
        unchanged: f.unchanged,
        deactivated: f.deactivated,
        skipped: f.skipped,
        errorsCount: f.errorsCount,
        errors: f.errors,
        leaseUntil: null,
      })
      .where(and(eq(catalogImports.id, id), eq(catalogImports.attempts, attempt), eq(catalogImports.status, 'running')))
      .returning();
    return row;
  },

  /** Hands a claim back unfinished (shutdown): queued again, the attempt not counted. */
  async release(db: Executor, id: number, attempt: number): Promise<void> {
    await db
      .update(catalogImports)
      .set({ status: 'queued', attempts: sql`${catalogImports.attempts} - 1`, leaseUntil: null })
      .where(and(eq(catalogImports.id, id), eq(catalogImports.attempts, attempt), eq(catalogImports.status, 'running')));
  },

  async clearFile(db: Executor, id: number): Promise<void> {
    await db.update(catalogImports).set({ fileKey: null }).where(eq(catalogImports.id, id));
  },

  // --- feeds --------------------------------------------------------------------------------

  /** Creates the feed, or updates the partner's feed of this URL; runs first now (the caller's import). */
  async upsertFeed(
    tx: Tx,
    values: { partnerId: number; url: string; mode: ImportMode; mapping: FieldMapping | null; allowMassDeactivation: boolean; everyMinutes: number },
  ): Promise<FeedRow> {
    const [row] = await tx
      .insert(catalogFeeds)
      .values({ ...values, nextRunAt: msFromNow(values.everyMinutes * 60_000), lastRunAt: sql`now()` })
      .onConflictDoUpdate({
        target: [catalogFeeds.partnerId, catalogFeeds.url],
        set: {
          mode: values.mode,
          mapping: values.mapping,
          allowMassDeactivation: values.allowMassDeactivation,
          everyMinutes: values.everyMinutes,
          nextRunAt: msFromNow(values.everyMinutes * 60_000),
          lastRunAt: sql`now()`,
          updatedAt: sql`now()`,
        },
      })
      .returning();
    return row!;
  },

  async setFeedLastImport(tx: Tx, feedId: number, importId: number): Promise<void> {
    await tx.update(catalogFeeds).set({ lastImportId: importId }).where(eq(catalogFeeds.id, feedId));
  },

  async findFeed(db: Executor, feedId: number): Promise<FeedRow | undefined> {
    const [row] = await db.select().from(catalogFeeds).where(eq(catalogFeeds.id, feedId));
    return row;
  },

  async listFeeds(db: Executor, partnerId: number, limit: number, offset: number) {
    const rows = await db
      .select()
      .from(catalogFeeds)
      .where(eq(catalogFeeds.partnerId, partnerId))
      .orderBy(catalogFeeds.id)
      .limit(limit)
      .offset(offset);
    const [total] = await db.select({ n: count() }).from(catalogFeeds).where(eq(catalogFeeds.partnerId, partnerId));
    return { rows, total: total?.n ?? 0 };
  },

  async deleteFeed(db: Executor, partnerId: number, id: number): Promise<boolean> {
    const rows = await db
      .delete(catalogFeeds)
      .where(and(eq(catalogFeeds.partnerId, partnerId), eq(catalogFeeds.id, id)))
      .returning({ id: catalogFeeds.id });
    return rows.length > 0;
  },

  /** Validators of the feed body just imported, for the next conditional GET. */
  async setFeedValidators(tx: Executor, feedId: number, etag: string | null, lastModified: string | null): Promise<void> {
    await tx.update(catalogFeeds).set({ etag, lastModified }).where(eq(catalogFeeds.id, feedId));
  },

  /**
   * Queues one import for each due feed, at most `limit`, and moves each feed's next run a
   * period on — in one transaction per feed row lock (SKIP LOCKED): however many nodes run
   * this, a due feed is queued once. A feed whose previous import is still queued or running
   * is not queued again (the run is skipped, not stacked).
   */
  async queueDueFeeds(db: Db, limit: number): Promise<ImportRow[]> {
    return db.transaction(async (tx) => {
      const due = rowsOf<FeedRow & { busy: boolean }>(
        await tx.execute(sql`
          select f.id, f.partner_id, f.url, f.mode, f.mapping, f.allow_mass_deactivation, f.every_minutes,
            exists (select 1 from ${catalogImports} i where i.feed_id = f.id and i.status in ('queued', 'running')) as busy
          from ${catalogFeeds} f
          where f.next_run_at <= now()
          order by f.next_run_at
          limit ${limit}
          for update of f skip locked`),
      ) as unknown as Array<{
        id: number;
        partner_id: number;
        url: string;
        mode: ImportMode;
        mapping: FieldMapping | null;
        allow_mass_deactivation: boolean;
        every_minutes: number;
        busy: boolean;
      }>;
      const queued: ImportRow[] = [];
      for (const feed of due) {
        await tx
          .update(catalogFeeds)
          .set({ nextRunAt: sql`now() + ${feed.every_minutes} * interval '1 minute'`, ...(feed.busy ? {} : { lastRunAt: sql`now()` }) })
          .where(eq(catalogFeeds.id, feed.id));
        if (feed.busy) continue;
        const row = await importsRepository.insert(tx, {
          partnerId: feed.partner_id,
          feedId: feed.id,
          source: 'url',
          url: feed.url,
          mode: feed.mode,
          mapping: feed.mapping,
          allowMassDeactivation: feed.allow_mass_deactivation,
        });
        await importsRepository.setFeedLastImport(tx, feed.id, row.id);
        queued.push(row);
      }
      return queued;
    });
  },
};
