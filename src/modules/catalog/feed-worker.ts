// The parse of an import, in a worker thread (docs/catalog.md "Memory and speed"): the feed's
// bytes go in, batches of mapped items come out. Two reasons, both from issue 21:
//
// - Memory: decoding, parsing and mapping make garbage at the rate the feed streams in (every
//   text node, tag map and mapped product is a short-lived string or object). In the server's
//   own heap V8 lets that garbage pile up as far as the process's default heap limit allows
//   before a full collection — 250+ MB RSS for a 100 MB feed. The worker's heap has its own
//   small limits (WORKER_LIMITS), so garbage is collected early and the heap cannot grow past
//   them whatever the feed holds; what it keeps alive is bounded (the parser's maps, one
//   batch being built and one waiting, the category definitions up to MAX_CATEGORY_DEFINITIONS).
// - Speed: the parse of the next batch runs on another core while the server's thread writes
//   the current one, and that thread stays free to drive the database round trips.
//
// Flow control: the worker asks for the feed's bytes a chunk at a time (one chunk queued at
// most); it posts a batch once BATCH_SIZE items (or MAX_BATCH_CHARS of text) are mapped, and
// then — before posting the next one — waits until the main thread acknowledges that the
// previous batch is written. Batches in memory: at most one being written, one finished and
// waiting, one being built.
import { fileURLToPath } from 'node:url';
import { parentPort, Worker, workerData, type ResourceLimits } from 'node:worker_threads';
import type { StoredImportError } from './catalog.tables.js';
import { resolveMapping, type Dialect, type ResolvedMapping } from './feed-format.js';
import { FeedError, FeedParser, type CategoryDefinition } from './feed-parser.js';
import { feedText } from './feed-reader.js';
import { mapItem, type MappedProduct } from './product-mapper.js';
import type { FieldMapping } from './catalog.tables.js';

/** Products per batch (one transaction). */
export const BATCH_SIZE = 1000;
/** A batch is also cut once its products hold this many characters (items may be large). */
export const MAX_BATCH_CHARS = 4 * 1024 * 1024;
/**
 * Category definitions (YML `categories/category`) kept per import: the parser needs them all
 * to check the items' `categoryId` and to give each its path. Past the limit a definition is
 * ignored, with one error on the import (items naming it report an undefined category).
 */
export const MAX_CATEGORY_DEFINITIONS = 20_000;

/**
 * The worker's heap (V8 resource limits). Old generation: what the worker keeps alive (above)
 * is a few MB, plus the modules; young generation: small, so short-lived garbage is scavenged
 * often instead of piling up. A feed that would need more (it cannot, within the item and
 * construct limits) fails the import instead of growing the server.
 */
export const WORKER_LIMITS: ResourceLimits = { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 };

/** An item as the import writes it: where it is in the feed, and what it became. */
export interface ParsedItem {
  line: number;
  column: number;
  item: number;
  result:
    | { ok: true; product: MappedProduct; warnings: StoredImportError[]; /** Validate only: the tag each field was read from. */ tags?: Record<string, string> }
    | { ok: false; error: StoredImportError };
}

/** What validate shows of the feed as a whole, as far as the parse got. */
export interface FeedSummary {
  itemElement: string | null;
  itemsFound: number;
  dialect: Dialect;
  /** Tags seen: key → name as written (bounded by the parser). */
  tagNames: Array<[string, string]>;
}

/** A feed category definition as a category row to write (its path of names resolved). */
export interface DefinitionRow {
  key: string;
  name: string;
  parentKey: string | null;
  path: string;
}

export interface ParsedBatch {
  items: ParsedItem[];
  /** Definitions found since the previous batch. */
  definitions: DefinitionRow[];
  /** Errors of the feed itself (not of an item), e.g. the definitions limit. */
  errors: StoredImportError[];
  /** The last batch. */
  final: boolean;
}

interface WorkerInput {
  resumeAfter: number;
  mapping: FieldMapping | null;
  maxBytes: number;
  /** For validate: items carry their tags, and a summary is posted before the end. */
  validate: boolean;
}

type ToWorker = { type: 'chunk'; bytes: Uint8Array } | { type: 'end' } | { type: 'ack' };
type FromWorker =
  | { type: 'need' }
  | { type: 'summary'; summary: FeedSummary }
  | { type: 'batch'; batch: ParsedBatch }
  | { type: 'error'; feed: { key: string; params: Record<string, string | number>; line: number | null; column: number | null } | null; message: string };

const textChars = (p: MappedProduct): number =>
  p.name.length + (p.description?.length ?? 0) + (p.image_url?.length ?? 0) + (p.external_url?.length ?? 0) + 64 * 8 +
  p.images.reduce((n, s) => n + s.length, 0) + p.categories.reduce((n, c) => n + c.key.length * 2, 0);

/** The definitions' paths: names from the root, cycles and depth cut. */
function definitionRow(def: CategoryDefinition, definitions: ReadonlyMap<string, CategoryDefinition>): DefinitionRow {
  const names: string[] = [];
  const seen = new Set<string>();
  for (let d: CategoryDefinition | undefined = def; d && !seen.has(d.id) && names.length < 32; d = d.parentId ? definitions.get(d.parentId) : undefined) {
    seen.add(d.id);
    names.unshift(d.name.slice(0, 255));
  }
  const parentKey = def.parentId !== null && definitions.has(def.parentId) ? `id:${def.parentId}` : null;
  return { key: `id:${def.id}`, name: def.name.slice(0, 255), parentKey, path: names.join(' > ') };
}

/** The worker's side: reads chunks from the main thread, posts batches. */
async function runWorker(input: WorkerInput): Promise<void> {
  const port = parentPort!;
  const chunks: Array<Uint8Array | null> = [];
  let chunkWaiter: (() => void) | undefined;
  let acked: (() => void) | undefined;
  let credit: Promise<void> = Promise.resolve();
  port.on('message', (msg: ToWorker) => {
    if (msg.type === 'ack') acked?.();
    else {
      chunks.push(msg.type === 'chunk' ? msg.bytes : null);
      chunkWaiter?.();
    }
  });
  const post = (msg: FromWorker) => port.postMessage(msg);

  async function* bytes(): AsyncGenerator<Buffer> {
    post({ type: 'need' });
    for (;;) {
      if (chunks.length === 0) await new Promise<void>((resolve) => (chunkWaiter = resolve));
      chunkWaiter = undefined;
      const chunk = chunks.shift()!;
      if (chunk === null) return;
      // Ask for the next chunk before parsing this one: reading overlaps parsing.
      post({ type: 'need' });
      yield Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    }
  }

  const definitions = new Map<string, CategoryDefinition>();
  let newDefinitions: CategoryDefinition[] = [];
  let definitionsCapped = false;
  let dialect: Dialect = 'generic';
  let mapping: ResolvedMapping | undefined;
  let pending: ParsedItem[] = [];
  let pendingChars = 0;
  let feedErrors: StoredImportError[] = [];
  let index = 0;
  const parser = new FeedParser({
    item: (raw) => {
      index++;
      if (index <= input.resumeAfter) return;
      mapping ??= resolveMapping(dialect, input.mapping);
      const r = mapItem(raw, mapping, dialect, { knownCategory: (id) => definitions.has(id) });
      pending.push({
        line: raw.line,
        column: raw.column,
        item: raw.index,
        result: r.ok ? { ok: true, product: r.product, warnings: r.warnings, ...(input.validate ? { tags: r.tags as Record<string, string> } : {}) } : { ok: false, error: r.error },
      });
      pendingChars += r.ok ? textChars(r.product) : 256;
    },
    category: (def) => {
      if (definitions.has(def.id)) return;
      if (definitions.size >= MAX_CATEGORY_DEFINITIONS) {
        if (!definitionsCapped) {
          definitionsCapped = true;
          feedErrors.push({ line: def.line, key: 'catalog.categories_limit', params: { limit: MAX_CATEGORY_DEFINITIONS } });
        }
        return;
      }
      definitions.set(def.id, def);
      newDefinitions.push(def);
    },
    root: (d) => {
      dialect = d;
    },
  });
  const send = async (final: boolean) => {
    await credit;
    credit = new Promise<void>((resolve) => (acked = resolve));
    const batch: ParsedBatch = { items: pending, definitions: newDefinitions.map((d) => definitionRow(d, definitions)), errors: feedErrors, final };
    pending = [];
    pendingChars = 0;
    newDefinitions = [];
    feedErrors = [];
    post({ type: 'batch', batch });
  };
  const summarize = () => {
    if (input.validate) post({ type: 'summary', summary: { itemElement: parser.itemElement, itemsFound: parser.itemsFound, dialect, tagNames: [...parser.tagNames] } });
  };
  try {
    for await (const text of feedText(bytes(), { maxBytes: input.maxBytes })) {
      parser.write(text);
      if (pending.length >= BATCH_SIZE || pendingChars >= MAX_BATCH_CHARS) await send(false);
    }
    parser.close();
  } catch (err) {
    // Validate shows what was parsed before the failure too (an import keeps only whole batches).
    if (input.validate) {
      await send(false);
      summarize();
    }
    throw err;
  }
  summarize();
  if (parser.itemElement === null) throw new FeedError('catalog.feed_no_items');
  await send(true);
}

if (parentPort && (workerData as { feedWorker?: WorkerInput } | undefined)?.feedWorker) {
  runWorker((workerData as { feedWorker: WorkerInput }).feedWorker).catch((err: unknown) => {
    const feed = err instanceof FeedError ? { key: err.key, params: err.params, line: err.line, column: err.column } : null;
    parentPort!.postMessage({ type: 'error', feed, message: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies FromWorker);
  });
}

/**
 * This module, as the worker's entry: the built .js file itself, or — when the server runs
 * from source under tsx, whose loader a worker's entry does not get — a bootstrap that
 * registers tsx first.
 */
function workerEntry(): { entry: string; eval: boolean } {
  const url = import.meta.url;
  if (!url.endsWith('.ts')) return { entry: fileURLToPath(url), eval: false };
  return { entry: `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url)}); });`, eval: true };
}

/** The worker died for want of memory (its resource limits), or failed unexpectedly. */
export class FeedWorkerError extends Error {}

export interface ParseFeedOptions {
  resumeAfter: number;
  mapping: FieldMapping | null;
  maxBytes: number;
  signal: AbortSignal;
  /** Resource limits of the worker's heap (tests lower them). */
  limits?: ResourceLimits;
  /** Validate: items carry their tags, and the feed's summary is given here before the end or the failure. */
  onSummary?: (summary: FeedSummary) => void;
}

/**
 * The feed's batches, parsed in a worker thread. Take the next batch only once the previous
 * one is written (the generator acknowledges it then, and the worker may post the next).
 * Throws FeedError for what the feed did wrong; the worker is ended on return or throw.
 */
export async function* parseFeed(source: AsyncIterable<Buffer>, opts: ParseFeedOptions): AsyncGenerator<ParsedBatch> {
  const { entry, eval: isEval } = workerEntry();
  const worker = new Worker(entry, {
    eval: isEval,
    workerData: { feedWorker: { resumeAfter: opts.resumeAfter, mapping: opts.mapping, maxBytes: opts.maxBytes, validate: opts.onSummary !== undefined } satisfies WorkerInput },
    resourceLimits: opts.limits ?? WORKER_LIMITS,
    stdout: false,
    stderr: false,
  });
  const reader = source[Symbol.asyncIterator]();
  const batches: ParsedBatch[] = [];
  let failure: unknown;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  let reading = false;
  let needed = 0;
  const pump = async () => {
    if (reading) return;
    reading = true;
    try {
      while (needed > 0 && failure === undefined) {
        needed--;
        const next = await reader.next();
        if (next.done) {
          worker.postMessage({ type: 'end' } satisfies ToWorker);
          return;
        }
        const chunk = next.value;
        // A copy the worker owns (stream chunks may be views of a shared pool).
        const bytes = new Uint8Array(chunk.byteLength);
        bytes.set(chunk);
        worker.postMessage({ type: 'chunk', bytes } satisfies ToWorker, [bytes.buffer]);
      }
    } catch (err) {
      failure ??= err;
      notify();
    } finally {
      reading = false;
    }
  };
  worker.on('message', (msg: FromWorker) => {
    if (msg.type === 'need') {
      needed++;
      void pump();
    } else if (msg.type === 'batch') {
      batches.push(msg.batch);
      notify();
    } else if (msg.type === 'summary') {
      opts.onSummary?.(msg.summary);
    } else {
      failure ??= msg.feed ? new FeedError(msg.feed.key, msg.feed.params, msg.feed.line, msg.feed.column) : new FeedWorkerError(msg.message);
      notify();
    }
  });
  worker.on('error', (err: Error & { code?: string }) => {
    failure ??= err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? new FeedError('catalog.feed_memory', { limit: opts.limits?.maxOldGenerationSizeMb ?? WORKER_LIMITS.maxOldGenerationSizeMb ?? 0 }) : new FeedWorkerError(err.message);
    notify();
  });
  worker.on('exit', () => {
    failure ??= new FeedWorkerError('the feed worker exited');
    notify();
  });
  const onAbort = () => {
    failure ??= new Error('aborted');
    notify();
  };
  opts.signal.addEventListener('abort', onAbort);
  try {
    for (;;) {
      if (opts.signal.aborted) throw new Error('aborted');
      if (batches.length === 0 && failure === undefined) await new Promise<void>((resolve) => (wake = resolve));
      const batch = batches.shift();
      if (batch) {
        yield batch;
        if (batch.final) return;
        worker.postMessage({ type: 'ack' } satisfies ToWorker);
        continue;
      }
      if (failure !== undefined) throw failure;
    }
  } finally {
    opts.signal.removeEventListener('abort', onAbort);
    worker.removeAllListeners('exit');
    void worker.terminate();
    void reader.return?.();
  }
}
