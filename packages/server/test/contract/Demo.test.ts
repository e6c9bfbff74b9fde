/**
 * What a new user of `npm start` sees: the demo account, whose Stripe, Plausible and Search Console are real
 * connections to the demo's local providers (their first syncs are its year of history), lights up every
 * endpoint, and the events planted in it (demo/Profiles.ts) come out of the reports and signals — computed,
 * not written in. Runs on both stores.
 */
import { expect, layer } from "@effect/vitest"
import { PERIODS } from "@sitehealth/domain/Common"
import { Context, Effect, Layer, Logger } from "effect"
import { addDays } from "../../src/metrics/Dates.ts"
import { seedDemoIn } from "../support/DemoSeed.ts"
import { h, TestApp } from "../support/TestApp.ts"

/** The demo account, seeded once for the file: its token and its three projects. */
class Demo extends Context.Service<
  Demo,
  {
    readonly token: string
    readonly ids: { acme: string; bolt: string; calm: string }
    /** What the seed logged, as `npm start` prints it at a first start. */
    readonly logs: ReadonlyArray<{ readonly level: string; readonly message: string }>
  }
>()("test/Demo") {}
const DemoLive = Layer.effect(
  Demo,
  Effect.gen(function*() {
    const logs: Array<{ level: string; message: string }> = []
    const capture = Logger.layer([Logger.make((options) => {
      const message = (Array.isArray(options.message) ? options.message : [options.message]).map(String).join(" ")
      logs.push({ level: options.logLevel, message })
    })])
    const demo = yield* seedDemoIn(h.run).pipe(Effect.provide(capture))
    return {
      token: demo.secret,
      ids: { acme: demo.projectIds[0], bolt: demo.projectIds[1], calm: demo.projectIds[2] },
      logs
    }
  })
).pipe(Layer.provideMerge(TestApp.layer()))

const get = (path: string) =>
  Effect.gen(function*() {
    const { token } = yield* Demo
    const r = yield* h.raw("GET", `/api/v1${path}`, { token })
    expect(r.status, `${path}: ${r.text.slice(0, 300)}`).toBe(200)
    return r.json.data
  })
const signalsOf = (id: string) =>
  Effect.gen(function*() {
    return (yield* get(`/projects/${id}/signals?limit=100`)).signals as Array<any>
  })

layer(DemoLive, { timeout: "120 seconds" })("the demo account", (it) => {
  it.effect("lists three projects, each with a health snapshot that has a score", () =>
    Effect.gen(function*() {
      const list = yield* get("/projects")
      expect(list.projects.map((p: any) => p.name).sort()).toEqual(["Acme Analytics", "Bolt Recipes", "Calm Notes"])
      for (const p of list.projects) {
        expect(p.health.score).toBeGreaterThanOrEqual(0)
        expect(p.health.confidence).toBeGreaterThan(0.5)
        // A month of daily snapshots computed at seed time, then today's: a trend from the first start.
        expect(p.trend.points.length).toBeGreaterThanOrEqual(30)
        expect(p.trend.points.at(-1).score).toBe(p.health.score)
        expect(p.trend.scoreChange7d).toBe(p.health.score - p.trend.points.at(-8).score)
      }
    }))

  it.effect("answers every report of every project with real figures", () =>
    Effect.gen(function*() {
      const { ids } = yield* Demo
      for (const id of Object.values(ids)) {
        const health = yield* get(`/projects/${id}/health`)
        expect(health.dimensions.filter((d: any) => d.score !== null).length).toBe(5)
        for (const period of PERIODS) {
          const a = yield* get(`/projects/${id}/analytics?period=${period}`)
          expect(a.totals.visitors, `${id} ${period}`).toBeGreaterThan(0)
        }
        const revenue = yield* get(`/projects/${id}/revenue`)
        expect(revenue.mrr.amount).toBeGreaterThan(0)
        expect(revenue.arr.amount).toBe(12 * revenue.mrr.amount)
        const churn = yield* get(`/projects/${id}/churn?period=3m`)
        expect(churn.churned.length).toBeGreaterThan(0)
        expect(churn.churnedCustomers).toBe(churn.churned.length)
        // People, not ids: the demo's Stripe holds its customers' emails (and most of their names), as a real one does.
        expect(churn.churned.every((c: any) => /^[a-z]+\.[a-z]+\.\d+@example\.com$/.test(c.email))).toBe(true)
        expect(churn.churned.some((c: any) => c.name !== null)).toBe(true)
        const seo = yield* get(`/projects/${id}/seo`)
        expect(seo.totals.clicks).toBeGreaterThan(0)
        expect(seo.topQueries.length).toBeGreaterThan(0)
        const briefing = yield* get(`/projects/${id}/briefing`)
        expect(briefing.headline.length).toBeGreaterThan(10)
        const integrations = (yield* get(`/projects/${id}/integrations`)).integrations
        expect(integrations.map((i: any) => i.provider)).toEqual(["stripe", "plausible", "google-search-console"])
        for (const i of integrations) expect(i.lastSuccessAt, `${id} ${i.provider}`).not.toBeNull()
        expect((yield* get(`/projects/${id}/expenses`)).expenses.length).toBeGreaterThan(2)
      }
    }))

  it.effect("Search data stops at its lag: the SEO window ends 3 days before today, not today", () =>
    Effect.gen(function*() {
      const { ids } = yield* Demo
      const seo = yield* get(`/projects/${ids.calm}/seo`)
      expect(seo.lagDays).toBe(3)
      expect(seo.window.to).toBe(seo.dataThrough)
    }))

  it.effect("Acme: two currencies converted, and the ranking loss of its top query is a signal", () =>
    Effect.gen(function*() {
      const { ids } = yield* Demo
      const revenue = yield* get(`/projects/${ids.acme}/revenue`)
      expect(revenue.currency).toBe("EUR")
      expect(revenue.unconverted).toEqual([])
      const signals = yield* signalsOf(ids.acme)
      const ranking = signals.filter((s) => s.kind === "ranking_drop" && s.active)
      expect(ranking.map((s) => s.subject)).toContain("privacy friendly analytics")
      // Nothing else was planted in Acme: a growing business with ordinary churn raises no churn or traffic alarm.
      const kinds = signals.filter((s) => s.active).map((s) => s.kind)
      expect(kinds).not.toContain("churn_spike")
      expect(kinds).not.toContain("anomaly_drop")
      expect(kinds).not.toContain("mrr_decline")
    }))

  it.effect("Bolt: yesterday's traffic dip is one anomaly, and the churn spike and failed payments are signals", () =>
    Effect.gen(function*() {
      const { ids } = yield* Demo
      const signals = yield* signalsOf(ids.bolt)
      const kinds = signals.filter((s) => s.active).map((s) => s.kind)
      expect(kinds).toContain("churn_spike")
      expect(kinds).toContain("failed_payments")
      const visitorDrops = signals.filter((s) => s.kind === "anomaly_drop" && s.metric === "visitors")
      expect(visitorDrops).toHaveLength(1)
      expect(visitorDrops[0].dimension).toBe("traffic")
      const briefing = yield* get(`/projects/${ids.bolt}/briefing`)
      expect(briefing.priorities.length).toBeGreaterThan(0)
      expect(["critical", "warning"]).toContain(briefing.priorities[0].severity)
    }))

  it.effect("Calm: the failing Search Console connection and spend outgrowing revenue are signals", () =>
    Effect.gen(function*() {
      const { ids } = yield* Demo
      const signals = (yield* signalsOf(ids.calm)).filter((s) => s.active)
      expect(signals.some((s) => s.kind === "integration_failing" && s.subject === "google-search-console")).toBe(true)
      // It failed for real: Google refused the revoked grant.
      const gsc = (yield* get(`/projects/${ids.calm}/integrations`)).integrations.find((i: any) =>
        i.provider === "google-search-console"
      )
      expect(gsc.status).toBe("error")
      expect(gsc.lastError).toMatch(/revoked|invalid_grant|reconnect/i)
      expect(signals.map((s) => s.kind)).toContain("spend_outgrowing_revenue")
      expect(signals.map((s) => s.kind)).not.toContain("churn_spike")
      const revenue = yield* get(`/projects/${ids.calm}/revenue`)
      expect(revenue.profitability.profit.amount).toBeLessThan(0)
      expect(revenue.profitability.margin).toBeLessThan(0)
    }))

  it.effect("logs the failing Search Console at start-up as planted on purpose (info), with no warning", () =>
    Effect.gen(function*() {
      const { logs } = yield* Demo
      const planted = logs.filter((l) => /Search Console|google-search-console/.test(l.message))
      expect(planted.map((l) => l.level)).toEqual(["Info"])
      expect(planted[0].message).toMatch(
        /^demo: the Google Search Console sync of Calm Notes fails on purpose, planted so the demo shows a failing /
      )
      expect(planted[0].message).toMatch(/revoked/)
      expect(logs.filter((l) => l.level === "Warn" || l.level === "Error")).toEqual([])
    }))

  it.effect("the briefing is the same when asked again the same local day", () =>
    Effect.gen(function*() {
      const { ids } = yield* Demo
      const first = yield* get(`/projects/${ids.calm}/briefing`)
      const again = yield* get(`/projects/${ids.calm}/briefing`)
      expect(again).toEqual(first)
      expect(first.date).toBe("2026-11-20")
      expect(addDays(first.date, -1)).toBe("2026-11-19")
    }))
})
