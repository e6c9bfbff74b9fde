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
import { doc } from "./Documented.ts"
import { Envelope } from "./Envelope.ts"
import { BadRequest, Conflict, NotFound } from "./Errors.ts"
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
export const AccountView = Schema.Struct({
  accountId: AccountId,
  email: Schema.String,
  entitlement: EntitlementState,
  trialEndsAt: Timestamp,
  trialDaysLeft: Integer.annotate({ description: "Whole days left in the trial, rounded up; 0 once it has ended" }),
  subscription: Schema.Struct({
    status: Schema.Literals(["none", "active", "canceled"]),
    until: Schema.NullOr(Timestamp)
  }),
  message: Schema.String.annotate({ description: "The entitlement in words, for the account page" })
}).annotate({ identifier: "AccountView" })
export type AccountView = typeof AccountView.Type

const idParams = { id: Schema.String }

export class DashboardTokensApi extends HttpApiGroup.make("tokens")
  .add(
    doc(
      HttpApiEndpoint.get("list", "/tokens", { success: Envelope("DashboardTokenListResponse", DashboardTokenList) }),
      "The account's tokens, never a secret"
    ),
    doc(
      HttpApiEndpoint.post("create", "/tokens", {
        payload: CreateDashboardTokenPayload,
        success: Envelope("DashboardTokenCreatedResponse", DashboardTokenCreated, { status: 201 }),
        error: [BadRequest, NotFound]
      }),
      "Create a token restricted to websites and permissions; the secret is in this answer only",
      "404 when a named website is not the account's."
    ),
    doc(
      HttpApiEndpoint.delete("revoke", "/tokens/:id", {
        params: idParams,
        success: Envelope("DashboardTokenRevokedResponse", DashboardTokenRevoked),
        error: [NotFound, Conflict]
      }),
      "Revoke a token: it stops working at once, everywhere",
      "409 when it is already revoked."
    )
  )
  .middleware(DashboardSession)
  .annotateMerge(OpenApi.annotations({ title: "Tokens", description: "API / MCP tokens" }))
{}

export class DashboardAccountApi extends HttpApiGroup.make("account")
  .add(
    doc(
      HttpApiEndpoint.get("get", "/account", { success: Envelope("AccountResponse", AccountView) }),
      "Trial days left, subscription state, and whether the entitlement has ended"
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
