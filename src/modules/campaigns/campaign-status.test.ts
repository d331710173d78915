// campaignStatus: each status, its boundaries (starts_at is running, ends_at is ended), the
// order of the rules, and budget_left. The SQL twin is checked against it over HTTP
// (test/campaigns.test.ts, the `status` filter).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { budgetLeft, campaignStatus, type CampaignStatusFacts } from './campaign-status.js';

const NOW = new Date('2026-03-01T10:00:00.000Z');
const at = (offsetMs: number) => new Date(NOW.getTime() + offsetMs);

const base: CampaignStatusFacts = {
  isActive: true,
  startsAt: null,
  endsAt: null,
  pointsBudget: null,
  pointsAwarded: 0,
  limitUses: null,
  usesCount: 0,
};
const status = (over: Partial<CampaignStatusFacts>) => campaignStatus({ ...base, ...over }, NOW);

describe('campaignStatus', () => {
  it('is running with no dates and no limits', () => {
    assert.equal(status({}), 'running');
  });

  it('is paused when inactive, whatever else holds', () => {
    assert.equal(status({ isActive: false }), 'paused');
    assert.equal(status({ isActive: false, startsAt: at(1000) }), 'paused');
    assert.equal(status({ isActive: false, endsAt: at(-1000) }), 'paused');
    assert.equal(status({ isActive: false, pointsBudget: 10, pointsAwarded: 10 }), 'paused');
  });

  it('is scheduled before starts_at and running from it', () => {
    assert.equal(status({ startsAt: at(1) }), 'scheduled');
    assert.equal(status({ startsAt: NOW }), 'running');
    assert.equal(status({ startsAt: at(-1) }), 'running');
    assert.equal(status({ startsAt: at(1), pointsBudget: 1, pointsAwarded: 1 }), 'scheduled');
  });

  it('is ended from ends_at on', () => {
    assert.equal(status({ endsAt: at(1) }), 'running');
    assert.equal(status({ endsAt: NOW }), 'ended');
    assert.equal(status({ endsAt: at(-1), pointsBudget: 1, pointsAwarded: 1 }), 'ended');
  });

  it('is exhausted while the budget or the uses are used up, running again when budget comes back', () => {
    assert.equal(status({ pointsBudget: 100, pointsAwarded: 99 }), 'running');
    assert.equal(status({ pointsBudget: 100, pointsAwarded: 100 }), 'exhausted');
    assert.equal(status({ pointsBudget: 100, pointsAwarded: 150 }), 'exhausted', 'a budget lowered below what was given');
    assert.equal(status({ limitUses: 3, usesCount: 2 }), 'running');
    assert.equal(status({ limitUses: 3, usesCount: 3 }), 'exhausted');
    assert.equal(status({ pointsBudget: 100, pointsAwarded: 60, limitUses: 3, usesCount: 3 }), 'exhausted');
  });

  it('budget_left is what is left, never negative, null without a budget', () => {
    assert.equal(budgetLeft({ pointsBudget: null, pointsAwarded: 5 }), null);
    assert.equal(budgetLeft({ pointsBudget: 100, pointsAwarded: 40 }), 60);
    assert.equal(budgetLeft({ pointsBudget: 100, pointsAwarded: 100 }), 0);
    assert.equal(budgetLeft({ pointsBudget: 100, pointsAwarded: 130 }), 0);
  });
});
