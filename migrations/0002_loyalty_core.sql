CREATE TABLE "customers" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "customers_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"phone" text NOT NULL,
	"name" text,
	"email" text,
	"birth_date" date,
	"language" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "otp_challenges" (
	"phone" text PRIMARY KEY NOT NULL,
	"code_hash" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"sent_at" timestamp with time zone NOT NULL,
	"window_started_at" timestamp with time zone NOT NULL,
	"sends_in_window" integer DEFAULT 1 NOT NULL,
	"consumed_at" timestamp with time zone,
	CONSTRAINT "otp_attempts_non_negative" CHECK ("otp_challenges"."attempts" >= 0)
);
--> statement-breakpoint
CREATE TABLE "loyalty_cards" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "loyalty_cards_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"partner_id" integer NOT NULL,
	"partner_card_id" integer NOT NULL,
	"customer_id" integer NOT NULL,
	"card_number" text NOT NULL,
	"source" text DEFAULT 'issued' NOT NULL,
	"points_balance" integer DEFAULT 0 NOT NULL,
	"next_expiry_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "loyalty_cards_balance_non_negative" CHECK ("loyalty_cards"."points_balance" >= 0)
);
--> statement-breakpoint
CREATE TABLE "points_lot_draws" (
	"transaction_id" integer NOT NULL,
	"lot_id" integer NOT NULL,
	"points" integer NOT NULL,
	CONSTRAINT "points_lot_draws_transaction_id_lot_id_pk" PRIMARY KEY("transaction_id","lot_id"),
	CONSTRAINT "points_lot_draws_non_zero" CHECK ("points_lot_draws"."points" <> 0)
);
--> statement-breakpoint
CREATE TABLE "points_lots" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "points_lots_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"card_id" integer NOT NULL,
	"transaction_id" integer NOT NULL,
	"points" integer NOT NULL,
	"remaining" integer NOT NULL,
	"expires_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "points_lots_points_positive" CHECK ("points_lots"."points" > 0),
	CONSTRAINT "points_lots_remaining_in_range" CHECK ("points_lots"."remaining" >= 0 and "points_lots"."remaining" <= "points_lots"."points")
);
--> statement-breakpoint
CREATE TABLE "points_transactions" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "points_transactions_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"partner_id" integer NOT NULL,
	"card_id" integer NOT NULL,
	"customer_id" integer NOT NULL,
	"shop_id" integer,
	"type" text NOT NULL,
	"points" integer NOT NULL,
	"amount" numeric(14, 4),
	"balance_after" integer NOT NULL,
	"receipt_number" text,
	"reason" text,
	"reverses_id" integer,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "points_transactions_balance_non_negative" CHECK ("points_transactions"."balance_after" >= 0)
);
--> statement-breakpoint
ALTER TABLE "sms_messages" ALTER COLUMN "partner_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "loyalty_cards" ADD CONSTRAINT "loyalty_cards_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "loyalty_cards" ADD CONSTRAINT "loyalty_cards_partner_card_id_partner_cards_id_fk" FOREIGN KEY ("partner_card_id") REFERENCES "public"."partner_cards"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "loyalty_cards" ADD CONSTRAINT "loyalty_cards_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "points_lot_draws" ADD CONSTRAINT "points_lot_draws_transaction_id_points_transactions_id_fk" FOREIGN KEY ("transaction_id") REFERENCES "public"."points_transactions"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "points_lot_draws" ADD CONSTRAINT "points_lot_draws_lot_id_points_lots_id_fk" FOREIGN KEY ("lot_id") REFERENCES "public"."points_lots"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "points_lots" ADD CONSTRAINT "points_lots_card_id_loyalty_cards_id_fk" FOREIGN KEY ("card_id") REFERENCES "public"."loyalty_cards"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "points_lots" ADD CONSTRAINT "points_lots_transaction_id_points_transactions_id_fk" FOREIGN KEY ("transaction_id") REFERENCES "public"."points_transactions"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "points_transactions" ADD CONSTRAINT "points_transactions_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "points_transactions" ADD CONSTRAINT "points_transactions_card_id_loyalty_cards_id_fk" FOREIGN KEY ("card_id") REFERENCES "public"."loyalty_cards"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "points_transactions" ADD CONSTRAINT "points_transactions_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "points_transactions" ADD CONSTRAINT "points_transactions_shop_id_shops_id_fk" FOREIGN KEY ("shop_id") REFERENCES "public"."shops"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "points_transactions" ADD CONSTRAINT "points_transactions_reverses_id_points_transactions_id_fk" FOREIGN KEY ("reverses_id") REFERENCES "public"."points_transactions"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "customers_phone_key" ON "customers" USING btree ("phone");--> statement-breakpoint
CREATE UNIQUE INDEX "loyalty_cards_programme_customer_key" ON "loyalty_cards" USING btree ("partner_card_id","customer_id");--> statement-breakpoint
CREATE UNIQUE INDEX "loyalty_cards_partner_number_key" ON "loyalty_cards" USING btree ("partner_id","card_number");--> statement-breakpoint
CREATE INDEX "loyalty_cards_partner_idx" ON "loyalty_cards" USING btree ("partner_id","id");--> statement-breakpoint
CREATE INDEX "loyalty_cards_customer_idx" ON "loyalty_cards" USING btree ("customer_id");--> statement-breakpoint
CREATE INDEX "loyalty_cards_expiry_idx" ON "loyalty_cards" USING btree ("next_expiry_at") WHERE "loyalty_cards"."next_expiry_at" is not null;--> statement-breakpoint
CREATE INDEX "points_lot_draws_lot_idx" ON "points_lot_draws" USING btree ("lot_id");--> statement-breakpoint
CREATE INDEX "points_lots_open_idx" ON "points_lots" USING btree ("card_id","expires_at","id") WHERE "points_lots"."remaining" > 0;--> statement-breakpoint
CREATE UNIQUE INDEX "points_lots_transaction_key" ON "points_lots" USING btree ("transaction_id");--> statement-breakpoint
CREATE INDEX "points_transactions_card_idx" ON "points_transactions" USING btree ("card_id","id");--> statement-breakpoint
CREATE INDEX "points_transactions_partner_idx" ON "points_transactions" USING btree ("partner_id","created_at");--> statement-breakpoint
CREATE INDEX "points_transactions_customer_idx" ON "points_transactions" USING btree ("customer_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "points_transactions_receipt_key" ON "points_transactions" USING btree ("shop_id","receipt_number") WHERE "points_transactions"."receipt_number" is not null and "points_transactions"."type" = 'purchase';--> statement-breakpoint
CREATE UNIQUE INDEX "points_transactions_reverses_key" ON "points_transactions" USING btree ("reverses_id") WHERE "points_transactions"."reverses_id" is not null;