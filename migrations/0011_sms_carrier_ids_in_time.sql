DROP INDEX "sms_message_parts_carrier_key";--> statement-breakpoint
ALTER TABLE "sms_message_parts" ADD COLUMN "accepted_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
CREATE INDEX "sms_message_parts_carrier_idx" ON "sms_message_parts" USING btree ("carrier_message_id","accepted_at");