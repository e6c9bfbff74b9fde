/**
 * The dashboard's connections, for the logged-in account: list (never a credential), connect Stripe and
 * Plausible (checked live first, stored encrypted, a full sync queued), Google's OAuth flow for Search
 * Console (start → callback → choose the property), disconnect (credentials deleted) and "sync now".
 * Every operation first finds the website among the account's own: another account's is 404, as unknown.
 *
 * Errors in words: a malformed key is 400, a key the provider refuses 422 (`missing` names a restricted key's
 * missing permissions), a provider that cannot be reached 502 — nothing is stored in any of these cases.
 */
import {
  type Connection,
  CredentialsRejected,
  ProviderUnavailable,
  STRIPE_READ_PERMISSIONS
} from "@sitehealth/domain/DashboardConnections"
import { badRequest, notFound, Unavailable } from "@sitehealth/domain/Errors"
import { LISTED_PROVIDERS, type Provider, PROVIDER_NAMES } from "@sitehealth/domain/Integrations"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { createHash } from "node:crypto"
import { isProvider, presentRun, PROVIDER_KIND } from "../../api/Integrations.ts"
import { type Credentials, resolveBaseUrl } from "../../integrations/Connector.ts"
import { type CredentialsCipherShape, makeCipher, oldSecretKey, resolveSecretKey } from "../../integrations/Crypto.ts"
import {
  authorizeUrl,
  challengeOf,
  exchangeCode,
  listSites,
  newState,
  newVerifier,
  verifyGscProperty
} from "../../integrations/gsc/GoogleOAuth.ts"
import { DEFAULT_GOOGLE_TOKEN_URL } from "../../integrations/gsc/GoogleToken.ts"
import { gscConnector } from "../../integrations/gsc/GscConnector.ts"
import { IntegrationsRepo } from "../../integrations/IntegrationsRepo.ts"
import { plausibleConnector } from "../../integrations/plausible/PlausibleConnector.ts"
import { plausibleInputProblem, verifyPlausible } from "../../integrations/plausible/PlausibleVerify.ts"
import { makeProviderHttp, type ProviderHttpShape } from "../../integrations/ProviderHttp.ts"
import { stripeConnector } from "../../integrations/stripe/StripeConnector.ts"
import { stripeKeyProblem, verifyStripeKey } from "../../integrations/stripe/StripeVerify.ts"
import { SyncQueue } from "../../integrations/SyncQueue.ts"
import type { VerifyFailure } from "../../integrations/Verify.ts"
import { AppConfig } from "../../platform/Config.ts"
import { GSC_SCOPE } from "../../platform/ConnectionSettings.ts"
import { readProviderUrl } from "../../platform/ProviderUrls.ts"
import { ProjectsRepo } from "../../projects/ProjectsRepo.ts"
import { randomBase62 } from "../../store/Ids.ts"
import { isoOrNull } from "../../store/Present.ts"
import type { IntegrationRecord, SyncRunRecord } from "../../store/Records.ts"
import { OAuthFlowsRepo } from "./OAuthFlowsRepo.ts"

/** How long a Google sign-in may take, start to property choice. */
export const OAUTH_FLOW_MS = 15 * 60_000

const REQUESTED_BY = "dashboard"

/** A provider's refusal as the API's error: 422 with the reason's type, or 502 when it could not be asked. */
export const toApiError = (e: VerifyFailure): CredentialsRejected | ProviderUnavailable =>
  e.kind === "unavailable"
    ? new ProviderUnavailable({ message: e.message, type: "provider_unavailable" })
    : new CredentialsRejected({
      message: e.message,
      type: e.kind === "missing_permissions"
        ? "missing_permissions"
        : e.kind === "not_found"
        ? "site_not_found"
        : "credentials_rejected",
      ...(e.missing.length > 0 ? { missing: e.missing } : {})
    })

const sha256 = (text: string) => new Uint8Array(createHash("sha256").update(text).digest())

const stateInvalid = () =>
  badRequest(
    "This Google sign-in was not started from this session, was already used, or took longer than 15 minutes. Start " +
      "connecting Search Console again.",
    "oauth_state_invalid"
  )

export const makeConnections = Effect.gen(function*() {
  const projects = yield* ProjectsRepo
  const integrations = yield* IntegrationsRepo
  const queue = yield* SyncQueue
  const flows = yield* OAuthFlowsRepo
  const config = yield* AppConfig
  const settings = config.connections
  // Short waits: the owner is watching the page; one retry covers a blip.
  const http: ProviderHttpShape = makeProviderHttp({ timeoutMs: 15_000, maxAttempts: 2, maxWaitMs: 5_000 })

  // Built on first use, so a server that never connects anything never reads or creates the key file.
  let cipherMemo: CredentialsCipherShape | null = null
  const cipher = Effect.suspend(() => {
    if (cipherMemo !== null) return Effect.succeed(cipherMemo)
    try {
      cipherMemo = makeCipher(resolveSecretKey(config), oldSecretKey(config))
      return Effect.succeed(cipherMemo)
    } catch (e) {
      return Effect.andThen(
        Effect.logError("dashboard connections: no credentials key", (e as Error).message),
        Effect.fail(
          new Unavailable({
            message:
              "This server cannot store credentials: its SITEHEALTH_SECRET_KEY is missing or invalid (the operator's " +
              "log says which).",
            type: "secret_key_unavailable"
          })
        )
      )
    }
  })

  const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

  const ownWebsite = (accountId: string, id: string) =>
    Effect.flatMap(
      projects.find(id),
      (project) =>
        project === null || project.accountId !== accountId
          ? Effect.fail(notFound(`Website ${id}`))
          : Effect.succeed(project)
    )

  /** What the row is connected to, when that is no secret (Plausible's site id, Search Console's property). */
  const detailOf = (projectId: string, provider: string) =>
    provider !== "plausible" && provider !== "google-search-console"
      ? Effect.succeed(null)
      : Effect.gen(function*() {
        const connection = yield* integrations.connection(projectId, provider)
        if (connection === null || connection.credentials === null) return null
        const c = yield* cipher
        const creds = yield* Effect.option(c.decrypt(connection.credentials))
        if (creds._tag === "None") return null
        return (provider === "plausible" ? creds.value.site_id : creds.value.site_url) ?? null
      }).pipe(Effect.catch(() => Effect.succeed(null)))

  const present = (
    provider: Provider,
    row: IntegrationRecord | undefined,
    lastRun: SyncRunRecord | undefined,
    detail: string | null
  ): Connection => ({
    provider,
    name: PROVIDER_NAMES[provider],
    kind: PROVIDER_KIND[provider],
    status: row ? row.status : "not_connected",
    connectedAt: row ? row.connectedAt.toISOString() : null,
    lastSyncAt: isoOrNull(row?.lastSyncedAt ?? null),
    lastError: row?.lastError ?? null,
    lastRun: lastRun ? presentRun(lastRun) : null,
    detail
  })

  const connectionOf = (projectId: string, provider: Provider) =>
    Effect.gen(function*() {
      const { integrations: rows, lastRuns } = yield* integrations.list(projectId)
      return present(
        provider,
        rows.find((r) => r.provider === provider),
        lastRuns.find((r) => r.provider === provider),
        yield* detailOf(projectId, provider)
      )
    })

  /**
   * Stores the checked credentials encrypted and queues the first full sync. The syncs go where the credentials
   * were checked: a base URL set in the settings (a test's local fake) is kept with the connection; without one
   * (production) both resolve the provider's environment variable or its default.
   */
  const store = (projectId: string, provider: Provider, credentials: Credentials) =>
    Effect.gen(function*() {
      const c = yield* cipher
      const at = yield* now
      yield* integrations.connect({
        projectId,
        provider,
        credentials: c.encrypt(credentials),
        baseUrl: provider === "stripe"
          ? settings.stripeApiBase
          : provider === "plausible"
          ? settings.plausibleApiBase
          : settings.gscApiBase,
        syncIntervalMinutes: null,
        now: at
      })
      const { sync } = yield* queue.request({ projectId, provider, mode: "full", requestedBy: REQUESTED_BY, now: at })
      return { connection: yield* connectionOf(projectId, provider), sync: presentRun(sync) }
    })

  const googleClient = Effect.suspend(() =>
    settings.googleClientId === null || settings.googleClientSecret === null
      ? Effect.fail(
        new Unavailable({
          message:
            "Search Console cannot be connected on this server yet: the operator must set GOOGLE_CLIENT_ID and " +
            "GOOGLE_CLIENT_SECRET (docs/dashboard.md).",
          type: "google_not_configured"
        })
      )
      : Effect.succeed({ clientId: settings.googleClientId, clientSecret: Redacted.value(settings.googleClientSecret) })
  )

  /**
   * The provider's API base: this server's override, else the one the sync worker uses. An invariant, not a
   * request error: the provider URL variables were checked at start-up (platform/Config.ts), so reading one cannot
   * fail.
   */
  const baseOf = (override: string | null, connector: Parameters<typeof resolveBaseUrl>[0]) =>
    override !== null ? Effect.succeed(override) : resolveBaseUrl(connector, null).pipe(Effect.orDie)
  const gscBase = baseOf(settings.gscApiBase, gscConnector)
  // The same invariant: GOOGLE_TOKEN_URL was checked at start-up.
  const googleTokenUrl = settings.googleTokenUrl !== null
    ? Effect.succeed(settings.googleTokenUrl)
    : readProviderUrl("GOOGLE_TOKEN_URL").pipe(Effect.map((url) => url ?? DEFAULT_GOOGLE_TOKEN_URL), Effect.orDie)

  return {
    list: (accountId: string, id: string) =>
      Effect.gen(function*() {
        const project = yield* ownWebsite(accountId, id)
        const { integrations: rows, lastRuns } = yield* integrations.list(project.id)
        const shown: Array<Provider> = [...LISTED_PROVIDERS]
        for (const r of rows) if (isProvider(r.provider) && !shown.includes(r.provider)) shown.push(r.provider)
        const connections = yield* Effect.forEach(shown, (provider) => {
          const row = rows.find((r) => r.provider === provider)
          return Effect.map(row === undefined ? Effect.succeed(null) : detailOf(project.id, provider), (detail) =>
            present(provider, row, lastRuns.find((r) => r.provider === provider), detail))
        })
        return {
          websiteId: project.id,
          connections,
          stripePermissions: STRIPE_PERMISSIONS,
          googleConfigured: settings.googleClientId !== null && settings.googleClientSecret !== null
        }
      }),

    connectStripe: (accountId: string, id: string, key: string) =>
      Effect.gen(function*() {
        const project = yield* ownWebsite(accountId, id)
        const problem = stripeKeyProblem(key)
        if (problem !== null) return yield* Effect.fail(badRequest(problem, "invalid_key_format"))
        const credentials = { secret_key: key.trim() }
        yield* verifyStripeKey({ baseUrl: yield* baseOf(settings.stripeApiBase, stripeConnector), credentials, http })
          .pipe(
            Effect.mapError(toApiError)
          )
        return yield* store(project.id, "stripe", credentials)
      }),

    connectPlausible: (accountId: string, id: string, apiKey: string, siteId: string) =>
      Effect.gen(function*() {
        const project = yield* ownWebsite(accountId, id)
        const problem = plausibleInputProblem(apiKey, siteId)
        if (problem !== null) return yield* Effect.fail(badRequest(problem, "invalid_credentials_format"))
        const credentials = { api_key: apiKey.trim(), site_id: siteId.trim() }
        yield* verifyPlausible({
          baseUrl: yield* baseOf(settings.plausibleApiBase, plausibleConnector),
          credentials,
          http
        }).pipe(
          Effect.mapError(toApiError)
        )
        return yield* store(project.id, "plausible", credentials)
      }),

    startGoogle: (accountId: string, id: string) =>
      Effect.gen(function*() {
        const project = yield* ownWebsite(accountId, id)
        const client = yield* googleClient
        const c = yield* cipher
        const at = yield* now
        const state = newState()
        const verifier = newVerifier()
        const expiresAt = new Date(at.getTime() + OAUTH_FLOW_MS)
        yield* flows.create({
          id: `oaf_${randomBase62(22)}`,
          stateSha256: sha256(state),
          accountId,
          projectId: project.id,
          secrets: c.encrypt({ verifier }),
          exchangedAt: null,
          expiresAt
        }, at)
        return {
          authorizeUrl: authorizeUrl({
            authUrl: settings.googleAuthUrl,
            clientId: client.clientId,
            redirectUri: settings.googleRedirectUri,
            scope: GSC_SCOPE,
            state,
            challenge: challengeOf(verifier)
          }),
          redirectUri: settings.googleRedirectUri,
          expiresAt: expiresAt.toISOString()
        }
      }),

    googleCallback: (accountId: string, code: string, state: string) =>
      Effect.gen(function*() {
        const client = yield* googleClient
        if (state.length === 0 || state.length > 512) return yield* Effect.fail(stateInvalid())
        if (code.length === 0 || code.length > 2048) {
          return yield* Effect.fail(
            badRequest(
              "The redirect from Google carried no authorization code. Start connecting Search Console again.",
              "oauth_code_missing"
            )
          )
        }
        const c = yield* cipher
        // Claimed once, by the account that started it: a replayed or foreign state is refused here.
        const flow = yield* flows.claim(sha256(state), accountId, yield* now)
        if (flow === null) return yield* Effect.fail(stateInvalid())
        const secrets = yield* c.decrypt(flow.secrets).pipe(Effect.catch(() => Effect.fail(stateInvalid())))
        const verifier = secrets.verifier
        if (verifier === undefined) return yield* Effect.fail(stateInvalid())
        const tokens = yield* exchangeCode(http, {
          tokenUrl: yield* googleTokenUrl,
          clientId: client.clientId,
          clientSecret: client.clientSecret,
          code,
          verifier,
          redirectUri: settings.googleRedirectUri
        }).pipe(Effect.mapError((e) =>
          e.kind === "unavailable"
            ? toApiError(e)
            : new CredentialsRejected({ message: e.message, type: "oauth_failed" })
        ))
        yield* flows.complete(flow.id, c.encrypt({ verifier, refresh_token: tokens.refreshToken }))
        const properties = yield* listSites(http, yield* gscBase, tokens.accessToken).pipe(Effect.mapError(toApiError))
        return { websiteId: flow.projectId, flow: flow.id, properties }
      }),

    connectGoogle: (accountId: string, id: string, flowId: string, siteUrl: string) =>
      Effect.gen(function*() {
        const project = yield* ownWebsite(accountId, id)
        const client = yield* googleClient
        const c = yield* cipher
        const at = yield* now
        // A flow id is ours (`oaf_` and base62): anything else is unknown without asking the database.
        const flow = /^oaf_[A-Za-z0-9]{1,64}$/.test(flowId) ? yield* flows.find(flowId) : null
        if (
          flow === null || flow.accountId !== accountId || flow.projectId !== project.id || flow.exchangedAt === null ||
          flow.expiresAt.getTime() <= at.getTime()
        ) {
          return yield* Effect.fail(
            badRequest(
              "This Google sign-in is unknown, unfinished or older than 15 minutes. Start connecting Search Console " +
                "again.",
              "oauth_flow_invalid"
            )
          )
        }
        const secrets = yield* c.decrypt(flow.secrets).pipe(Effect.catch(() => Effect.fail(stateInvalid())))
        if (secrets.refresh_token === undefined) return yield* Effect.fail(stateInvalid())
        const site = siteUrl.trim()
        if (site.length === 0 || site.length > 2048) {
          return yield* Effect.fail(badRequest("Choose a Search Console property.", "invalid_request"))
        }
        const credentials: Credentials = {
          client_id: client.clientId,
          client_secret: client.clientSecret,
          refresh_token: secrets.refresh_token,
          site_url: site,
          // Stored only when this server overrides it; otherwise the sync reads GOOGLE_TOKEN_URL, as for any
          // connection.
          ...(settings.googleTokenUrl === null ? {} : { token_uri: settings.googleTokenUrl })
        }
        yield* verifyGscProperty({ baseUrl: yield* gscBase, credentials, http }).pipe(Effect.mapError(toApiError))
        const connected = yield* store(project.id, "google-search-console", credentials)
        yield* flows.remove(flow.id)
        return connected
      }),

    disconnect: (accountId: string, id: string, provider: string) =>
      Effect.gen(function*() {
        const project = yield* ownWebsite(accountId, id)
        if (!isProvider(provider) || !(yield* integrations.disconnect(project.id, provider))) {
          return yield* Effect.fail(notFound(`Connection "${provider}" of this website`))
        }
        return { provider, disconnected: true as const }
      }),

    syncNow: (accountId: string, id: string, provider: string) =>
      Effect.gen(function*() {
        const project = yield* ownWebsite(accountId, id)
        if (!isProvider(provider) || (yield* integrations.connection(project.id, provider)) === null) {
          return yield* Effect.fail(notFound(`Connection "${provider}" of this website (connect it first)`))
        }
        const result = yield* queue.request({
          projectId: project.id,
          provider,
          mode: "incremental",
          requestedBy: REQUESTED_BY,
          now: yield* now
        })
        return { sync: presentRun(result.sync), alreadyQueued: result.alreadyQueued }
      })
  }
})

const STRIPE_PERMISSIONS = STRIPE_READ_PERMISSIONS.map((p) => ({ ...p }))

export type Connections = Effect.Success<typeof makeConnections>
