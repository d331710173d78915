// The variants of an amount-only award evaluated before its statement (earn-rules.ts): one per
// card fact the campaigns look at, none for a programme a copy must not serve. Pure; the
// statement that picks among them is proved against the engine in test/tiers-fast-award.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { campaignFacts } from '../../../test/helpers/campaign-facts.js';
import { ANY_TIER, earnVariants, NO_TIER, statementVariants } from './earn-rules.js';
import type { CampaignFacts } from './evaluate.js';
import type { EarnRulesRow } from './basket.repository.js';

const now = new Date('2026-11-27T10:00:00Z');
const campaign = (c: Partial<CampaignFacts> = {}) => campaignFacts({ effectHundredths: 500n, cardUses: null, ...c });
function programme(id: number, campaigns: CampaignFacts[], tierIds: number[] = []): EarnRulesRow {
  return {
    id,
    version: 3,
    base: { pointsEnabled: true, pointsPerCurrency: '1', currencyAmount: '1', roundPointsUp: false, minPointsPerPurchase: 0, maxPointsPerPurchase: null, pointsPerVisit: 0 },
    tierIds,
    campaigns,
  };
}
const EUR = 10_000n;

describe('earnVariants', () => {
  it('one variant when the campaigns look at no fact of the card', () => {
    const v = earnVariants([programme(1, [campaign({ name: 'Five' })], [7, 8])], 1, 20n * EUR, now);
    assert.deepEqual(
      v.map((x) => [x.programmeId, x.version, x.tier, x.first, x.base, x.campaigns.map((c) => [c.name, c.points])]),
      [[1, 3, ANY_TIER, null, 20, [['Five', 5]]]],
    );
  });

  it('a variant per tier (and none held) when a campaign targets tiers, and per first purchase when one asks', () => {
    const v = earnVariants([programme(1, [campaign({ tierIds: [8] }), campaign({ firstPurchaseOnly: true, effectHundredths: 10000n })], [7, 8])], 1, 20n * EUR, now);
    assert.deepEqual(
      v.map((x) => [x.tier, x.first, x.campaigns.reduce((s, c) => s + c.points, 0)]),
      [
        [NO_TIER, true, 100],
        [NO_TIER, false, 0],
        [7, true, 100],
        [7, false, 0],
        [8, true, 105],
        [8, false, 5],
      ],
    );
    assert.equal(statementVariants(v, 5).needFirst, true);
  });

  it('no variant for a programme with any limit, or without campaigns', () => {
    for (const limit of [{ limitUses: 10 }, { pointsBudget: 100 }, { limitPerCustomer: 1 }, { limitPerCustomerPerDay: 1 }]) {
      assert.deepEqual(earnVariants([programme(1, [campaign(), campaign(limit)])], 1, EUR, now), [], JSON.stringify(limit));
    }
    assert.deepEqual(earnVariants([programme(1, [])], 1, EUR, now), []);
  });

  it('a programme whose variants would pass the cap keeps the engine; the others are still served', () => {
    const many = Array.from({ length: 20 }, (_, i) => i + 1);
    const v = earnVariants([programme(1, [campaign({ tierIds: [1] }), campaign({ firstPurchaseOnly: true })], many), programme(2, [campaign()])], 1, EUR, now);
    assert.deepEqual(v.map((x) => x.programmeId), [2]);
  });
});

describe('statementVariants', () => {
  it('flattens the applications with their variant (1-based) and ordinal (after base and tier)', () => {
    const v = earnVariants([programme(1, [campaign({ name: 'A', priority: 2 }), campaign({ name: 'B' })]), programme(2, [campaign({ name: 'C' })])], 1, 3n * EUR, now);
    const s = statementVariants(v, 11);
    assert.deepEqual(s.apps.variant, [1, 1, 2]);
    assert.deepEqual(s.apps.ordinal, [2, 3, 2]);
    assert.deepEqual(s.apps.day, ['2026-11-27', '2026-11-27', '2026-11-27']);
    assert.deepEqual(s.campaignPoints, [10, 5]);
    assert.deepEqual([s.shard, s.needFirst], [11, false]);
  });
});
