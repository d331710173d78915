CREATE TABLE "games" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "games_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"partner_id" integer NOT NULL,
	"partner_card_id" integer,
	"type" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"is_active" boolean DEFAULT true NOT NULL,
	"starts_at" timestamp with time zone,
	"ends_at" timestamp with time zone,
	"coupon_validity_days" integer,
	"plays_per_customer_per_day" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "games_window" CHECK ("games"."ends_at" is null or "games"."starts_at" is null or "games"."ends_at" > "games"."starts_at")
);
--> statement-breakpoint
CREATE TABLE "games_rewards" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "games_rewards_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"game_id" integer NOT NULL,
	"position" integer NOT NULL,
	"label" text NOT NULL,
	"probability" numeric(5, 4) NOT NULL,
	"reward_type" text NOT NULL,
	"points" integer,
	"coupon" jsonb,
	"retired_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "games_rewards_probability" CHECK ("games_rewards"."probability" > 0 and "games_rewards"."probability" <= 1)
);
--> statement-breakpoint
ALTER TABLE "partner_cards" ADD COLUMN "deleted_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "games" ADD CONSTRAINT "games_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "games" ADD CONSTRAINT "games_partner_card_id_partner_cards_id_fk" FOREIGN KEY ("partner_card_id") REFERENCES "public"."partner_cards"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "games_rewards" ADD CONSTRAINT "games_rewards_game_id_games_id_fk" FOREIGN KEY ("game_id") REFERENCES "public"."games"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "games_partner_idx" ON "games" USING btree ("partner_id","id");--> statement-breakpoint
CREATE INDEX "games_rewards_game_idx" ON "games_rewards" USING btree ("game_id","position");