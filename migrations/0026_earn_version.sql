-- What an award's evaluation reads besides the card, versioned (issue 31): the programme's
-- earning rules and its campaigns. A node keeps them in memory per partner and the one-statement
-- award evaluates amount-only purchases with them, sending the version it used; the statement
-- refuses when the row says otherwise (awards/award-statement.ts), so a change made on any
-- node, through the API or in SQL, is never awarded by a stale copy.
ALTER TABLE "partner_cards" ADD COLUMN "earn_version" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE FUNCTION "bump_earn_version_of_rules"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.earn_version := OLD.earn_version + 1;
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER "partner_cards_earn_rules_changed" BEFORE UPDATE OF "points_enabled", "points_per_currency", "currency_amount", "round_points_up",
    "min_points_per_purchase", "max_points_per_purchase", "points_per_visit" ON "partner_cards"
  FOR EACH ROW WHEN (OLD."points_enabled" IS DISTINCT FROM NEW."points_enabled" OR OLD."points_per_currency" IS DISTINCT FROM NEW."points_per_currency"
    OR OLD."currency_amount" IS DISTINCT FROM NEW."currency_amount" OR OLD."round_points_up" IS DISTINCT FROM NEW."round_points_up"
    OR OLD."min_points_per_purchase" IS DISTINCT FROM NEW."min_points_per_purchase" OR OLD."max_points_per_purchase" IS DISTINCT FROM NEW."max_points_per_purchase"
    OR OLD."points_per_visit" IS DISTINCT FROM NEW."points_per_visit")
  EXECUTE FUNCTION "bump_earn_version_of_rules"();--> statement-breakpoint
CREATE FUNCTION "bump_earn_version_of_campaigns"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    UPDATE "partner_cards" SET "earn_version" = "earn_version" + 1 WHERE "id" = OLD."partner_card_id";
  END IF;
  IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW."partner_card_id" IS DISTINCT FROM OLD."partner_card_id") THEN
    UPDATE "partner_cards" SET "earn_version" = "earn_version" + 1 WHERE "id" = NEW."partner_card_id";
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "campaigns_earn_changed" AFTER INSERT OR UPDATE OR DELETE ON "campaigns"
  FOR EACH ROW EXECUTE FUNCTION "bump_earn_version_of_campaigns"();
--> statement-breakpoint
-- A limit changed on the row, however (the API's PUT deletes them as well): what the shards hold
-- was spread from the old limit, and awards take from them without the row, so they must go;
-- the next award spreads what the new limit leaves (docs/campaigns.md "Limits under concurrency").
CREATE FUNCTION "drop_limit_shards_of_campaign"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "campaign_limit_shards" WHERE "campaign_id" = NEW."id";
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "campaigns_limits_changed" AFTER UPDATE OF "limit_uses", "points_budget" ON "campaigns"
  FOR EACH ROW WHEN (OLD."limit_uses" IS DISTINCT FROM NEW."limit_uses" OR OLD."points_budget" IS DISTINCT FROM NEW."points_budget")
  EXECUTE FUNCTION "drop_limit_shards_of_campaign"();
