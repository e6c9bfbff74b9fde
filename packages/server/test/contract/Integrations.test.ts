/**
 * Integrations: the three providers, queueing a sync (202, one pending sync per integration), and the
 * dashboard-only actions (connect, disconnect, delete a website) that the API always answers with 403.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { IntegrationsRepo } from "../../src/integrations/IntegrationsRepo.ts"
import type { IntegrationRecord } from "../../src/store/Records.ts"
import { expectError } from "../support/Expect.ts"
import { makeHarness, type CallResult, type Harness } from "../support/Harness.ts"

let h: Harness
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/


const connect = (projectId: string, provider: string, extra: Partial<IntegrationRecord> = {}) =>
  h.run(
    Effect.flatMap(IntegrationsRepo, (repo) =>
      repo.upsert({
        projectId,
        provider,
        status: "connected",
        connectedAt: new Date(h.time.now()),
        lastSyncedAt: null,
        lastError: null,
        ...extra
      }))
  )

const integrationsPath = (projectId: string) => `/api/v1/projects/${projectId}/integrations`
const syncPath = (projectId: string, provider: string) => `${integrationsPath(projectId)}/${provider}/sync`

const listIntegrations = async (projectId: string, token: string) => {
  const r = await h.call("GET", integrationsPath(projectId), { token })
  expect(r.status, r.text).toBe(200)
  return r.json.data.integrations as Array<any>
}

describe("GET /projects/{id}/integrations", () => {
  it("lists stripe, plausible and google_search_console, all not_connected by default", async () => {
    const { projects, secret } = await h.newAccount()
    const r = await h.call("GET", integrationsPath(projects[0].id), { token: secret })
    expect(r.status, r.text).toBe(200)
    expect(Object.keys(r.json).sort()).toEqual(["data", "status"])
    expect(r.json.status).toBe("success")
    expect(r.json.data.projectId).toBe(projects[0].id)
    expect(r.json.data.integrations).toEqual([
      { provider: "stripe", kind: "payments", status: "not_connected", connectedAt: null, lastSyncedAt: null, lastError: null, pendingSync: null },
      { provider: "plausible", kind: "analytics", status: "not_connected", connectedAt: null, lastSyncedAt: null, lastError: null, pendingSync: null },
      {
        provider: "google_search_console",
        kind: "search",
        status: "not_connected",
        connectedAt: null,
        lastSyncedAt: null,
        lastError: null,
        pendingSync: null
      }
    ])
  })

  it("shows a connected integration with its dates and an errored one with its error", async () => {
    const { projects, secret } = await h.newAccount()
    const connectedAt = new Date(h.time.now() - 86_400_000)
    const lastSyncedAt = new Date(h.time.now() - 3_600_000)
    await connect(projects[0].id, "stripe", { connectedAt, lastSyncedAt })
    await connect(projects[0].id, "plausible", { status: "error", lastError: "API key revoked" })
    const [stripe, plausible, gsc] = await listIntegrations(projects[0].id, secret)
    expect(stripe).toMatchObject({
      provider: "stripe",
      status: "connected",
      connectedAt: connectedAt.toISOString(),
      lastSyncedAt: lastSyncedAt.toISOString(),
      lastError: null,
      pendingSync: null
    })
    expect(plausible).toMatchObject({ provider: "plausible", status: "error", lastError: "API key revoked" })
    expect(gsc).toMatchObject({ provider: "google_search_console", status: "not_connected", connectedAt: null })
  })

  it("does not show another project's integrations", async () => {
    const { projects, secret } = await h.newAccount({ projects: 2 })
    await connect(projects[1].id, "stripe")
    const list = await listIntegrations(projects[0].id, secret)
    expect(list.map((i) => i.status)).toEqual(["not_connected", "not_connected", "not_connected"])
  })

  it("needs integrations:read and the project in the token's scope", async () => {
    const { account, projects } = await h.newAccount({ projects: 2 })
    const noRead = await h.mint(account.id, { permissions: ["projects:read", "integrations:sync"] })
    const r = await h.call("GET", integrationsPath(projects[0].id), { token: noRead.secret })
    expectError(r, 403, "missing_permission")
    expect(r.json.error.permission).toBe("integrations:read")
    const scoped = await h.mint(account.id, { projects: [projects[0].id] })
    expectError(await h.call("GET", integrationsPath(projects[1].id), { token: scoped.secret }), 403, "project_out_of_scope")
    expectError(await h.call("GET", integrationsPath("prj_doesnotexist"), { token: scoped.secret }), 404)
  })
})

describe("POST /projects/{id}/integrations/{provider}/sync", () => {
  it("queues a sync (202), returns the same one while it is pending, and the list shows it as pendingSync", async () => {
    const { projects, secret } = await h.newAccount()
    const projectId = projects[0].id
    await connect(projectId, "stripe")

    const first = await h.call("POST", syncPath(projectId, "stripe"), { token: secret })
    expect(first.status, first.text).toBe(202)
    expect(Object.keys(first.json).sort()).toEqual(["data", "status"])
    expect(first.json.status).toBe("success")
    expect(first.json.data.alreadyQueued).toBe(false)
    const sync = first.json.data.sync
    expect(sync).toEqual({
      id: expect.stringMatching(/^syn_/),
      provider: "stripe",
      mode: "incremental",
      status: "queued",
      requestedAt: new Date(h.time.now()).toISOString(),
      finishedAt: null
    })

    h.time.advance(1_000)
    const second = await h.call("POST", syncPath(projectId, "stripe"), { token: secret, body: { mode: "full" } })
    expect(second.status, second.text).toBe(202)
    expect(second.json.data.alreadyQueued).toBe(true)
    // The pending one, unchanged (not a new full sync).
    expect(second.json.data.sync).toEqual(sync)

    const [stripe, plausible, gsc] = await listIntegrations(projectId, secret)
    expect(stripe.status).toBe("connected")
    expect(stripe.pendingSync).toEqual(sync)
    expect(plausible.pendingSync).toBeNull()
    expect(gsc.pendingSync).toBeNull()
  })

  it("accepts {mode:'full'} and an empty object, and rejects an unknown mode or field with 400", async () => {
    const { projects, secret } = await h.newAccount()
    const projectId = projects[0].id
    await connect(projectId, "plausible")
    await connect(projectId, "google_search_console")

    const badMode = await h.call("POST", syncPath(projectId, "plausible"), { token: secret, body: { mode: "x" } })
    expectError(badMode, 400, "invalid_request")
    expect(badMode.json.error.issues.map((i: any) => i.path)).toContain("body.mode")
    const unknownField = await h.call("POST", syncPath(projectId, "plausible"), { token: secret, body: { mdoe: "full" } })
    expectError(unknownField, 400, "invalid_request")
    expect(unknownField.json.error.issues.map((i: any) => i.path)).toContain("body.mdoe")
    expectError(await h.call("POST", syncPath(projectId, "plausible"), { token: secret, rawBody: "{mode" }), 400, "invalid_json")
    // Nothing was queued by the rejected requests.
    expect((await listIntegrations(projectId, secret)).every((i) => i.pendingSync === null)).toBe(true)

    const full = await h.call("POST", syncPath(projectId, "plausible"), { token: secret, body: { mode: "full" } })
    expect(full.status, full.text).toBe(202)
    expect(full.json.data).toMatchObject({ alreadyQueued: false, sync: { provider: "plausible", mode: "full", status: "queued" } })

    const empty = await h.call("POST", syncPath(projectId, "google_search_console"), { token: secret, body: {} })
    expect(empty.status, empty.text).toBe(202)
    expect(empty.json.data).toMatchObject({
      alreadyQueued: false,
      sync: { provider: "google_search_console", mode: "incremental", status: "queued" }
    })
    expect(empty.json.data.sync.id).not.toBe(full.json.data.sync.id)
  })

  it("queues one sync per integration under concurrent requests", async () => {
    const { projects, secret } = await h.newAccount()
    await connect(projects[0].id, "stripe")
    const results = await Promise.all(
      Array.from({ length: 5 }, () => h.call("POST", syncPath(projects[0].id, "stripe"), { token: secret }))
    )
    for (const r of results) expect(r.status, r.text).toBe(202)
    expect(new Set(results.map((r) => r.json.data.sync.id)).size).toBe(1)
    expect(results.filter((r) => r.json.data.alreadyQueued === false)).toHaveLength(1)
  })

  it("keeps pending syncs apart per project", async () => {
    const { projects, secret } = await h.newAccount({ projects: 2 })
    await connect(projects[0].id, "stripe")
    await connect(projects[1].id, "stripe")
    const a = await h.call("POST", syncPath(projects[0].id, "stripe"), { token: secret })
    const b = await h.call("POST", syncPath(projects[1].id, "stripe"), { token: secret })
    expect(a.json.data.alreadyQueued).toBe(false)
    expect(b.json.data.alreadyQueued).toBe(false)
    expect(a.json.data.sync.id).not.toBe(b.json.data.sync.id)
  })

  it("answers 409 not_connected for a provider that is not connected, and queues nothing", async () => {
    const { projects, secret } = await h.newAccount()
    await connect(projects[0].id, "stripe")
    expectError(await h.call("POST", syncPath(projects[0].id, "plausible"), { token: secret }), 409, "not_connected")
    const list = await listIntegrations(projects[0].id, secret)
    expect(list.find((i) => i.provider === "plausible")).toMatchObject({ status: "not_connected", pendingSync: null })
  })

  it("answers 404 for an unknown provider and for a project that does not exist or is another account's", async () => {
    const other = await h.newAccount()
    await connect(other.projects[0].id, "stripe")
    const { projects, secret } = await h.newAccount()
    await connect(projects[0].id, "stripe")
    expectError(await h.call("POST", syncPath(projects[0].id, "paypal"), { token: secret }), 404)
    expectError(await h.call("POST", syncPath(projects[0].id, "Stripe"), { token: secret }), 404)
    expectError(await h.call("POST", syncPath("prj_doesnotexist", "stripe"), { token: secret }), 404)
    expectError(await h.call("POST", syncPath(other.projects[0].id, "stripe"), { token: secret }), 404)
    expect((await listIntegrations(other.projects[0].id, other.secret))[0].pendingSync).toBeNull()
  })

  it("needs integrations:sync: 403 naming the permission, and nothing is queued", async () => {
    const { account, projects, secret } = await h.newAccount()
    await connect(projects[0].id, "stripe")
    const readOnly = await h.mint(account.id, { permissions: ["integrations:read"] })
    const r = await h.call("POST", syncPath(projects[0].id, "stripe"), { token: readOnly.secret })
    expectError(r, 403, "missing_permission")
    expect(r.json.error.permission).toBe("integrations:sync")
    expect((await listIntegrations(projects[0].id, secret))[0].pendingSync).toBeNull()
  })
})

describe("dashboard-only actions", () => {
  it("connecting or disconnecting a provider answers 403 dashboard_only and changes nothing", async () => {
    const { projects, secret } = await h.newAccount()
    const projectId = projects[0].id
    await connect(projectId, "plausible")
    const connectStripe = await h.call("POST", `${integrationsPath(projectId)}/stripe`, { token: secret, body: {} })
    expectError(connectStripe, 403, "dashboard_only")
    expectError(await h.call("POST", `${integrationsPath(projectId)}/stripe`, { token: secret }), 403, "dashboard_only")
    expectError(await h.call("DELETE", `${integrationsPath(projectId)}/stripe`, { token: secret }), 403, "dashboard_only")
    expectError(await h.call("DELETE", `${integrationsPath(projectId)}/plausible`, { token: secret }), 403, "dashboard_only")
    const [stripe, plausible] = await listIntegrations(projectId, secret)
    expect(stripe.status).toBe("not_connected")
    expect(plausible.status).toBe("connected")
    expect(plausible.connectedAt).toMatch(ISO)
  })

  it("deleting a website answers 403 dashboard_only and the website is still there", async () => {
    const { projects, secret } = await h.newAccount()
    const projectId = projects[0].id
    await connect(projectId, "stripe")
    const expense = await h.call("POST", `/api/v1/projects/${projectId}/expenses`, {
      token: secret,
      body: { amount: 100, category: "domains", description: "Domain", incurredOn: "2026-11-01", recurrence: "yearly" }
    })
    expect(expense.status).toBe(201)

    const r = await h.call("DELETE", `/api/v1/projects/${projectId}`, { token: secret })
    expectError(r, 403, "dashboard_only")

    const list = await h.call("GET", "/api/v1/projects", { token: secret })
    expect(list.json.data.projects.map((p: any) => p.id)).toEqual([projectId])
    expect((await h.call("GET", `/api/v1/projects/${projectId}/health`, { token: secret })).status).toBe(200)
    expect((await listIntegrations(projectId, secret))[0].status).toBe("connected")
    const expenses = await h.call("GET", `/api/v1/projects/${projectId}/expenses`, { token: secret })
    expect(expenses.json.data.expenses.map((e: any) => e.id)).toEqual([expense.json.data.expense.id])
  })
})
