/**
 * The dashboard's report endpoints (/app/api/websites/…, @sitehealth/domain/DashboardReports) behind the real
 * session: each answers exactly what /api/v1 answers for the same website and query (same operation, same
 * figures), writes through them are /api/v1's writes, a logged-out call is 401, another account's website 404,
 * a state change needs the CSRF token, and an ended trial is 402 as on /api/v1. Over the demo account.
 */
import { expect, layer } from "@effect/vitest"
import type { AccountId } from "@sitehealth/domain/Common"
import { Context, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { createAccount } from "../../src/accounts/Provisioning.ts"
import { AuthRepo, newUserId } from "../../src/dashboard/AuthRepo.ts"
import { hashPassword } from "../../src/dashboard/Passwords.ts"
import { seedDemoIn } from "../support/DemoSeed.ts"
import { expectError } from "../support/Expect.ts"
import { h, TestApp } from "../support/TestApp.ts"

const ORIGIN = { origin: "http://localhost" }
const PASSWORD = "correct horse battery"
let counter = 0

/** A verified dashboard user of the account, logged in: its read and write headers. */
const logIn = (accountId: AccountId) =>
  Effect.gen(function*() {
    const email = `reports-${Date.now().toString(36)}-${counter++}@example.test` // unique beside another suite
    const passwordHash = yield* hashPassword(PASSWORD)
    yield* h.run(Effect.flatMap(AuthRepo, (repo) =>
      repo.createUser({
        id: newUserId(),
        accountId,
        email,
        passwordHash,
        emailVerifiedAt: new Date(),
        createdAt: new Date()
      })))
    yield* TestClock.adjust("1 minute")
    const login = yield* h.raw("POST", "/app/api/auth/login", {
      token: null,
      headers: ORIGIN,
      body: { email, password: PASSWORD }
    })
    expect(login.status, login.text).toBe(200)
    const cookie = `sitehealth_session=${/sitehealth_session=([^;]*)/.exec(login.headers.get("set-cookie") ?? "")![1]}`
    return { read: { cookie }, write: { ...ORIGIN, cookie, "x-csrf-token": login.json.data.csrfToken as string } }
  })

class Demo extends Context.Service<Demo, {
  readonly token: string
  readonly ids: ReadonlyArray<string>
  readonly read: Record<string, string>
  readonly write: Record<string, string>
}>()("test/DashboardReportsDemo") {}

const DemoLive = Layer.effect(
  Demo,
  Effect.gen(function*() {
    const demo = yield* seedDemoIn(h.run)
    const session = yield* logIn(demo.account.id)
    return { token: demo.secret, ids: demo.projectIds, ...session }
  })
).pipe(Layer.provideMerge(TestApp.layer()))

/** GET on both doors: the dashboard's answer and /api/v1's, both 200. */
const both = (v1Path: string) =>
  Effect.gen(function*() {
    const { token, read } = yield* Demo
    const v1 = yield* h.raw("GET", `/api/v1${v1Path}`, { token })
    expect(v1.status, `${v1Path}: ${v1.text.slice(0, 300)}`).toBe(200)
    const dashboardPath = v1Path === "/projects" ? "/websites/health" : v1Path.replace(/^\/projects\//, "/websites/")
    const dashboard = yield* h.raw("GET", `/app/api${dashboardPath}`, { token: null, headers: read })
    expect(dashboard.status, `${dashboardPath}: ${dashboard.text.slice(0, 300)}`).toBe(200)
    return { v1: v1.json, dashboard: dashboard.json }
  })

layer(DemoLive, { timeout: "120 seconds" })("the dashboard's report endpoints", (it) => {
  it.effect("answer exactly what /api/v1 answers, for every report of every demo website", () =>
    Effect.gen(function*() {
      const { ids } = yield* Demo
      const list = yield* both("/projects")
      expect(list.dashboard).toEqual(list.v1)
      expect(list.dashboard.data.projects).toHaveLength(3)
      for (const id of ids) {
        for (
          const path of [
            "health",
            "briefing",
            "signals",
            "signals?dimension=traffic&severity=warning",
            "analytics?period=7d",
            "analytics",
            "revenue?period=3m",
            "churn?period=12m",
            "seo?period=30d",
            "integrations",
            "expenses?limit=5"
          ]
        ) {
          const { dashboard, v1 } = yield* both(`/projects/${id}/${path}`)
          expect(dashboard, `${id} ${path}`).toEqual(v1)
        }
      }
    }))

  it.effect("CSV: the report pages' downloads are /api/v1's CSV, byte for byte, behind the session", () =>
    Effect.gen(function*() {
      const { ids, token, read } = yield* Demo
      for (
        const path of ["analytics?period=7d&table=sources", "revenue?period=30d", "churn?period=12m", "seo", "signals"]
      ) {
        const query = `${path}${path.includes("?") ? "&" : "?"}format=csv`
        const v1 = yield* h.raw("GET", `/api/v1/projects/${ids[0]}/${query}`, { token })
        const dashboard = yield* h.raw("GET", `/app/api/websites/${ids[0]}/${query}`, { token: null, headers: read })
        expect(dashboard.status, dashboard.text.slice(0, 300)).toBe(200)
        expect(dashboard.headers.get("content-type")).toBe("text/csv; charset=utf-8")
        expect(dashboard.text.split("\r\n").length, path).toBeGreaterThan(2) // the demo has rows in each
        expect(dashboard.text).toBe(v1.text)
      }
    }))

  it.effect("logged out 401; a bearer token is no session (401); a bad query 400 in the envelope", () =>
    Effect.gen(function*() {
      const { ids, token, read } = yield* Demo
      expectError(yield* h.raw("GET", `/app/api/websites/${ids[0]}/health`, { token: null }), 401)
      expectError(yield* h.raw("GET", `/app/api/websites/${ids[0]}/health`, { token }), 401)
      expectError(
        yield* h.raw("GET", `/app/api/websites/${ids[0]}/analytics?period=5y`, { token: null, headers: read }),
        400
      )
      expectError(
        yield* h.raw("GET", `/app/api/websites/${ids[0]}/signals?severity=loud`, { token: null, headers: read }),
        400
      )
    }))

  it.effect("another account's website is 404, as an unknown one", () =>
    Effect.gen(function*() {
      const { ids } = yield* Demo
      const other = yield* h.run(createAccount({ name: "Someone else" }))
      const stranger = yield* logIn(other.id)
      expectError(
        yield* h.raw("GET", `/app/api/websites/${ids[0]}/briefing`, { token: null, headers: stranger.read }),
        404
      )
      expectError(
        yield* h.raw("GET", `/app/api/websites/prj_unknown/revenue`, { token: null, headers: stranger.read }),
        404
      )
      expectError(
        yield* h.raw("POST", `/app/api/websites/${ids[0]}/expenses`, {
          token: null,
          headers: stranger.write,
          body: { amount: 100, category: "hosting", description: "x", incurredOn: "2026-01-01", recurrence: "one_off" }
        }),
        404
      )
    }))

  it.effect("an expense added and deleted through the dashboard is /api/v1's expense; writes need the CSRF token", () =>
    Effect.gen(function*() {
      const { ids, token, read, write } = yield* Demo
      const id = ids[2]!
      const body = {
        amount: 12_345,
        currency: "USD",
        category: "software",
        description: "Dashboard test licence",
        incurredOn: "1970-01-01",
        recurrence: "monthly"
      }
      expectError(
        yield* h.raw("POST", `/app/api/websites/${id}/expenses`, {
          token: null,
          headers: { ...write, "x-csrf-token": "wrong" },
          body
        }),
        403,
        "csrf_token"
      )
      expectError(
        yield* h.raw("POST", `/app/api/websites/${id}/expenses`, {
          token: null,
          headers: write,
          body: { ...body, currency: "XXZ" }
        }),
        400
      )
      const created = yield* h.raw("POST", `/app/api/websites/${id}/expenses`, { token: null, headers: write, body })
      expect(created.status, created.text).toBe(201)
      const expenseId = created.json.data.expense.id as string
      expect(created.json.data.expense).toMatchObject({
        amount: 12_345,
        currency: "USD",
        recurrence: "monthly",
        deletedAt: null
      })
      const v1 = yield* h.raw("GET", `/api/v1/projects/${id}/expenses?limit=100`, { token })
      expect(v1.json.data.expenses.map((e: any) => e.id)).toContain(expenseId)
      const deleted = yield* h.raw("DELETE", `/app/api/websites/${id}/expenses/${expenseId}`, {
        token: null,
        headers: write
      })
      expect(deleted.status, deleted.text).toBe(200)
      expect(deleted.json.data.deleted).toBe(true)
      const after = yield* h.raw("GET", `/app/api/websites/${id}/expenses?limit=100`, { token: null, headers: read })
      expect(after.json.data.expenses.map((e: any) => e.id)).not.toContain(expenseId)
      expectError(
        yield* h.raw("DELETE", `/app/api/websites/${id}/expenses/${expenseId}`, { token: null, headers: write }),
        404
      )
    }))

  it.effect("sync now queues /api/v1's sync run, recorded as requested by the dashboard; the list shows it", () =>
    Effect.gen(function*() {
      const { ids, read, write } = yield* Demo
      const id = ids[0]!
      const sync = yield* h.raw("POST", `/app/api/websites/${id}/integrations/plausible/sync`, {
        token: null,
        headers: write,
        body: null
      })
      expect(sync.status, sync.text).toBe(202)
      expect(sync.json.data.sync).toMatchObject({ provider: "plausible", mode: "incremental", status: "queued" })
      const again = yield* h.raw("POST", `/app/api/websites/${id}/integrations/plausible/sync`, {
        token: null,
        headers: write,
        body: { mode: "incremental" }
      })
      expect(again.json.data).toMatchObject({ alreadyQueued: true, sync: { id: sync.json.data.sync.id } })
      const list = yield* h.raw("GET", `/app/api/websites/${id}/integrations`, { token: null, headers: read })
      expect(list.json.data.integrations.find((i: any) => i.provider === "plausible").lastRun.id).toBe(
        sync.json.data.sync.id
      )
      expectError(
        yield* h.raw("POST", `/app/api/websites/${id}/integrations/demo/sync`, {
          token: null,
          headers: write,
          body: null
        }),
        404
      )
    }))

  it.effect("an account whose trial has ended gets 402 trial_expired, as on /api/v1", () =>
    Effect.gen(function*() {
      const { account, projects, secret } = yield* h.newAccount({ projects: 1 })
      const session = yield* logIn(account.id)
      yield* h.endTrial(account.id)
      expectError(yield* h.raw("GET", `/api/v1/projects/${projects[0]!.id}/health`, { token: secret }), 402)
      expectError(
        yield* h.raw("GET", `/app/api/websites/${projects[0]!.id}/health`, { token: null, headers: session.read }),
        402
      )
      expectError(yield* h.raw("GET", `/app/api/websites/health`, { token: null, headers: session.read }), 402)
    }))
})
