CREATE TABLE "points_debt_entries" (
	"transaction_id" integer PRIMARY KEY NOT NULL,
	"card_id" integer NOT NULL,
	"points" integer NOT NULL,
	CONSTRAINT "points_debt_entries_non_zero" CHECK ("points_debt_entries"."points" <> 0)
);
--> statement-breakpoint
CREATE TABLE "points_transaction_lines" (
	"transaction_id" integer NOT NULL,
	"position" integer NOT NULL,
	"line_id" text NOT NULL,
	"product_id" integer,
	"sku" text,
	"ean" text,
	"name" text,
	"quantity" numeric(14, 3) NOT NULL,
	"amount" numeric(14, 4) NOT NULL,
	"points" integer NOT NULL,
	"returned_quantity" numeric(14, 3) DEFAULT '0' NOT NULL,
	CONSTRAINT "points_transaction_lines_transaction_id_position_pk" PRIMARY KEY("transaction_id","position"),
	CONSTRAINT "points_transaction_lines_returned" CHECK ("points_transaction_lines"."returned_quantity" >= 0 and "points_transaction_lines"."returned_quantity" <= "points_transaction_lines"."quantity")
);
--> statement-breakpoint
CREATE TABLE "points_transaction_sources" (
	"transaction_id" integer NOT NULL,
	"position" integer NOT NULL,
	"source" text NOT NULL,
	"campaign_id" integer DEFAULT 0 NOT NULL,
	"ordinal" integer NOT NULL,
	"points" integer NOT NULL,
	"returned_points" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "points_transaction_sources_transaction_id_position_source_campaign_id_pk" PRIMARY KEY("transaction_id","position","source","campaign_id"),
	CONSTRAINT "points_transaction_sources_source" CHECK ("points_transaction_sources"."source" in ('base', 'tier', 'campaign')),
	CONSTRAINT "points_transaction_sources_returned" CHECK ("points_transaction_sources"."returned_points" >= 0 and "points_transaction_sources"."returned_points" <= "points_transaction_sources"."points")
);
--> statement-breakpoint
CREATE TABLE "campaign_card_uses" (
	"campaign_id" integer NOT NULL,
	"card_id" integer NOT NULL,
	"day" date NOT NULL,
	"uses" integer NOT NULL,
	CONSTRAINT "campaign_card_uses_campaign_id_card_id_day_pk" PRIMARY KEY("campaign_id","card_id","day"),
	CONSTRAINT "campaign_card_uses_positive" CHECK ("campaign_card_uses"."uses" > 0)
);
--> statement-breakpoint
CREATE TABLE "campaign_counters" (
	"campaign_id" integer NOT NULL,
	"shard" smallint NOT NULL,
	"uses" integer DEFAULT 0 NOT NULL,
	"points" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "campaign_counters_campaign_id_shard_pk" PRIMARY KEY("campaign_id","shard")
);
--> statement-breakpoint
CREATE TABLE "campaigns" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "campaigns_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"partner_id" integer NOT NULL,
	"partner_card_id" integer NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"is_active" boolean DEFAULT true NOT NULL,
	"starts_at" timestamp with time zone,
	"ends_at" timestamp with time zone,
	"days_of_week" smallint[] DEFAULT '{}'::smallint[] NOT NULL,
	"from_time" text,
	"to_time" text,
	"time_zone" text DEFAULT 'Europe/Vilnius' NOT NULL,
	"shop_ids" integer[] DEFAULT '{}'::integer[] NOT NULL,
	"tier_ids" integer[] DEFAULT '{}'::integer[] NOT NULL,
	"min_amount" numeric(14, 4),
	"product_ids" integer[] DEFAULT '{}'::integer[] NOT NULL,
	"category_ids" integer[] DEFAULT '{}'::integer[] NOT NULL,
	"skus" text[] DEFAULT '{}'::text[] NOT NULL,
	"first_purchase_only" boolean DEFAULT false NOT NULL,
	"effect_type" text NOT NULL,
	"effect_value" numeric(14, 2) NOT NULL,
	"priority" integer DEFAULT 0 NOT NULL,
	"exclusive" boolean DEFAULT false NOT NULL,
	"limit_per_customer" integer,
	"limit_per_customer_per_day" integer,
	"limit_uses" integer,
	"points_budget" integer,
	"uses_count" integer DEFAULT 0 NOT NULL,
	"points_awarded" integer DEFAULT 0 NOT NULL,
	"deleted_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "campaigns_effect_type" CHECK ("campaigns"."effect_type" in ('multiplier', 'bonus', 'per_currency', 'per_item')),
	CONSTRAINT "campaigns_counters" CHECK ("campaigns"."uses_count" >= 0 and "campaigns"."points_awarded" >= 0),
	CONSTRAINT "campaigns_window" CHECK ("campaigns"."ends_at" is null or "campaigns"."starts_at" is null or "campaigns"."ends_at" > "campaigns"."starts_at")
);
--> statement-breakpoint
ALTER TABLE "points_transactions" DROP CONSTRAINT "points_transactions_type";--> statement-breakpoint
ALTER TABLE "loyalty_cards" ADD COLUMN "points_debt" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "points_transactions" ADD COLUMN "returns_id" integer;--> statement-breakpoint
ALTER TABLE "points_debt_entries" ADD CONSTRAINT "points_debt_entries_transaction_id_points_transactions_id_fk" FOREIGN KEY ("transaction_id") REFERENCES "public"."points_transactions"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "points_debt_entries" ADD CONSTRAINT "points_debt_entries_card_id_loyalty_cards_id_fk" FOREIGN KEY ("card_id") REFERENCES "public"."loyalty_cards"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "points_transaction_lines" ADD CONSTRAINT "points_transaction_lines_transaction_id_points_transactions_id_fk" FOREIGN KEY ("transaction_id") REFERENCES "public"."points_transactions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "points_transaction_sources" ADD CONSTRAINT "points_transaction_sources_transaction_id_points_transactions_id_fk" FOREIGN KEY ("transaction_id") REFERENCES "public"."points_transactions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaign_card_uses" ADD CONSTRAINT "campaign_card_uses_campaign_id_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."campaigns"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaign_card_uses" ADD CONSTRAINT "campaign_card_uses_card_id_loyalty_cards_id_fk" FOREIGN KEY ("card_id") REFERENCES "public"."loyalty_cards"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaign_counters" ADD CONSTRAINT "campaign_counters_campaign_id_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."campaigns"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_partner_card_id_partner_cards_id_fk" FOREIGN KEY ("partner_card_id") REFERENCES "public"."partner_cards"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "points_debt_entries_card_idx" ON "points_debt_entries" USING btree ("card_id");--> statement-breakpoint
CREATE UNIQUE INDEX "points_transaction_lines_line_key" ON "points_transaction_lines" USING btree ("transaction_id","line_id");--> statement-breakpoint
CREATE INDEX "points_transaction_sources_campaign_idx" ON "points_transaction_sources" USING btree ("campaign_id") WHERE "points_transaction_sources"."campaign_id" <> 0;--> statement-breakpoint
CREATE INDEX "campaigns_partner_idx" ON "campaigns" USING btree ("partner_id","id");--> statement-breakpoint
CREATE INDEX "campaigns_programme_live_idx" ON "campaigns" USING btree ("partner_card_id") WHERE "campaigns"."deleted_at" is null and "campaigns"."is_active";--> statement-breakpoint
ALTER TABLE "points_transactions" ADD CONSTRAINT "points_transactions_returns_id_points_transactions_id_fk" FOREIGN KEY ("returns_id") REFERENCES "public"."points_transactions"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "points_transactions_returns_idx" ON "points_transactions" USING btree ("returns_id") WHERE "points_transactions"."returns_id" is not null;--> statement-breakpoint
CREATE INDEX "catalog_products_sku_idx" ON "catalog_products" USING btree ("partner_id","sku") WHERE "catalog_products"."sku" is not null;--> statement-breakpoint
CREATE INDEX "catalog_products_ean_idx" ON "catalog_products" USING btree ("partner_id","ean") WHERE "catalog_products"."ean" is not null;--> statement-breakpoint
ALTER TABLE "loyalty_cards" ADD CONSTRAINT "loyalty_cards_debt_non_negative" CHECK ("loyalty_cards"."points_debt" >= 0);--> statement-breakpoint
ALTER TABLE "points_transactions" ADD CONSTRAINT "points_transactions_type" CHECK ("points_transactions"."type" in ('purchase', 'deduct', 'adjust', 'bonus', 'expire', 'reversal', 'redeem', 'game', 'return'));