CREATE TABLE "qr_card_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"scan_code_hash" text NOT NULL,
	"partner_id" integer NOT NULL,
	"shop_id" integer,
	"device_name" text,
	"status" text DEFAULT 'pending' NOT NULL,
	"card_id" integer,
	"seq" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"scanned_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "qr_login_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"scan_code_hash" text NOT NULL,
	"partner_id" integer NOT NULL,
	"shop_id" integer,
	"device_name" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"customer_id" integer,
	"seq" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"scanned_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	"token_issued_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "qr_card_sessions" ADD CONSTRAINT "qr_card_sessions_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "qr_card_sessions" ADD CONSTRAINT "qr_card_sessions_shop_id_shops_id_fk" FOREIGN KEY ("shop_id") REFERENCES "public"."shops"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "qr_card_sessions" ADD CONSTRAINT "qr_card_sessions_card_id_loyalty_cards_id_fk" FOREIGN KEY ("card_id") REFERENCES "public"."loyalty_cards"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "qr_login_sessions" ADD CONSTRAINT "qr_login_sessions_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "qr_login_sessions" ADD CONSTRAINT "qr_login_sessions_shop_id_shops_id_fk" FOREIGN KEY ("shop_id") REFERENCES "public"."shops"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "qr_login_sessions" ADD CONSTRAINT "qr_login_sessions_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "qr_card_sessions_scan_code_key" ON "qr_card_sessions" USING btree ("scan_code_hash");--> statement-breakpoint
CREATE INDEX "qr_card_sessions_open_idx" ON "qr_card_sessions" USING btree ("expires_at") WHERE "qr_card_sessions"."status" = 'pending';--> statement-breakpoint
CREATE UNIQUE INDEX "qr_login_sessions_scan_code_key" ON "qr_login_sessions" USING btree ("scan_code_hash");--> statement-breakpoint
CREATE INDEX "qr_login_sessions_open_idx" ON "qr_login_sessions" USING btree ("expires_at") WHERE "qr_login_sessions"."status" in ('pending', 'scanned');