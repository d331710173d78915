// The draw's odds: 2,000 draws of a 0.5 / 0.3 / 0.2 wheel from a seeded source pass a
// chi-square test at p > 0.001, and a source that always answers the same value lands where
// the cumulative weights say.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chiSquare2, seededRandom } from '../../../test/helpers/random.js';
import { cryptoRandom, drawWeighted } from './draw.js';

const WHEEL = [
  { weight: 5000, item: 'half' },
  { weight: 3000, item: 'three tenths' },
  { weight: 2000, item: 'one fifth' },
];

describe('weighted draw', () => {
  it('2,000 seeded draws of a 0.5 / 0.3 / 0.2 wheel pass a chi-square test (p > 0.001)', () => {
    const random = seededRandom('draw-odds');
    const counts = new Map(WHEEL.map((w) => [w.item, 0]));
    for (let i = 0; i < 2000; i++) {
      const item = drawWeighted(WHEEL, random);
      counts.set(item, counts.get(item)! + 1);
    }
    const { statistic, p } = chiSquare2([...counts.values()], [0.5, 0.3, 0.2]);
    assert.ok(p > 0.001, `chi-square ${statistic.toFixed(2)}, p = ${p}`);
  });

  it('the chi-square test does reject a wheel that ignores the weights', () => {
    const random = seededRandom('draw-odds');
    const uniform = WHEEL.map((w) => ({ ...w, weight: 1 }));
    const counts = new Map(WHEEL.map((w) => [w.item, 0]));
    for (let i = 0; i < 2000; i++) {
      const item = drawWeighted(uniform, random);
      counts.set(item, counts.get(item)! + 1);
    }
    assert.ok(chiSquare2([...counts.values()], [0.5, 0.3, 0.2]).p < 0.001);
  });

  it('maps the draw onto the cumulative weights, edges included', () => {
    const at = (value: number) => drawWeighted(WHEEL, () => value);
    assert.equal(at(0), 'half');
    assert.equal(at(4999), 'half');
    assert.equal(at(5000), 'three tenths');
    assert.equal(at(7999), 'three tenths');
    assert.equal(at(8000), 'one fifth');
    assert.equal(at(9999), 'one fifth');
    assert.throws(() => at(10000), /out of range/);
  });

  it('asks the source for one integer below the total weight; the production source is the CSPRNG', () => {
    const asked: number[] = [];
    drawWeighted(WHEEL, (max) => {
      asked.push(max);
      return 0;
    });
    assert.deepEqual(asked, [10000]);
    for (let i = 0; i < 100; i++) {
      const v = cryptoRandom(10000);
      assert.ok(Number.isInteger(v) && v >= 0 && v < 10000);
    }
  });
});
