-- Commission net of returns (issue 30): a month's stored figures also keep the amounts of
-- purchases' goods returned in it and how many returns. Months stored before have null
-- here: their figures were frozen without returns and stay as they are.
ALTER TABLE "commission_periods" ADD COLUMN "returned_amount" numeric(16, 4);--> statement-breakpoint
ALTER TABLE "commission_periods" ADD COLUMN "returns_count" integer;
