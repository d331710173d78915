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
import type { Database, Tx } from '../../infra/db/index.js';
import type { FileStore } from '../../infra/files.js';
import { OutboxWorker } from '../../infra/outbox-worker.js';
import { safeGetStream, SafeFetchError, type ResolveAll } from '../../infra/safe-url.js';
import { catalogRepository as catalog } from './catalog.repository.js';
import type { StoredImportError } from './catalog.tables.js';
import { resolveMapping, type Dialect, type ResolvedMapping } from './feed-format.js';
import { FeedError, FeedParser, type CategoryDefinition } from './feed-parser.js';
import { feedText } from './feed-reader.js';
import type { ImportedOffers } from './imported-offers.js';
import { IMPORTS_CHANNEL, importsRepository as imports, type Checkpoint, type ImportRow } from './imports.repository.js';
import { hasDiscount, mapItem, type CategoryRef, type MapResult, type MappedProduct } from './product-mapper.js';

/** Claims after which an import that keeps being interrupted is given up. */
export const MAX_ATTEMPTS = 3;
/** Products per batch (one transaction). */
export const BATCH_SIZE = 1000;
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

/** An item read and mapped, waiting for its batch: where it is in the feed, and what it became. */
interface PendingItem {
  line: number;
  column: number;
  item: number;
  result: MapResult;
}

/** Category keys → ids, filled as batches commit. */
type CategoryIds = Map<string, number>;

class ImportRun {
  private readonly attempt: number;
  private readonly counts: Checkpoint;
  private readonly lost = new AbortController();
  private readonly signal: AbortSignal;
  /** Items read and mapped, not yet written (mapped at once: the parsed item is garbage young). */
  private readonly pending: PendingItem[] = [];
  private readonly definitions = new Map<string, CategoryDefinition>();
  private definitionsWritten = 0;
  private readonly categoryIds: CategoryIds = new Map();
  private dialect: Dialect = 'generic';
  private mapping: ResolvedMapping | undefined;
  private inFlight: Promise<void> = Promise.resolve();
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
        await this.finish(this.database.db, 'unchanged', 0);
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

  private async consume(source: AsyncIterable<Buffer>): Promise<void> {
    const resumeAfter = this.row.itemsSeen;
    let index = 0;
    const parser = new FeedParser({
      item: (raw) => {
        index++;
        if (index <= resumeAfter) return;
        this.mapping ??= resolveMapping(this.dialect, this.row.mapping);
        const result = mapItem(raw, this.mapping, this.dialect, { knownCategory: (id) => this.definitions.has(id) });
        this.pending.push({ line: raw.line, column: raw.column, item: raw.index, result });
      },
      category: (def) => {
        if (!this.definitions.has(def.id)) this.definitions.set(def.id, def);
      },
      root: (dialect) => {
        this.dialect = dialect;
      },
    });
    try {
      for await (const text of feedText(source, { maxBytes: this.opts.maxBytes, signal: this.signal })) {
        if (this.signal.aborted) throw new Error('aborted');
        parser.write(text);
        if (this.pending.length >= BATCH_SIZE) await this.flush();
      }
      parser.close();
    } finally {
      // A batch still being written when the feed failed is awaited (and its error wins).
      const current = this.inFlight;
      this.inFlight = Promise.resolve();
      await current;
    }
    if (parser.itemElement === null) throw new FeedError('catalog.feed_no_items');
    await this.writeBatch(this.pending.splice(0), true);
  }

  /** Starts writing the pending items once the previous batch is written (parsing goes on meanwhile). */
  private async flush(): Promise<void> {
    const items = this.pending.splice(0);
    await this.inFlight;
    const writing = this.writeBatch(items, false);
    writing.catch(() => undefined);
    this.inFlight = writing;
  }

  private addError(error: StoredImportError): void {
    this.counts.errorsCount++;
    if (this.counts.errors.length < MAX_STORED_ERRORS) this.counts.errors.push(error);
  }

  /** The categories an item names → the category rows to make sure of (parents first). */
  private categoryRows(refs: CategoryRef[], want: Map<string, { key: string; name: string; parentKey: string | null; path: string }>): string[] {
    const keys: string[] = [];
    for (const ref of refs) {
      if (ref.path) {
        for (let i = 1; i <= ref.path.length; i++) {
          const path = ref.path.slice(0, i).join(' > ');
          const key = `path:${path}`;
          if (!this.categoryIds.has(key) && !want.has(key)) {
            want.set(key, { key, name: ref.path[i - 1]!, parentKey: i > 1 ? `path:${ref.path.slice(0, i - 1).join(' > ')}` : null, path });
          }
        }
        keys.push(ref.key);
      } else {
        // The mapper reported and dropped ids not defined before the item (knownCategory).
        keys.push(ref.key);
      }
    }
    return keys;
  }

  /** The feed's own category definitions not written yet, with their paths. */
  private definitionRows(want: Map<string, { key: string; name: string; parentKey: string | null; path: string }>): void {
    if (this.definitions.size === this.definitionsWritten) return;
    const pathOf = (def: CategoryDefinition): string => {
      const names: string[] = [];
      const seen = new Set<string>();
      for (let d: CategoryDefinition | undefined = def; d && !seen.has(d.id) && names.length < 32; d = d.parentId ? this.definitions.get(d.parentId) : undefined) {
        seen.add(d.id);
        names.unshift(d.name.slice(0, 255));
      }
      return names.join(' > ');
    };
    for (const def of this.definitions.values()) {
      const key = `id:${def.id}`;
      if (this.categoryIds.has(key)) continue;
      const parentKey = def.parentId !== null && this.definitions.has(def.parentId) ? `id:${def.parentId}` : null;
      want.set(key, { key, name: def.name.slice(0, 255), parentKey, path: pathOf(def) });
    }
    this.definitionsWritten = this.definitions.size;
  }

  private async writeBatch(items: PendingItem[], final: boolean): Promise<void> {
    const { row } = this;
    const products: Array<{ product: MappedProduct; at: Pick<PendingItem, 'line' | 'column' | 'item'>; categoryKeys: string[] }> = [];
    const byKey = new Map<string, number>();
    const want = new Map<string, { key: string; name: string; parentKey: string | null; path: string }>();
    this.definitionRows(want);
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
      products.push({ product: result.product, at: { line, column, item }, categoryKeys: this.categoryRows(result.product.categories, want) });
    }

    const newIds = await this.database.db.transaction(async (tx) => {
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
  private writeCategories(tx: Tx, rows: Array<{ key: string; name: string; parentKey: string | null; path: string }>): Promise<Map<string, number>> {
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
  private async finish(tx: Tx | Database['db'], status: 'completed' | 'unchanged', deactivated: number): Promise<void> {
    const done = await imports.finish(tx, this.row.id, this.attempt, { ...this.counts, status, deactivated });
    if (!done) throw new LostClaim();
  }

  private async finishFailed(error: StoredImportError): Promise<void> {
    this.addError(error);
    const done = await imports.finish(this.database.db, this.row.id, this.attempt, { ...this.counts, status: 'failed', deactivated: 0 });
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
