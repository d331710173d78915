// A campaign's status (DESIGN.md §12) is derived, never stored: it depends on the clock and on
// counters the award path moves, so a stored copy would be stale the moment either changed.
// It is written twice, side by side, and the two must agree: campaignStatus for a row in hand,
// campaignStatusSql for the list's `status` filter (test/campaigns.test.ts checks every case
// through both).
//
//   paused     is_active is false
//   scheduled  before starts_at
//   ended      from ends_at on
//   exhausted  the points budget or the uses are used up (a return that frees budget makes
//              the campaign running again)
//   running    otherwise — schedule hours (days, from/to time) do not change the status
import { sql, type SQL } from 'drizzle-orm';
import { campaigns, campaignTotalsSql } from './campaigns.tables.js';

export const CAMPAIGN_STATUSES = ['scheduled', 'running', 'paused', 'ended', 'exhausted'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

export type CampaignStatusFacts = Pick<
  typeof campaigns.$inferSelect,
  'isActive' | 'startsAt' | 'endsAt' | 'pointsBudget' | 'pointsAwarded' | 'limitUses' | 'usesCount'
>;

export function campaignStatus(row: CampaignStatusFacts, now: Date): CampaignStatus {
  const t = now.getTime();
  if (!row.isActive) return 'paused';
  if (row.startsAt !== null && t < row.startsAt.getTime()) return 'scheduled';
  if (row.endsAt !== null && t >= row.endsAt.getTime()) return 'ended';
  if (row.pointsBudget !== null && row.pointsAwarded >= row.pointsBudget) return 'exhausted';
  if (row.limitUses !== null && row.usesCount >= row.limitUses) return 'exhausted';
  return 'running';
}

/** campaignStatus as SQL over the campaigns table, with `now` as a parameter (the app's clock, not the database's). */
export function campaignStatusSql(now: Date): SQL<CampaignStatus> {
  const at = sql`${now.toISOString()}::timestamptz`;
  const c = campaigns;
  const totals = campaignTotalsSql('campaigns');
  return sql<CampaignStatus>`(case
    when not ${c.isActive} then 'paused'
    when ${c.startsAt} is not null and ${at} < ${c.startsAt} then 'scheduled'
    when ${c.endsAt} is not null and ${at} >= ${c.endsAt} then 'ended'
    when (${c.pointsBudget} is not null and ${totals.points} >= ${c.pointsBudget})
      or (${c.limitUses} is not null and ${totals.uses} >= ${c.limitUses}) then 'exhausted'
    else 'running' end)`;
}

/** Points the budget has left: never negative (a budget lowered below what was given is 0), null without a budget. */
export function budgetLeft(row: Pick<CampaignStatusFacts, 'pointsBudget' | 'pointsAwarded'>): number | null {
  return row.pointsBudget === null ? null : Math.max(row.pointsBudget - row.pointsAwarded, 0);
}
