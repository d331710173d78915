CREATE TABLE "card_tier_history" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "card_tier_history_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"card_id" integer NOT NULL,
	"from_tier_id" integer,
	"from_name" jsonb,
	"to_tier_id" integer,
	"to_name" jsonb,
	"reason" text NOT NULL,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tiers" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "tiers_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"partner_id" integer NOT NULL,
	"partner_card_id" integer NOT NULL,
	"name" jsonb NOT NULL,
	"threshold" integer NOT NULL,
	"earn_multiplier" numeric(4, 2) DEFAULT '1' NOT NULL,
	"benefits" jsonb,
	"color" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "tiers_threshold_non_negative" CHECK ("tiers"."threshold" >= 0),
	CONSTRAINT "tiers_multiplier_range" CHECK ("tiers"."earn_multiplier" >= 1 and "tiers"."earn_multiplier" <= 10)
);
--> statement-breakpoint
ALTER TABLE "partner_cards" ADD COLUMN "tier_basis" text DEFAULT 'points_earned' NOT NULL;--> statement-breakpoint
ALTER TABLE "partner_cards" ADD COLUMN "tier_window" text DEFAULT 'rolling_12_months' NOT NULL;--> statement-breakpoint
ALTER TABLE "partner_cards" ADD COLUMN "tier_downgrade" text DEFAULT 'end_of_window' NOT NULL;--> statement-breakpoint
ALTER TABLE "partner_cards" ADD COLUMN "tier_time_zone" text DEFAULT 'Europe/Vilnius' NOT NULL;--> statement-breakpoint
ALTER TABLE "partner_cards" ADD COLUMN "tiers_version" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "partner_cards" ADD COLUMN "tiers_evaluated_version" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "loyalty_cards" ADD COLUMN "tier_id" integer;--> statement-breakpoint
ALTER TABLE "loyalty_cards" ADD COLUMN "tier_value" numeric(18, 4) DEFAULT '0' NOT NULL;--> statement-breakpoint
ALTER TABLE "loyalty_cards" ADD COLUMN "tier_value_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "loyalty_cards" ADD COLUMN "tier_reached_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "loyalty_cards" ADD COLUMN "tier_keep_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "loyalty_cards" ADD COLUMN "tier_version" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "card_tier_history" ADD CONSTRAINT "card_tier_history_card_id_loyalty_cards_id_fk" FOREIGN KEY ("card_id") REFERENCES "public"."loyalty_cards"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "card_tier_history" ADD CONSTRAINT "card_tier_history_from_tier_id_tiers_id_fk" FOREIGN KEY ("from_tier_id") REFERENCES "public"."tiers"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "card_tier_history" ADD CONSTRAINT "card_tier_history_to_tier_id_tiers_id_fk" FOREIGN KEY ("to_tier_id") REFERENCES "public"."tiers"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tiers" ADD CONSTRAINT "tiers_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tiers" ADD CONSTRAINT "tiers_partner_card_id_partner_cards_id_fk" FOREIGN KEY ("partner_card_id") REFERENCES "public"."partner_cards"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "card_tier_history_card_idx" ON "card_tier_history" USING btree ("card_id","at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "tiers_programme_threshold_key" ON "tiers" USING btree ("partner_card_id","threshold");--> statement-breakpoint
CREATE INDEX "loyalty_cards_tier_value_until_idx" ON "loyalty_cards" USING btree ("tier_value_until") WHERE "loyalty_cards"."tier_value_until" is not null;--> statement-breakpoint
CREATE INDEX "loyalty_cards_tier_keep_until_idx" ON "loyalty_cards" USING btree ("tier_keep_until") WHERE "loyalty_cards"."tier_keep_until" is not null;--> statement-breakpoint
CREATE INDEX "loyalty_cards_programme_tier_idx" ON "loyalty_cards" USING btree ("partner_card_id","tier_version");--> statement-breakpoint
-- Cards from before tiers: their qualifying value is not known yet. Marking it due now lets
-- the tier sweep count it from the ledger, card by card, in the background (src/modules/tiers).
UPDATE "loyalty_cards" SET "tier_value_until" = now();
