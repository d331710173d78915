// The real product feeds of ../shared/feeds/ (MANIFEST.md there lists their sources and item
// counts, made independently with xmllint). They are data, not part of the repository: tests
// read them in place. The folder is `<repo>/../shared/feeds`, or `$LOYALTY_SHARED_DIR/feeds`
// (CI puts shared/ beside the clone). A missing folder fails the test that needs it.
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The repository's own root also when this file runs from its transpiled copy (.test-build/,
// where package.json is a link back to the repository's).
const repoRoot = path.dirname(realpathSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'package.json')));

export const sharedFeedsDir = (): string =>
  process.env.LOYALTY_SHARED_DIR ? path.resolve(process.env.LOYALTY_SHARED_DIR, 'feeds') : path.resolve(repoRoot, '..', 'shared', 'feeds');

export const sharedFeed = (name: string): string => path.join(sharedFeedsDir(), name);

/** file → items, from MANIFEST.md's table (the first number of the "items" column). */
export function manifestCounts(): Map<string, number> {
  const text = readFileSync(path.join(sharedFeedsDir(), 'MANIFEST.md'), 'utf8');
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    // | file | source | format | encoding | bytes | items |
    if (cells.length < 8 || !/\.xml(\.gz)?$/.test(cells[1]!)) continue;
    const items = /^([\d,]+)/.exec(cells[6]!);
    if (items) counts.set(cells[1]!, Number(items[1]!.replace(/,/g, '')));
  }
  return counts;
}
