-- 64-bit campaign counters (issue 30 item 3, DESIGN.md §12): counters that only grow must
-- never fail an award, a view or `ledger verify` because they passed 2^31. An unlimited
-- bonus campaign's points_awarded (row plus shards) overflowed int4 after ~216 awards of
-- 9,999,990 points. (A card's qualifying value, loyalty_cards.tier_value, is numeric(18,4)
-- already.) Limits (points_budget, uses, per-customer) stay int4: they are at most 2e9.
ALTER TABLE "campaigns" ALTER COLUMN "uses_count" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "campaigns" ALTER COLUMN "points_awarded" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "campaign_counters" ALTER COLUMN "uses" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "campaign_counters" ALTER COLUMN "points" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "campaign_card_uses" ALTER COLUMN "uses" SET DATA TYPE bigint;
