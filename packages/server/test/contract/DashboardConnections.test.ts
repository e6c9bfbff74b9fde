/**
 * The dashboard's connections (/app/api/websites/{id}/connections…) on both stores, against local fake
 * providers: Stripe and Plausible keys checked live before anything is stored (stored encrypted, never sent
 * back; a refused key is a 422 in words and stores nothing; a provider that is down is a 502), Google's OAuth
 * flow with PKCE and state end to end (a forged or replayed state, another account's state and a wrong PKCE
 * verifier refused), disconnect deleting the credentials, "sync now" queueing, another account's website
 * 404, logged out 401.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { OAuthFlowsRepo } from "../../src/dashboard/connections/OAuthFlowsRepo.ts"
import { CredentialsCipher } from "../../src/integrations/Crypto.ts"
import { IntegrationsRepo } from "../../src/integrations/IntegrationsRepo.ts"
import { SyncQueue } from "../../src/integrations/SyncQueue.ts"
import {
  ConnectionsApp,
  GOOGLE,
  PLAUSIBLE_KEY,
  PLAUSIBLE_SITE,
  REDIRECT_URI,
  SECRET_KEY,
  STRIPE_KEY
} from "../support/ConnectionsApp.ts"
import { expectError } from "../support/Expect.ts"

/** The state with its last two characters changed (never to what they were: 1 run in 4,096 once drew "AA"). */
const forge = (state: string) => `${state.slice(0, -2)}${state.endsWith("AA") ? "BB" : "AA"}`

const app = ConnectionsApp

/** The stored row: its bytes hold none of `secrets`, and decrypt (with the server's key) to `expected`. */
const expectStoredEncrypted = (websiteId: string, provider: string, expected: Record<string, string>) =>
  Effect.gen(function*() {
    const { run } = yield* app
    const connection = yield* run(Effect.flatMap(IntegrationsRepo, (r) => r.connection(websiteId, provider)))
    expect(connection).not.toBeNull()
    const bytes = Buffer.from(connection!.credentials!)
    for (const secret of Object.values(expected)) {
      expect(bytes.includes(Buffer.from(secret))).toBe(false)
      expect(bytes.toString("latin1")).not.toContain(secret)
      expect(bytes.toString("base64")).not.toContain(Buffer.from(secret).toString("base64"))
    }
    const plain = yield* Effect.flatMap(CredentialsCipher, (c) => c.decrypt(connection!.credentials!)).pipe(
      Effect.provide(CredentialsCipher.layer(new Uint8Array(Buffer.from(SECRET_KEY, "base64"))))
    )
    expect(plain).toEqual(expected)
  })

const expectNothingStored = (websiteId: string, provider: string) =>
  Effect.gen(function*() {
    const { run } = yield* app
    expect(yield* run(Effect.flatMap(IntegrationsRepo, (r) => r.connection(websiteId, provider)))).toBeNull()
  })

/** Follows Google's authorize URL as the browser would; the fake consents and redirects back with code and state. */
const consent = (authorizeUrl: string) =>
  Effect.promise(async () => {
    const response = await fetch(authorizeUrl, { redirect: "manual" })
    expect(response.status).toBe(302)
    const back = new URL(response.headers.get("location")!)
    return {
      redirect: `${back.origin}${back.pathname}`,
      code: back.searchParams.get("code")!,
      state: back.searchParams.get("state")!
    }
  })

layer(ConnectionsApp.layer, { timeout: 60_000, excludeTestServices: true })("Dashboard connections", (it) => {
  describe("access", () => {
    it.effect("logged out: 401 on every endpoint", () =>
      Effect.gen(function*() {
        const { call, newWebsite } = yield* app
        const { websiteId } = yield* newWebsite
        for (
          const [method, path, body] of [
            ["GET", `/websites/${websiteId}/connections`, undefined],
            ["POST", `/websites/${websiteId}/connections/stripe`, { key: STRIPE_KEY }],
            ["POST", `/websites/${websiteId}/connections/plausible`, { apiKey: PLAUSIBLE_KEY, siteId: PLAUSIBLE_SITE }],
            ["POST", `/websites/${websiteId}/connections/google-search-console/start`, undefined],
            ["POST", `/connections/google/callback`, { code: "x", state: "y" }],
            ["POST", `/websites/${websiteId}/connections/google-search-console`, { flow: "x", siteUrl: "y" }],
            ["DELETE", `/websites/${websiteId}/connections/stripe`, undefined],
            ["POST", `/websites/${websiteId}/connections/stripe/sync`, undefined]
          ] as const
        ) {
          expectError(yield* call(method, path, null, body), 401)
        }
        yield* expectNothingStored(websiteId, "stripe")
      }))

    it.effect("another account's website: 404 on every endpoint, as an unknown one", () =>
      Effect.gen(function*() {
        const { call, newWebsite } = yield* app
        const mine = yield* newWebsite
        const theirs = yield* newWebsite
        const id = theirs.websiteId
        for (
          const [method, path, body] of [
            ["GET", `/websites/${id}/connections`, undefined],
            ["POST", `/websites/${id}/connections/stripe`, { key: STRIPE_KEY }],
            ["POST", `/websites/${id}/connections/plausible`, { apiKey: PLAUSIBLE_KEY, siteId: PLAUSIBLE_SITE }],
            ["POST", `/websites/${id}/connections/google-search-console/start`, undefined],
            ["POST", `/websites/${id}/connections/google-search-console`, { flow: "oaf_x", siteUrl: GOOGLE.siteUrl }],
            ["DELETE", `/websites/${id}/connections/stripe`, undefined],
            ["POST", `/websites/${id}/connections/stripe/sync`, undefined],
            ["GET", `/websites/prj_doesNotExist0000/connections`, undefined]
          ] as const
        ) {
          expectError(yield* call(method, path, mine.accountId, body), 404, "not_found")
        }
        yield* expectNothingStored(id, "stripe")
        yield* expectNothingStored(id, "plausible")
      }))
  })

  describe("list", () => {
    it.effect("every provider, not connected; the Stripe permissions the page shows; Google configured", () =>
      Effect.gen(function*() {
        const { call, newWebsite } = yield* app
        const { accountId, websiteId } = yield* newWebsite
        const r = yield* call("GET", `/websites/${websiteId}/connections`, accountId)
        expect(r.status, r.text).toBe(200)
        expect(r.json.data.websiteId).toBe(websiteId)
        expect(r.json.data.connections.map((c: any) => [c.provider, c.status])).toEqual([
          ["stripe", "not_connected"],
          ["plausible", "not_connected"],
          ["google-search-console", "not_connected"]
        ])
        expect(r.json.data.stripePermissions.map((p: any) => p.resource)).toEqual([
          "customers",
          "subscriptions",
          "invoices",
          "charges",
          "refunds"
        ])
        expect(r.json.data.googleConfigured).toBe(true)
      }))
  })

  describe("Stripe", () => {
    it.effect("a good restricted key: checked against every list the sync reads, stored encrypted, a full sync queued, never sent back", () =>
      Effect.gen(function*() {
        const { call, newWebsite, stripe } = yield* app
        const { accountId, websiteId } = yield* newWebsite
        const before = stripe.requests.length
        const r = yield* call("POST", `/websites/${websiteId}/connections/stripe`, accountId, { key: STRIPE_KEY })
        expect(r.status, r.text).toBe(201)
        expect(r.text).not.toContain(STRIPE_KEY)
        expect(r.json.data.connection).toMatchObject({
          provider: "stripe",
          name: "Stripe",
          status: "connected",
          lastError: null,
          detail: null
        })
        expect(r.json.data.sync).toMatchObject({ provider: "stripe", mode: "full", status: "queued" })
        const probed = stripe.requests.slice(before).map((q) => q.url.split("?")[0]).sort()
        expect(probed).toEqual(["/v1/charges", "/v1/customers", "/v1/invoices", "/v1/refunds", "/v1/subscriptions"])
        yield* expectStoredEncrypted(websiteId, "stripe", { secret_key: STRIPE_KEY })
        const list = yield* call("GET", `/websites/${websiteId}/connections`, accountId)
        expect(list.text).not.toContain(STRIPE_KEY)
        expect(list.json.data.connections[0]).toMatchObject({ provider: "stripe", status: "connected" })
        expect(list.json.data.connections[0].lastRun).toMatchObject({ status: "queued", mode: "full" })
      }))

    it.effect("a restricted key lacking permissions: 422 naming them in words, nothing stored", () =>
      Effect.gen(function*() {
        const { call, newWebsite, stripe } = yield* app
        const { accountId, websiteId } = yield* newWebsite
        const limited = "rk_test_51LimitedKeyNoSubsNoRefunds0001"
        stripe.keys.add(limited)
        stripe.permissions.set(limited, new Set(["customers", "invoices", "charges"]))
        const r = yield* call("POST", `/websites/${websiteId}/connections/stripe`, accountId, { key: limited })
        expectError(r, 422, "missing_permissions")
        expect(r.json.error.message).toContain(
          "Stripe rejected this key: it lacks read access to subscriptions and refunds"
        )
        expect(r.json.error.missing).toEqual(["subscriptions", "refunds"])
        expect(r.text).not.toContain(limited)
        yield* expectNothingStored(websiteId, "stripe")
      }))

    it.effect("a wrong key: 422 in words; a key of the wrong kind: 400; nothing stored", () =>
      Effect.gen(function*() {
        const { call, newWebsite } = yield* app
        const { accountId, websiteId } = yield* newWebsite
        const wrong = yield* call("POST", `/websites/${websiteId}/connections/stripe`, accountId, {
          key: "rk_test_51WrongKeyWrongKeyWrong00000"
        })
        expectError(wrong, 422, "credentials_rejected")
        expect(wrong.json.error.message).toMatch(/^Stripe rejected this key: it is wrong, revoked or expired/)
        expect(wrong.text).not.toContain("rk_test_51WrongKey")
        const publishable = yield* call("POST", `/websites/${websiteId}/connections/stripe`, accountId, {
          key: "pk_test_51Publishable000000000"
        })
        expectError(publishable, 400, "invalid_key_format")
        expect(publishable.json.error.message).toContain("publishable key")
        expectError(
          yield* call("POST", `/websites/${websiteId}/connections/stripe`, accountId, { key: "" }),
          400,
          "invalid_key_format"
        )
        expectError(yield* call("POST", `/websites/${websiteId}/connections/stripe`, accountId, {}), 400)
        yield* expectNothingStored(websiteId, "stripe")
      }))

    it.effect("Stripe down: 502 saying so, nothing stored", () =>
      Effect.gen(function*() {
        const { call, newWebsite, stripe } = yield* app
        const { accountId, websiteId } = yield* newWebsite
        // Every probe and its one retry answers 500.
        for (let i = 0; i < 10; i++) stripe.faults.push({ path: "/v1/", status: 500 })
        const r = yield* call("POST", `/websites/${websiteId}/connections/stripe`, accountId, { key: STRIPE_KEY })
        stripe.faults.length = 0
        expectError(r, 502, "provider_unavailable")
        expect(r.json.error.message).toMatch(
          /^Stripe could not be reached or had an error of its own \(HTTP 500\); nothing was stored/
        )
        yield* expectNothingStored(websiteId, "stripe")
      }))
  })

  describe("Plausible", () => {
    it.effect("a good key and site id: checked with a Stats API query, stored encrypted, the site shown", () =>
      Effect.gen(function*() {
        const { call, newWebsite, plausible } = yield* app
        const { accountId, websiteId } = yield* newWebsite
        const before = plausible.requests.length
        const r = yield* call("POST", `/websites/${websiteId}/connections/plausible`, accountId, {
          apiKey: PLAUSIBLE_KEY,
          siteId: PLAUSIBLE_SITE
        })
        expect(r.status, r.text).toBe(201)
        expect(r.text).not.toContain(PLAUSIBLE_KEY)
        expect(r.json.data.connection).toMatchObject({
          provider: "plausible",
          status: "connected",
          detail: PLAUSIBLE_SITE
        })
        const checks = plausible.requests.slice(before)
        expect(checks).toHaveLength(1)
        expect(checks[0]!.authorization).toBe(`Bearer ${PLAUSIBLE_KEY}`)
        expect(checks[0]!.body).toMatchObject({ site_id: PLAUSIBLE_SITE, metrics: ["visitors"] })
        yield* expectStoredEncrypted(websiteId, "plausible", { api_key: PLAUSIBLE_KEY, site_id: PLAUSIBLE_SITE })
      }))

    it.effect("a wrong key or a site the key cannot read: 422 in words; a URL as site id: 400; nothing stored", () =>
      Effect.gen(function*() {
        const { call, newWebsite } = yield* app
        const { accountId, websiteId } = yield* newWebsite
        const wrongKey = yield* call("POST", `/websites/${websiteId}/connections/plausible`, accountId, {
          apiKey: "wrong-key-000",
          siteId: PLAUSIBLE_SITE
        })
        expectError(wrongKey, 422, "credentials_rejected")
        expect(wrongKey.json.error.message).toMatch(/^Plausible rejected this API key for "site0\.example"/)
        expect(wrongKey.text).not.toContain("wrong-key-000")
        expectError(
          yield* call("POST", `/websites/${websiteId}/connections/plausible`, accountId, {
            apiKey: PLAUSIBLE_KEY,
            siteId: "other.example"
          }),
          422,
          "credentials_rejected"
        )
        const url = yield* call("POST", `/websites/${websiteId}/connections/plausible`, accountId, {
          apiKey: PLAUSIBLE_KEY,
          siteId: "https://site0.example"
        })
        expectError(url, 400, "invalid_credentials_format")
        expect(url.json.error.message).toContain("without https://")
        yield* expectNothingStored(websiteId, "plausible")
      }))

    it.effect("Plausible down: 502, nothing stored", () =>
      Effect.gen(function*() {
        const { call, newWebsite, plausible } = yield* app
        const { accountId, websiteId } = yield* newWebsite
        plausible.script.push({ status: 503, body: "{}" }, { status: 503, body: "{}" })
        const r = yield* call("POST", `/websites/${websiteId}/connections/plausible`, accountId, {
          apiKey: PLAUSIBLE_KEY,
          siteId: PLAUSIBLE_SITE
        })
        plausible.script.length = 0
        expectError(r, 502, "provider_unavailable")
        expect(r.json.error.message).toMatch(/^Plausible could not be reached/)
        yield* expectNothingStored(websiteId, "plausible")
      }))
  })

  describe("Search Console: Google OAuth with PKCE and state", () => {
    it.effect("start → Google → callback → choose the property: connected, refresh token stored encrypted", () =>
      Effect.gen(function*() {
        const { call, newWebsite, google } = yield* app
        const { accountId, websiteId } = yield* newWebsite
        const start = yield* call("POST", `/websites/${websiteId}/connections/google-search-console/start`, accountId)
        expect(start.status, start.text).toBe(200)
        const authorize = new URL(start.json.data.authorizeUrl)
        expect(`${authorize.origin}${authorize.pathname}`).toBe(google.authUrl)
        const q = Object.fromEntries(authorize.searchParams)
        expect(q).toMatchObject({
          client_id: GOOGLE.clientId,
          redirect_uri: REDIRECT_URI,
          response_type: "code",
          code_challenge_method: "S256",
          scope: "https://www.googleapis.com/auth/webmasters.readonly",
          access_type: "offline"
        })
        expect(q.state).toMatch(/^[A-Za-z0-9_-]{43}$/)
        expect(q.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/)
        expect(start.text).not.toContain(GOOGLE.clientSecret)

        const back = yield* consent(start.json.data.authorizeUrl)
        expect(back.redirect).toBe(REDIRECT_URI)
        const callback = yield* call("POST", `/connections/google/callback`, accountId, {
          code: back.code,
          state: back.state
        })
        expect(callback.status, callback.text).toBe(200)
        expect(callback.json.data.websiteId).toBe(websiteId)
        expect(callback.json.data.properties).toEqual([
          { siteUrl: "https://other.example/", permissionLevel: "siteFullUser" },
          { siteUrl: GOOGLE.siteUrl, permissionLevel: "siteOwner" }
        ])
        expect(callback.text).not.toMatch(/refresh-TOPSECRET|ya29\./)
        // The code went to Google with the verifier whose S256 is the challenge sent to the authorize endpoint.
        const exchange = google.tokenRequests.filter((t) => t.grant_type === "authorization_code").at(-1)!
        expect(exchange).toMatchObject({ code: back.code, client_id: GOOGLE.clientId, redirect_uri: REDIRECT_URI })
        expect(exchange.code_verifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/)

        const connect = yield* call("POST", `/websites/${websiteId}/connections/google-search-console`, accountId, {
          flow: callback.json.data.flow,
          siteUrl: GOOGLE.siteUrl
        })
        expect(connect.status, connect.text).toBe(201)
        expect(connect.json.data.connection).toMatchObject({
          provider: "google-search-console",
          status: "connected",
          detail: GOOGLE.siteUrl
        })
        expect(connect.json.data.sync).toMatchObject({ mode: "full", status: "queued" })
        expect(connect.text).not.toMatch(/TOPSECRET/)
        yield* expectStoredEncrypted(websiteId, "google-search-console", {
          client_id: GOOGLE.clientId,
          client_secret: GOOGLE.clientSecret,
          refresh_token: GOOGLE.refreshToken,
          site_url: GOOGLE.siteUrl,
          token_uri: google.tokenUrl
        })
        // The flow is spent: neither its state nor its id works again.
        expectError(
          yield* call("POST", `/connections/google/callback`, accountId, { code: back.code, state: back.state }),
          400,
          "oauth_state_invalid"
        )
        expectError(
          yield* call("POST", `/websites/${websiteId}/connections/google-search-console`, accountId, {
            flow: callback.json.data.flow,
            siteUrl: GOOGLE.siteUrl
          }),
          400,
          "oauth_flow_invalid"
        )
      }))

    it.effect("a forged state, and a state started by another account: 400, nothing exchanged", () =>
      Effect.gen(function*() {
        const { call, newWebsite, google } = yield* app
        const owner = yield* newWebsite
        const other = yield* newWebsite
        const start = yield* call(
          "POST",
          `/websites/${owner.websiteId}/connections/google-search-console/start`,
          owner.accountId
        )
        const back = yield* consent(start.json.data.authorizeUrl)
        const exchanges = google.tokenRequests.length
        const forged = yield* call("POST", `/connections/google/callback`, owner.accountId, {
          code: back.code,
          state: forge(back.state)
        })
        expectError(forged, 400, "oauth_state_invalid")
        expect(forged.json.error.message).toContain("Start connecting Search Console again")
        expectError(
          yield* call("POST", `/connections/google/callback`, other.accountId, { code: back.code, state: back.state }),
          400,
          "oauth_state_invalid"
        )
        expect(google.tokenRequests.length).toBe(exchanges)
        // The owner's own, untouched by those attempts, still completes.
        const ok = yield* call("POST", `/connections/google/callback`, owner.accountId, {
          code: back.code,
          state: back.state
        })
        expect(ok.status, ok.text).toBe(200)
      }))

    it.effect("a sign-in older than 15 minutes: its state is refused (400), Google is not asked", () =>
      Effect.gen(function*() {
        const { call, google, newWebsite, run } = yield* app
        const { accountId, websiteId } = yield* newWebsite
        const state = "expired-state-0123456789abcdefghijklmnopqrstu"
        yield* run(Effect.flatMap(OAuthFlowsRepo, (flows) =>
          flows.create({
            id: "oaf_expiredFlow000000000000",
            stateSha256: new Uint8Array(createHash("sha256").update(state).digest()),
            accountId,
            projectId: websiteId,
            secrets: new Uint8Array(64),
            exchangedAt: null,
            expiresAt: new Date(Date.now() - 1000)
          }, new Date(Date.now() - 16 * 60_000))))
        const exchanges = google.tokenRequests.length
        expectError(
          yield* call("POST", `/connections/google/callback`, accountId, { code: "4/whatever", state }),
          400,
          "oauth_state_invalid"
        )
        expect(google.tokenRequests.length).toBe(exchanges)
      }))

    it.effect("a wrong PKCE verifier (the code of one sign-in with the state of another): Google refuses, 422, nothing stored", () =>
      Effect.gen(function*() {
        const { call, newWebsite, google } = yield* app
        const { accountId, websiteId } = yield* newWebsite
        const a = yield* call("POST", `/websites/${websiteId}/connections/google-search-console/start`, accountId)
        const b = yield* call("POST", `/websites/${websiteId}/connections/google-search-console/start`, accountId)
        const backA = yield* consent(a.json.data.authorizeUrl)
        const backB = yield* consent(b.json.data.authorizeUrl)
        const r = yield* call("POST", `/connections/google/callback`, accountId, {
          code: backA.code,
          state: backB.state
        })
        expectError(r, 422, "oauth_failed")
        expect(r.json.error.message).toContain("Google refused the authorization")
        const last = google.tokenRequests.at(-1)!
        expect(last.code).toBe(backA.code)
        yield* expectNothingStored(websiteId, "google-search-console")
      }))

    it.effect("a property the account cannot read: 422, nothing stored", () =>
      Effect.gen(function*() {
        const { call, newWebsite } = yield* app
        const { accountId, websiteId } = yield* newWebsite
        const start = yield* call("POST", `/websites/${websiteId}/connections/google-search-console/start`, accountId)
        const back = yield* consent(start.json.data.authorizeUrl)
        const callback = yield* call("POST", `/connections/google/callback`, accountId, {
          code: back.code,
          state: back.state
        })
        const r = yield* call("POST", `/websites/${websiteId}/connections/google-search-console`, accountId, {
          flow: callback.json.data.flow,
          siteUrl: "https://not-mine.example/"
        })
        expectError(r, 422, "credentials_rejected")
        expect(r.json.error.message).toContain("cannot read the Search Console property https://not-mine.example/")
        yield* expectNothingStored(websiteId, "google-search-console")
      }))
  })

  describe("disconnect and sync now", () => {
    it.effect("sync now queues (or answers the run already queued); a failed sync's error shows in words; disconnect deletes the credentials", () =>
      Effect.gen(function*() {
        const { call, newWebsite, run } = yield* app
        const { accountId, websiteId } = yield* newWebsite
        expectError(
          yield* call("POST", `/websites/${websiteId}/connections/plausible/sync`, accountId),
          404,
          "not_found"
        )
        const connected = yield* call("POST", `/websites/${websiteId}/connections/plausible`, accountId, {
          apiKey: PLAUSIBLE_KEY,
          siteId: PLAUSIBLE_SITE
        })
        const first = connected.json.data.sync
        const again = yield* call("POST", `/websites/${websiteId}/connections/plausible/sync`, accountId)
        expect(again.status, again.text).toBe(202)
        expect(again.json.data).toMatchObject({ alreadyQueued: true, sync: { id: first.id } })

        // The first run fails for good: the list says why, in words.
        yield* run(Effect.gen(function*() {
          const queue = yield* SyncQueue
          // A worker takes it: a claim scoped to this website, since other files' runs on the shared database
          // (running ones among them, whose leases look expired on this clock) are not this test's to take.
          const taken = yield* queue.claim(new Date(), 60_000, [websiteId])
          expect(taken?.id).toBe(first.id)
          expect(
            yield* queue.fail({
              run: taken!,
              error: "Plausible refused the API key: reconnect",
              now: new Date(),
              retryAt: null,
              nextSyncAt: new Date(Date.now() + 3_600_000)
            })
          ).toBe(true)
        }))
        const list = yield* call("GET", `/websites/${websiteId}/connections`, accountId)
        expect(list.json.data.connections[1]).toMatchObject({
          provider: "plausible",
          status: "error",
          lastError: "Plausible refused the API key: reconnect"
        })

        const now = yield* call("POST", `/websites/${websiteId}/connections/plausible/sync`, accountId)
        expect(now.status, now.text).toBe(202)
        expect(now.json.data.alreadyQueued).toBe(false)
        expect(now.json.data.sync).toMatchObject({ provider: "plausible", mode: "incremental", status: "queued" })
        expect(now.json.data.sync.id).not.toBe(first.id)

        const gone = yield* call("DELETE", `/websites/${websiteId}/connections/plausible`, accountId)
        expect(gone.status, gone.text).toBe(200)
        expect(gone.json.data).toEqual({ provider: "plausible", disconnected: true })
        yield* expectNothingStored(websiteId, "plausible")
        const after = yield* call("GET", `/websites/${websiteId}/connections`, accountId)
        expect(after.json.data.connections[1]).toMatchObject({ provider: "plausible", status: "not_connected" })
        expectError(yield* call("DELETE", `/websites/${websiteId}/connections/plausible`, accountId), 404, "not_found")
        expectError(
          yield* call("POST", `/websites/${websiteId}/connections/plausible/sync`, accountId),
          404,
          "not_found"
        )
        expectError(yield* call("DELETE", `/websites/${websiteId}/connections/nope`, accountId), 404, "not_found")
      }))
  })
})
