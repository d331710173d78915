-- SMS receipts (issue 30 item 8): a receipt waits for its part (outcome null) and is then
-- `applied` or kept `unapplied` with the reason; it carries the handset number when the
-- deliver_sm gave one. Parts keep when they were written to the SMSC, so a receipt matches
-- only a part submitted before it. Unanswered hand-overs are found by a partial index: a
-- receipt waits while one handed over before it is unanswered.
ALTER TABLE "sms_carrier_receipts" ADD COLUMN "destination" text;--> statement-breakpoint
ALTER TABLE "sms_carrier_receipts" ADD COLUMN "outcome" text;--> statement-breakpoint
ALTER TABLE "sms_carrier_receipts" ADD COLUMN "note" text;--> statement-breakpoint
UPDATE "sms_carrier_receipts" SET "outcome" = 'applied' WHERE "applied_at" IS NOT NULL;--> statement-breakpoint
UPDATE "sms_carrier_receipts" SET "outcome" = 'unapplied', "note" = 'no part with this id (before the receipts were kept with their outcome)' WHERE "applied_at" IS NULL AND "received_at" < now() - interval '10 minutes';--> statement-breakpoint
DROP INDEX IF EXISTS "sms_carrier_receipts_pending_idx";--> statement-breakpoint
CREATE INDEX "sms_carrier_receipts_pending_idx" ON "sms_carrier_receipts" USING btree ("received_at") WHERE "sms_carrier_receipts"."outcome" is null;--> statement-breakpoint
ALTER TABLE "sms_message_parts" ADD COLUMN "submitted_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "sms_handovers_unanswered_idx" ON "sms_handovers" USING btree ("handed_at") WHERE "sms_handovers"."answered_at" is null;
