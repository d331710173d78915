CREATE TABLE "sms_account_ledger" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "sms_account_ledger_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"partner_id" integer NOT NULL,
	"kind" text NOT NULL,
	"amount" numeric(14, 4) NOT NULL,
	"balance_after" numeric(14, 4) NOT NULL,
	"message_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sms_carrier_receipts" (
	"carrier_message_id" text PRIMARY KEY NOT NULL,
	"state" text NOT NULL,
	"error" text,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"applied_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "sms_consent_history" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "sms_consent_history_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"partner_id" integer NOT NULL,
	"phone" text NOT NULL,
	"consent_given" boolean NOT NULL,
	"consent_source" text NOT NULL,
	"client_ip" text,
	"client_user_agent" text,
	"consent_page_url" text,
	"message_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sms_consents" (
	"partner_id" integer NOT NULL,
	"phone" text NOT NULL,
	"consent_given" boolean NOT NULL,
	"consent_source" text NOT NULL,
	"consent_date" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sms_consents_partner_id_phone_pk" PRIMARY KEY("partner_id","phone")
);
--> statement-breakpoint
CREATE TABLE "sms_message_parts" (
	"message_id" text NOT NULL,
	"part_no" integer NOT NULL,
	"carrier_message_id" text NOT NULL,
	"state" text DEFAULT 'sent' NOT NULL,
	"error" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sms_message_parts_message_id_part_no_pk" PRIMARY KEY("message_id","part_no")
);
--> statement-breakpoint
CREATE TABLE "sms_messages" (
	"id" text PRIMARY KEY NOT NULL,
	"partner_id" integer NOT NULL,
	"source" text NOT NULL,
	"destination" text NOT NULL,
	"country" text NOT NULL,
	"body" text NOT NULL,
	"encoding" text NOT NULL,
	"transliterated" boolean DEFAULT false NOT NULL,
	"parts" integer NOT NULL,
	"price_per_part" numeric(10, 4) NOT NULL,
	"cost" numeric(14, 4) NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"scheduled_at" timestamp with time zone,
	"validity_at" timestamp with time zone,
	"receipt" boolean DEFAULT false NOT NULL,
	"receipt_url" text,
	"marketing_consent" boolean DEFAULT false NOT NULL,
	"carrier" text NOT NULL,
	"submitting_at" timestamp with time zone,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"dispatch_attempts" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"sent_at" timestamp with time zone,
	"delivered_at" timestamp with time zone,
	"failed_at" timestamp with time zone,
	"expired_at" timestamp with time zone,
	"error_message" text,
	"refunded_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "sms_simulator_submissions" (
	"message_id" text PRIMARY KEY NOT NULL,
	"destination" text NOT NULL,
	"parts" integer NOT NULL,
	"submitted_at" timestamp with time zone DEFAULT now() NOT NULL,
	"outcome" text NOT NULL,
	"report_at" timestamp with time zone NOT NULL,
	"reported_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "sms_status_events" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "sms_status_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"message_id" text NOT NULL,
	"status" text NOT NULL,
	"detail" text,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_attempts" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "webhook_attempts_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"delivery_id" integer NOT NULL,
	"attempt_no" integer NOT NULL,
	"attempted_at" timestamp with time zone DEFAULT now() NOT NULL,
	"status_code" integer,
	"error" text,
	"duration_ms" integer
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "webhook_deliveries_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"event_id" text NOT NULL,
	"partner_id" integer NOT NULL,
	"event_type" text NOT NULL,
	"url" text NOT NULL,
	"body" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_attempt_at" timestamp with time zone,
	"last_status_code" integer,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"delivered_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "webhook_secrets" (
	"partner_id" integer PRIMARY KEY NOT NULL,
	"secret" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"rotated_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "sms_account_ledger" ADD CONSTRAINT "sms_account_ledger_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sms_consent_history" ADD CONSTRAINT "sms_consent_history_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sms_consents" ADD CONSTRAINT "sms_consents_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sms_message_parts" ADD CONSTRAINT "sms_message_parts_message_id_sms_messages_id_fk" FOREIGN KEY ("message_id") REFERENCES "public"."sms_messages"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sms_messages" ADD CONSTRAINT "sms_messages_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sms_status_events" ADD CONSTRAINT "sms_status_events_message_id_sms_messages_id_fk" FOREIGN KEY ("message_id") REFERENCES "public"."sms_messages"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_delivery_id_webhook_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."webhook_deliveries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_secrets" ADD CONSTRAINT "webhook_secrets_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sms_account_ledger_partner_idx" ON "sms_account_ledger" USING btree ("partner_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "sms_account_ledger_message_kind_key" ON "sms_account_ledger" USING btree ("message_id","kind") WHERE "sms_account_ledger"."message_id" is not null;--> statement-breakpoint
CREATE INDEX "sms_carrier_receipts_pending_idx" ON "sms_carrier_receipts" USING btree ("received_at") WHERE "sms_carrier_receipts"."applied_at" is null;--> statement-breakpoint
CREATE INDEX "sms_consent_history_phone_idx" ON "sms_consent_history" USING btree ("partner_id","phone","id");--> statement-breakpoint
CREATE UNIQUE INDEX "sms_message_parts_carrier_key" ON "sms_message_parts" USING btree ("carrier_message_id");--> statement-breakpoint
CREATE INDEX "sms_messages_partner_idx" ON "sms_messages" USING btree ("partner_id","created_at");--> statement-breakpoint
CREATE INDEX "sms_messages_queue_idx" ON "sms_messages" USING btree ("next_attempt_at") WHERE "sms_messages"."status" = 'queued';--> statement-breakpoint
CREATE INDEX "sms_messages_validity_idx" ON "sms_messages" USING btree ("validity_at") WHERE "sms_messages"."status" in ('queued', 'sent');--> statement-breakpoint
CREATE INDEX "sms_simulator_due_idx" ON "sms_simulator_submissions" USING btree ("report_at") WHERE "sms_simulator_submissions"."reported_at" is null;--> statement-breakpoint
CREATE INDEX "sms_status_events_message_idx" ON "sms_status_events" USING btree ("message_id","id");--> statement-breakpoint
CREATE INDEX "webhook_attempts_delivery_idx" ON "webhook_attempts" USING btree ("delivery_id","attempt_no");--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_event_key" ON "webhook_deliveries" USING btree ("event_id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("next_attempt_at") WHERE "webhook_deliveries"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_partner_idx" ON "webhook_deliveries" USING btree ("partner_id","id");