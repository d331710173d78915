-- Accounts announce their own changes (issue 31): each node keeps "this partner is active /
-- this admin or customer exists" in memory for bearer requests, and its cached API keys carry
-- the partner's name, status and limits (src/infra/account-cache.ts, api-keys.service.ts). The
-- service never suspends or deletes an account itself (an operator does it in SQL), so the
-- database sends the change: NOTIFY accounts_changed '<kind> <id>', delivered to every node's
-- LISTEN when the transaction commits, and refused from the next request on.
CREATE FUNCTION "notify_account_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('accounts_changed', TG_ARGV[0] || ' ' || OLD.id);
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "partners_account_changed" AFTER UPDATE OF "status", "name", "rate_limit_per_hour", "rate_limit_per_minute" ON "partners"
  FOR EACH ROW WHEN (OLD."status" IS DISTINCT FROM NEW."status" OR OLD."name" IS DISTINCT FROM NEW."name"
    OR OLD."rate_limit_per_hour" IS DISTINCT FROM NEW."rate_limit_per_hour" OR OLD."rate_limit_per_minute" IS DISTINCT FROM NEW."rate_limit_per_minute")
  EXECUTE FUNCTION "notify_account_changed"('partner');--> statement-breakpoint
CREATE TRIGGER "partners_account_deleted" AFTER DELETE ON "partners" FOR EACH ROW EXECUTE FUNCTION "notify_account_changed"('partner');--> statement-breakpoint
CREATE TRIGGER "admins_account_deleted" AFTER DELETE ON "admins" FOR EACH ROW EXECUTE FUNCTION "notify_account_changed"('admin');--> statement-breakpoint
CREATE TRIGGER "customers_account_deleted" AFTER DELETE ON "customers" FOR EACH ROW EXECUTE FUNCTION "notify_account_changed"('customer');
