// The engine's part of `loyalty ledger verify` (src/cli/ledger-verify.ts runs it after the
// ledger's checks, points/ledger-verify.ts): a campaign's counters agree with the points its
// purchases earned from it —
//   campaign.points_awarded = Σ (points − returned_points) of its sources rows, and uses_count
//   = the purchases with a row of it (both: the row's counter plus its shards');
//   a limited campaign's limit shards hold together never more than what its limit leaves
//   (limit − counters, at least 0), and nothing of a limit it does not have
import { sql } from 'drizzle-orm';
import { campaignTotalsSql } from '../campaigns/campaigns.tables.js';
import type { Check } from '../points/ledger-verify.js';

export type AwardCheck = 'campaign_points' | 'campaign_uses' | 'campaign_uses_left' | 'campaign_points_left';

const campaignTotals = campaignTotalsSql('c');

export const AWARD_CHECKS: Array<Check<AwardCheck>> = [
  {
    // A campaign's counters are its row's plus its shards' (campaigns.tables.ts).
    check: 'campaign_points',
    query: sql`select c.id as campaign_id, coalesce(s.total, 0)::bigint as expected, ${campaignTotals.points} as actual
      from campaigns c left join (
        select campaign_id, sum(points - returned_points) as total from points_transaction_sources where source = 'campaign' group by campaign_id
      ) s on s.campaign_id = c.id
      where ${campaignTotals.points} <> coalesce(s.total, 0)`,
  },
  {
    check: 'campaign_uses',
    query: sql`select c.id as campaign_id, coalesce(s.uses, 0)::bigint as expected, ${campaignTotals.uses} as actual
      from campaigns c left join (
        select campaign_id, count(distinct transaction_id) as uses from points_transaction_sources where source = 'campaign' group by campaign_id
      ) s on s.campaign_id = c.id
      where ${campaignTotals.uses} <> coalesce(s.uses, 0)`,
  },
  {
    // Limit shards (campaigns.tables.ts): expected is the most they may hold.
    check: 'campaign_uses_left',
    query: sql`select c.id as campaign_id, greatest(coalesce(c.limit_uses, 0) - ${campaignTotals.uses}, 0)::bigint as expected, k.total::bigint as actual
      from campaigns c join (select campaign_id, sum(uses_left) as total, count(uses_left) as set from campaign_limit_shards group by campaign_id) k on k.campaign_id = c.id
      where k.total > greatest(coalesce(c.limit_uses, 0) - ${campaignTotals.uses}, 0) or (c.limit_uses is null and k.set > 0)`,
  },
  {
    check: 'campaign_points_left',
    query: sql`select c.id as campaign_id, greatest(coalesce(c.points_budget, 0) - ${campaignTotals.points}, 0)::bigint as expected, k.total::bigint as actual
      from campaigns c join (select campaign_id, sum(points_left) as total, count(points_left) as set from campaign_limit_shards group by campaign_id) k on k.campaign_id = c.id
      where k.total > greatest(coalesce(c.points_budget, 0) - ${campaignTotals.points}, 0) or (c.points_budget is null and k.set > 0)`,
  },
];
