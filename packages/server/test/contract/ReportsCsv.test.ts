/**
 * CSV export of the reports (@sitehealth/domain/Csv, docs/api.md "CSV export") over the real router, both stores:
 * `?format=csv` and `Accept: text/csv` answer a table of the report, formula starts neutralised in every text cell
 * a customer's data reaches (names, emails), amounts in minor units beside their currency, local ISO days; the
 * stored JSON answer is never served to a CSV request, nor a CSV to a JSON one; bad formats and tables are 400.
 * The payments are the golden dataset (fixtures/payments.ts), D and E renamed to formulas.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ExpensesRepo } from "../../src/expenses/ExpensesRepo.ts"
import { FxRepo } from "../../src/fx/FxRepo.ts"
import { PaymentsRepo } from "../../src/payments/PaymentsRepo.ts"
import type { PaymentsData } from "../../src/payments/Types.ts"
import { newId } from "../../src/store/Ids.ts"
import { GOLDEN, TODAY } from "../fixtures/payments.ts"
import { expectError } from "../support/Expect.ts"
import { h, TestApp } from "../support/TestApp.ts"

// As ReportsRevenueChurn.test.ts: EUR → DKK (rate to USD 1.1), GBP → HUF (no rate), currencies no other file uses.
const AppWithRates = Layer.effectDiscard(
  h.run(Effect.flatMap(FxRepo, (fx) => fx.put([{ day: "2026-01-01", base: "DKK", quote: "USD", rate: 1.1 }])))
).pipe(Layer.provideMerge(TestApp.layer()))

const recurrency = (c: string) => (c === "EUR" ? "DKK" : c === "GBP" ? "HUF" : c)
const HOSTILE: Record<string, { name: string | null; email: string | null }> = {
  cus_D: { name: "=HYPERLINK(\"http://evil.example\",\"Dora, Ruiz\")", email: "+dora@ruiz.example" },
  cus_E: { name: "@SUM(A1:A9)", email: "-2+3@e-corp.example" }
}
const DATA: PaymentsData = {
  ...GOLDEN,
  customers: GOLDEN.customers.map((c) => ({ ...c, ...HOSTILE[c.id] })),
  subscriptionVersions: GOLDEN.subscriptionVersions.map((v) => ({ ...v, currency: recurrency(v.currency) })),
  charges: GOLDEN.charges.map((c) => ({ ...c, currency: recurrency(c.currency) }))
}

const setUp = Effect.gen(function*() {
  const { projects, secret } = yield* h.newAccount()
  const id = projects[0].id
  yield* h.run(Effect.flatMap(PaymentsRepo, (p) => p.write(id, DATA)))
  return { id, secret }
})

const csvOf = (path: string, secret: string, headers: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const r = yield* h.raw("GET", path, { token: secret, headers })
    expect(r.status, r.text).toBe(200)
    expect(r.headers.get("content-type")).toBe("text/csv; charset=utf-8")
    expect(r.headers.get("content-disposition")).toMatch(/^attachment; filename="[a-z0-9_-]+\.csv"$/u)
    return r.text
  })

layer(AppWithRates)("CSV export of the reports", (it) => {
  it.effect("churn: one row per churn event, formulas neutralised, quoted, amounts in minor units", () =>
    Effect.gen(function*() {
      const { id, secret } = yield* setUp
      const text = yield* csvOf(`/api/v1/projects/${id}/churn?format=csv`, secret)
      expect(text).toBe(
        "date,customer_id,name,email,mrr_lost,currency,reason\r\n" +
          // The name starts with = and holds a comma and quotes: prefixed with ', quoted, quotes doubled.
          "2026-11-05,cus_D,\"'=HYPERLINK(\"\"http://evil.example\"\",\"\"Dora, Ruiz\"\")\",'+dora@ruiz.example," +
          "3000,USD,too_expensive\r\n" +
          "2026-11-18,cus_E,'@SUM(A1:A9),'-2+3@e-corp.example,4000,USD,\r\n"
      )
      // The same by Accept, and the JSON answer (now stored) unchanged beside it.
      expect(yield* csvOf(`/api/v1/projects/${id}/churn`, secret, { accept: "text/csv" })).toBe(text)
      const json = yield* h.raw("GET", `/api/v1/projects/${id}/churn`, { token: secret })
      expect(json.status).toBe(200)
      expect(json.json.data.churned.map((c: any) => c.name)).toEqual([HOSTILE.cus_D.name, HOSTILE.cus_E.name])
    }))

  it.effect("a stored JSON answer is never served to a CSV request, nor a CSV to a JSON one", () =>
    Effect.gen(function*() {
      const { id, secret } = yield* setUp
      const first = yield* h.raw("GET", `/api/v1/projects/${id}/revenue`, { token: secret })
      expect(first.status).toBe(200)
      // The second JSON read is the stored answer; CSV by both ways still is CSV, whatever Accept-Encoding says.
      const again = yield* h.raw("GET", `/api/v1/projects/${id}/revenue`, { token: secret })
      expect(again.text).toBe(first.text)
      const byQuery = yield* csvOf(`/api/v1/projects/${id}/revenue?format=csv`, secret, { "accept-encoding": "gzip" })
      const byAccept = yield* csvOf(`/api/v1/projects/${id}/revenue`, secret, { accept: "text/csv, */*;q=0.1" })
      expect(byAccept).toBe(byQuery)
      const lines = byQuery.split("\r\n")
      expect(lines[0]).toBe("month,mrr,currency")
      expect(lines).toHaveLength(12 + 2) // header, 12 months, the empty string after the last CRLF
      expect(lines.slice(-4, -1)).toEqual(["2026-09,0,USD", "2026-10,23100,USD", "2026-11,26900,USD"])
      // ?format=json wins over Accept, and is the stored answer's bytes.
      const json = yield* h.raw("GET", `/api/v1/projects/${id}/revenue?format=json`, {
        token: secret,
        headers: { accept: "text/csv" }
      })
      expect(json.headers.get("content-type")).toContain("application/json")
      expect(json.text).toBe(first.text)
      // The failed payments table: E's attempt, its hostile contact neutralised, in its own currency.
      expect(yield* csvOf(`/api/v1/projects/${id}/revenue?format=csv&table=failed_payments&period=7d`, secret)).toBe(
        "day,charge_id,customer_id,name,email,amount,currency\r\n" +
          "2026-11-18,ch_E1,cus_E,'@SUM(A1:A9),'-2+3@e-corp.example,4000,USD\r\n"
      )
    }))

  it.effect("analytics and SEO: each table with its header, one row per bucket or item", () =>
    Effect.gen(function*() {
      const { id, secret } = yield* setUp
      const series = (yield* csvOf(`/api/v1/projects/${id}/analytics?format=csv&period=7d`, secret)).split("\r\n")
      expect(series[0]).toBe("bucket,from,to,visitors,pageviews,sessions,visitors_method")
      expect(series).toHaveLength(1 + 7 + 1)
      expect(series[7]).toBe(`${TODAY},${TODAY},${TODAY},0,0,0,sum_of_daily_uniques`)
      for (
        const [table, header] of [
          ["pages", "path,visitors,pageviews,share,previous_pageviews,pageviews_change"],
          ["sources", "source,visitors,sessions,share,previous_visitors,visitors_change"],
          ["countries", "country,visitors,share,previous_visitors,visitors_change"]
        ]
      ) {
        expect(yield* csvOf(`/api/v1/projects/${id}/analytics?format=csv&table=${table}`, secret)).toBe(
          `${header}\r\n`
        )
      }
      const seo = (yield* csvOf(`/api/v1/projects/${id}/seo?format=csv&period=7d`, secret)).split("\r\n")
      expect(seo[0]).toBe("day,clicks,impressions,ctr,average_position")
      expect(seo).toHaveLength(1 + 7 + 1)
      expect(seo[1]).toMatch(/^\d{4}-\d{2}-\d{2},0,0,,$/u)
      expect(yield* csvOf(`/api/v1/projects/${id}/seo?format=csv&table=queries`, secret)).toBe(
        "query,clicks,impressions,ctr,position,previous_clicks,previous_impressions,previous_position," +
          "clicks_change,position_change\r\n"
      )
    }))

  it.effect("an unknown format or table is a 400 naming what is allowed; scope and permission still apply", () =>
    Effect.gen(function*() {
      const { id, secret } = yield* setUp
      const format = yield* h.raw("GET", `/api/v1/projects/${id}/churn?format=xlsx`, { token: secret })
      expectError(format, 400, "invalid_request")
      expect(format.json.error.issues).toEqual([{ path: "query.format", message: "must be json or csv" }])
      const table = yield* h.raw("GET", `/api/v1/projects/${id}/analytics?format=csv&table=churned`, { token: secret })
      expectError(table, 400, "invalid_request")
      expect(table.json.error.message).toContain("series, pages, sources, countries")
      const other = yield* h.newAccount()
      expectError(yield* h.raw("GET", `/api/v1/projects/${id}/churn?format=csv`, { token: other.secret }), 404)
      expectError(yield* h.raw("GET", `/api/v1/projects/${id}/churn?format=csv`, { token: null }), 401)
    }))

  it.effect("lists: every expense (not a page, past 100), text neutralised; signals with the list's filters", () =>
    Effect.gen(function*() {
      const { id, secret } = yield* setUp
      const at = (i: number) => new Date(Date.UTC(2026, 10, 1, 0, i))
      const ids = Array.from({ length: 103 }, () => newId("exp"))
      yield* h.run(
        Effect.flatMap(ExpensesRepo, (repo) =>
          Effect.forEach(
            Array.from({ length: 103 }, (_, i) => i),
            (i) =>
              repo.insert({
                id: ids[i],
                projectId: id,
                amountMinor: 100 + i,
                currency: i === 0 ? "EUR" : "USD",
                category: "software",
                description: i === 0 ? "=cmd|' /C calc'!A0" : `Tool ${i}`,
                vendor: i === 0 ? "@vendor, \"quoted\"" : null,
                incurredOn: "2026-11-01",
                recurrence: "monthly",
                createdAt: at(i),
                deletedAt: null
              })
          ))
      )
      const lines = (yield* csvOf(`/api/v1/projects/${id}/expenses?format=csv&limit=5`, secret)).split("\r\n")
      expect(lines[0]).toBe("id,incurred_on,amount,currency,category,description,vendor,recurrence,created_at")
      expect(lines).toHaveLength(1 + 103 + 1) // every expense: limit does not apply to a CSV
      // Newest first: the first inserted is the last row, its description and vendor neutralised and quoted.
      expect(lines[103]).toBe(
        `${ids[0]},2026-11-01,100,EUR,software,'=cmd|' /C calc'!A0,"'@vendor, ""quoted""",monthly,` +
          "2026-11-01T00:00:00.000Z"
      )
      expect(lines[1]).toBe(`${ids[102]},2026-11-01,202,USD,software,Tool 102,,monthly,2026-11-01T01:42:00.000Z`)
      // The JSON list still pages.
      const page = yield* h.raw("GET", `/api/v1/projects/${id}/expenses?limit=5`, { token: secret })
      expect(page.json.data.expenses).toHaveLength(5)
      const signals = yield* csvOf(`/api/v1/projects/${id}/signals?severity=critical`, secret, { accept: "text/csv" })
      expect(signals.split("\r\n")[0]).toBe(
        "id,day,dimension,severity,kind,subject,title,detail,metric,actual,expected,expected_low,expected_high," +
          "change,money_at_stake,currency,active,detected_at,last_seen_at,resolved_at"
      )
      const json = yield* h.raw("GET", `/api/v1/projects/${id}/signals?severity=critical`, { token: secret })
      expect(signals.split("\r\n")).toHaveLength(1 + json.json.data.signals.length + 1)
      expectError(yield* h.raw("GET", `/api/v1/projects/${id}/expenses?format=csv&table=mrr`, { token: secret }), 400)
    }))

  it.effect("account lists: every project in reach with its health, every token's metadata and never a secret", () =>
    Effect.gen(function*() {
      const { projects, secret } = yield* h.newAccount()
      const list = yield* h.raw("GET", "/api/v1/projects?limit=1", { token: secret })
      const rows = (yield* csvOf("/api/v1/projects?format=csv&limit=1", secret)).split("\r\n")
      expect(rows[0]).toBe(
        "id,name,domain,timezone,currency,created_at,health_score,health_status,health_confidence,score_change_7d," +
          "score_change_30d,health_computed_at"
      )
      expect(rows).toHaveLength(1 + projects.length + 1) // every project, though limit=1
      expect(rows.slice(1, -1).map((r) => r.split(",")[0])).toEqual(projects.map((p: any) => p.id))
      const first = list.json.data.projects[0]
      expect(rows[1].split(",").slice(0, 8)).toEqual([
        first.id,
        first.name,
        first.domain,
        first.timezone,
        first.currency,
        first.createdAt,
        first.health.score === null ? "" : String(first.health.score),
        first.health.status
      ])
      const tokens = yield* csvOf("/api/v1/tokens?format=csv", secret)
      const tokenRows = tokens.split("\r\n")
      expect(tokenRows[0]).toBe(
        "id,name,prefix,status,projects,permissions,created_at,last_used_at,expires_at,revoked_at"
      )
      const json = yield* h.raw("GET", "/api/v1/tokens", { token: secret })
      expect(tokenRows).toHaveLength(1 + json.json.data.tokens.length + 1)
      expect(tokens).toContain(json.json.data.tokens[0].prefix)
      expect(tokens).not.toContain(secret)
    }))
})
