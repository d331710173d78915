// Runs imports (DESIGN.md §9 "durable job row, any node, survives a restart"). Every node
// runs an ImportWorker: its loop (src/infra/outbox-worker.ts) queues due feed runs and claims
// imports, FOR UPDATE SKIP LOCKED; a claim is a lease the running node extends with every
// batch and on a timer. The feed is streamed — fetched or read from the file store, gunzipped,
// decoded, parsed — and its items written in batches, each batch one transaction with the
// import's counters: the row is always exactly as far as its last committed batch.
//
// A node that dies leaves a `running` row whose lease runs out; the next claim (any node)
// resumes after the last committed item, or — after MAX_ATTEMPTS claims — marks it `failed`.
// On shutdown a node hands its imports back (`queued`) for another node to resume at once.
import v8 from 'node:v8';
import vm from 'node:vm';
import { sql } from 'drizzle-orm';
import type { Database, Tx } from '../../infra/db/index.js';
import type { FileStore } from '../../infra/files.js';
import { OutboxWorker } from '../../infra/outbox-worker.js';
import { safeGetStream, SafeFetchError, type ResolveAll } from '../../infra/safe-url.js';
import { catalogRepository as catalog } from './catalog.repository.js';
import type { StoredImportError } from './catalog.tables.js';
import { FeedError } from './feed-parser.js';
import { parseFeed, type ParsedBatch, type ParsedItem } from './feed-worker.js';
import { BatchCategories, type CategoryRow } from './import-categories.js';
import type { ImportedOffers } from './imported-offers.js';
import { IMPORTS_CHANNEL, importsRepository as imports, type Checkpoint, type ImportRow } from './imports.repository.js';
import { hasDiscount, type MappedProduct } from './product-mapper.js';

/** Claims after which an import that keeps being interrupted is given up. */
export const MAX_ATTEMPTS = 3;
export { BATCH_SIZE, MAX_CATEGORY_DEFINITIONS } from './feed-worker.js';
export { MAX_IMPORT_CATEGORIES } from './import-categories.js';
/** Errors kept on the import record (errors_count counts them all). */
export const MAX_STORED_ERRORS = 100;
const PROGRESS_EVERY_MS = 1000;
const USER_AGENT = 'Loyalty-Feed-Import/1';

export interface ImportProgress {
  import_id: number;
  status: string;
  items_seen: number;
}

export interface ImportWorkerOptions {
  fileStore: FileStore;
  offers: ImportedOffers;
  /** Publishes `import.progress` on the partner's private channel. */
  publish(partnerId: number, progress: ImportProgress): void;
  maxBytes: number;
  timeoutMs: number;
  leaseMs: number;
  concurrency: number;
  pollIntervalMs: number;
  allowPrivateUrls: boolean;
  resolve?: ResolveAll;
  log?: { warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void };
  /** In the transaction that records an import's final state: import.finished (DESIGN.md §14). */
  finished?: (tx: Tx, row: ImportRow) => Promise<void>;
}

/** The claim was taken over (our lease ran out): stop without writing anything more. */
class LostClaim extends Error {}

export class ImportWorker extends OutboxWorker<ImportRow> {
  constructor(
    database: Database,
    private readonly opts: ImportWorkerOptions,
  ) {
    super(database, {
      name: 'catalog-import',
      channel: IMPORTS_CHANNEL,
      pollIntervalMs: opts.pollIntervalMs,
      concurrency: opts.concurrency,
      leaseMs: opts.leaseMs,
      abortOnStop: true,
      log: opts.log,
    });
  }

  protected async claim(limit: number, leaseMs: number): Promise<ImportRow[]> {
    const queued = await imports.queueDueFeeds(this.database.db, 20);
    for (const row of queued) this.opts.publish(row.partnerId, { import_id: row.id, status: 'queued', items_seen: 0 });
    const claimed: ImportRow[] = [];
    while (claimed.length < limit) {
      const row = await imports.claim(this.database.db, leaseMs);
      if (!row) break;
      claimed.push(row);
    }
    return claimed;
  }

  protected async deliver(row: ImportRow, signal: AbortSignal): Promise<void> {
    await new ImportRun(this.database, row, this.opts, signal).run();
  }
}

type PendingItem = ParsedItem;

/**
 * Heap the server's thread may gain while imports run before a full collection is asked for
 * (MB). Each batch reaches this thread as objects (~4 MB per 1000 products) that live for the
 * batch's transaction, long enough to be promoted to the old generation; V8, sized for the
 * whole server, would let 200 MB of them pile up before collecting (issue 21: memory flat with
 * the default settings). A full collection of the server's heap takes tens of milliseconds,
 * once per several batches, while the worker parses on.
 */
export const IMPORT_HEAP_SLACK_MB = 32;
let heapFloor: number | undefined;
let collect: (() => void) | null | undefined;

/** A full collection when the heap grew IMPORT_HEAP_SLACK_MB past its size after the last one. */
function keepHeapFlat(): void {
  const used = v8.getHeapStatistics().used_heap_size;
  heapFloor ??= used;
  if (used < heapFloor + IMPORT_HEAP_SLACK_MB * 1024 * 1024) return;
  if (collect === undefined) {
    try {
      // V8's gc() in a fresh context, without starting node with --expose-gc.
      v8.setFlagsFromString('--expose-gc');
      collect = vm.runInNewContext('gc') as () => void;
    } catch {
      collect = null;
    }
  }
  collect?.();
  heapFloor = v8.getHeapStatistics().used_heap_size;
}

/** Category keys → ids, filled as batches commit. */
type CategoryIds = Map<string, number>;

class ImportRun {
  private readonly attempt: number;
  private readonly counts: Checkpoint;
  private readonly lost = new AbortController();
  private readonly signal: AbortSignal;
  /** Category key → id, for every category of this import written so far (at most MAX_IMPORT_CATEGORIES). */
  private readonly categoryIds: CategoryIds = new Map();
  private readonly categoriesLimit = { capped: false };
  private lastProgressAt = 0;
  private validators: { etag: string | null; lastModified: string | null } | undefined;

  constructor(
    private readonly database: Database,
    private readonly row: ImportRow,
    private readonly opts: ImportWorkerOptions,
    stop: AbortSignal,
  ) {
    this.attempt = row.attempts;
    this.signal = AbortSignal.any([stop, this.lost.signal]);
    this.counts = {
      itemsSeen: row.itemsSeen,
      created: row.created,
      updated: row.updated,
      unchanged: row.unchanged,
      skipped: row.skipped,
      errorsCount: row.errorsCount,
      errors: [...row.errors],
    };
  }

  private progress(status: string, force = false): void {
    const now = Date.now();
    if (!force && now - this.lastProgressAt < PROGRESS_EVERY_MS) return;
    this.lastProgressAt = now;
    this.opts.publish(this.row.partnerId, { import_id: this.row.id, status, items_seen: this.counts.itemsSeen });
  }

  async run(): Promise<void> {
    const { row } = this;
    if (row.attempts > MAX_ATTEMPTS) {
      await this.finishFailed({ line: null, key: 'catalog.import_interrupted', params: { attempts: MAX_ATTEMPTS } });
      return;
    }
    this.progress('running', true);
    const heartbeat = setInterval(() => {
      imports.extendLease(this.database.db, row.id, this.attempt, this.opts.leaseMs).then(
        (held) => {
          if (!held) this.lost.abort();
        },
        () => undefined,
      );
    }, Math.max(250, Math.floor(this.opts.leaseMs / 3)));
    try {
      const source = await this.open();
      if (source === 'unchanged') {
        await this.database.db.transaction((tx) => this.finish(tx, 'unchanged', 0));
        this.afterFinish('unchanged');
        return;
      }
      await this.consume(source);
    } catch (err) {
      if (this.lost.signal.aborted || err instanceof LostClaim) return;
      if (this.signal.aborted) {
        // Shutting down: another node (or this one after its restart) resumes it.
        await imports.release(this.database.db, row.id, this.attempt);
        return;
      }
      if (err instanceof FeedError) {
        await this.finishFailed({
          line: err.line,
          column: err.column,
          key: err.key,
          params: { ...err.params, ...(err.line !== null ? { line: err.line, column: err.column ?? 0 } : {}) },
        });
        return;
      }
      this.opts.log?.error({ err, import_id: row.id }, 'catalog import: unexpected failure; the import is retried when its lease runs out');
      throw err;
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** The feed's bytes: the uploaded file, or the URL (conditional GET for a feed's fresh run). */
  private async open(): Promise<AsyncIterable<Buffer> | 'unchanged'> {
    const { row } = this;
    if (row.source === 'file') {
      const file = row.fileKey ? await this.opts.fileStore.open(row.fileKey) : undefined;
      if (!file) throw new FeedError('catalog.feed_file_missing');
      return file.stream;
    }
    const headers: Record<string, string> = { 'user-agent': USER_AGENT, 'accept-encoding': 'gzip', accept: 'application/xml, text/xml, */*' };
    let conditional = false;
    if (row.feedId !== null && this.counts.itemsSeen === 0) {
      const feed = await imports.findFeed(this.database.db, row.feedId);
      if (feed?.etag) headers['if-none-match'] = feed.etag;
      if (feed?.lastModified) headers['if-modified-since'] = feed.lastModified;
      conditional = Boolean(feed?.etag || feed?.lastModified);
    }
    try {
      const res = await safeGetStream(row.url!, {
        allowPrivate: this.opts.allowPrivateUrls,
        headers,
        timeoutMs: this.opts.timeoutMs,
        signal: this.signal,
        ...(this.opts.resolve ? { resolve: this.opts.resolve } : {}),
      });
      if (res.status === 304 && conditional) {
        res.body.destroy();
        return 'unchanged';
      }
      if (res.status !== 200) {
        res.body.destroy();
        throw new FeedError('catalog.feed_http_status', { status: res.status });
      }
      const etag = res.headers.etag;
      const lastModified = res.headers['last-modified'];
      this.validators = { etag: typeof etag === 'string' ? etag : null, lastModified: typeof lastModified === 'string' ? lastModified : null };
      return res.body;
    } catch (err) {
      if (err instanceof SafeFetchError && err.code !== 'aborted') {
        throw new FeedError(err.code === 'refused' ? 'catalog.feed_url_refused' : 'catalog.feed_fetch_failed', { detail: err.message.slice(0, 300) });
      }
      throw err;
    }
  }

  /**
   * Parses in a worker thread (feed-worker.ts) and writes batch after batch: the worker maps
   * the next batch while this one's transaction runs.
   */
  private async consume(source: AsyncIterable<Buffer>): Promise<void> {
    const batches = parseFeed(source, {
      resumeAfter: this.row.itemsSeen,
      mapping: this.row.mapping,
      maxBytes: this.opts.maxBytes,
      signal: this.signal,
    });
    for await (const batch of batches) {
      await this.writeBatch(batch);
      keepHeapFlat();
    }
  }

  private addError(error: StoredImportError): void {
    this.counts.errorsCount++;
    if (this.counts.errors.length < MAX_STORED_ERRORS) this.counts.errors.push(error);
  }

  private async writeBatch(batch: ParsedBatch): Promise<void> {
    const { row } = this;
    const { items, final } = batch;
    const products: Array<{ product: MappedProduct; at: Pick<PendingItem, 'line' | 'column' | 'item'>; categoryKeys: string[] }> = [];
    const byKey = new Map<string, number>();
    for (const error of batch.errors) this.addError(error);
    const categories = new BatchCategories(this.categoryIds, this.categoriesLimit, (e) => this.addError(e));
    const { want } = categories;
    categories.addDefinitions(batch.definitions);
    for (const { line, column, item, result } of items) {
      this.counts.itemsSeen++;
      if (!result.ok) {
        this.counts.skipped++;
        this.addError(result.error);
        continue;
      }
      for (const w of result.warnings) this.addError(w);
      const key = result.product.importKey;
      const earlier = byKey.get(key);
      if (earlier !== undefined) {
        this.counts.skipped++;
        this.addError({ line, column, item, key: 'catalog.item_duplicate', params: { key: key.slice(0, 100) } });
        continue;
      }
      byKey.set(key, products.length);
      products.push({ product: result.product, at: { line, column, item }, categoryKeys: categories.keysFor(result.product.categories, { line, column, item }) });
    }

    const newIds = await this.database.db.transaction(async (tx) => {
      // A batch before the last need not wait for its WAL flush: its checkpoint is in the same
      // transaction, so a database crash that lost it rewinds the import consistently (the
      // next claim resumes after the last batch that did reach the disk). The last batch, which
      // completes the import, commits synchronously.
      if (!final) await tx.execute(sql`set local synchronous_commit = off`);
      const written = want.size > 0 ? await this.writeCategories(tx, [...want.values()]) : new Map<string, number>();
      const ids = (key: string) => written.get(key) ?? this.categoryIds.get(key);
      // New keys go in with their links in one statement; only the rest are looked up.
      const linksOf = (list: typeof products) =>
        list.flatMap((p) => p.categoryKeys.flatMap((key) => {
          const categoryId = ids(key);
          return categoryId === undefined ? [] : [{ importKey: p.product.importKey, categoryId }];
        }));
      const inserted = await catalog.insertNew(tx, row.partnerId, row.id, products.map((p) => p.product), linksOf(products));
      const fresh = products.filter((p) => inserted.has(p.product.importKey));
      const rest = products.filter((p) => !inserted.has(p.product.importKey));
      const existing = new Map((await catalog.existingProducts(tx, row.partnerId, rest.map((p) => p.product.importKey))).map((e) => [e.import_key, e]));
      const changed: typeof products = [];
      const unchangedIds: number[] = [];
      for (const p of rest) {
        const e = existing.get(p.product.importKey)!;
        if (e.last_import_id === row.id) {
          this.counts.skipped++;
          this.addError({ ...p.at, key: 'catalog.item_duplicate', params: { key: p.product.importKey.slice(0, 100) } });
        } else if (e.content_hash !== p.product.hash || !e.is_active) changed.push(p);
        else unchangedIds.push(e.id);
      }
      const updated = await catalog.updateProducts(tx, row.partnerId, row.id, changed.map((p) => p.product));
      await catalog.touchProducts(tx, row.partnerId, row.id, unchangedIds);
      // Changed products lose their old links and get the feed's.
      const changedLinks = linksOf(changed).map((l) => ({ productId: updated.get(l.importKey)!, categoryId: l.categoryId }));
      await catalog.linkCategories(tx, changed.map((p) => updated.get(p.product.importKey)!), changedLinks);
      const rewritten = [...fresh.map((p) => ({ ...p, id: inserted.get(p.product.importKey)! })), ...changed.map((p) => ({ ...p, id: updated.get(p.product.importKey)! }))];
      const links = rewritten.flatMap((p) => p.categoryKeys.flatMap((key) => {
        const categoryId = ids(key);
        return categoryId === undefined ? [] : [{ productId: p.id, categoryId }];
      }));
      const categoriesOf = new Map<number, number[]>();
      for (const l of links) categoriesOf.set(l.productId, [...(categoriesOf.get(l.productId) ?? []), l.categoryId]);
      const discounted = rewritten.filter((p) => hasDiscount(p.product));
      if (discounted.length > 0) {
        await this.opts.offers.upsert(
          tx,
          row.partnerId,
          discounted.map((p) => ({
            productId: p.id,
            name: p.product.name,
            price: p.product.price!,
            discountedPrice: p.product.discounted_price!,
            currency: p.product.currency,
            categoryIds: categoriesOf.get(p.id) ?? [],
          })),
        );
      }
      const undiscounted = changed.filter((p) => !hasDiscount(p.product)).map((p) => updated.get(p.product.importKey)!);
      if (undiscounted.length > 0) await this.opts.offers.end(tx, row.partnerId, undiscounted);
      this.counts.created += fresh.length;
      this.counts.updated += changed.length;
      this.counts.unchanged += unchangedIds.length;
      if (final) {
        await this.finishIn(tx);
      } else if (!(await imports.checkpoint(tx, row.id, this.attempt, this.counts, this.opts.leaseMs))) {
        throw new LostClaim();
      }
      return written;
    });
    for (const [key, id] of newIds) this.categoryIds.set(key, id);
    if (final) this.afterFinish('completed');
    else this.progress('running');
  }

  /** Writes categories (and their parent links) in the batch's transaction; key → id. */
  private writeCategories(tx: Tx, rows: CategoryRow[]): Promise<Map<string, number>> {
    return catalog.upsertCategories(tx, this.row.partnerId, rows, this.categoryIds);
  }

  /**
   * The last batch's transaction: replace mode's deactivation, the final counters, the feed's
   * validators. The replace guard (DESIGN.md §9): nothing is deactivated when the feed gave no
   * accepted item, nor — unless the request allowed it — when more than half of the products
   * that were active before this import would be (those it missed, plus those it saw again).
   */
  private async finishIn(tx: Tx): Promise<void> {
    const { row } = this;
    let deactivated = 0;
    if (row.mode === 'replace') {
      const seenAgain = this.counts.updated + this.counts.unchanged;
      if (this.counts.created + seenAgain === 0) {
        this.addError({ line: null, key: 'catalog.replace_nothing_accepted' });
      } else {
        const unseen = await catalog.countUnseen(tx, row.partnerId, row.id);
        const total = unseen + seenAgain;
        if (unseen > 0 && unseen * 2 > total && !row.allowMassDeactivation) {
          this.addError({ line: null, key: 'catalog.replace_mass_deactivation', params: { count: unseen, total } });
        } else if (unseen > 0) {
          const ids = await catalog.deactivateUnseen(tx, row.partnerId, row.id);
          if (ids.length > 0) await this.opts.offers.end(tx, row.partnerId, ids);
          deactivated = ids.length;
        }
      }
    }
    await this.finish(tx, 'completed', deactivated);
    if (row.feedId !== null && this.validators) await imports.setFeedValidators(tx, row.feedId, this.validators.etag, this.validators.lastModified);
  }

  /** The final state (no event yet: the caller reports it once committed). */
  private async finish(tx: Tx, status: 'completed' | 'unchanged', deactivated: number): Promise<void> {
    const done = await imports.finish(tx, this.row.id, this.attempt, { ...this.counts, status, deactivated });
    if (!done) throw new LostClaim();
    await this.opts.finished?.(tx, done);
  }

  private async finishFailed(error: StoredImportError): Promise<void> {
    this.addError(error);
    const done = await this.database.db.transaction(async (tx) => {
      const row = await imports.finish(tx, this.row.id, this.attempt, { ...this.counts, status: 'failed', deactivated: 0 });
      if (row) await this.opts.finished?.(tx, row);
      return row;
    });
    if (done) this.afterFinish('failed');
  }

  /** After the final state committed: the event, and the uploaded file is no longer needed. */
  private afterFinish(status: string): void {
    this.progress(status, true);
    if (this.row.fileKey) {
      const key = this.row.fileKey;
      void this.opts.fileStore
        .remove(key)
        .then(() => imports.clearFile(this.database.db, this.row.id))
        .catch(() => undefined);
    }
  }
}
