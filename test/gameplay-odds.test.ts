// The odds a customer gets are the odds the partner configured: plays of a 0.5 / 0.3 / 0.2
// wheel, each started and completed through the gameplay service the routes call (the draw,
// the stored outcome, the reveal) on the test database. The draw's random source is seeded
// through the service's seam (production uses the CSPRNG) and every value it gives is
// recorded, so the test is exact rather than statistical: each play reveals the reward whose
// ten-thousandths hold its draw, over a total of exactly 10,000 — the outcomes are the
// configured odds applied to a uniform source, whose uniformity and the chi-square of the
// draw itself are src/modules/games/draw.test.ts's (2,000 draws). The revealed outcomes pass
// a chi-square test too (p > 0.001). The HTTP path of a play is covered by gameplay.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner } from './helpers/fixtures.js';
import { createCustomer, createProgramme, joinProgramme, type CustomerFixture } from './helpers/loyalty.js';
import { createGame } from './helpers/engagement.js';
import { chiSquare2, seededRandom } from './helpers/random.js';

const PLAYS = 400;

describe('the odds of a wheel', () => {
  let t: TestApp;

  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  it(`${PLAYS} plays of a 0.5 / 0.3 / 0.2 wheel reveal what their draws give, and pass a chi-square test at p > 0.001`, async () => {
    const p = await createPartner(t);
    const programme = await createProgramme(t, p.id);
    const game = await createGame(t, p, {
      partner_card_id: programme,
      plays_per_customer_per_day: 1000,
      rewards: [
        { label: 'half', probability: 0.5, reward_type: 'none' },
        { label: 'three tenths', probability: 0.3, reward_type: 'none' },
        { label: 'one fifth', probability: 0.2, reward_type: 'none' },
      ],
    });
    const players: CustomerFixture[] = [];
    for (let i = 0; i < Math.ceil(PLAYS / 1000); i++) {
      const c = await createCustomer(t);
      await joinProgramme(t, c, programme);
      players.push(c);
    }
    const seeded = seededRandom('wheel-0.5-0.3-0.2');
    const drawn: Array<{ max: number; value: number }> = [];
    t.app.context.services.gameplay.random = (max) => {
      const value = seeded(max);
      drawn.push({ max, value });
      return value;
    };
    const counts = new Map<string, number>([
      ['half', 0],
      ['three tenths', 0],
      ['one fifth', 0],
    ]);
    const gameplay = t.app.context.services.gameplay;
    const db = t.app.context.database.db;
    const playOnce = async (c: CustomerFixture) => {
      const started = await db.transaction(async (tx) => gameplay.start(tx, { customerId: c.id }, game.id));
      assert.ok(started.ok, JSON.stringify(started));
      const done = await gameplay.progress({ kind: 'customer', customerId: c.id }, started.value.view.session_key, { progress: 100, completed: true });
      assert.ok(done.ok && done.value.view.reward, JSON.stringify(done));
      const label = done.value.view.reward.label;
      counts.set(label, counts.get(label)! + 1);
    };
    // Four at a time: the service sees concurrent plays, the machine is not flooded.
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < PLAYS) {
          const i = next++;
          await playOnce(players[i % players.length]!);
        }
      }),
    );
    const observed = [counts.get('half')!, counts.get('three tenths')!, counts.get('one fifth')!];
    assert.equal(observed.reduce((a, b) => a + b, 0), PLAYS);
    // One draw per play, over the whole 10,000, and each outcome the one its draw falls in.
    assert.equal(drawn.length, PLAYS);
    assert.ok(drawn.every((d) => d.max === 10_000), 'every draw spans the whole wheel');
    const expected = [0, 0, 0];
    for (const { value } of drawn) expected[value < 5000 ? 0 : value < 8000 ? 1 : 2]! += 1;
    assert.deepEqual(observed, expected);
    const { statistic, p: pValue } = chiSquare2(observed, [0.5, 0.3, 0.2]);
    assert.ok(pValue > 0.001, `observed ${observed.join(' / ')}: chi-square ${statistic.toFixed(2)}, p = ${pValue}`);
  });
});
