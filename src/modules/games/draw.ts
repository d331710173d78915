// The server-side draw of a play's outcome (DESIGN.md §8): rewards weighted by their
// configured probabilities, which are exact ten-thousandths (games.tables.ts), so the
// weights are integers summing to exactly 10,000 and the draw is one uniform integer in
// [0, 10000) — no floating point between the partner's odds and the customer's chance.
//
// The random source is a parameter: production uses the CSPRNG (node:crypto randomInt, which
// rejects biased samples), tests a seeded source, so the odds are tested deterministically.
import { randomInt } from 'node:crypto';

/** A uniform random integer in [0, maxExclusive). */
export type RandomSource = (maxExclusive: number) => number;

export const cryptoRandom: RandomSource = (maxExclusive) => randomInt(maxExclusive);

/** The entry whose cumulative weight range holds one uniform draw over the total weight. */
export function drawWeighted<T>(entries: ReadonlyArray<{ weight: number; item: T }>, random: RandomSource): T {
  let total = 0;
  for (const e of entries) {
    if (!Number.isSafeInteger(e.weight) || e.weight <= 0) throw new Error(`weights must be positive integers, got ${e.weight}`);
    total += e.weight;
  }
  if (entries.length === 0) throw new Error('nothing to draw from');
  let r = random(total);
  if (!Number.isInteger(r) || r < 0 || r >= total) throw new Error(`random source out of range: ${r} for ${total}`);
  for (const e of entries) {
    if (r < e.weight) return e.item;
    r -= e.weight;
  }
  throw new Error('unreachable');
}
