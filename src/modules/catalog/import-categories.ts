// Which categories an import keeps: the feed's definitions and the paths its items name, at
// most MAX_IMPORT_CATEGORIES, with one error the first time one does not fit. The import and
// validate both decide through this, batch by batch, so validate reports the limits the
// import would.
import type { StoredImportError } from './catalog.tables.js';
import type { DefinitionRow, ParsedItem } from './feed-worker.js';
import type { CategoryRef } from './product-mapper.js';

/**
 * Categories (the feed's definitions and the paths its items name) an import keeps ids of:
 * past it, an item's further new categories are not linked, with one error on the import.
 */
export const MAX_IMPORT_CATEGORIES = 20_000;

export type CategoryRow = DefinitionRow;
type At = Partial<Pick<ParsedItem, 'line' | 'column' | 'item'>>;

/** The categories kept so far (written, for the import), across batches. */
export interface KeptCategories {
  has(key: string): boolean;
  readonly size: number;
}

/** One batch's categories: what to make sure of (`want`), within the import's limit. */
export class BatchCategories {
  /** Categories to make sure of for this batch, parents first. */
  readonly want = new Map<string, CategoryRow>();

  constructor(
    private readonly kept: KeptCategories,
    /** Shared across the import's batches: the limit's error is reported once. */
    private readonly limit: { capped: boolean },
    private readonly addError: (error: StoredImportError) => void,
  ) {}

  /** The feed's definitions found since the previous batch. */
  addDefinitions(definitions: readonly CategoryRow[]): void {
    for (const def of definitions) {
      if (this.kept.has(def.key) || this.want.has(def.key)) continue;
      if (!this.roomFor(1, {})) break;
      this.want.set(def.key, def);
    }
  }

  /** The categories an item names → the keys to link it to (their rows added to `want`). */
  keysFor(refs: readonly CategoryRef[], at: At): string[] {
    const keys: string[] = [];
    for (const ref of refs) {
      if (ref.path) {
        let unknown = 0;
        for (let i = 1; i <= ref.path.length; i++) if (!this.kept.has(`path:${ref.path.slice(0, i).join(' > ')}`)) unknown++;
        if (unknown > 0 && !this.roomFor(unknown, at)) continue;
        for (let i = 1; i <= ref.path.length; i++) {
          const path = ref.path.slice(0, i).join(' > ');
          const key = `path:${path}`;
          if (!this.kept.has(key) && !this.want.has(key)) {
            this.want.set(key, { key, name: ref.path[i - 1]!, parentKey: i > 1 ? `path:${ref.path.slice(0, i - 1).join(' > ')}` : null, path });
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

  /** Whether `more` new categories fit; the first time they do not, one error says so. */
  private roomFor(more: number, at: At): boolean {
    if (this.kept.size + this.want.size + more <= MAX_IMPORT_CATEGORIES) return true;
    if (!this.limit.capped) {
      this.limit.capped = true;
      this.addError({ line: at.line ?? null, ...(at.column !== undefined ? { column: at.column, item: at.item } : {}), key: 'catalog.categories_limit', params: { limit: MAX_IMPORT_CATEGORIES } });
    }
    return false;
  }
}
