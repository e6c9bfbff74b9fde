/**
 * Subscription billing (docs/billing.md): a `past_due` subscription status (in its grace period: still
 * entitled), each account's Stripe customer and the subscription it follows, and the webhook events already
 * processed (each once).
 */
import { ddlMigration } from "../platform/Ddl.ts"

export const billingMigration = ddlMigration(`
    ALTER TABLE accounts DROP CONSTRAINT IF EXISTS accounts_subscription_status_check;
    ALTER TABLE accounts ADD CONSTRAINT accounts_subscription_status_check
      CHECK (subscription_status IN ('none','active','past_due','canceled'));
    CREATE TABLE billing_customers (
      account_id text PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
      customer_id text NOT NULL UNIQUE,
      subscription_id text,
      stripe_status text,
      price_id text,
      current_period_end timestamptz,
      cancel_at_period_end boolean NOT NULL DEFAULT false,
      past_due_since timestamptz,
      updated_at timestamptz NOT NULL
    );
    CREATE TABLE billing_events (
      id text PRIMARY KEY,
      type text NOT NULL,
      account_id text,
      processed_at timestamptz NOT NULL
    )
`)
