/**
 * The account: the trial's days left or the subscription, and plainly when the entitlement has ended; the
 * subscription and the way to pay (Billing.tsx); then its security: the password and two-factor sign-in
 * (Security.tsx).
 */
import { useAtomValue } from "@effect/atom-react"
import { Exit } from "effect"
import { AsyncResult } from "effect/reactivity"
import { useState } from "react"
import { Keys } from "../client.ts"
import { formatDate } from "../format.ts"
import { Field, Result } from "../forms.tsx"
import { useMutation } from "../hooks.ts"
import { navigate } from "../navigation.tsx"
import { Can } from "../roles.tsx"
import { accountAtom, deleteAccount } from "../tokensClient.ts"
import { MutationStatus } from "../ui.tsx"
import { BillingPanel, PastDueBanner } from "./Billing.tsx"
import { ChangePassword, TwoFactor } from "./Security.tsx"

/** Back from Stripe Checkout: the subscription starts when Stripe's webhook lands, seconds later. */
const checkoutReturn = () => new URLSearchParams(window.location.search).get("checkout")

/** Deleting the account (owner): typing one's own address; a renewing subscription is refused in words. */
const DeleteAccount = ({ email }: { readonly email: string }) => {
  const [result, run] = useMutation(deleteAccount)
  const [typed, setTyped] = useState("")
  return (
    <section className="panel" aria-labelledby="delete-account-heading">
      <h2 id="delete-account-heading">Delete this account</h2>
      <p>
        Deletes every website of the account with its data and provider credentials, every API token, and the login of
        every member; each is logged out at once. Cancel a renewing subscription first (Manage billing). This cannot be
        undone.
      </p>
      <form
        onSubmit={async (event) => {
          event.preventDefault()
          const exit = await run({ payload: { confirmEmail: typed.trim() }, reactivityKeys: [Keys.session] })
          if (Exit.isSuccess(exit)) navigate("/login")
        }}
      >
        <MutationStatus result={result} />
        <Field label={`Type your email address (${email}) to confirm`}>
          <input
            name="confirmEmail"
            type="email"
            value={typed}
            onChange={(e) => setTyped(e.target.value)}
            autoComplete="off"
          />
        </Field>
        <div className="row">
          <button
            type="submit"
            className="danger"
            disabled={typed.trim().toLowerCase() !== email || result.waiting}
          >
            {result.waiting ? "Deleting…" : "Delete the account"}
          </button>
        </div>
      </form>
    </section>
  )
}

export const AccountPage = () => {
  const account = useAtomValue(accountAtom)
  const returned = checkoutReturn()
  return (
    <>
      <h1>Account</h1>
      {returned === "success"
        ? (
          <div className="alert ok" role="status">
            Thank you for subscribing. Until the state below says Active, Stripe's confirmation is on its way: reload in
            a few seconds.
          </div>
        )
        : returned === "canceled"
        ? <div className="alert" role="status">Checkout canceled: nothing was charged.</div>
        : null}
      <Result result={account} what="your account">
        {(a) => (
          <>
            <PastDueBanner account={a} />
            {a.entitlement === "ended"
              ? (
                <div className="alert error" role="alert">
                  <strong>
                    {a.subscription.status === "none" ? "Your free trial has ended." : "Your subscription has ended."}
                  </strong>
                  {/* The server's message says the same as the line below; one is enough. */}
                  <p>
                    Until you subscribe (below), the API, the CLI and MCP clients answer “trial expired” (HTTP 402).
                    Your websites and data are kept.
                  </p>
                </div>
              )
              : a.entitlement === "trial"
              ? (
                <div className={a.trialDaysLeft <= 3 ? "alert warn" : "alert ok"} role="status">
                  <strong>
                    {a.trialDaysLeft === 1 ? "1 day left" : `${a.trialDaysLeft} days left`} in your free trial.
                  </strong>
                  {/* The server's message says the same days again; the date and what it means are new. */}
                  <p>
                    It ends on{" "}
                    {formatDate(a.trialEndsAt)}. Until then the dashboard, the API, the CLI and MCP clients work in
                    full.
                  </p>
                </div>
              )
              : (
                <div className="alert ok" role="status">
                  <strong>{a.message}</strong>
                </div>
              )}
            <div className="panel">
              <dl className="facts">
                <dt>Email</dt>
                <dd>{a.email}</dd>
                <dt>Account</dt>
                <dd>
                  <code>{a.accountId}</code>
                </dd>
                <dt>Trial ends</dt>
                <dd>{formatDate(a.trialEndsAt)}</dd>
              </dl>
            </div>
            <BillingPanel account={a} />
          </>
        )}
      </Result>
      <ChangePassword />
      <TwoFactor />
      {AsyncResult.isSuccess(account)
        ? (
          <Can level="owner">
            <DeleteAccount email={account.value.email} />
          </Can>
        )
        : null}
    </>
  )
}
