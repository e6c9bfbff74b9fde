/**
 * The account page's subscription panel (docs/billing.md): the plan, its state, the next renewal or the end, what
 * happens when the trial ends, and the way to pay — Subscribe (monthly or yearly: Stripe Checkout) and Manage
 * billing (Stripe's customer portal: card, invoices, cancel). Without billing keys the operator manages
 * subscriptions, and the panel says so.
 */
import type { AccountView } from "@sitehealth/domain/DashboardTokens"
import { Exit } from "effect"
import { formatDate } from "../format.ts"
import { useMutation } from "../hooks.ts"
import { RoleNote, useCan } from "../roles.tsx"
import { openBillingPortal, startCheckout } from "../tokensClient.ts"
import { MutationStatus } from "../ui.tsx"

const STATE_LABEL: Record<AccountView["billing"]["state"], string> = {
  trialing: "Free trial",
  active: "Active",
  past_due: "Payment failed (grace period)",
  canceling: "Canceled — ends at the period's end",
  ended: "Ended"
}

/** Past due: the API still answers, until the grace period's end. */
export const PastDueBanner = ({ account }: { readonly account: AccountView }) =>
  account.billing.state === "past_due"
    ? (
      <div className="alert warn" role="alert">
        <strong>Your last payment failed.</strong>
        <p>
          The API, the CLI and MCP clients keep working until{" "}
          {account.billing.graceEndsAt === null ? "the grace period ends" : formatDate(account.billing.graceEndsAt)}.
          Update your card with “Manage billing” to keep them running.
        </p>
      </div>
    )
    : null

export const BillingPanel = ({ account }: { readonly account: AccountView }) => {
  const b = account.billing
  const [checkout, runCheckout] = useMutation(startCheckout)
  const [portal, runPortal] = useMutation(openBillingPortal)
  const go = (exit: Exit.Exit<{ readonly url: string }, unknown>) => {
    if (Exit.isSuccess(exit)) window.location.assign(exit.value.url)
  }
  const waiting = checkout.waiting || portal.waiting
  const owner = useCan("owner")
  return (
    <section className="panel" aria-labelledby="billing-heading">
      <h2 id="billing-heading">Subscription</h2>
      <dl className="facts">
        <dt>Plan</dt>
        <dd>
          {b.plan === "yearly"
            ? "Yearly"
            : b.plan === "monthly"
            ? "Monthly"
            : b.state === "trialing"
            ? "Free trial"
            : "—"}
        </dd>
        <dt>State</dt>
        <dd data-testid="billing-state">{STATE_LABEL[b.state]}</dd>
        {b.periodEnd !== null
          ? (
            <>
              <dt>{b.state === "canceling" ? "Ends on" : "Renews on"}</dt>
              <dd>{formatDate(b.periodEnd)}</dd>
            </>
          )
          : null}
      </dl>
      {b.state === "trialing"
        ? (
          <p>
            When the trial ends on{" "}
            {formatDate(account.trialEndsAt)}, the API answers “trial expired” (HTTP 402) until you subscribe; your
            websites and data are kept. {b.canSubscribe ? "Subscribing now costs nothing before that day." : null}
          </p>
        )
        : null}
      {b.managedBy === "operator"
        ? <p>Subscriptions on this server are managed by its operator: ask them to start or change yours.</p>
        : !owner
        ? <RoleNote level="owner" what="subscribing and managing billing" />
        : (
          <>
            <MutationStatus result={checkout} />
            <MutationStatus result={portal} />
            <div className="row">
              {b.canSubscribe
                ? (
                  <>
                    <button
                      type="button"
                      disabled={waiting}
                      onClick={async () => go(await runCheckout({ payload: { plan: "monthly" } }))}
                    >
                      Subscribe monthly
                    </button>
                    {b.yearlyAvailable
                      ? (
                        <button
                          type="button"
                          disabled={waiting}
                          onClick={async () => go(await runCheckout({ payload: { plan: "yearly" } }))}
                        >
                          Subscribe yearly
                        </button>
                      )
                      : null}
                  </>
                )
                : null}
              {b.canManage
                ? (
                  <button
                    type="button"
                    className="secondary"
                    disabled={waiting}
                    onClick={async () => go(await runPortal({}))}
                  >
                    Manage billing
                  </button>
                )
                : null}
            </div>
          </>
        )}
    </section>
  )
}
