CREATE TABLE "sms_handovers" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "sms_handovers_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"message_id" text NOT NULL,
	"part_no" integer NOT NULL,
	"handed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"answered_at" timestamp with time zone,
	"outcome" text,
	"error" text
);
--> statement-breakpoint
ALTER TABLE "sms_handovers" ADD CONSTRAINT "sms_handovers_message_id_sms_messages_id_fk" FOREIGN KEY ("message_id") REFERENCES "public"."sms_messages"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sms_handovers_message_idx" ON "sms_handovers" USING btree ("message_id","part_no");--> statement-breakpoint
-- Messages the previous dispatcher had marked submitting may have reached the SMSC: each of
-- their parts gets an unanswered hand-over, so they stay in doubt (failed and refunded, never
-- resent) exactly as before.
INSERT INTO "sms_handovers" ("message_id", "part_no", "handed_at")
SELECT m."id", p.n, m."submitting_at"
FROM "sms_messages" m, generate_series(1, m."parts") AS p(n)
WHERE m."status" = 'queued' AND m."submitting_at" IS NOT NULL;
