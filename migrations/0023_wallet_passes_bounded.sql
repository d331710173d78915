-- Bounded pass storage (issue 30, DESIGN.md §15 "Bounded work"): every download used to add a
-- wallet_passes row, and a token was looked up among 1,000 rows of its serial read unordered,
-- so after 1,000 downloads of a card new tokens got 401. Now a download again hands out the
-- card's current pass (one per card or coupon, pass type and language), whose token is kept
-- sealed with the secrets key so that it can be put in the pass again; a token is found by
-- its hash. Rows from before keep only their hash and keep authenticating.
ALTER TABLE "wallet_passes" ADD COLUMN "token_sealed" text;--> statement-breakpoint
DROP INDEX IF EXISTS "wallet_passes_serial_idx";--> statement-breakpoint
CREATE INDEX "wallet_passes_token_idx" ON "wallet_passes" USING btree ("pass_type_identifier","serial_number","token_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "wallet_passes_current_key" ON "wallet_passes" USING btree ("kind","subject_id","pass_type_identifier","locale") WHERE "token_sealed" is not null;
