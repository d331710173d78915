CREATE TABLE "offers" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "offers_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"partner_id" integer NOT NULL,
	"partner_card_id" integer,
	"title" text NOT NULL,
	"description" text,
	"discount_type" text NOT NULL,
	"discount_value" numeric(14, 4),
	"reward_type" text DEFAULT 'coupon' NOT NULL,
	"reward_details" text,
	"points_cost" integer DEFAULT 0 NOT NULL,
	"starts_at" timestamp with time zone,
	"ends_at" timestamp with time zone,
	"is_active" boolean DEFAULT true NOT NULL,
	"featured" boolean DEFAULT false NOT NULL,
	"shop_ids" integer[] DEFAULT '{}'::integer[] NOT NULL,
	"product_ids" integer[] DEFAULT '{}'::integer[] NOT NULL,
	"category_ids" integer[] DEFAULT '{}'::integer[] NOT NULL,
	"max_claims" integer,
	"max_claims_per_customer" integer DEFAULT 1 NOT NULL,
	"claims_count" integer DEFAULT 0 NOT NULL,
	"coupon_validity_days" integer,
	"source" text DEFAULT 'api' NOT NULL,
	"deleted_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "offers_discount_type" CHECK ("offers"."discount_type" in ('percent', 'fixed', 'price', 'gift')),
	CONSTRAINT "offers_reward_type" CHECK ("offers"."reward_type" in ('coupon')),
	CONSTRAINT "offers_source" CHECK ("offers"."source" in ('api', 'import')),
	CONSTRAINT "offers_points_cost" CHECK ("offers"."points_cost" >= 0),
	CONSTRAINT "offers_claims" CHECK ("offers"."claims_count" >= 0 and ("offers"."max_claims" is null or "offers"."max_claims" >= 1) and "offers"."max_claims_per_customer" >= 1),
	CONSTRAINT "offers_window" CHECK ("offers"."ends_at" is null or "offers"."starts_at" is null or "offers"."ends_at" > "offers"."starts_at")
);
--> statement-breakpoint
CREATE TABLE "coupon_events" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "coupon_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"coupon_id" integer NOT NULL,
	"event" text NOT NULL,
	"shop_id" integer,
	"receipt_number" text,
	"amount" numeric(14, 4),
	"reason" text,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "coupon_events_event" CHECK ("coupon_events"."event" in ('issued', 'verified', 'released', 'redeemed', 'rolled_back'))
);
--> statement-breakpoint
CREATE TABLE "coupons" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "coupons_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"partner_id" integer NOT NULL,
	"customer_id" integer NOT NULL,
	"card_id" integer NOT NULL,
	"code" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"offer_id" integer,
	"game_id" integer,
	"terms" jsonb,
	"game" jsonb,
	"shop_ids" integer[] DEFAULT '{}'::integer[] NOT NULL,
	"product_ids" integer[] DEFAULT '{}'::integer[] NOT NULL,
	"category_ids" integer[] DEFAULT '{}'::integer[] NOT NULL,
	"expires_at" timestamp with time zone,
	"pending_shop_id" integer,
	"pending_until" timestamp with time zone,
	"used_at" timestamp with time zone,
	"used_shop_id" integer,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "coupons_status" CHECK ("coupons"."status" in ('active', 'pending', 'used', 'expired')),
	CONSTRAINT "coupons_used" CHECK (("coupons"."status" = 'used') = ("coupons"."used_at" is not null)),
	CONSTRAINT "coupons_source" CHECK (("coupons"."offer_id" is not null and "coupons"."terms" is not null) or ("coupons"."game_id" is not null and "coupons"."game" is not null))
);
--> statement-breakpoint
CREATE TABLE "game_daily_plays" (
	"game_id" integer NOT NULL,
	"customer_id" integer NOT NULL,
	"day" date NOT NULL,
	"plays" integer NOT NULL,
	CONSTRAINT "game_daily_plays_game_id_customer_id_day_pk" PRIMARY KEY("game_id","customer_id","day"),
	CONSTRAINT "game_daily_plays_positive" CHECK ("game_daily_plays"."plays" >= 1)
);
--> statement-breakpoint
CREATE TABLE "game_sessions" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "game_sessions_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"session_key" text NOT NULL,
	"partner_id" integer NOT NULL,
	"game_id" integer NOT NULL,
	"customer_id" integer NOT NULL,
	"card_id" integer NOT NULL,
	"reward_id" integer NOT NULL,
	"status" text DEFAULT 'started' NOT NULL,
	"progress" integer DEFAULT 0 NOT NULL,
	"transaction_id" integer,
	"coupon_id" integer,
	"started_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone,
	"claimed_at" timestamp with time zone,
	CONSTRAINT "game_sessions_status" CHECK ("game_sessions"."status" in ('started', 'in_progress', 'finished', 'claimed', 'expired')),
	CONSTRAINT "game_sessions_progress" CHECK ("game_sessions"."progress" between 0 and 100)
);
--> statement-breakpoint
ALTER TABLE "offers" ADD CONSTRAINT "offers_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "offers" ADD CONSTRAINT "offers_partner_card_id_partner_cards_id_fk" FOREIGN KEY ("partner_card_id") REFERENCES "public"."partner_cards"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "coupon_events" ADD CONSTRAINT "coupon_events_coupon_id_coupons_id_fk" FOREIGN KEY ("coupon_id") REFERENCES "public"."coupons"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "coupon_events" ADD CONSTRAINT "coupon_events_shop_id_shops_id_fk" FOREIGN KEY ("shop_id") REFERENCES "public"."shops"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "coupons" ADD CONSTRAINT "coupons_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "coupons" ADD CONSTRAINT "coupons_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "coupons" ADD CONSTRAINT "coupons_card_id_loyalty_cards_id_fk" FOREIGN KEY ("card_id") REFERENCES "public"."loyalty_cards"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "coupons" ADD CONSTRAINT "coupons_offer_id_offers_id_fk" FOREIGN KEY ("offer_id") REFERENCES "public"."offers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "coupons" ADD CONSTRAINT "coupons_game_id_games_id_fk" FOREIGN KEY ("game_id") REFERENCES "public"."games"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "coupons" ADD CONSTRAINT "coupons_pending_shop_id_shops_id_fk" FOREIGN KEY ("pending_shop_id") REFERENCES "public"."shops"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "coupons" ADD CONSTRAINT "coupons_used_shop_id_shops_id_fk" FOREIGN KEY ("used_shop_id") REFERENCES "public"."shops"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "game_daily_plays" ADD CONSTRAINT "game_daily_plays_game_id_games_id_fk" FOREIGN KEY ("game_id") REFERENCES "public"."games"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "game_daily_plays" ADD CONSTRAINT "game_daily_plays_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "game_sessions" ADD CONSTRAINT "game_sessions_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "game_sessions" ADD CONSTRAINT "game_sessions_game_id_games_id_fk" FOREIGN KEY ("game_id") REFERENCES "public"."games"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "game_sessions" ADD CONSTRAINT "game_sessions_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "game_sessions" ADD CONSTRAINT "game_sessions_card_id_loyalty_cards_id_fk" FOREIGN KEY ("card_id") REFERENCES "public"."loyalty_cards"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "game_sessions" ADD CONSTRAINT "game_sessions_reward_id_games_rewards_id_fk" FOREIGN KEY ("reward_id") REFERENCES "public"."games_rewards"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "game_sessions" ADD CONSTRAINT "game_sessions_transaction_id_points_transactions_id_fk" FOREIGN KEY ("transaction_id") REFERENCES "public"."points_transactions"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "game_sessions" ADD CONSTRAINT "game_sessions_coupon_id_coupons_id_fk" FOREIGN KEY ("coupon_id") REFERENCES "public"."coupons"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "offers_partner_idx" ON "offers" USING btree ("partner_id","id");--> statement-breakpoint
CREATE INDEX "coupon_events_coupon_idx" ON "coupon_events" USING btree ("coupon_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "coupons_code_key" ON "coupons" USING btree ("code");--> statement-breakpoint
CREATE INDEX "coupons_partner_idx" ON "coupons" USING btree ("partner_id","id");--> statement-breakpoint
CREATE INDEX "coupons_customer_idx" ON "coupons" USING btree ("customer_id","id");--> statement-breakpoint
CREATE INDEX "coupons_card_idx" ON "coupons" USING btree ("card_id");--> statement-breakpoint
CREATE INDEX "coupons_offer_customer_idx" ON "coupons" USING btree ("offer_id","customer_id") WHERE "coupons"."offer_id" is not null;--> statement-breakpoint
CREATE INDEX "coupons_game_idx" ON "coupons" USING btree ("game_id") WHERE "coupons"."game_id" is not null;--> statement-breakpoint
CREATE INDEX "coupons_used_shop_idx" ON "coupons" USING btree ("used_shop_id","used_at") WHERE "coupons"."used_at" is not null;--> statement-breakpoint
CREATE INDEX "coupons_partner_used_idx" ON "coupons" USING btree ("partner_id","used_at") WHERE "coupons"."used_at" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "game_sessions_key" ON "game_sessions" USING btree ("session_key");--> statement-breakpoint
CREATE INDEX "game_sessions_customer_idx" ON "game_sessions" USING btree ("customer_id","id");--> statement-breakpoint
CREATE INDEX "game_sessions_game_idx" ON "game_sessions" USING btree ("game_id","id");--> statement-breakpoint
CREATE INDEX "game_sessions_open_idx" ON "game_sessions" USING btree ("expires_at") WHERE "game_sessions"."status" in ('started', 'in_progress', 'finished');--> statement-breakpoint
ALTER TABLE "points_transactions" ADD CONSTRAINT "points_transactions_type" CHECK ("points_transactions"."type" in ('purchase', 'deduct', 'adjust', 'bonus', 'expire', 'reversal', 'redeem', 'game'));