CREATE TABLE "catalog_categories" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "catalog_categories_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"partner_id" integer NOT NULL,
	"external_key" text NOT NULL,
	"name" text NOT NULL,
	"parent_id" integer,
	"path" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "catalog_feeds" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "catalog_feeds_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"partner_id" integer NOT NULL,
	"url" text NOT NULL,
	"mode" text NOT NULL,
	"mapping" jsonb,
	"every_minutes" integer NOT NULL,
	"next_run_at" timestamp with time zone NOT NULL,
	"etag" text,
	"last_modified" text,
	"last_import_id" integer,
	"last_run_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "catalog_feeds_every_minutes" CHECK ("catalog_feeds"."every_minutes" between 15 and 10080)
);
--> statement-breakpoint
CREATE TABLE "catalog_imports" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "catalog_imports_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"partner_id" integer NOT NULL,
	"feed_id" integer,
	"source" text NOT NULL,
	"url" text,
	"filename" text,
	"file_key" text,
	"status" text DEFAULT 'queued' NOT NULL,
	"mode" text NOT NULL,
	"mapping" jsonb,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"items_seen" integer DEFAULT 0 NOT NULL,
	"created" integer DEFAULT 0 NOT NULL,
	"updated" integer DEFAULT 0 NOT NULL,
	"unchanged" integer DEFAULT 0 NOT NULL,
	"deactivated" integer DEFAULT 0 NOT NULL,
	"skipped" integer DEFAULT 0 NOT NULL,
	"errors_count" integer DEFAULT 0 NOT NULL,
	"errors" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"lease_until" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "catalog_product_categories" (
	"product_id" integer NOT NULL,
	"category_id" integer NOT NULL,
	CONSTRAINT "catalog_product_categories_product_id_category_id_pk" PRIMARY KEY("product_id","category_id")
);
--> statement-breakpoint
CREATE TABLE "catalog_products" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "catalog_products_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"partner_id" integer NOT NULL,
	"import_key" text NOT NULL,
	"xml_id" text,
	"external_id" text,
	"sku" text,
	"ean" text,
	"name" text NOT NULL,
	"description" text,
	"brand" text,
	"model" text,
	"image_url" text,
	"external_url" text,
	"weight" text,
	"color" text,
	"size" text,
	"price" numeric(16, 4),
	"discounted_price" numeric(16, 4),
	"currency" text,
	"availability" boolean DEFAULT true NOT NULL,
	"stock_quantity" integer,
	"delivery_info" text,
	"warranty_info" text,
	"featured" boolean DEFAULT false NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"content_hash" text NOT NULL,
	"last_import_id" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "catalog_categories" ADD CONSTRAINT "catalog_categories_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "catalog_categories" ADD CONSTRAINT "catalog_categories_parent_id_catalog_categories_id_fk" FOREIGN KEY ("parent_id") REFERENCES "public"."catalog_categories"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "catalog_feeds" ADD CONSTRAINT "catalog_feeds_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "catalog_imports" ADD CONSTRAINT "catalog_imports_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "catalog_imports" ADD CONSTRAINT "catalog_imports_feed_id_catalog_feeds_id_fk" FOREIGN KEY ("feed_id") REFERENCES "public"."catalog_feeds"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "catalog_product_categories" ADD CONSTRAINT "catalog_product_categories_product_id_catalog_products_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."catalog_products"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "catalog_product_categories" ADD CONSTRAINT "catalog_product_categories_category_id_catalog_categories_id_fk" FOREIGN KEY ("category_id") REFERENCES "public"."catalog_categories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "catalog_products" ADD CONSTRAINT "catalog_products_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "catalog_categories_key" ON "catalog_categories" USING btree ("partner_id","external_key");--> statement-breakpoint
CREATE INDEX "catalog_categories_partner_idx" ON "catalog_categories" USING btree ("partner_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "catalog_feeds_url" ON "catalog_feeds" USING btree ("partner_id","url");--> statement-breakpoint
CREATE INDEX "catalog_feeds_due_idx" ON "catalog_feeds" USING btree ("next_run_at");--> statement-breakpoint
CREATE INDEX "catalog_imports_partner_idx" ON "catalog_imports" USING btree ("partner_id","id");--> statement-breakpoint
CREATE INDEX "catalog_imports_pending_idx" ON "catalog_imports" USING btree ("id") WHERE "catalog_imports"."status" in ('queued', 'running');--> statement-breakpoint
CREATE UNIQUE INDEX "catalog_imports_one_running" ON "catalog_imports" USING btree ("partner_id") WHERE "catalog_imports"."status" = 'running';--> statement-breakpoint
CREATE INDEX "catalog_product_categories_category_idx" ON "catalog_product_categories" USING btree ("category_id");--> statement-breakpoint
CREATE UNIQUE INDEX "catalog_products_key" ON "catalog_products" USING btree ("partner_id","import_key");--> statement-breakpoint
CREATE INDEX "catalog_products_partner_idx" ON "catalog_products" USING btree ("partner_id","is_active","id");