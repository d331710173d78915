// How a test starts one of the project's own programs (the server, the CLI) in a child
// process: when the suite runs transpiled (scripts/test.mjs runs .test-build/), the
// JavaScript of the same build, as node runs a built service; when a test file is run from
// source (`node --import tsx --test test/x.test.ts`), the TypeScript source under tsx.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(import.meta.url);
/** The tree this file was loaded from: the repository, or its transpiled copy. */
const tree = path.resolve(path.dirname(here), '..', '..');
const compiled = here.endsWith('.js');

/**
 * The node arguments that run `source` (a path from the repository root, e.g. `src/server.ts`);
 * `nodeArgs` (such as --cpu-prof) come first.
 */
export function nodeEntry(source: string, nodeArgs: readonly string[] = []): string[] {
  return compiled
    ? [...nodeArgs, path.join(tree, source.replace(/\.ts$/, '.js'))]
    : [...nodeArgs, '--import', 'tsx', path.join(tree, source)];
}
