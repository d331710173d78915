CREATE TABLE "wallet_configs" (
	"partner_id" integer PRIMARY KEY NOT NULL,
	"apple_pass_type_identifier" text,
	"apple_team_identifier" text,
	"apple_certificate" text,
	"apple_wwdr_certificate" text,
	"apple_key_sealed" text,
	"apple_updated_at" timestamp with time zone,
	"google_issuer_id" text,
	"google_client_email" text,
	"google_service_account_sealed" text,
	"google_updated_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "wallet_google_objects" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "wallet_google_objects_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"partner_id" integer NOT NULL,
	"kind" text NOT NULL,
	"subject_id" integer NOT NULL,
	"object_id" text NOT NULL,
	"locale" text NOT NULL,
	"pushed_modified_at" timestamp with time zone NOT NULL,
	"last_push_at" timestamp with time zone,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"last_error" text
);
--> statement-breakpoint
CREATE TABLE "wallet_passes" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "wallet_passes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"partner_id" integer NOT NULL,
	"kind" text NOT NULL,
	"subject_id" integer NOT NULL,
	"pass_type_identifier" text NOT NULL,
	"serial_number" text NOT NULL,
	"token_hash" text NOT NULL,
	"locale" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "wallet_registrations" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "wallet_registrations_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"pass_id" integer NOT NULL,
	"device_library_identifier" text NOT NULL,
	"pass_type_identifier" text NOT NULL,
	"serial_number" text NOT NULL,
	"push_token" text NOT NULL,
	"pushed_modified_at" timestamp with time zone NOT NULL,
	"last_push_at" timestamp with time zone,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "wallet_configs" ADD CONSTRAINT "wallet_configs_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "wallet_google_objects" ADD CONSTRAINT "wallet_google_objects_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "wallet_passes" ADD CONSTRAINT "wallet_passes_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "wallet_registrations" ADD CONSTRAINT "wallet_registrations_pass_id_wallet_passes_id_fk" FOREIGN KEY ("pass_id") REFERENCES "public"."wallet_passes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "wallet_google_objects_subject_key" ON "wallet_google_objects" USING btree ("kind","subject_id");--> statement-breakpoint
CREATE INDEX "wallet_passes_serial_idx" ON "wallet_passes" USING btree ("pass_type_identifier","serial_number");--> statement-breakpoint
CREATE INDEX "wallet_passes_subject_idx" ON "wallet_passes" USING btree ("kind","subject_id");--> statement-breakpoint
CREATE UNIQUE INDEX "wallet_registrations_device_serial_key" ON "wallet_registrations" USING btree ("device_library_identifier","pass_type_identifier","serial_number");--> statement-breakpoint
CREATE INDEX "wallet_registrations_pass_idx" ON "wallet_registrations" USING btree ("pass_id");--> statement-breakpoint
CREATE INDEX "wallet_registrations_due_idx" ON "wallet_registrations" USING btree ("next_attempt_at") WHERE "wallet_registrations"."next_attempt_at" is not null;