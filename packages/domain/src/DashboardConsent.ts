/**
 * The dashboard's `consent` group (`/app/api/oauth/consent`): the page where the owner, logged in, lets an MCP
 * client that connected by URL have a token (docs/mcp.md, "Connecting by URL"). The server's
 * `/oauth/authorize` checks the client's request and sends the browser to the consent page with the same
 * query; the page reads what is asked (`describe`) and answers with the owner's choice (`decide`), which
 * gives the URL to send the browser back to: the client's redirect URI with a code, or with `access_denied`.
 * Both re-check the request; `decide` is state-changing, so it needs the session's CSRF token and our Origin
 * like every other (a forged form on another site cannot approve).
 */
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { RequestErrors } from "./Authentication.ts"
import { ProjectId } from "./Common.ts"
import { DASHBOARD_PREFIX, DashboardOrigin, DashboardSession } from "./DashboardCore.ts"
import { DashboardAccessAnnotation } from "./DashboardRoles.ts"
import { doc } from "./Documented.ts"
import { Envelope } from "./Envelope.ts"
import { BadRequest, NotFound } from "./Errors.ts"
import { Permission } from "./Permissions.ts"

/** The client's authorization request, as `/oauth/authorize` received it (OAuth 2.1 names). */
export const AuthorizationRequest = Schema.Struct({
  client_id: Schema.String,
  redirect_uri: Schema.String,
  response_type: Schema.String,
  code_challenge: Schema.optionalKey(Schema.String),
  code_challenge_method: Schema.optionalKey(Schema.String),
  state: Schema.optionalKey(Schema.String),
  scope: Schema.optionalKey(Schema.String),
  resource: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "AuthorizationRequest" })
export type AuthorizationRequest = typeof AuthorizationRequest.Type

export const ConsentView = Schema.Struct({
  client: Schema.Struct({ id: Schema.String, name: Schema.String }),
  redirectHost: Schema.String.annotate({ description: "Where the browser goes back to: the client's redirect host" }),
  resource: Schema.String.annotate({ description: "The MCP server the token is for" }),
  requestedPermissions: Schema.Array(Permission).annotate({
    description: "The permissions the client asked for (its scope); all of them when it named none"
  }),
  websites: Schema.Array(Schema.Struct({ id: ProjectId, name: Schema.String, domain: Schema.String })),
  permissions: Schema.Array(Schema.Struct({ name: Permission, description: Schema.String }))
}).annotate({ identifier: "ConsentView" })
export type ConsentView = typeof ConsentView.Type

export const ConsentDecision = Schema.Struct({
  request: AuthorizationRequest,
  approve: Schema.Boolean,
  websites: Schema.NullOr(Schema.Array(ProjectId).check(Schema.isMinLength(1), Schema.isMaxLength(100))).annotate({
    description: "The websites the token may read; null = every website, present and future"
  }),
  permissions: Schema.Array(Permission)
}).annotate({ identifier: "ConsentDecision" })

export const ConsentAnswer = Schema.Struct({
  redirectTo: Schema.String.annotate({ description: "The client's redirect URI with `code` and `state`, or `error`" })
}).annotate({ identifier: "ConsentAnswer" })

export class DashboardConsentApi extends HttpApiGroup.make("consent")
  .add(
    doc(
      HttpApiEndpoint.get("describe", "/oauth/consent", {
        query: AuthorizationRequest,
        success: Envelope("ConsentViewResponse", ConsentView),
        error: [BadRequest]
      }).annotate(DashboardAccessAnnotation, "admin"),
      "What an MCP client asks: its name, its redirect host, the permissions; the account's websites to choose from",
      "400 when the request is not one /oauth/authorize would accept (unknown client, unregistered redirect URI…)."
    ),
    doc(
      HttpApiEndpoint.post("decide", "/oauth/consent", {
        payload: ConsentDecision,
        success: Envelope("ConsentAnswerResponse", ConsentAnswer),
        error: [BadRequest, NotFound]
      }).annotate(DashboardAccessAnnotation, "admin"),
      "Approve (a code for the chosen websites and permissions) or deny; the URL to send the browser back to",
      "404 when a chosen website is not the account's; 400 when no permission is chosen on approval."
    )
  )
  .middleware(DashboardSession)
  .annotateMerge(OpenApi.annotations({ title: "Consent", description: "MCP clients connecting by URL" }))
{}

/** The consent group alone, as `DashboardApi` serves it: the web app's client for the consent page. */
export class DashboardConsentHttpApi extends HttpApi.make("dashboard")
  .add(DashboardConsentApi)
  .middleware(DashboardOrigin)
  .middleware(RequestErrors)
  .prefix(DASHBOARD_PREFIX)
{}
