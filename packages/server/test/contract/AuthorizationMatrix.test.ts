/**
 * The authorization matrix, generated: every operation of the contract (its Operation annotations, the same
 * table the middleware enforces and the CLI and MCP derive from) × every point of view a caller can be
 * in, each asserting the status, `type` and envelope docs/api.md §2–§5 document — in the documented order
 * 401 → 429 → 402 → 403 permission → 404 / 403 project. Allowed cases must answer their 2xx with a
 * request built per operation (confirm-gated operations are sent without `confirm`: a preview).
 *
 * Then object access: an expense, a token or a sync run of another project or account is never readable,
 * deletable or revocable — 404 across accounts, 403 for the caller's own account's projects outside its
 * scope — and stays as it was.
 *
 * An operation added to the table without an example request here fails the suite (and one added to the
 * contract without a table entry fails test/OperationsTable.test.ts and answers 403 operation_not_allowed).
 */
import { describe, expect, layer } from "@effect/vitest"
import { SiteHealthApi } from "@sitehealth/domain/Api"
import { type EndpointName as OperationName, operations } from "@sitehealth/domain/Api"
import { type Operation, PERMISSIONS } from "@sitehealth/domain/Permissions"
import { Context, Effect, Layer } from "effect"

const OPERATION_NAMES = operations.map(([name]) => name)
import { CredentialsCipher } from "../../src/integrations/Crypto.ts"
import { IntegrationsRepo } from "../../src/integrations/IntegrationsRepo.ts"
import { generateSecret } from "../../src/store/TokenSecret.ts"
import { TokensRepo } from "../../src/tokens/TokensRepo.ts"
import { emit } from "../../src/webhooks/Outbox.ts"
import { WebhooksRepo } from "../../src/webhooks/WebhooksRepo.ts"
import { expectError } from "../support/Expect.ts"
import { oauthMintedToken } from "../support/OAuthGrant.ts"
import { SECRET, TEST_KEY } from "../support/SyncFakes.ts"
import { type CallResult, h, TestApp } from "../support/TestApp.ts"

layer(TestApp.layer())("AuthorizationMatrix", (it) => {
  /** Every case the suite asserts (matrix cells and object-access checks), for the closing count. */
  let cases = 0

  // ---------------------------------------------------------------------------------------------------
  // The world the requests are about

  /** One account's objects: two projects, expenses, a token limited to p1, a connected provider with a run. */
  interface World {
    readonly accountId: string
    readonly rootSecret: string
    readonly p1: string
    readonly p2: string
    /** An expense of p1 that the object-access checks try to reach from elsewhere; never deleted. */
    readonly expense: string
    /** An expense of p1 that the matrix's one allowed deleteExpense removes. */
    readonly expenseToDelete: string
    /** A token limited to p1 with projects:read (the revoke target). */
    readonly token: string
    /** The sync run of p1's plausible integration. */
    readonly syncRun: string
    /** A webhook endpoint of p1 (its URL refused at send time: no network), with one delivery. */
    readonly webhook: string
    readonly delivery: string
    /** A webhook endpoint of p1 that the matrix's one allowed deleteWebhook removes. */
    readonly webhookToDelete: string
    /** An annotation of p1 (changed by the allowed updateAnnotation), and one the allowed deleteAnnotation removes. */
    readonly annotation: string
    readonly annotationToDelete: string
  }

  const EXPENSE = {
    amount: 1234,
    category: "software",
    description: "Matrix",
    incurredOn: "2026-11-01",
    recurrence: "one_off"
  }

  const ANNOTATION = { date: "2026-11-02", note: "Matrix launch", category: "launch" }

  const ok = (r: Effect.Effect<CallResult, never, TestApp>, status: number) =>
    Effect.gen(function*() {
      const res = yield* r
      expect(res.status, res.text).toBe(status)
      return res.json.data
    })

  const makeWorld = () =>
    Effect.gen(function*() {
      const { account, projects, secret } = yield* h.newAccount({ projects: 2 })
      const [p1, p2] = [projects[0].id, projects[1].id]
      const expense =
        (yield* ok(h.raw("POST", `/api/v1/projects/${p1}/expenses`, { token: secret, body: EXPENSE }), 201)).expense.id
      const expenseToDelete =
        (yield* ok(h.raw("POST", `/api/v1/projects/${p1}/expenses`, { token: secret, body: EXPENSE }), 201)).expense.id
      const annotate = h.raw("POST", `/api/v1/projects/${p1}/annotations`, { token: secret, body: ANNOTATION })
      const annotation = (yield* ok(annotate, 201)).annotation.id
      const annotationToDelete = (yield* ok(annotate, 201)).annotation.id
      const token = (yield* h.mint(account.id, { projects: [p1], permissions: ["projects:read"] })).token.id
      // Connected as the admin CLI does: credentials encrypted (contract/Integrations.test.ts).
      yield* h.run(Effect.gen(function*() {
        const cipher = yield* Effect.provide(Effect.service(CredentialsCipher), CredentialsCipher.layer(TEST_KEY))
        yield* (yield* IntegrationsRepo).connect({
          projectId: p1,
          provider: "plausible",
          credentials: cipher.encrypt({ apiKey: SECRET }),
          baseUrl: null,
          syncIntervalMinutes: null,
          now: new Date(yield* h.now)
        })
      }))
      const syncRun = (yield* ok(
        h.api.integrations.syncIntegration({ params: { id: p1, provider: "plausible" }, payload: null }, {
          token: secret
        }),
        202
      )).sync.id
      const [webhook, webhookToDelete, delivery] = yield* h.run(Effect.gen(function*() {
        const repo = yield* WebhooksRepo
        const now = new Date(yield* h.now)
        const endpoint = (id: string) =>
          repo.insert({
            id,
            projectId: p1,
            url: "https://127.0.0.1/matrix",
            format: "standard_webhooks",
            description: null,
            events: ["signal.opened"],
            minMoneyAtStake: null,
            minSeverity: null,
            cadence: "live",
            enabled: true,
            disabledReason: null,
            failingSince: null,
            // Never opened here: the test send answers "cannot be decrypted" without reaching the network.
            secretEnc: new Uint8Array(40),
            previousSecretEnc: null,
            previousSecretExpiresAt: null,
            secretRotatedAt: null,
            createdAt: now
          })
        const kept = yield* endpoint(`whk_m${p1.slice(4, 16)}`)
        const doomed = yield* endpoint(`whk_d${p1.slice(4, 16)}`)
        const [queued] = yield* emit(repo)(
          "webhook.test",
          p1,
          {
            projectId: p1 as any,
            webhookId: kept.id,
            message: "matrix"
          },
          now,
          { webhookId: kept.id, lockedUntil: new Date(now.getTime() + 3_600_000) }
        )
        return [kept.id, doomed.id, queued!.id] as const
      }))
      return {
        accountId: account.id,
        rootSecret: secret,
        p1,
        p2,
        expense,
        expenseToDelete,
        token,
        syncRun,
        webhook,
        delivery,
        webhookToDelete,
        annotation,
        annotationToDelete
      }
    })

  // ---------------------------------------------------------------------------------------------------
  // The example request of each operation

  interface Example {
    readonly params?: Record<string, string>
    readonly query?: Record<string, string>
    readonly body?: unknown
    /** The answer when the caller may do it. */
    readonly status: number
    /** Non-project operations: what a token limited to another project of the account gets. */
    readonly otherProject?: Outcome
    /** Non-project operations: what a token of another account gets. */
    readonly otherAccount?: Outcome
    /** Checks on an allowed answer's data. */
    readonly check?: (data: any, w: World) => void
  }

  type Outcome = { readonly status: number; readonly type?: string; readonly check?: (data: any, w: World) => void }

  const examples = (w: World): Record<OperationName, Example> => ({
    listProjects: {
      status: 200,
      // Both were created at the same instant: the order is then by id (§6), so compare as sets.
      check: (d) => expect(d.projects.map((p: any) => p.id).sort()).toEqual([w.p1, w.p2].sort()),
      otherProject: { status: 200, check: (d) => expect(d.projects.map((p: any) => p.id)).toEqual([w.p2]) },
      otherAccount: { status: 200, check: (d) => expect(d.projects.map((p: any) => p.id)).not.toContain(w.p1) }
    },
    getHealth: { params: { id: w.p1 }, status: 200, check: (d) => expect(d.projectId).toBe(w.p1) },
    getBriefing: { params: { id: w.p1 }, status: 200, check: (d) => expect(d.projectId).toBe(w.p1) },
    listSignals: {
      params: { id: w.p1 },
      query: { active: "true" },
      status: 200,
      check: (d) => expect(d.signals).toBeInstanceOf(Array)
    },
    deleteProject: { params: { id: w.p1 }, status: 403 },
    getAnalytics: {
      params: { id: w.p1 },
      query: { period: "7d" },
      status: 200,
      check: (d) => expect(d).toMatchObject({ projectId: w.p1, period: "7d" })
    },
    getRevenue: {
      params: { id: w.p1 },
      query: { period: "30d" },
      status: 200,
      check: (d) => expect(d.projectId).toBe(w.p1)
    },
    getChurn: {
      params: { id: w.p1 },
      query: { period: "30d" },
      status: 200,
      check: (d) => expect(d.projectId).toBe(w.p1)
    },
    getSeo: {
      params: { id: w.p1 },
      query: { period: "30d" },
      status: 200,
      check: (d) => expect(d.projectId).toBe(w.p1)
    },
    listIntegrations: {
      params: { id: w.p1 },
      status: 200,
      check: (d) => expect(d.integrations.find((i: any) => i.provider === "plausible").lastRun.id).toBe(w.syncRun)
    },
    syncIntegration: {
      params: { id: w.p1, provider: "plausible" },
      body: { mode: "incremental" },
      status: 202,
      // The run queued in makeWorld is still waiting: the answer is that run, not a second one.
      check: (d) => expect(d).toMatchObject({ alreadyQueued: true, sync: { id: w.syncRun } })
    },
    connectIntegration: { params: { id: w.p1, provider: "stripe" }, status: 403 },
    disconnectIntegration: { params: { id: w.p1, provider: "plausible" }, status: 403 },
    listExpenses: {
      params: { id: w.p1 },
      query: { limit: "100" },
      status: 200,
      check: (d) => expect(d.expenses.map((e: any) => e.id)).toContain(w.expense)
    },
    createExpense: {
      params: { id: w.p1 },
      body: EXPENSE,
      status: 201,
      check: (d) => expect(d.expense.projectId).toBe(w.p1)
    },
    deleteExpense: {
      params: { id: w.p1, expenseId: w.expenseToDelete },
      status: 200,
      check: (d) => expect(d).toMatchObject({ deleted: true, expense: { id: w.expenseToDelete } })
    },
    listAnnotations: {
      params: { id: w.p1 },
      query: { from: "2026-11-01" },
      status: 200,
      check: (d) => expect(d.annotations.map((a: any) => a.id)).toContain(w.annotation)
    },
    createAnnotation: {
      params: { id: w.p1 },
      body: ANNOTATION,
      status: 201,
      check: (d) => expect(d.annotation).toMatchObject({ projectId: w.p1, note: "Matrix launch" })
    },
    updateAnnotation: {
      params: { id: w.p1, annotationId: w.annotation },
      body: { note: "Matrix relaunch" },
      status: 200,
      check: (d) => expect(d.annotation).toMatchObject({ id: w.annotation, note: "Matrix relaunch" })
    },
    deleteAnnotation: {
      params: { id: w.p1, annotationId: w.annotationToDelete },
      status: 200,
      check: (d) => expect(d).toMatchObject({ deleted: true, annotation: { id: w.annotationToDelete } })
    },
    listTokens: {
      status: 200,
      check: (d) => expect(d.tokens.map((t: any) => t.id)).toContain(w.token),
      // docs/api.md §7.17: a token scoped to other projects sees only the tokens within its own scope — not
      // w.token (scoped to p1); every token it lists is limited to p2.
      otherProject: {
        status: 200,
        check: (d) => {
          expect(d.tokens.map((t: any) => t.id)).not.toContain(w.token)
          expect(d.tokens.every((t: any) => t.projects !== null && t.projects.every((p: string) => p === w.p2))).toBe(
            true
          )
        }
      },
      otherAccount: { status: 200, check: (d) => expect(d.tokens.map((t: any) => t.id)).not.toContain(w.token) }
    },
    getCurrentToken: {
      // Any valid token reads its own metadata: whichever view, the answer is about the calling token.
      status: 200,
      check: (d, w) =>
        expect(d).toMatchObject({ accountId: w.accountId, status: "active", prefix: expect.stringMatching(/^svc_…/) }),
      otherProject: {
        status: 200,
        check: (d, w) => expect(d).toMatchObject({ accountId: w.accountId, projects: [w.p2] })
      },
      otherAccount: { status: 200, check: (d, w) => expect(d.accountId).not.toBe(w.accountId) }
    },
    createToken: {
      // No confirm: a preview, nothing minted. Asks for p1, so scope decides.
      body: { name: "matrix", projects: [w.p1], permissions: ["projects:read"] },
      status: 200,
      check: (d) =>
        expect(d).toMatchObject({ preview: true, token: { projects: [w.p1], permissions: ["projects:read"] } }),
      otherProject: { status: 403, type: "escalation" },
      otherAccount: { status: 404, type: "not_found" }
    },
    revokeToken: {
      // No confirm: a preview, nothing revoked.
      params: { id: w.token },
      status: 200,
      check: (d) => expect(d).toMatchObject({ preview: true, token: { id: w.token, status: "active" } }),
      otherProject: { status: 403, type: "escalation" },
      otherAccount: { status: 404, type: "not_found" }
    },
    listWebhooks: {
      params: { id: w.p1 },
      status: 200,
      check: (d) => expect(d.webhooks.map((x: any) => x.id)).toContain(w.webhook)
    },
    createWebhook: {
      // No confirm: a preview, nothing stored.
      params: { id: w.p1 },
      body: { url: "https://hooks.example.com/in", events: ["signal.opened"] },
      status: 200,
      check: (d) => expect(d).toMatchObject({ preview: true, webhook: { url: "https://hooks.example.com/in" } })
    },
    getWebhook: {
      params: { id: w.p1, webhookId: w.webhook },
      status: 200,
      check: (d) => expect(d).toMatchObject({ id: w.webhook, status: "enabled" })
    },
    updateWebhook: {
      params: { id: w.p1, webhookId: w.webhook },
      body: { description: "matrix" },
      status: 200,
      check: (d) => expect(d.webhook).toMatchObject({ id: w.webhook, description: "matrix" })
    },
    deleteWebhook: {
      params: { id: w.p1, webhookId: w.webhookToDelete },
      status: 200,
      check: (d) => expect(d).toMatchObject({ deleted: true, webhook: { id: w.webhookToDelete } })
    },
    testWebhook: {
      params: { id: w.p1, webhookId: w.webhook },
      status: 200,
      check: (d) => expect(d.delivery).toMatchObject({ type: "webhook.test", status: "pending", attempts: 1 })
    },
    listWebhookDeliveries: {
      params: { id: w.p1, webhookId: w.webhook },
      status: 200,
      check: (d) => expect(d.deliveries.map((x: any) => x.id)).toContain(w.delivery)
    },
    redeliverWebhook: {
      params: { id: w.p1, webhookId: w.webhook, deliveryId: w.delivery },
      status: 200,
      check: (d) => expect(d.delivery).toMatchObject({ id: w.delivery, status: "pending" })
    }
  })

  /** The contract's method and path of each operation, so an example can only ever hit its own endpoint. */
  const endpoints = new Map(
    Object.values(SiteHealthApi.groups).flatMap((g) =>
      Object.values(g.endpoints).map((e) => [e.identifier, e] as const)
    )
  )

  const requestOf = (name: OperationName, example: Example) => {
    const endpoint = endpoints.get(name)
    if (endpoint === undefined) throw new Error(`${name}: no such endpoint in SiteHealthApi`)
    const path = endpoint.path.replace(/:(\w+)/g, (_m: string, key: string) => {
      const value = example.params?.[key]
      if (value === undefined) throw new Error(`${name}: the example lacks the path parameter ${key}`)
      return encodeURIComponent(value)
    })
    const query = example.query === undefined ? "" : `?${new URLSearchParams(example.query)}`
    return { method: endpoint.method, path: `${path}${query}` }
  }

  // ---------------------------------------------------------------------------------------------------
  // The points of view

  const READ_ONLY = PERMISSIONS.filter((p) => p.endsWith(":read"))

  interface View {
    readonly name: string
    /** The bearer to send (null: no Authorization header). */
    readonly token: string | null
    /** The world whose objects the request names. */
    readonly world: World
  }

  /** What docs/api.md says a view gets for an operation, derived from the operation's table entry. */
  const expectedFor = (view: string, name: OperationName, op: Operation, ex: Example): Outcome => {
    switch (view) {
      case "no token":
        return { status: 401, type: "missing_token" }
      case "malformed token":
        return { status: 401, type: "invalid_token" }
      case "bad checksum":
        return { status: 401, type: "invalid_token" }
      case "unknown token":
        return { status: 401, type: "invalid_token" }
      case "revoked":
        return { status: 401, type: "token_revoked" }
      case "expired":
        return { status: 401, type: "token_expired" }
      // Budget spent: 429 before entitlement, permission and project (§2 check 2).
      case "rate limited":
        return { status: 429, type: "rate_limited" }
      // A read-only token of an ended account: 402 before its missing write permissions (§2 check 3).
      case "ended trial":
        return { status: 402, type: "trial_expired" }
    }
    if (op.kind === "dashboard_only") return { status: 403, type: "dashboard_only" }
    if (view === "read-only" && op.permission !== "authenticated" && !READ_ONLY.includes(op.permission!)) {
      return { status: 403, type: "missing_permission" }
    }
    if (view === "read-only" || view === "write") return { status: ex.status, ...(ex.check ? { check: ex.check } : {}) }
    if (view === "other project") {
      if (op.project) return { status: 403, type: "project_out_of_scope" }
      if (ex.otherProject === undefined) throw new Error(`${name}: the example lacks its other-project outcome`)
      return ex.otherProject
    }
    if (view === "other account") {
      if (op.project) return { status: 404, type: "not_found" }
      if (ex.otherAccount === undefined) throw new Error(`${name}: the example lacks its other-account outcome`)
      return ex.otherAccount
    }
    throw new Error(`unknown view ${view}`)
  }

  const VIEW_NAMES = [
    "no token",
    "malformed token",
    "bad checksum",
    "unknown token",
    "revoked",
    "expired",
    "rate limited",
    "ended trial",
    "read-only",
    "write",
    "other project",
    "other account"
  ] as const

  /** Every point of view, by name; built once on the file's app before the matrix runs. */
  class Views extends Context.Service<Views, Map<string, View>>()("matrix/Views") {}
  const ViewsLive = Layer.effect(
    Views,
    Effect.gen(function*() {
      const world = yield* makeWorld()
      const a = world.accountId
      const all = yield* h.mint(a, { permissions: [...PERMISSIONS] })
      const tampered = all.secret.slice(0, -1) + (all.secret.endsWith("A") ? "B" : "A")
      const revoked = yield* h.mint(a)
      const now = yield* h.now
      yield* h.run(Effect.flatMap(TokensRepo, (t) => t.revoke(a, revoked.token.id, new Date(now))))
      const expired = yield* h.mint(a, { expiresAt: new Date((yield* h.now) - 1000) })
      // The harness clock stays inside one rate-limit window: spend this token's whole budget up front.
      const limited = yield* h.mint(a)
      const first = yield* h.api.projects.listProjects({ query: {} }, { token: limited.secret })
      const budget = Number(first.headers.get("x-ratelimit-limit"))
      for (let i = 1; i < budget; i++) {
        expect((yield* h.api.projects.listProjects({ query: {} }, { token: limited.secret })).status).toBe(200)
      }
      const ended = yield* makeWorld()
      const endedToken = yield* h.mint(ended.accountId, { permissions: READ_ONLY })
      yield* h.endTrial(ended.accountId)
      // These two are minted as an MCP client signing in by OAuth gets its token: the same rules hold.
      const readOnly = {
        secret: yield* h.run(oauthMintedToken({ accountId: a, projects: null, permissions: READ_ONLY }))
      }
      const restricted = {
        secret: yield* h.run(oauthMintedToken({ accountId: a, projects: [world.p2], permissions: [...PERMISSIONS] }))
      }
      const stranger = yield* h.newAccount({ projects: 1 })
      const entries: Array<[string, string | null, World]> = [
        ["no token", null, world],
        ["malformed token", "svc_short", world],
        ["bad checksum", tampered, world],
        ["unknown token", generateSecret(), world],
        ["revoked", revoked.secret, world],
        ["expired", expired.secret, world],
        ["rate limited", limited.secret, world],
        ["ended trial", endedToken.secret, ended],
        ["read-only", readOnly.secret, world],
        ["write", all.secret, world],
        ["other project", restricted.secret, world],
        ["other account", stranger.secret, world]
      ]
      return new Map(entries.map(([name, token, w]) => [name, { name, token, world: w }]))
    })
  )

  it.layer(ViewsLive)("authorization matrix: every operation × every point of view", (it) => {
    it("has an example request for every operation of the table, and only for those", () => {
      const fake = {
        accountId: "",
        rootSecret: "",
        p1: "p",
        p2: "p",
        expense: "e",
        expenseToDelete: "e",
        token: "t",
        syncRun: "s",
        webhook: "w",
        delivery: "d",
        webhookToDelete: "w",
        annotation: "a",
        annotationToDelete: "a"
      }
      expect(Object.keys(examples(fake)).sort()).toEqual([...OPERATION_NAMES].sort())
      for (const name of OPERATION_NAMES) requestOf(name, examples(fake)[name])
    })

    for (const viewName of VIEW_NAMES) {
      describe(viewName, () => {
        for (const [name, op] of operations) {
          it.effect(name, () =>
            Effect.gen(function*() {
              const view = (yield* Views).get(viewName)!
              const example = examples(view.world)[name]
              const expected = expectedFor(viewName, name, op, example)
              const { method, path } = requestOf(name, example)
              const r = yield* h.raw(method, path, {
                token: view.token,
                ...(example.body === undefined ? {} : { body: example.body })
              })
              const label = `${viewName} × ${name}: ${method} ${path}`
              if (expected.status < 300) {
                expect(r.status, `${label}\n${r.text}`).toBe(expected.status)
                expect(Object.keys(r.json).sort(), label).toEqual(["data", "status"])
                expect(r.json.status).toBe("success")
                expect(r.json.data).toBeTypeOf("object")
                expected.check?.(r.json.data, view.world)
              } else {
                expectError(r, expected.status, expected.type)
                if (expected.type === "missing_permission") expect(r.json.error.permission).toBe(op.permission)
              }
              // Rate-limit headers exactly on requests that passed authentication (§4); Retry-After only on 429.
              expect(r.headers.get("x-ratelimit-limit") === null, label).toBe(expected.status === 401)
              expect(r.headers.get("retry-after") === null, label).toBe(expected.status !== 429)
              // Per-account data: never cached, never offered to another origin.
              expect(r.headers.get("cache-control"), label).toBe("no-store")
              expect(r.headers.get("access-control-allow-origin"), label).toBeNull()
              cases++
            }))
        }
      })
    }
  })

  // ---------------------------------------------------------------------------------------------------
  // Object access

  /** Two accounts' worlds, and a token of A's restricted to its p2. */
  class Worlds
    extends Context.Service<Worlds, { a: World; b: World; restricted: string; rootOfA: string }>()("matrix/Worlds")
  {}
  const WorldsLive = Layer.effect(
    Worlds,
    Effect.gen(function*() {
      const a = yield* makeWorld()
      const b = yield* makeWorld()
      const restricted = (yield* h.mint(a.accountId, { projects: [a.p2], permissions: [...PERMISSIONS] })).secret
      return { a, b, restricted, rootOfA: a.rootSecret }
    })
  )

  it.layer(WorldsLive)("object access: another project's or account's expense, token or sync run", (it) => {
    const denied = (method: string, path: string, token: string, status: number, type: string, body?: unknown) =>
      Effect.gen(function*() {
        expectError(yield* h.raw(method, path, { token, ...(body === undefined ? {} : { body }) }), status, type)
        cases++
      })
    const listed = (path: string, token: string) =>
      Effect.gen(function*() {
        const r = yield* h.raw("GET", path, { token })
        expect(r.status, r.text).toBe(200)
        cases++
        return r
      })

    it.effect("an expense: never deleted or listed outside its project (403 in the account, 404 across)", () =>
      Effect.gen(function*() {
        const { a, b, restricted, rootOfA } = yield* Worlds
        const del = (project: string, expense: string) => `/api/v1/projects/${project}/expenses/${expense}`
        // The caller's own account, project outside its scope: 403; in scope but the expense is another project's: 404.
        yield* denied("DELETE", del(a.p1, a.expense), restricted, 403, "project_out_of_scope")
        yield* denied("DELETE", del(a.p2, a.expense), restricted, 404, "not_found")
        // Another account: 404 through the owner's project and through the caller's own.
        yield* denied("DELETE", del(a.p1, a.expense), b.rootSecret, 404, "not_found")
        yield* denied("DELETE", del(b.p1, a.expense), b.rootSecret, 404, "not_found")
        yield* denied("DELETE", del(a.p1, b.expense), rootOfA, 404, "not_found")
        // Not listed anywhere else.
        yield* denied("GET", `/api/v1/projects/${a.p1}/expenses`, restricted, 403, "project_out_of_scope")
        yield* denied("GET", `/api/v1/projects/${a.p1}/expenses`, b.rootSecret, 404, "not_found")
        for (
          const [path, token] of [[`/api/v1/projects/${a.p2}/expenses`, restricted], [
            `/api/v1/projects/${b.p1}/expenses`,
            b.rootSecret
          ]] as const
        ) {
          expect((yield* listed(path, token)).text).not.toContain(a.expense)
        }
        // And it is still there, untouched, for its owner.
        const own = yield* listed(`/api/v1/projects/${a.p1}/expenses?limit=100`, rootOfA)
        expect(own.json.data.expenses.find((e: any) => e.id === a.expense)).toMatchObject({
          deletedAt: null,
          amount: EXPENSE.amount
        })
      }))

    it.effect("a token: never revoked from outside its scope (403 escalation in the account, 404 across), confirmed or not", () =>
      Effect.gen(function*() {
        const { a, b, restricted, rootOfA } = yield* Worlds
        for (const confirm of [{ query: "" }, { query: "?confirm=true" }, { query: "", body: { confirm: true } }]) {
          yield* denied(
            "DELETE",
            `/api/v1/tokens/${a.token}${confirm.query}`,
            restricted,
            403,
            "escalation",
            confirm.body
          )
          yield* denied(
            "DELETE",
            `/api/v1/tokens/${a.token}${confirm.query}`,
            b.rootSecret,
            404,
            "not_found",
            confirm.body
          )
        }
        // Another account's listing never shows it.
        expect((yield* listed("/api/v1/tokens?limit=100", b.rootSecret)).text).not.toContain(a.token)
        // It still works: GET /projects as that token is 200 (not 401 token_revoked).
        const own = yield* listed("/api/v1/tokens?limit=100", rootOfA)
        expect(own.json.data.tokens.find((t: any) => t.id === a.token)).toMatchObject({
          status: "active",
          revokedAt: null
        })
      }))

    it.effect("a sync run: never read or re-queued outside its project (403 in the account, 404 across)", () =>
      Effect.gen(function*() {
        const { a, b, restricted, rootOfA } = yield* Worlds
        yield* denied("GET", `/api/v1/projects/${a.p1}/integrations`, restricted, 403, "project_out_of_scope")
        yield* denied("GET", `/api/v1/projects/${a.p1}/integrations`, b.rootSecret, 404, "not_found")
        yield* denied(
          "POST",
          `/api/v1/projects/${a.p1}/integrations/plausible/sync`,
          restricted,
          403,
          "project_out_of_scope",
          { mode: "full" }
        )
        yield* denied("POST", `/api/v1/projects/${a.p1}/integrations/plausible/sync`, b.rootSecret, 404, "not_found", {
          mode: "full"
        })
        for (
          const [path, token] of [[`/api/v1/projects/${a.p2}/integrations`, restricted], [
            `/api/v1/projects/${b.p1}/integrations`,
            b.rootSecret
          ]] as const
        ) {
          expect((yield* listed(path, token)).text).not.toContain(a.syncRun)
        }
        // The run is as it was: still the one queued run, in its own mode (a refused "full" changed nothing).
        const own = yield* listed(`/api/v1/projects/${a.p1}/integrations`, rootOfA)
        expect(own.json.data.integrations.find((i: any) => i.provider === "plausible").lastRun).toMatchObject({
          id: a.syncRun,
          status: "queued",
          mode: "incremental"
        })
      }))
  })

  describe("the count", () => {
    it("reports how many cases the matrix asserted", () => {
      const matrix = VIEW_NAMES.length * OPERATION_NAMES.length
      // Printed so the figure can be quoted (docs/security.md: "cases in the matrix").
      console.info(
        `authorization matrix (${h.store}): ${VIEW_NAMES.length} views × ${OPERATION_NAMES.length} operations = ` +
          `${matrix} cells; ${cases} cases asserted with the object-access checks`
      )
      expect(cases).toBeGreaterThanOrEqual(matrix + 20)
    })
  })
})
