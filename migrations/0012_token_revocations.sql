CREATE TABLE "revoked_tokens" (
	"token_id" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "token_cutoffs" (
	"kind" text NOT NULL,
	"subject" integer NOT NULL,
	"not_before" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "token_cutoffs_kind_subject_pk" PRIMARY KEY("kind","subject")
);
--> statement-breakpoint
CREATE INDEX "revoked_tokens_expires_at_idx" ON "revoked_tokens" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "token_cutoffs_expires_at_idx" ON "token_cutoffs" USING btree ("expires_at");