// A property test of the ledger (reference/loyalty.md §3): random interleavings of awards,
// deductions, adjustments, reversals, returns of purchases and of deductions (DESIGN.md §12:
// cumulative rounding, points coming back paying the debt first), expiry by the clock and the
// sweep job, on several cards and programmes — after EVERY operation `loyalty ledger verify`'s
// invariants hold. The seed is
// fixed so a failure reproduces; LEDGER_SEED picks another.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { assertLedgerConsistent, createCustomer, createProgramme, createShop, TestClock } from './helpers/loyalty.js';
import type { Result } from '../src/shared/errors.js';

/** mulberry32: a small seeded PRNG. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Refused extends Error {}

describe('ledger invariants under random operations', () => {
  let t: TestApp;
  let p: PartnerFixture;
  const clock = new TestClock();

  before(async () => {
    t = await startTestApp({}, undefined, { clock, workers: false });
    p = await createPartner(t);
  });
  after(() => t.close());

  it('hold after every one of 180 operations', async () => {
    const seed = Number(process.env.LEDGER_SEED ?? 20261123);
    const rnd = prng(seed);
    const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const { ledger, awards, loyaltyCards } = t.app.context.services;
    const db = t.app.context.database.db;
    const shop = await createShop(t, p.id);
    const programmes = [
      await createProgramme(t, p.id, { pointsExpirationDays: 3, initialBonusPoints: 5 }),
      await createProgramme(t, p.id, { pointsExpirationDays: null, roundPointsUp: true, pointsPerVisit: 2 }),
      await createProgramme(t, p.id, { pointsExpirationDays: 7, minPointsForRedemption: 5, maxPointsPerRedemption: 60 }),
    ];
    const cards: number[] = [];
    for (const programme of programmes) {
      for (let i = 0; i < 2; i++) {
        const customer = await createCustomer(t);
        const card = await db.transaction((tx) => loyaltyCards.create(tx, customer.id, { partnerCardId: programme }));
        assert.ok(card.ok);
        cards.push(card.value.id);
      }
    }
    const transactions: number[] = [];
    /** Purchases and deductions, by what the walk did: the returns' targets. */
    const returnable: Record<string, number[]> = { award: [], deduct: [] };
    const counts: Record<string, { ok: number; refused: number }> = {};

    /** Run one operation in its own transaction; a refusal rolls it back. */
    async function attempt(name: string, op: (tx: Parameters<Parameters<typeof db.transaction>[0]>[0]) => Promise<Result<{ id: number }>>) {
      counts[name] ??= { ok: 0, refused: 0 };
      try {
        const id = await db.transaction(async (tx) => {
          const r = await op(tx);
          if (!r.ok) throw new Refused(r.failure.error);
          return r.value.id;
        });
        transactions.push(id);
        returnable[name]?.push(id);
        counts[name]!.ok++;
      } catch (err) {
        if (!(err instanceof Refused)) throw err;
        counts[name]!.refused++;
      }
    }

    for (let step = 0; step < 180; step++) {
      const card = pick(cards);
      const r = rnd();
      if (r < 0.26) {
        const amount = BigInt(Math.floor(rnd() * 100_0000) + 1);
        await attempt('award', (tx) => awards.awardPurchase(tx, p.id, { cardId: card, shopId: shop, amount }));
      } else if (r < 0.43) {
        const points = Math.floor(rnd() * 80) + 1;
        await attempt('deduct', (tx) => ledger.deduct(tx, p.id, { cardId: card, shopId: shop, points }));
      } else if (r < 0.55) {
        const points = (rnd() < 0.5 ? -1 : 1) * (Math.floor(rnd() * 40) + 1);
        const expiresInDays = rnd() < 0.3 ? null : Math.floor(rnd() * 5) + 1;
        await attempt('adjust', (tx) => ledger.adjust(tx, p.id, { cardId: card, points, reason: 'prop', expiresInDays }));
      } else if (r < 0.67 && transactions.length > 0) {
        const target = pick(transactions);
        await attempt('reverse', (tx) => awards.reverse(tx, p.id, target, null));
      } else if (r < 0.82 && returnable.award!.length > 0) {
        // A part of a purchase (often a small one, so partial returns add up) or of a deduction.
        if (rnd() < 0.6) {
          const target = pick(returnable.award!);
          const amount = (Math.floor(rnd() * (rnd() < 0.5 ? 300 : 5000)) + 1) / 100;
          await attempt('return', (tx) => awards.returnGoods(tx, p.id, target, { amount, receiptNumber: null, reason: null }));
        } else if (returnable.deduct!.length > 0) {
          const target = pick(returnable.deduct!);
          const points = Math.floor(rnd() * 30) + 1;
          await attempt('return', (tx) => awards.returnGoods(tx, p.id, target, { points, receiptNumber: null, reason: null }));
        }
      } else if (r < 0.96) {
        clock.advanceMs(Math.floor(rnd() * 2.5 * 86_400_000));
      } else {
        await t.app.context.workers.expirySweeper.runOnce();
      }
      try {
        await assertLedgerConsistent(t);
      } catch (err) {
        throw new Error(`ledger inconsistent after step ${step} (seed ${seed}): ${(err as Error).message}`);
      }
    }
    // The walk did exercise every operation, both ways where both are possible.
    for (const name of ['award', 'deduct', 'adjust', 'reverse', 'return']) assert.ok((counts[name]?.ok ?? 0) > 0, `${name}: ${JSON.stringify(counts)}`);
    assert.ok(counts.deduct!.refused > 0 && counts.reverse!.refused > 0 && counts.return!.refused > 0, JSON.stringify(counts));
    const expired = (await db.execute(`select count(*)::int as n from points_transactions where type = 'expire'` as never)) as unknown as { rows: Array<{ n: number }> };
    assert.ok(expired.rows[0]!.n > 0, 'some lots expired');
  });
});
