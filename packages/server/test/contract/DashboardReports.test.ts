/**
 * The dashboard's `reports` group (/app/api/websites/{id}/analytics|revenue|churn|seo): for the logged-in
 * owner, the very answer /api/v1 gives a token for the same project and period (same services, same schemas);
 * 404 for another account's website; 401 without a session (a bearer token is not one); 400 for a bad period.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { PERIODS } from "@sitehealth/domain/Common"
import { AppConfig, readConfig } from "../../src/Config.ts"
import { magicLinkFor } from "../../src/dashboard/Auth.ts"
import { Signing } from "../../src/dashboard/Links.ts"
import { demoFxRates, generateDemoProject } from "../../src/demo/Generate.ts"
import { DEMO_PROJECTS } from "../../src/demo/Profiles.ts"
import { FxRepo } from "../../src/fx/FxRepo.ts"
import { PaymentsRepo } from "../../src/payments/PaymentsRepo.ts"
import { SearchRepo } from "../../src/search/SearchRepo.ts"
import { TrafficRepo } from "../../src/traffic/TrafficRepo.ts"
import { h, TestApp } from "../support/TestApp.ts"

const HISTORY_DAYS = 120

/** An account whose first project holds 120 days of the first demo profile's data, and a session of its owner. */
const ownerWithData = Effect.gen(function*() {
  const { account, projects, secret } = yield* h.newAccount({ projects: 1 })
  const project = projects[0]!
  yield* h.run(Effect.gen(function*() {
    const now = new Date(yield* h.now)
    const data = generateDemoProject(DEMO_PROJECTS[0]!, now, HISTORY_DAYS)
    yield* (yield* FxRepo).put(demoFxRates(now, HISTORY_DAYS))
    yield* (yield* TrafficRepo).write(project.id, data.traffic)
    yield* (yield* SearchRepo).write(project.id, data.search)
    yield* (yield* PaymentsRepo).write(project.id, data.payments)
  }))
  const link = yield* h.run(magicLinkFor(account.id, `owner-${account.id}@example.test`, "http://localhost").pipe(
    Effect.provide(Signing.layer),
    Effect.provide(AppConfig.layer(readConfig({})))
  ))
  const login = yield* h.raw("GET", link.replace("http://localhost", ""), { token: null })
  expect(login.status).toBe(303)
  const cookie = /sitehealth_session=([^;]+)/.exec(login.headers.get("set-cookie") ?? "")![1]!
  return { project, secret, session: { cookie: `sitehealth_session=${cookie}` } }
})

layer(TestApp.layer(), { timeout: 60_000 })("Dashboard reports", (it) => {
  describe("the same answer as /api/v1", () => {
    it.effect("analytics, revenue, churn and SEO for every period", () =>
      Effect.gen(function*() {
        const { project, secret, session } = yield* ownerWithData
        for (const [dashboard, v1] of [["analytics", "analytics"], ["revenue", "revenue"], ["churn", "churn"], ["seo", "seo"]] as const) {
          for (const period of PERIODS) {
            const viaSession = yield* h.raw("GET", `/app/api/websites/${project.id}/${dashboard}?period=${period}`, { token: null, headers: session })
            const viaToken = yield* h.raw("GET", `/api/v1/projects/${project.id}/${v1}?period=${period}`, { token: secret })
            expect(viaSession.status, `${dashboard} ${period}: ${viaSession.text}`).toBe(200)
            expect(viaToken.status, `${v1} ${period}`).toBe(200)
            expect(viaSession.json, `${dashboard} ${period}`).toEqual(viaToken.json)
          }
        }
        // Real figures, not empty reports.
        const analytics = yield* h.raw("GET", `/app/api/websites/${project.id}/analytics`, { token: null, headers: session })
        expect(analytics.json.data.period).toBe("30d")
        expect(analytics.json.data.totals.pageviews).toBeGreaterThan(0)
        expect(analytics.json.data.previous.series).toHaveLength(analytics.json.data.series.length)
        const seo = yield* h.raw("GET", `/app/api/websites/${project.id}/seo?period=7d`, { token: null, headers: session })
        expect(seo.json.data.series).toHaveLength(7)
        expect(seo.json.data.totals.clicks).toBe(seo.json.data.series.reduce((s: number, p: { clicks: number }) => s + p.clicks, 0))
      }))
  })

  describe("access", () => {
    it.effect("404 for another account's website, 401 without a session or with a bearer token, 400 for a bad period", () =>
      Effect.gen(function*() {
        const mine = yield* ownerWithData
        const other = yield* h.newAccount({ projects: 1 })
        const theirs = other.projects[0]!.id
        const foreign = yield* h.raw("GET", `/app/api/websites/${theirs}/revenue`, { token: null, headers: mine.session })
        expect(foreign.status).toBe(404)
        expect(foreign.json).toMatchObject({ status: "error", error: { type: "not_found" } })
        const unknown = yield* h.raw("GET", `/app/api/websites/prj_nope/seo`, { token: null, headers: mine.session })
        expect(unknown.status).toBe(404)
        const anonymous = yield* h.raw("GET", `/app/api/websites/${mine.project.id}/analytics`, { token: null })
        expect(anonymous.status).toBe(401)
        const bearer = yield* h.raw("GET", `/app/api/websites/${mine.project.id}/analytics`, { token: mine.secret })
        expect(bearer.status).toBe(401)
        const bad = yield* h.raw("GET", `/app/api/websites/${mine.project.id}/analytics?period=5y`, { token: null, headers: mine.session })
        expect(bad.status).toBe(400)
        expect(bad.json.status).toBe("error")
      }))
  })
})
