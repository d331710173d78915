CREATE SEQUENCE "webhook_event_sequence" AS bigint INCREMENT BY 1 MINVALUE 1 START WITH 1 CACHE 1;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "sequence" bigint;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "xact_id" xid8;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_partner_due_idx" ON "webhook_deliveries" USING btree ("partner_id","next_attempt_at","id") WHERE "webhook_deliveries"."status" = 'pending';
