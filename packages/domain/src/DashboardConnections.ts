/**
 * The dashboard's `connections` group: a website's data providers, connected and disconnected by its owner
 * (dashboard-only: /api/v1 answers 403 `dashboard_only` for these). Stripe takes a restricted key and
 * Plausible an API key + site id, each checked live against the provider before anything is stored; Search
 * Console goes through Google's OAuth 2.0 authorization-code flow with PKCE (S256) and `state`, then the
 * owner picks the property. Credentials are stored encrypted and never sent back.
 *
 * The group carries no middleware of its own: DashboardApi adds it behind `DashboardSession`.
 */
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { RequestErrors } from "./Authentication.ts"
import { Timestamp } from "./Common.ts"
import { DASHBOARD_PREFIX, DashboardOrigin, DashboardSession } from "./DashboardCore.ts"
import { DashboardAccessAnnotation } from "./DashboardRoles.ts"
import { doc } from "./Documented.ts"
import { Envelope } from "./Envelope.ts"
import { ApiError, BadRequest, NotFound, Unavailable } from "./Errors.ts"
import { IntegrationKind, IntegrationStatus, Provider, SyncResult, SyncRun } from "./Integrations.ts"

/** The page Google sends the browser back to (defined with the core's constants, which the shell imports). */
export { GOOGLE_CALLBACK_PAGE } from "./DashboardCore.ts"

/** The providers a website owner connects from the dashboard. */
export const CONNECTABLE_PROVIDERS = ["stripe", "plausible", "google-search-console"] as const

/**
 * The read permissions a Stripe restricted key needs (Stripe dashboard → Developers → API keys → Create
 * restricted key): one per list the sync reads. The connect check probes each one.
 */
export const STRIPE_READ_PERMISSIONS = [
  { resource: "customers", label: "Customers", access: "read" },
  { resource: "subscriptions", label: "Subscriptions", access: "read" },
  { resource: "invoices", label: "Invoices", access: "read" },
  { resource: "charges", label: "Charges", access: "read" },
  { resource: "refunds", label: "Refunds", access: "read" }
] as const

/** 422: the provider refused the credentials; the message says why in words, `missing` the permissions it lacks. */
export class CredentialsRejected extends ApiError<CredentialsRejected>()("CredentialsRejected", {
  status: 422,
  identifier: "CredentialsRejectedError",
  description:
    "The provider refused the credentials (`credentials_rejected`: wrong, revoked or expired; `missing_permissions`: " +
    "a restricted key lacks read access, `missing` lists what; `site_not_found`; `oauth_failed`). Nothing was " +
    "stored.",
  fields: { missing: Schema.optionalKey(Schema.Array(Schema.String)) }
}) {}

/** 502: the provider could not be reached or answered with an error of its own; nothing was stored. */
export class ProviderUnavailable extends ApiError<ProviderUnavailable>()("ProviderUnavailable", {
  status: 502,
  identifier: "ProviderUnavailableError",
  description:
    "The provider could not be reached, timed out, or answered with a server error or something that is not its API " +
    "(`provider_unavailable`). Nothing was stored; try again.",
  fields: {}
}) {}

export const StripePermission = Schema.Struct({
  resource: Schema.String,
  label: Schema.String,
  access: Schema.Literal("read")
}).annotate({ identifier: "StripePermission" })

export const Connection = Schema.Struct({
  provider: Provider,
  name: Schema.String.annotate({ description: "What the page calls it: Stripe, Plausible, Google Search Console" }),
  kind: IntegrationKind,
  status: IntegrationStatus.annotate({
    description: "error after a failed sync, until one succeeds"
  }),
  connectedAt: Schema.NullOr(Timestamp),
  lastSyncAt: Schema.NullOr(Timestamp).annotate({ description: "End of the last successful sync" }),
  lastError: Schema.NullOr(Schema.String).annotate({
    description: "Why the last sync failed, in words (never a credential)"
  }),
  lastRun: Schema.NullOr(SyncRun),
  detail: Schema.NullOr(Schema.String).annotate({
    description: "What it is connected to, when that is not a secret: Plausible's site id, Search Console's property"
  })
}).annotate({ identifier: "Connection" })
export type Connection = typeof Connection.Type

export const ConnectionList = Schema.Struct({
  websiteId: Schema.String,
  connections: Schema.Array(Connection),
  stripePermissions: Schema.Array(StripePermission).annotate({
    description: "The read permissions a Stripe restricted key needs"
  }),
  googleConfigured: Schema.Boolean.annotate({
    description: "Whether this server has GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET (Search Console needs them)"
  })
}).annotate({ identifier: "ConnectionList" })

export const ConnectStripePayload = Schema.Struct({
  key: Schema.String.annotate({ description: "A restricted key `rk_live_…`/`rk_test_…` (or a secret key `sk_…`)" })
}).annotate({ identifier: "ConnectStripeRequest" })

export const ConnectPlausiblePayload = Schema.Struct({
  apiKey: Schema.String.annotate({ description: "A Plausible Stats API key" }),
  siteId: Schema.String.annotate({ description: "The site's domain as registered in Plausible, e.g. example.com" })
}).annotate({ identifier: "ConnectPlausibleRequest" })

export const Connected = Schema.Struct({
  connection: Connection,
  sync: SyncRun.annotate({ description: "The first full sync, queued" })
}).annotate({ identifier: "Connected" })

export const GoogleAuthorization = Schema.Struct({
  authorizeUrl: Schema.String.annotate({ description: "Send the browser here (Google's consent screen)" }),
  redirectUri: Schema.String.annotate({ description: "Where Google sends the browser back with ?code&state" }),
  expiresAt: Timestamp.annotate({ description: "The flow must be completed before this" })
}).annotate({ identifier: "GoogleAuthorization" })

export const GoogleCallbackPayload = Schema.Struct({
  code: Schema.String.annotate({ description: "`code` from the redirect's query" }),
  state: Schema.String.annotate({ description: "`state` from the redirect's query" })
}).annotate({ identifier: "GoogleCallbackRequest" })

export const SearchConsoleProperty = Schema.Struct({
  siteUrl: Schema.String.annotate({ description: "`https://example.com/` or `sc-domain:example.com`" }),
  permissionLevel: Schema.String
}).annotate({ identifier: "SearchConsoleProperty" })

export const GoogleAuthorized = Schema.Struct({
  websiteId: Schema.String,
  flow: Schema.String.annotate({ description: "Hand it back with the chosen property" }),
  properties: Schema.Array(SearchConsoleProperty)
}).annotate({ identifier: "GoogleAuthorized" })

export const ChooseGscPropertyPayload = Schema.Struct({
  flow: Schema.String,
  siteUrl: Schema.String
}).annotate({ identifier: "ChooseSearchConsolePropertyRequest" })

export const Disconnected = Schema.Struct({
  provider: Provider,
  disconnected: Schema.Literal(true)
}).annotate({ identifier: "Disconnected" })

const websiteParams = { id: Schema.String }
const providerParams = { id: Schema.String, provider: Schema.String }

export class DashboardConnectionsApi extends HttpApiGroup.make("connections")
  .add(
    doc(
      HttpApiEndpoint.get("list", "/websites/:id/connections", {
        params: websiteParams,
        success: Envelope("ConnectionListResponse", ConnectionList),
        error: [NotFound]
      }).annotate(DashboardAccessAnnotation, "viewer"),
      "A website's connections: status, last sync, last error; never a credential"
    ),
    doc(
      HttpApiEndpoint.post("connectStripe", "/websites/:id/connections/stripe", {
        params: websiteParams,
        payload: ConnectStripePayload,
        success: Envelope("StripeConnected", Connected, { status: 201 }),
        error: [BadRequest, NotFound, CredentialsRejected, ProviderUnavailable]
      }).annotate(DashboardAccessAnnotation, "admin"),
      "Connect Stripe with a restricted key, checked live first; queues a full sync",
      "422 `missing_permissions` names the read permissions the key lacks; 502 when Stripe cannot be reached."
    ),
    doc(
      HttpApiEndpoint.post("connectPlausible", "/websites/:id/connections/plausible", {
        params: websiteParams,
        payload: ConnectPlausiblePayload,
        success: Envelope("PlausibleConnected", Connected, { status: 201 }),
        error: [BadRequest, NotFound, CredentialsRejected, ProviderUnavailable]
      }).annotate(DashboardAccessAnnotation, "admin"),
      "Connect Plausible with a Stats API key and the site id, checked live first; queues a full sync"
    ),
    doc(
      HttpApiEndpoint.post("startGoogle", "/websites/:id/connections/google-search-console/start", {
        params: websiteParams,
        success: Envelope("GoogleAuthorizationResponse", GoogleAuthorization),
        error: [NotFound, Unavailable]
      }).annotate(DashboardAccessAnnotation, "admin"),
      "Start Google's OAuth flow (PKCE S256 + state): answers the authorize URL to send the browser to",
      "503 `google_not_configured` when the server has no GOOGLE_CLIENT_ID / GOOGLE_CLIENT_SECRET."
    ),
    doc(
      HttpApiEndpoint.post("googleCallback", "/connections/google/callback", {
        payload: GoogleCallbackPayload,
        success: Envelope("GoogleAuthorizedResponse", GoogleAuthorized),
        error: [BadRequest, CredentialsRejected, ProviderUnavailable, Unavailable]
      }).annotate(DashboardAccessAnnotation, "admin"),
      "Finish Google's OAuth flow: exchanges the code (with the PKCE verifier) and lists the account's properties",
      "400 `oauth_state_invalid` for a state this session did not start, already used or expired; 422 `oauth_failed` " +
        "when Google refuses the code."
    ),
    doc(
      HttpApiEndpoint.post("connectGoogle", "/websites/:id/connections/google-search-console", {
        params: websiteParams,
        payload: ChooseGscPropertyPayload,
        success: Envelope("SearchConsoleConnected", Connected, { status: 201 }),
        error: [BadRequest, NotFound, CredentialsRejected, ProviderUnavailable, Unavailable]
      }).annotate(DashboardAccessAnnotation, "admin"),
      "Connect Search Console to the property chosen from the OAuth flow's list; queues a full sync"
    ),
    doc(
      HttpApiEndpoint.delete("disconnect", "/websites/:id/connections/:provider", {
        params: providerParams,
        success: Envelope("ConnectionDisconnected", Disconnected),
        error: [NotFound]
      }).annotate(DashboardAccessAnnotation, "admin"),
      "Disconnect: deletes the stored credentials and queued syncs (the data already synced stays)"
    ),
    doc(
      HttpApiEndpoint.post("syncNow", "/websites/:id/connections/:provider/sync", {
        params: providerParams,
        success: Envelope("ConnectionSyncQueued", SyncResult, { status: 202 }),
        error: [NotFound]
      }).annotate(DashboardAccessAnnotation, "admin"),
      "Sync now: queues an incremental sync (or answers the one already queued or running)"
    )
  )
  .annotateMerge(OpenApi.annotations({ title: "Connections", description: "Stripe, Plausible and Search Console" }))
{}

/**
 * The connections group alone, as `DashboardApi` serves it (behind the session, same middlewares and prefix):
 * the web app's client for the pages that connect providers, loaded with them.
 */
export class DashboardConnectionsHttpApi extends HttpApi.make("dashboard")
  .add(DashboardConnectionsApi.middleware(DashboardSession))
  .middleware(DashboardOrigin)
  .middleware(RequestErrors)
  .prefix(DASHBOARD_PREFIX)
{}
