// XML feed imports (DESIGN.md §9): queueing them (from a URL, optionally kept as a feed
// re-imported every N minutes, or from an uploaded file), their history and statistics,
// feed subscriptions, the synchronous validation, and the worker that runs them.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Database, Executor, Tx } from '../../infra/db/index.js';
import type { FileStore, StoredFile } from '../../infra/files.js';
import { checkPublicUrl, safeGetStream, SafeFetchError, type ResolveAll } from '../../infra/safe-url.js';
import { fail, missing, ok, type FieldErrors, type Result } from '../../shared/errors.js';
import { t, type Locale, type MessageKey } from '../../shared/i18n.js';
import type { PageWindow } from '../../shared/pagination.js';
import { iso } from '../../shared/time.js';
import { addFieldError, isPlainObject } from '../../shared/validation.js';
import type { Static } from 'typebox';
import type { Feed, FeedProblem, ImportRecord, ImportStats, Validation } from './catalog.schemas.js';
import type { FieldMapping, ImportMode, StoredImportError } from './catalog.tables.js';
import { ITEM_ELEMENTS, mappedTags, PRODUCT_FIELDS, resolveMapping, SPEC_MAPPING, type Dialect } from './feed-format.js';
import { FeedError } from './feed-parser.js';
import { parseFeed, type FeedSummary } from './feed-worker.js';
import { BatchCategories } from './import-categories.js';
import { ImportWorker, type ImportProgress } from './import-job.js';
import type { ImportedOffers } from './imported-offers.js';
import { importsRepository as repo, type FeedRow, type ImportRow } from './imports.repository.js';
import { EXTRA_IMAGE_TAGS, type MappedProduct } from './product-mapper.js';
import type { PartnerEventSink } from '../webhooks/webhooks.events.js';

export type ImportRecordView = Static<typeof ImportRecord>;

/** An error or warning as shown: where (line, column, 1-based item index) and what. */
export type ProblemView = Static<typeof FeedProblem>;

export type FeedView = Static<typeof Feed>;

export type ImportStatsView = Static<typeof ImportStats>;

export type ValidationView = Static<typeof Validation>;

export interface ImportOptions {
  mapping: FieldMapping | null;
  mode: ImportMode;
  /** Replace mode may deactivate more than half of the active products (DESIGN.md §9). */
  allowMassDeactivation: boolean;
}

export interface XmlImportOptions {
  database: Database;
  fileStore: FileStore;
  offers: ImportedOffers;
  publish(channel: string, event: string, data: unknown): Promise<void>;
  maxBytes: number;
  timeoutMs: number;
  leaseMs: number;
  concurrency: number;
  pollIntervalMs: number;
  allowPrivateUrls: boolean;
  resolve?: ResolveAll;
  log?: { warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void };
  /** Partner events (DESIGN.md §14): import.finished. */
  events?: PartnerEventSink;
}

const MAX_VALIDATION_ERRORS = 100;
/** Distinct keys validate remembers to find a repeated one (as 16-character digests, so bounded in memory). */
const MAX_VALIDATION_KEYS = 1_000_000;
/** Tags the mapper reads beyond the mapping table, per dialect (not "unmapped"). */
const DIALECT_READ_TAGS: Record<Dialect, readonly string[]> = {
  generic: ['categoryid'],
  yml: ['categoryid', 'oldprice', 'type', 'typeprefix', 'vendor', 'model'],
  google: [],
  heureka: ['delivery_date'],
  ceneo: ['avail'],
  skroutz: [],
};

function feedProblem(locale: Locale, err: FeedError): ProblemView {
  return {
    line: err.line,
    column: err.column,
    item: null,
    message: t(locale, err.key as MessageKey, { ...err.params, line: err.line ?? 0, column: err.column ?? 0 }),
  };
}
const SAMPLE_SIZE = 3;

export function errorMessage(locale: Locale, e: StoredImportError): string {
  return t(locale, e.key as MessageKey, e.params);
}

export function problemView(locale: Locale, e: StoredImportError): ProblemView {
  return { line: e.line, column: e.column ?? null, item: e.item ?? null, message: errorMessage(locale, e) };
}

export function importView(row: ImportRow, locale: Locale): ImportRecordView {
  return {
    id: row.id,
    source: row.source,
    url: row.url,
    filename: row.filename,
    status: row.status,
    mode: row.mode,
    started_at: iso(row.startedAt),
    finished_at: iso(row.finishedAt),
    items_seen: row.itemsSeen,
    created: row.created,
    updated: row.updated,
    unchanged: row.unchanged,
    deactivated: row.deactivated,
    skipped: row.skipped,
    errors_count: row.errorsCount,
    errors: row.errors.map((e) => problemView(locale, e)),
  };
}

function feedView(row: FeedRow): FeedView {
  return {
    id: row.id,
    url: row.url,
    mode: row.mode,
    mapping: row.mapping,
    allow_mass_deactivation: row.allowMassDeactivation,
    every_minutes: row.everyMinutes,
    next_run_at: iso(row.nextRunAt),
    last_run_at: iso(row.lastRunAt),
    last_import_id: row.lastImportId,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/** A mapped product as validate shows it: the product's fields, categories by name. */
function sampleView(p: MappedProduct): Record<string, unknown> {
  const { importKey: _key, hash: _hash, categories, price, discounted_price, ...fields } = p;
  return {
    ...fields,
    price: price === null ? null : Number(price),
    discounted_price: discounted_price === null ? null : Number(discounted_price),
    categories: categories.map((c) => (c.path ? { name: c.path[c.path.length - 1], path: c.path.join(' > ') } : { name: null, path: null, feed_category_id: c.key.slice(3) })),
  };
}

/**
 * `mapping` as sent (object, or JSON text in a form field or query): Shape A problems on
 * `mapping.<field>` for a field the products do not have or a tag that cannot be one.
 */
export function checkMapping(value: unknown, errors: FieldErrors): FieldMapping | null {
  if (value === undefined || value === null || value === '') return null;
  let mapping = value;
  if (typeof value === 'string') {
    try {
      mapping = JSON.parse(value);
    } catch {
      addFieldError(errors, 'mapping', 'catalog.mapping_not_json');
      return null;
    }
  }
  if (!isPlainObject(mapping)) {
    addFieldError(errors, 'mapping', 'catalog.mapping_not_json');
    return null;
  }
  const out: FieldMapping = {};
  for (const [field, tag] of Object.entries(mapping)) {
    if (!(PRODUCT_FIELDS as readonly string[]).includes(field)) addFieldError(errors, `mapping.${field}`, 'catalog.mapping_unknown_field');
    else if (typeof tag !== 'string' || !/^[A-Za-z_][A-Za-z0-9_.:-]{0,99}(\/[A-Za-z_][A-Za-z0-9_.:-]{0,99})?$/.test(tag)) {
      addFieldError(errors, `mapping.${field}`, 'validation.pattern');
    } else out[field] = tag;
  }
  return out;
}

export class XmlImportService {
  readonly worker: ImportWorker;

  constructor(private readonly opts: XmlImportOptions) {
    this.worker = new ImportWorker(opts.database, {
      fileStore: opts.fileStore,
      offers: opts.offers,
      publish: (partnerId, progress) => this.publishProgress(partnerId, progress),
      maxBytes: opts.maxBytes,
      timeoutMs: opts.timeoutMs,
      leaseMs: opts.leaseMs,
      concurrency: opts.concurrency,
      pollIntervalMs: opts.pollIntervalMs,
      allowPrivateUrls: opts.allowPrivateUrls,
      finished: (tx, row) => this.finished(tx, row),
      ...(opts.resolve ? { resolve: opts.resolve } : {}),
      ...(opts.log ? { log: opts.log } : {}),
    });
  }

  get maxBytes(): number {
    return this.opts.maxBytes;
  }

  get files(): FileStore {
    return this.opts.fileStore;
  }

  publishProgress(partnerId: number, progress: ImportProgress): void {
    this.opts
      .publish(`private-partner.${partnerId}`, 'import.progress', progress)
      .catch((err: unknown) => this.opts.log?.warn({ err }, 'catalog import: progress event not published'));
  }

  /** A URL the import may fetch (checked again at every connection): Shape A on `url` if not. */
  async checkUrl(url: string): Promise<Result<void>> {
    const verdict = await checkPublicUrl(url, { allowPrivate: this.opts.allowPrivateUrls, ...(this.opts.resolve ? { resolve: this.opts.resolve } : {}) });
    if (verdict.ok) return ok(undefined);
    return fail('VALIDATION', { fields: { url: [{ key: 'catalog.feed_url_refused', params: { detail: verdict.reason } }] } });
  }

  /** Queues an import of a URL; with `everyMinutes`, keeps the URL as a feed (one per partner and URL). */
  async queueFromUrl(tx: Tx, partnerId: number, url: string, opts: ImportOptions & { everyMinutes?: number }): Promise<ImportRow> {
    const feed =
      opts.everyMinutes === undefined
        ? undefined
        : await repo.upsertFeed(tx, { partnerId, url, mode: opts.mode, mapping: opts.mapping, allowMassDeactivation: opts.allowMassDeactivation, everyMinutes: opts.everyMinutes });
    const row = await repo.insert(tx, {
      partnerId,
      feedId: feed?.id ?? null,
      source: 'url',
      url,
      mode: opts.mode,
      mapping: opts.mapping,
      allowMassDeactivation: opts.allowMassDeactivation,
    });
    if (feed) await repo.setFeedLastImport(tx, feed.id, row.id);
    return row;
  }

  queueFromFile(tx: Executor, partnerId: number, file: StoredFile, filename: string | null, opts: ImportOptions): Promise<ImportRow> {
    return repo.insert(tx, { partnerId, source: 'file', filename, fileKey: file.key, mode: opts.mode, mapping: opts.mapping, allowMassDeactivation: opts.allowMassDeactivation });
  }

  /** A file over XML_IMPORT_MAX_BYTES: recorded as a failed import at once. */
  recordTooLarge(partnerId: number, filename: string | null, opts: ImportOptions): Promise<ImportRow> {
    return this.opts.database.db.transaction(async (tx) => {
      const row = await repo.insertFailed(
        tx,
        { partnerId, source: 'file', filename, mode: opts.mode, mapping: opts.mapping },
        { line: null, key: 'catalog.feed_too_large', params: { limit: this.opts.maxBytes } },
      );
      await this.finished(tx, row);
      return row;
    });
  }

  /** import.finished (DESIGN.md §14): the import as GET shows it (its problems in English). */
  private async finished(tx: Executor, row: ImportRow): Promise<void> {
    await this.opts.events?.emit(tx, row.partnerId, 'import.finished', importView(row, 'en'));
  }

  /** After the queueing transaction committed. */
  announceQueued(row: ImportRow): void {
    this.publishProgress(row.partnerId, { import_id: row.id, status: row.status, items_seen: 0 });
    this.worker.wake();
  }

  async get(partnerId: number, id: number, locale: Locale): Promise<Result<ImportRecordView>> {
    const row = await repo.find(this.opts.database.db, partnerId, id);
    return row ? ok(importView(row, locale)) : missing('resource.import', 'import_id');
  }

  async history(partnerId: number, page: PageWindow, locale: Locale): Promise<{ items: ImportRecordView[]; total: number }> {
    const { rows, total } = await repo.list(this.opts.database.db, partnerId, page.perPage, page.offset);
    return { items: rows.map((r) => importView(r, locale)), total };
  }

  async stats(partnerId: number): Promise<ImportStatsView> {
    const s = await repo.stats(this.opts.database.db, partnerId);
    return {
      imports_total: s.imports_total,
      completed: s.completed,
      failed: s.failed,
      last_import_at: s.last_import_at === null ? null : new Date(s.last_import_at).toISOString(),
      products_total: s.products_total,
      products_active: s.products_active,
      items_imported_total: s.items_imported_total,
    };
  }

  async feeds(partnerId: number, page: PageWindow): Promise<{ items: FeedView[]; total: number }> {
    const { rows, total } = await repo.listFeeds(this.opts.database.db, partnerId, page.perPage, page.offset);
    return { items: rows.map(feedView), total };
  }

  async deleteFeed(partnerId: number, id: number): Promise<Result<void>> {
    return (await repo.deleteFeed(this.opts.database.db, partnerId, id)) ? ok(undefined) : missing('resource.feed');
  }

  fieldMappings() {
    return { item_elements: [...ITEM_ELEMENTS], fields: SPEC_MAPPING.map((m) => ({ field: m.field, tags: [...m.tags] })) };
  }

  /** Validates a URL's feed: fetched as an import would fetch it. */
  async validateUrl(url: string, mapping: FieldMapping | null, locale: Locale): Promise<ValidationView> {
    try {
      const res = await safeGetStream(url, {
        allowPrivate: this.opts.allowPrivateUrls,
        headers: { 'accept-encoding': 'gzip' },
        timeoutMs: this.opts.timeoutMs,
        ...(this.opts.resolve ? { resolve: this.opts.resolve } : {}),
      });
      if (res.status !== 200) {
        res.body.destroy();
        return this.invalid(locale, new FeedError('catalog.feed_http_status', { status: res.status }));
      }
      return await this.validate(res.body, mapping, locale);
    } catch (err) {
      if (err instanceof SafeFetchError) {
        return this.invalid(locale, new FeedError(err.code === 'refused' ? 'catalog.feed_url_refused' : 'catalog.feed_fetch_failed', { detail: err.message.slice(0, 300) }));
      }
      throw err;
    }
  }

  private invalid(locale: Locale, err: FeedError): ValidationView {
    return {
      valid: false,
      item_element: null,
      items_found: 0,
      fields: {},
      unmapped_tags: [],
      errors: [feedProblem(locale, err)],
      sample: [],
    };
  }

  /**
   * Reads a whole feed as an import would, writing nothing, and predicts it (DESIGN.md §9
   * "validate predicts the import"): the items it will see, every error and warning it will
   * record — an item without name or key, a key repeated in the feed (the first is kept), an
   * undefined category id, an unreadable value, an ignored oldprice — with line, column and
   * item index; which tag fed which field, which tags no field reads, the first products.
   * `valid` is false when the import would accept no item.
   */
  /**
   * What an import of the feed would do, without writing: parsed in the import's worker thread
   * (same byte, heap and definition limits) and its items and categories judged batch by batch
   * as the import judges them (BatchCategories), so the errors are the import's.
   */
  async validate(source: Readable | AsyncIterable<Buffer>, overrides: FieldMapping | null, locale: Locale): Promise<ValidationView> {
    const errors: ProblemView[] = [];
    const fields: Record<string, string> = {};
    const sample: Array<Record<string, unknown>> = [];
    // Keys seen, as short digests (a feed of long keys holds 16 bytes per item, not the key).
    const keys = new Set<string>();
    const kept = new Set<string>();
    const categoriesLimit = { capped: false };
    let summary: FeedSummary = { itemElement: null, itemsFound: 0, dialect: 'generic', tagNames: [] };
    let accepted = 0;
    const addError = (e: StoredImportError) => {
      if (errors.length < MAX_VALIDATION_ERRORS) errors.push(problemView(locale, e));
    };
    const batches = parseFeed(source as AsyncIterable<Buffer>, {
      resumeAfter: 0,
      mapping: overrides,
      maxBytes: this.opts.maxBytes,
      signal: new AbortController().signal,
      onSummary: (s) => (summary = s),
    });
    let failure: FeedError | undefined;
    try {
      for await (const batch of batches) {
        for (const e of batch.errors) addError(e);
        const categories = new BatchCategories(kept, categoriesLimit, addError);
        categories.addDefinitions(batch.definitions);
        for (const { line, column, item, result } of batch.items) {
          if (!result.ok) {
            addError(result.error);
            continue;
          }
          for (const w of result.warnings) addError(w);
          const key = result.product.importKey;
          const digest = createHash('sha1').update(key).digest('base64').slice(0, 16);
          if (keys.has(digest)) {
            addError({ line, column, item, key: 'catalog.item_duplicate', params: { key: key.slice(0, 100) } });
            continue;
          }
          if (keys.size < MAX_VALIDATION_KEYS) keys.add(digest);
          categories.keysFor(result.product.categories, { line, column, item });
          accepted++;
          for (const [field, tag] of Object.entries(result.tags ?? {})) fields[field] ??= tag;
          if (sample.length < SAMPLE_SIZE) sample.push(sampleView(result.product));
        }
        for (const key of categories.want.keys()) kept.add(key);
      }
    } catch (err) {
      if (!(err instanceof FeedError)) throw err;
      failure = err;
    }
    if (failure) errors.unshift(feedProblem(locale, failure));
    const { dialect } = summary;
    const mapping = resolveMapping(dialect, overrides);
    const known = mappedTags(mapping);
    // The parent of a nested tag a field reads (`categories` of `categories/category`) is not unmapped.
    for (const tag of [...known]) {
      const bare = tag.replace(/[@[].*$/, '');
      known.add(bare);
      if (bare.includes('/')) known.add(bare.slice(0, bare.indexOf('/')));
    }
    for (const tag of [...DIALECT_READ_TAGS[dialect], ...EXTRA_IMAGE_TAGS[dialect]]) known.add(tag.replace(/[@[].*$/, ''));
    const unmapped = summary.tagNames.filter(([key]) => !known.has(key) && !known.has(key.replace(/[@[].*$/, ''))).map(([, name]) => name);
    return {
      valid: failure === undefined && summary.itemElement !== null && accepted > 0,
      item_element: summary.itemElement,
      items_found: summary.itemsFound,
      fields,
      unmapped_tags: unmapped.sort(),
      errors: errors.slice(0, MAX_VALIDATION_ERRORS),
      sample,
    };
  }

  start(): Promise<void> {
    return this.worker.start();
  }

  stop(): Promise<void> {
    return this.worker.stop();
  }
}
