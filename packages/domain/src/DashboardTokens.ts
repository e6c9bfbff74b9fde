/**
 * The dashboard's `tokens` and `account` groups (`/app/api/tokens`, `/app/api/account`) with their schemas: the
 * account's API / MCP tokens and its trial and subscription. Apart from DashboardCore.ts and Dashboard.ts, which
 * the web app's shell imports, so that the shell does not carry them (nor the permissions and token statuses
 * they name): only the API page and the account page use them, through a client of their own
 * (`DashboardTokensHttpApi`). `DashboardApi` (DashboardApi.ts) composes them with the rest for the server.
 */
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { RequestErrors } from "./Authentication.ts"
import { AccountId, Integer, ProjectId, Text, Timestamp, TokenId } from "./Common.ts"
import { DASHBOARD_PREFIX, DashboardOrigin, DashboardSession } from "./DashboardCore.ts"
import { DashboardAccessAnnotation } from "./DashboardRoles.ts"
import { doc } from "./Documented.ts"
import { Envelope } from "./Envelope.ts"
import { BadRequest, Conflict, NotFound, Unavailable } from "./Errors.ts"
import { Permission } from "./Permissions.ts"
import { TokenStatus } from "./Tokens.ts"

export const DashboardToken = Schema.Struct({
  id: TokenId,
  name: Schema.String,
  prefix: Schema.String,
  websites: Schema.NullOr(Schema.Array(ProjectId)).annotate({
    description: "null = every website, present and future"
  }),
  permissions: Schema.Array(Permission),
  createdAt: Timestamp,
  lastUsedAt: Schema.NullOr(Timestamp),
  expiresAt: Schema.NullOr(Timestamp),
  revokedAt: Schema.NullOr(Timestamp),
  status: TokenStatus
}).annotate({ identifier: "DashboardToken" })
export const DashboardTokenList = Schema.Struct({ tokens: Schema.Array(DashboardToken) }).annotate({
  identifier: "DashboardTokenList"
})
export const CreateDashboardTokenPayload = Schema.Struct({
  name: Text(100),
  websites: Schema.NullOr(Schema.Array(ProjectId).check(Schema.isMinLength(1), Schema.isMaxLength(100))).annotate({
    description: "The websites the token may read; null = every website, present and future"
  }),
  permissions: Schema.Array(Permission).check(Schema.isMinLength(1)),
  expiresAt: Schema.optionalKey(Schema.NullOr(Timestamp))
}).annotate({ identifier: "CreateDashboardTokenRequest" })
export const DashboardTokenCreated = Schema.Struct({
  token: DashboardToken,
  secret: Schema.String.annotate({ description: "The token, `svc_…`. Shown this once; it is not stored" })
}).annotate({ identifier: "DashboardTokenCreated" })
export const DashboardTokenRevoked = Schema.Struct({ revoked: Schema.Literal(true), token: DashboardToken })

export const EntitlementState = Schema.Literals(["trial", "subscribed", "ended"]).annotate({
  description:
    "trial: in the free trial; subscribed: a paid subscription is live; ended: neither — /api/v1 answers 402 " +
    "trial_expired"
})
export const BillingPlan = Schema.Literals(["monthly", "yearly"])
export const BillingView = Schema.Struct({
  managedBy: Schema.Literals(["stripe", "operator"]).annotate({
    description: "stripe: subscribe and manage billing here (docs/billing.md); operator: this server's operator sets " +
      "subscriptions (no billing keys)"
  }),
  state: Schema.Literals(["trialing", "active", "past_due", "canceling", "ended"]).annotate({
    description: "trialing: in the free trial; active: subscribed; past_due: a payment failed, the API stays live " +
      "until graceEndsAt; canceling: canceled, live until periodEnd; ended: /api/v1 answers 402 trial_expired"
  }),
  plan: Schema.NullOr(BillingPlan),
  periodEnd: Schema.NullOr(Timestamp).annotate({
    description: "active: the next renewal; canceling: when it ends"
  }),
  graceEndsAt: Schema.NullOr(Timestamp).annotate({ description: "past_due: when the API stops answering" }),
  canSubscribe: Schema.Boolean.annotate({ description: "Checkout is open: billing is on and no subscription is live" }),
  canManage: Schema.Boolean.annotate({ description: "The customer portal is open: a Stripe customer exists" }),
  yearlyAvailable: Schema.Boolean
}).annotate({ identifier: "BillingView" })
export type BillingView = typeof BillingView.Type
export const CheckoutPayload = Schema.Struct({ plan: BillingPlan }).annotate({ identifier: "CheckoutRequest" })
export const RedirectView = Schema.Struct({
  url: Schema.String.annotate({ description: "Where to send the browser: Stripe's page" })
}).annotate({ identifier: "BillingRedirect" })

export const AccountView = Schema.Struct({
  accountId: AccountId,
  email: Schema.String,
  entitlement: EntitlementState,
  trialEndsAt: Timestamp,
  trialDaysLeft: Integer.annotate({ description: "Whole days left in the trial, rounded up; 0 once it has ended" }),
  subscription: Schema.Struct({
    status: Schema.Literals(["none", "active", "past_due", "canceled"]),
    until: Schema.NullOr(Timestamp)
  }),
  message: Schema.String.annotate({ description: "The entitlement in words, for the account page" }),
  billing: BillingView
}).annotate({ identifier: "AccountView" })
export type AccountView = typeof AccountView.Type

const idParams = { id: Schema.String }

export class DashboardTokensApi extends HttpApiGroup.make("tokens")
  .add(
    doc(
      HttpApiEndpoint.get("list", "/tokens", { success: Envelope("DashboardTokenListResponse", DashboardTokenList) })
        .annotate(DashboardAccessAnnotation, "admin"),
      "The account's tokens, never a secret"
    ),
    doc(
      HttpApiEndpoint.post("create", "/tokens", {
        payload: CreateDashboardTokenPayload,
        success: Envelope("DashboardTokenCreatedResponse", DashboardTokenCreated, { status: 201 }),
        error: [BadRequest, NotFound]
      }).annotate(DashboardAccessAnnotation, "admin"),
      "Create a token restricted to websites and permissions; the secret is in this answer only",
      "404 when a named website is not the account's."
    ),
    doc(
      HttpApiEndpoint.delete("revoke", "/tokens/:id", {
        params: idParams,
        success: Envelope("DashboardTokenRevokedResponse", DashboardTokenRevoked),
        error: [NotFound, Conflict]
      }).annotate(DashboardAccessAnnotation, "admin"),
      "Revoke a token: it stops working at once, everywhere",
      "409 when it is already revoked."
    )
  )
  .middleware(DashboardSession)
  .annotateMerge(OpenApi.annotations({ title: "Tokens", description: "API / MCP tokens" }))
{}

export const DeleteAccountPayload = Schema.Struct({
  confirmEmail: Schema.String.check(Schema.isMaxLength(320)).annotate({
    description: "The email address of the owner asking, typed again: the confirmation"
  })
}).annotate({ identifier: "DeleteAccountRequest" })
export const AccountDeleted = Schema.Struct({
  deleted: Schema.Literal(true),
  websites: Integer.annotate({ description: "Websites deleted with their data and credentials" }),
  members: Integer.annotate({ description: "Logins deleted, the asking owner's included" })
}).annotate({ identifier: "AccountDeleted" })

export class DashboardAccountApi extends HttpApiGroup.make("account")
  .add(
    doc(
      HttpApiEndpoint.get("get", "/account", { success: Envelope("AccountResponse", AccountView) }).annotate(
        DashboardAccessAnnotation,
        "viewer"
      ),
      "Trial days left, subscription state, and whether the entitlement has ended"
    ),
    doc(
      HttpApiEndpoint.post("checkout", "/account/checkout", {
        payload: CheckoutPayload,
        success: Envelope("CheckoutResponse", RedirectView),
        error: [BadRequest, Conflict, Unavailable]
      }).annotate(DashboardAccessAnnotation, "owner"),
      "Subscribe: a Stripe Checkout page for the monthly or yearly plan",
      "Creates the account's Stripe customer the first time. 409 `billing_not_configured` without billing keys, " +
        "`already_subscribed` while a subscription is live (use the portal); 400 `plan_unavailable` for yearly " +
        "without a yearly price; 503 `billing_unavailable` when Stripe cannot be reached."
    ),
    doc(
      HttpApiEndpoint.post("billingPortal", "/account/billing-portal", {
        success: Envelope("BillingPortalResponse", RedirectView),
        error: [Conflict, Unavailable]
      }).annotate(DashboardAccessAnnotation, "owner"),
      "Manage billing: a Stripe customer portal session (card, invoices, cancel)",
      "409 `billing_not_configured`, or `no_customer` before the first checkout; 503 `billing_unavailable`."
    ),
    doc(
      HttpApiEndpoint.delete("delete", "/account", {
        payload: DeleteAccountPayload,
        success: Envelope("AccountDeletedResponse", AccountDeleted),
        error: [BadRequest, Conflict]
      }).annotate(DashboardAccessAnnotation, "owner"),
      "Delete the account: every website with its data and credentials, every token, every member's login",
      "`confirmEmail` must be the asking owner's address (400 `confirmation_mismatch`). 409 `subscription_active` " +
        "while a subscription renews: cancel it with Manage billing first (a canceled one that runs to its period's " +
        "end does not hold deletion back). Every session ends; the owners are mailed. Cannot be undone."
    )
  )
  .middleware(DashboardSession)
  .annotateMerge(OpenApi.annotations({ title: "Account", description: "Trial and subscription" }))
{}

/**
 * The tokens and account groups alone, as `DashboardApi` serves them: the web app's client for the API and account
 * pages.
 */
export class DashboardTokensHttpApi extends HttpApi.make("dashboard")
  .add(DashboardTokensApi, DashboardAccountApi)
  .middleware(DashboardOrigin)
  .middleware(RequestErrors)
  .prefix(DASHBOARD_PREFIX)
{}
