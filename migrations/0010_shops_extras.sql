ALTER TABLE "shops" ADD COLUMN "code" text;--> statement-breakpoint
ALTER TABLE "shops" ADD COLUMN "country" text;--> statement-breakpoint
ALTER TABLE "shops" ADD COLUMN "postal_code" text;--> statement-breakpoint
ALTER TABLE "shops" ADD COLUMN "phone" text;--> statement-breakpoint
ALTER TABLE "shops" ADD COLUMN "email" text;--> statement-breakpoint
ALTER TABLE "shops" ADD COLUMN "opening_hours" text;--> statement-breakpoint
ALTER TABLE "shops" ADD COLUMN "is_active" boolean DEFAULT true NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "shops_partner_code_key" ON "shops" USING btree ("partner_id","code") WHERE "shops"."code" is not null;--> statement-breakpoint
CREATE INDEX "shops_partner_location_idx" ON "shops" USING btree ("partner_id","lat","lng") WHERE "shops"."lat" is not null;