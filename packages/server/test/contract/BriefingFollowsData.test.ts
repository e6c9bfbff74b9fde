/**
 * A new owner's first minutes, on both stores (docs/first-five-minutes.md): the briefing written before the
 * website had data is recomposed as soon as Stripe's first sync lands, and names the churn with its money at
 * stake; the health it shows and its Yesterday figures agree with /health and /revenue; figures of a source that
 * is not connected (or still syncing) are null, not 0; nothing is recomposed when nothing changed, and the morning
 * edition stays as first written. Stripe is the local fake serving a generated account
 * (@sitehealth/fakes/StripeAccounts); the real connector syncs it through the worker's runner.
 */
import { describe, expect, layer } from "@effect/vitest"
import { scopedFake } from "@sitehealth/fakes/FakeHttp"
import { startFakeStripe, ts } from "@sitehealth/fakes/FakeStripe"
import { CALM, CRISIS, generatedAccount } from "@sitehealth/fakes/StripeAccounts"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { CredentialsCipher } from "../../src/integrations/Crypto.ts"
import { IntegrationsRepo } from "../../src/integrations/IntegrationsRepo.ts"
import { stripeConnector } from "../../src/integrations/stripe/StripeConnector.ts"
import { UPGRADE_STORED_BRIEFINGS } from "../../src/snapshots/BriefingEditionsMigration.ts"
import { SnapshotsRepo } from "../../src/snapshots/SnapshotsRepo.ts"
import { drainSyncs } from "../../src/worker/SyncRunner.ts"
import { runnerLayer, TEST_KEY } from "../support/SyncFakes.ts"
import { h, TestApp } from "../support/TestApp.ts"

const NOW = "2026-11-20T12:00:30Z" // the harness clock; projects in UTC
const TODAY = "2026-11-20"

layer(TestApp.layer())("The briefing follows its data", (it) => {
  const get = (path: string, token: string) =>
    Effect.gen(function*() {
      const r = yield* h.raw("GET", path, { token })
      expect(r.status, r.text).toBe(200)
      return r.json.data
    })
  const connectStripe = (projectId: string, baseUrl: string) =>
    h.run(Effect.gen(function*() {
      const cipher = yield* Effect.provide(Effect.service(CredentialsCipher), CredentialsCipher.layer(TEST_KEY))
      return yield* (yield* IntegrationsRepo).connect({
        projectId,
        provider: "stripe",
        credentials: cipher.encrypt({ secret_key: "sk_test_fake" }),
        baseUrl,
        syncIntervalMinutes: null,
        now: new Date(yield* h.now)
      })
    }))
  const firstSync = (projectId: string, secret: string) =>
    Effect.gen(function*() {
      const r = yield* h.api.integrations.syncIntegration({
        params: { id: projectId, provider: "stripe" },
        payload: null
      }, { token: secret })
      expect(r.status, r.text).toBe(202)
      const runs = yield* h.run(
        drainSyncs({ connectors: (p) => (p === "stripe" ? stripeConnector : undefined), projectIds: [projectId] })
          .pipe(Effect.provide(runnerLayer()))
      )
      expect(runs.map((x) => x.status)).toEqual(["succeeded"])
    })
  const account = (shape: typeof CRISIS) =>
    scopedFake(() => startFakeStripe(generatedAccount({ ...shape, now: ts(NOW) }), { maxPageSize: 100 }))

  describe("a new owner connects Stripe", () => {
    it.effect("the briefing written before any data names the churn crisis once the first sync lands", () =>
      Effect.scoped(Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const id = projects[0].id
        // Added a minute ago: the morning's briefing is written with nothing connected, and says so.
        const empty = yield* get(`/api/v1/projects/${id}/briefing`, secret)
        expect(empty.headline).toMatch(/^No data yet: connect Stripe/)
        expect(empty.sources).toEqual({
          analytics: "not_connected",
          payments: "not_connected",
          search: "not_connected"
        })
        expect(empty.yesterday.mrr).toEqual({ value: 0, usual: null, change: null, state: "not_connected" })
        expect(empty.yesterday.visitors.state).toBe("not_connected")
        expect(empty.updatedAt).toBeNull()

        // Stripe connected, its first sync not run yet: importing, not zero.
        const fake = yield* account(CRISIS)
        yield* connectStripe(id, fake.url)
        yield* TestClock.adjust(1_000)
        const importing = yield* get(`/api/v1/projects/${id}/briefing`, secret)
        expect(importing.sources.payments).toBe("syncing")
        expect(importing.headline).toMatch(/^Importing your data: Stripe is still on its first sync/)
        expect(importing.yesterday.netRevenue.state).toBe("syncing")
        expect(importing.generatedAt).toBe(empty.generatedAt)
        expect(importing.updatedAt).not.toBeNull()

        // The first sync lands: the same day's briefing now leads with the churn, its money at stake.
        yield* TestClock.adjust(1_000)
        yield* firstSync(id, secret)
        const b = yield* get(`/api/v1/projects/${id}/briefing`, secret)
        expect(b.date).toBe(TODAY)
        expect(b.sources.payments).toBe("connected")
        expect(b.headline, JSON.stringify(b, null, 1)).toMatch(/^Customer churn at 10\.5 ?% over 30 days/)
        const churn = b.priorities.find((p: any) => p.title.startsWith("Customer churn"))
        expect(churn).toMatchObject({ rank: 1, severity: "critical" })
        expect(churn.moneyAtStake.amount).toBeGreaterThan(0)
        expect(b.priorities.some((p: any) => /failed payments? in the last 7 days/.test(p.title))).toBe(true)
        expect(b.generatedAt).toBe(empty.generatedAt)
        expect(Date.parse(b.updatedAt)).toBeGreaterThan(Date.parse(importing.updatedAt))

        // One page, one truth: the briefing's health is /health's; its Yesterday figures are /revenue's and /churn's.
        const health = yield* get(`/api/v1/projects/${id}/health`, secret)
        expect(b.health).toMatchObject({ score: health.score, status: health.status })
        const revenue = yield* get(`/api/v1/projects/${id}/revenue`, secret)
        expect(b.yesterday.mrr.value).toBe(revenue.mrr.amount)
        const churned = yield* get(`/api/v1/projects/${id}/churn?period=7d`, secret)
        const yesterdays = churned.churned.filter((c: any) => c.date === b.yesterday.date).length
        expect(yesterdays).toBeGreaterThan(0)
        expect(b.yesterday.churnedCustomers.value).toBe(yesterdays)
        // Analytics is not connected: its figures say so, they are not 0.
        expect(b.sources.analytics).toBe("not_connected")
        expect(b.yesterday.visitors.state).toBe("not_connected")
        expect(b.yesterday.mrr.state).toBe("connected")

        // Nothing changed: read again, and an hour later (a recompute with the same data): the same edition.
        expect((yield* get(`/api/v1/projects/${id}/briefing`, secret)).updatedAt).toBe(b.updatedAt)
        yield* TestClock.adjust(3_700_000)
        yield* get(`/api/v1/projects/${id}/health`, secret)
        const later = yield* get(`/api/v1/projects/${id}/briefing`, secret)
        expect([later.updatedAt, later.headline]).toEqual([b.updatedAt, b.headline])

        // The morning edition is kept as first written (what an alert sent stays as sent).
        const morning = yield* h.run(Effect.flatMap(SnapshotsRepo, (s) => s.morningBriefingOf(id, TODAY)))
        expect(morning?.headline).toBe(empty.headline)
        yield* TestClock.adjust(-(yield* h.now) + Date.parse(NOW))
      })))

    it.effect("a calm account: the briefing says all is well, and the Yesterday table agrees with the reports", () =>
      Effect.scoped(Effect.gen(function*() {
        const { projects, secret } = yield* h.newAccount()
        const id = projects[0].id
        yield* get(`/api/v1/projects/${id}/briefing`, secret)
        const fake = yield* account(CALM)
        yield* connectStripe(id, fake.url)
        yield* firstSync(id, secret)
        const b = yield* get(`/api/v1/projects/${id}/briefing`, secret)
        expect(b.priorities.filter((p: any) => p.severity !== "info")).toEqual([])
        expect(b.headline).toMatch(/^(All quiet|Good news): /)
        const revenue = yield* get(`/api/v1/projects/${id}/revenue`, secret)
        expect(revenue.mrr.amount).toBeGreaterThan(0)
        expect(b.yesterday.mrr.value).toBe(revenue.mrr.amount)
        expect(b.yesterday.churnedCustomers.value).toBe(0)
        const health = yield* get(`/api/v1/projects/${id}/health`, secret)
        expect(b.health).toMatchObject({ score: health.score, status: health.status })
        expect(b.headline).toContain(`health ${health.score}/100`)
      })))
  })

  describe("briefings stored before", () => {
    it.effect("a body stored before sources were kept is upgraded by the migration and reads as the contract's", () =>
      Effect.gen(function*() {
        if (h.store !== "postgres") return
        const { projects } = yield* h.newAccount()
        const id = projects[0].id
        const figure = { value: 12, usual: 10, change: 0.2 }
        const old = {
          projectId: id,
          date: "2026-11-01",
          generatedAt: "2026-11-01T06:00:00.000Z",
          headline: "All quiet: health 80/100 (healthy), nothing unusual yesterday.",
          health: { score: 80, confidence: 0.9, status: "healthy", computedAt: "2026-11-01T06:00:00.000Z" },
          yesterday: {
            date: "2026-10-31",
            currency: "USD",
            visitors: figure,
            pageviews: figure,
            netRevenue: figure,
            newCustomers: figure,
            churnedCustomers: figure,
            mrr: figure
          },
          whatChanged: [],
          priorities: []
        }
        yield* h.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
          Effect.andThen(
            sql`INSERT INTO briefings (project_id, local_date, generated_at, body)
              VALUES (${id}, '2026-11-01', ${old.generatedAt}::timestamptz, ${JSON.stringify(old)}::jsonb)`,
            // The migration's statement on this test's row only: another suite on the same database runs it too.
            sql.unsafe(`${UPGRADE_STORED_BRIEFINGS} AND project_id = $1`, [id])
          )))
        const read = yield* h.run(Effect.flatMap(SnapshotsRepo, (r) => r.briefingOf(id, "2026-11-01")))
        expect(read?.updatedAt).toBeNull()
        expect(read?.sources).toEqual({ analytics: "connected", payments: "connected", search: "connected" })
        expect(read?.yesterday.mrr).toEqual({ ...figure, state: "connected" })
        expect(read?.headline).toBe(old.headline)
      }))
  })
})
