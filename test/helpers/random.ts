// A seeded random source for tests of the draw (src/modules/games/draw.ts): SHA-256 of
// (seed, counter) as a stream of uniform 32-bit words, with rejection sampling so that every
// integer in [0, max) is exactly equally likely — the same guarantee crypto.randomInt gives,
// but repeatable.
import { createHash } from 'node:crypto';
import type { RandomSource } from '../../src/modules/games/draw.js';

export function seededRandom(seed: string): RandomSource {
  let counter = 0;
  const words: number[] = [];
  const next = () => {
    if (words.length === 0) {
      const block = createHash('sha256').update(`${seed}:${counter++}`).digest();
      for (let i = 0; i < block.length; i += 4) words.push(block.readUInt32BE(i));
    }
    return words.shift()!;
  };
  return (max) => {
    const limit = Math.floor(0x1_0000_0000 / max) * max;
    for (;;) {
      const w = next();
      if (w < limit) return w % max;
    }
  };
}

/**
 * Pearson's chi-square statistic of observed counts against expected proportions, and its
 * p-value for 2 degrees of freedom (three categories), where the survival function is exactly
 * e^(−x/2).
 */
export function chiSquare2(observed: number[], proportions: number[]): { statistic: number; p: number } {
  if (observed.length !== 3 || proportions.length !== 3) throw new Error('chiSquare2 takes three categories (2 degrees of freedom)');
  const n = observed.reduce((a, b) => a + b, 0);
  const statistic = observed.reduce((sum, o, i) => {
    const e = n * proportions[i]!;
    return sum + (o - e) ** 2 / e;
  }, 0);
  return { statistic, p: Math.exp(-statistic / 2) };
}
