#!/usr/bin/env node
// The layer order of src/modules (bottom → top), enforced: a module may import only modules
// below it. The order is declared in src/modules/LAYERS.md (one module a line, bottom first,
// shown in README.md's architecture sketch). Imports of another module's *.tables.ts are the
// database schema (src/schema.ts), a layer under every module, and are always allowed.
// Upward imports that predate the check are listed in KNOWN below: the check fails on any
// other, and on a KNOWN entry that no longer occurs (so the list only shrinks).
// Usage: node scripts/check-layers.mjs   (plain Node; `npm run check:imports` also runs madge)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = 'src/modules';
const order = readFileSync(path.join(ROOT, 'LAYERS.md'), 'utf8')
  .split('\n')
  .map((l) => /^\s*\d+\.\s+`?([a-z-]+)`?/.exec(l)?.[1])
  .filter(Boolean);
const rank = new Map(order.map((m, i) => [m, i]));

// file → module it imports upward today (to be removed; see the report of issue 31).
const KNOWN = new Set(JSON.parse(readFileSync(new URL('./check-layers.known.json', import.meta.url), 'utf8')));

const files = [];
(function walk(d) {
  for (const n of readdirSync(d)) {
    const p = path.join(d, n);
    if (statSync(p).isDirectory()) walk(p);
    else if (p.endsWith('.ts')) files.push(p);
  }
})(ROOT);

const problems = [];
const seen = new Set();
for (const m of new Set(files.map((f) => f.split(path.sep)[2]))) if (!rank.has(m)) problems.push(`module ${m} is not in src/modules/LAYERS.md`);
for (const f of files) {
  const mod = f.split(path.sep)[2];
  const src = readFileSync(f, 'utf8');
  for (const m of src.matchAll(/(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/gs)) {
    const target = path.normalize(path.join(path.dirname(f), m[1]));
    if (!target.startsWith(ROOT + path.sep)) continue;
    const tmod = target.split(path.sep)[2];
    if (tmod === mod || target.endsWith('.tables.js') || target.endsWith('.tables.ts')) continue;
    if ((rank.get(tmod) ?? -1) < (rank.get(mod) ?? -1)) continue;
    const key = `${f.split(path.sep).join('/')} -> ${tmod}`;
    if (KNOWN.has(key)) seen.add(key);
    else problems.push(`${key}: ${mod} imports ${tmod}, which stands above it (src/modules/LAYERS.md)`);
  }
}
for (const k of KNOWN) if (!seen.has(k)) problems.push(`${k}: listed in scripts/check-layers.known.json but gone — remove it from the list`);
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(`layers: ${order.length} modules in order, no new upward import (${KNOWN.size} known)`);
