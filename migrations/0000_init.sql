CREATE TABLE "idempotency_keys" (
	"scope" text NOT NULL,
	"key" text NOT NULL,
	"request_hash" text NOT NULL,
	"response_status" integer NOT NULL,
	"response_body" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "idempotency_keys_scope_key_pk" PRIMARY KEY("scope","key")
);
--> statement-breakpoint
CREATE TABLE "system_settings" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "admins" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "admins_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"email" text NOT NULL,
	"name" text NOT NULL,
	"password_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "partners" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "partners_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"name" text NOT NULL,
	"email" text NOT NULL,
	"password_hash" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"rate_limit_per_hour" integer,
	"rate_limit_per_minute" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "api_keys_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"partner_id" integer NOT NULL,
	"name" text NOT NULL,
	"key" text NOT NULL,
	"secret_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "shops" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "shops_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"partner_id" integer NOT NULL,
	"name" text NOT NULL,
	"address" text,
	"city" text,
	"lat" numeric(9, 6),
	"lng" numeric(9, 6),
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "partner_card_shops" (
	"card_id" integer NOT NULL,
	"shop_id" integer NOT NULL,
	CONSTRAINT "partner_card_shops_card_id_shop_id_pk" PRIMARY KEY("card_id","shop_id")
);
--> statement-breakpoint
CREATE TABLE "partner_cards" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "partner_cards_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"partner_id" integer NOT NULL,
	"title" jsonb NOT NULL,
	"description" jsonb NOT NULL,
	"terms_conditions" jsonb NOT NULL,
	"card_design" jsonb NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"auto_assign" boolean DEFAULT true NOT NULL,
	"points_enabled" boolean DEFAULT true NOT NULL,
	"initial_bonus_points" integer DEFAULT 0 NOT NULL,
	"points_expiration_days" integer,
	"points_per_currency" numeric(14, 4) DEFAULT '1' NOT NULL,
	"currency_amount" numeric(14, 4) DEFAULT '1' NOT NULL,
	"round_points_up" boolean DEFAULT false NOT NULL,
	"min_points_per_purchase" integer DEFAULT 0 NOT NULL,
	"max_points_per_purchase" integer,
	"points_per_visit" integer DEFAULT 0 NOT NULL,
	"points_redemption_enabled" boolean DEFAULT false NOT NULL,
	"points_per_currency_redemption" numeric(14, 4) DEFAULT '100' NOT NULL,
	"currency_amount_redemption" numeric(14, 4) DEFAULT '1' NOT NULL,
	"min_points_for_redemption" integer DEFAULT 0 NOT NULL,
	"max_points_per_redemption" integer,
	"default_coupon_validity_days" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sms_accounts" (
	"partner_id" integer PRIMARY KEY NOT NULL,
	"balance" numeric(14, 4) DEFAULT '0' NOT NULL,
	"currency" text DEFAULT 'EUR' NOT NULL,
	"transliterate" boolean DEFAULT false NOT NULL,
	"prices" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sms_accounts_balance_non_negative" CHECK ("sms_accounts"."balance" >= 0)
);
--> statement-breakpoint
CREATE TABLE "sms_senders" (
	"partner_id" integer NOT NULL,
	"name" text NOT NULL,
	"approved_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sms_senders_partner_id_name_pk" PRIMARY KEY("partner_id","name")
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shops" ADD CONSTRAINT "shops_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "partner_card_shops" ADD CONSTRAINT "partner_card_shops_card_id_partner_cards_id_fk" FOREIGN KEY ("card_id") REFERENCES "public"."partner_cards"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "partner_card_shops" ADD CONSTRAINT "partner_card_shops_shop_id_shops_id_fk" FOREIGN KEY ("shop_id") REFERENCES "public"."shops"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "partner_cards" ADD CONSTRAINT "partner_cards_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sms_accounts" ADD CONSTRAINT "sms_accounts_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sms_senders" ADD CONSTRAINT "sms_senders_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "admins_email_key" ON "admins" USING btree ("email");--> statement-breakpoint
CREATE UNIQUE INDEX "partners_email_key" ON "partners" USING btree ("email");--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_key_key" ON "api_keys" USING btree ("key");--> statement-breakpoint
CREATE INDEX "api_keys_partner_idx" ON "api_keys" USING btree ("partner_id");--> statement-breakpoint
CREATE INDEX "shops_partner_idx" ON "shops" USING btree ("partner_id","id");--> statement-breakpoint
CREATE INDEX "partner_card_shops_shop_idx" ON "partner_card_shops" USING btree ("shop_id");--> statement-breakpoint
CREATE INDEX "partner_cards_partner_idx" ON "partner_cards" USING btree ("partner_id","id");