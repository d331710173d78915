// Campaigns as the pure evaluator reads them (src/modules/awards/evaluate.ts), for its unit tests.
import type { CampaignFacts } from '../../src/modules/awards/evaluate.js';

let nextId = 1;
/** A campaign as the evaluator reads it: every field at its default (a 50-point bonus, no limits), `c` on top. */
export function campaignFacts(c: Partial<CampaignFacts> = {}): CampaignFacts {
  return {
    id: nextId++,
    name: 'C',
    isActive: true,
    startsAt: null,
    endsAt: null,
    daysOfWeek: [],
    fromTime: null,
    toTime: null,
    timeZone: 'Europe/Vilnius',
    shopIds: [],
    tierIds: [],
    minAmountUnits: null,
    productIds: [],
    categoryIds: [],
    skus: [],
    firstPurchaseOnly: false,
    effectType: 'bonus',
    effectHundredths: 5000n,
    priority: 0,
    exclusive: false,
    limitPerCustomer: null,
    limitPerCustomerPerDay: null,
    limitUses: null,
    pointsBudget: null,
    usesCount: 0,
    pointsAwarded: 0,
    cardUses: { total: 0, byDay: new Map() },
    ...c,
  };
}
