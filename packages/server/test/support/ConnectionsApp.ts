/**
 * The dashboard's `connections` group over the real HTTP stack (router, RequestErrors, the group's handlers,
 * the envelope), on the store the project selects, with local fake providers: Stripe, Plausible, and Google
 * (OAuth authorize + token endpoints, Search Console). Live clock: the provider client's retries really wait.
 *
 * The session is the one thing stood in for: `DashboardSession` here takes the `sitehealth_session` cookie's
 * value as the account id (no cookie → 401 `session_required`, as the real middleware answers), so these
 * tests exercise the group alone; the real middleware's own tests cover cookies and CSRF. `DashboardOrigin`
 * (the cross-site check DashboardApi puts in front of every group) lets these same-origin requests through.
 */
import { RequestErrors } from "@sitehealth/domain/Authentication"
import type { AccountId } from "@sitehealth/domain/Common"
import type { SessionId } from "@sitehealth/domain/Dashboard"
import {
  CurrentDashboardSession,
  DASHBOARD_PREFIX,
  DashboardOrigin,
  DashboardSession,
  SESSION_COOKIE
} from "@sitehealth/domain/DashboardApi"
import { DashboardConnectionsApi } from "@sitehealth/domain/DashboardConnections"
import { Unauthorized } from "@sitehealth/domain/Errors"
import { startFakeGsc } from "@sitehealth/fakes/FakeGsc"
import { scopedFake } from "@sitehealth/fakes/FakeHttp"
import { startFakePlausible } from "@sitehealth/fakes/FakePlausible"
import { fromArray, startFakeStripe } from "@sitehealth/fakes/FakeStripe"
import { Context, Effect, Layer, Redacted, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApi, HttpApiBuilder } from "effect/http-api"
import { inject } from "vitest"
import { createAccount, createProject } from "../../src/accounts/Provisioning.ts"
import { ROUTER_CONFIG } from "../../src/App.ts"
import { DashboardConnectionsHttp } from "../../src/dashboard/connections/Http.ts"
import { RequestErrorsLive } from "../../src/http/RequestErrors.ts"
import { MemoryRepos, SqlRepos } from "../../src/Layers.ts"
import { AppConfig, type AppConfigShape, readConfig } from "../../src/platform/Config.ts"
import { pgLayer } from "../../src/platform/Database.ts"
import { store } from "./TestApp.ts"

export const STRIPE_KEY = "rk_test_51GoodRestrictedKeyAbCdEf0123456789"
export const PLAUSIBLE_KEY = "plausible-key-TOPSECRET-0123456789"
export const PLAUSIBLE_SITE = "site0.example"
export const GOOGLE = {
  clientId: "1234-fake.apps.googleusercontent.com",
  clientSecret: "GOCSPX-client-TOPSECRET",
  refreshToken: "1//refresh-TOPSECRET-token",
  siteUrl: "sc-domain:site0.example"
}
export const SECRET_KEY = Buffer.alloc(32, 7).toString("base64")
export const REDIRECT_URI = "http://localhost:5173/oauth/google/callback"

const TestDashboardApi = HttpApi.make("dashboard")
  .add(DashboardConnectionsApi.middleware(DashboardSession))
  .middleware(RequestErrors)
  .prefix(DASHBOARD_PREFIX)

const TestSession = Layer.succeed(
  DashboardSession,
  DashboardSession.of({
    // Only the plain cookie stands in here: the `__Host-` one is never sent.
    secureCookie: () => Effect.fail(new Unauthorized({ message: "Log in to continue", type: "session_required" })),
    cookie: (httpEffect, { credential }) => {
      const accountId = Redacted.value(credential)
      return accountId === ""
        ? Effect.fail(new Unauthorized({ message: "Log in to continue", type: "session_required" }))
        : Effect.provideService(httpEffect, CurrentDashboardSession, {
          sessionId: "ses_test" as SessionId,
          userId: "usr_test",
          accountId: accountId as AccountId,
          email: "owner@example.com",
          emailVerified: true,
          csrfToken: "csrf",
          idleExpiresAt: new Date(8.64e15),
          absoluteExpiresAt: new Date(8.64e15),
          staySignedIn: false,
          role: "owner"
        })
    }
  })
)

const SameOrigin = Layer.succeed(DashboardOrigin, DashboardOrigin.of((httpEffect) => httpEffect))

export interface CallResult {
  readonly status: number
  readonly json: any
  readonly text: string
  readonly headers: Headers
}

const makeApp = Effect.gen(function*() {
  const stripe = yield* scopedFake(() =>
    startFakeStripe(
      {
        customers: fromArray([]),
        subscriptions: fromArray([]),
        invoices: fromArray([]),
        charges: fromArray([]),
        refunds: fromArray([])
      },
      { keys: [STRIPE_KEY] }
    )
  )
  const plausible = yield* Effect.acquireRelease(
    Effect.promise(() =>
      startFakePlausible({
        apiKey: PLAUSIBLE_KEY,
        siteId: PLAUSIBLE_SITE,
        data: { days: {}, hours: {}, pages: [], sources: [], uniques: {} }
      })
    ),
    (f) => Effect.promise(() => f.close())
  )
  const google = yield* Effect.acquireRelease(
    Effect.promise(() =>
      startFakeGsc({
        ...GOOGLE,
        rows: [],
        totals: {},
        sites: [{ siteUrl: GOOGLE.siteUrl, permissionLevel: "siteOwner" }, {
          siteUrl: "https://other.example/",
          permissionLevel: "siteFullUser"
        }, { siteUrl: "https://unverified.example/", permissionLevel: "siteUnverifiedUser" }]
      })
    ),
    (f) => Effect.promise(() => f.close())
  )
  const base = readConfig({})
  const config: AppConfigShape = {
    ...base,
    secretKey: Redacted.make(SECRET_KEY),
    connections: {
      ...base.connections,
      googleClientId: GOOGLE.clientId,
      googleClientSecret: Redacted.make(GOOGLE.clientSecret),
      googleRedirectUri: REDIRECT_URI,
      googleAuthUrl: google.authUrl,
      googleTokenUrl: google.tokenUrl,
      stripeApiBase: stripe.url,
      plausibleApiBase: plausible.url,
      gscApiBase: google.url
    }
  }
  const repos: Layer.Layer<any, any> = store === "memory"
    ? MemoryRepos
    : SqlRepos.pipe(Layer.provideMerge(pgLayer(inject("databaseUrl"))))
  const scope = yield* Scope.Scope
  const context = yield* (Layer.buildWithScope(repos, scope) as Effect.Effect<Context.Context<any>>)
  const app = HttpApiBuilder.layer(TestDashboardApi).pipe(
    Layer.provide(DashboardConnectionsHttp),
    Layer.provide([TestSession, SameOrigin, RequestErrorsLive]),
    Layer.provide(AppConfig.layer(config)),
    Layer.provide(Layer.succeedContext(context)),
    Layer.provide(HttpServer.layerServices)
  )
  const { dispose, handler } = HttpRouter.toWebHandler(app as any, { disableLogger: true, routerConfig: ROUTER_CONFIG })
  yield* Effect.addFinalizer(() => Effect.promise(() => dispose()))

  const run = <A, E>(effect: Effect.Effect<A, E, any>) =>
    effect.pipe(Effect.provideContext(context)) as Effect.Effect<A, E>

  /** A request as the web app sends it: JSON, the session cookie naming the account (null: logged out). */
  const call = (method: string, path: string, account: string | null, body?: unknown): Effect.Effect<CallResult> =>
    Effect.promise(async () => {
      const headers: Record<string, string> = {}
      if (account !== null) headers.cookie = `${SESSION_COOKIE}=${account}`
      if (body !== undefined) headers["content-type"] = "application/json"
      const response = await handler(
        new Request(`http://localhost${DASHBOARD_PREFIX}${path}`, {
          method,
          headers,
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
      )
      const text = await response.text()
      let json: any
      try {
        json = JSON.parse(text)
      } catch {
        json = undefined
      }
      return { status: response.status, json, text, headers: response.headers }
    })

  const newWebsite = Effect.gen(function*() {
    const account = yield* run(createAccount({ name: "Owner" }))
    const project = yield* run(createProject({ accountId: account.id, name: "Site", domain: "site0.example" }))
    return { accountId: account.id as string, websiteId: project.id as string }
  }).pipe(Effect.orDie)

  return { stripe, plausible, google, config, run, call, newWebsite }
})

export class ConnectionsApp
  extends Context.Service<ConnectionsApp, Effect.Success<typeof makeApp>>()("test/ConnectionsApp")
{
  static readonly layer = Layer.effect(ConnectionsApp, makeApp)
}
