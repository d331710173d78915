-- Budgets and uses without a hot row (issue 31, DESIGN.md §12): what is left of a limited
-- campaign's limit_uses / points_budget, split over 16 rows that awards take from side by side
-- (src/modules/campaigns/campaigns.tables.ts). Campaigns limited before this migration get their
-- rows from their first award (it finds none, locks the campaign and spreads what is left).
CREATE TABLE "campaign_limit_shards" (
	"campaign_id" integer NOT NULL,
	"shard" smallint NOT NULL,
	"uses_left" bigint,
	"points_left" bigint,
	CONSTRAINT "campaign_limit_shards_campaign_id_shard_pk" PRIMARY KEY("campaign_id","shard"),
	CONSTRAINT "campaign_limit_shards_left" CHECK ("campaign_limit_shards"."uses_left" >= 0 and "campaign_limit_shards"."points_left" >= 0)
);
--> statement-breakpoint
ALTER TABLE "campaign_limit_shards" ADD CONSTRAINT "campaign_limit_shards_campaign_id_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."campaigns"("id") ON DELETE cascade ON UPDATE no action;
