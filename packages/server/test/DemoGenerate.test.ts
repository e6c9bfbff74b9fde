/**
 * The demo generator: deterministic, internally consistent provider data, with the planted events the
 * demo promises (Profiles.ts) visible in the raw data. What the reports and signals make of it is tested
 * end to end in contract/Demo.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { DEMO_HISTORY_DAYS, demoFxRates, generateDemoProject } from "../src/demo/Generate.ts"
import { DEMO_PROJECTS, type DemoProjectSpec } from "../src/demo/Profiles.ts"
import { apportion } from "../src/demo/Random.ts"
import { SEARCH_LAG_DAYS } from "../src/demo/Search.ts"
import { addDays, localTimeIn } from "../src/metrics/Dates.ts"

const NOW = new Date("2026-11-22T09:15:00Z")
const spec = (key: DemoProjectSpec["key"]) => DEMO_PROJECTS.find((p) => p.key === key)!
const generated = new Map(DEMO_PROJECTS.map((p) => [p.key, generateDemoProject(p, NOW)] as const))
const data = (key: DemoProjectSpec["key"]) => generated.get(key)!

const sum = (xs: ReadonlyArray<number>) => xs.reduce((s, x) => s + x, 0)
const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

describe("apportion", () => {
  it("splits a total into integer parts that add up exactly, by largest remainder", () => {
    expect(apportion(10, [1, 1, 1])).toEqual([4, 3, 3])
    // 3.5, 1.75, 1.75 → floors 3, 1, 1; the two left go to the largest remainders (.75, .75)
    expect(apportion(7, [0.5, 0.25, 0.25])).toEqual([3, 2, 2])
    expect(apportion(0, [1, 2])).toEqual([0, 0])
    expect(apportion(5, [0, 0])).toEqual([0, 0])
  })
})

describe("generateDemoProject", () => {
  it("is deterministic", () => {
    expect(generateDemoProject(spec("bolt"), NOW)).toEqual(data("bolt"))
  })

  it("covers a year of local days ending today, in each project's time zone, and nothing after now", () => {
    for (const p of DEMO_PROJECTS) {
      const d = data(p.key)
      expect(d.today).toBe(localTimeIn(p.timezone, NOW.getTime()).day)
      const days = d.traffic.days!.map((r) => r.day)
      expect(days[0]).toBe(addDays(d.today, -(DEMO_HISTORY_DAYS - 1)))
      expect(days.at(-1)).toBe(d.today)
      expect(new Set(days).size).toBe(DEMO_HISTORY_DAYS)
      for (const h of d.traffic.hours!) expect(Date.parse(h.hour)).toBeLessThan(NOW.getTime())
      for (const c of d.payments.charges) expect(Date.parse(c.at)).toBeLessThan(NOW.getTime())
      for (const v of d.payments.subscriptionVersions) {
        expect(Date.parse(v.validFrom)).toBeLessThanOrEqual(NOW.getTime())
      }
    }
  })

  it("hours, pages and sources add up to each day's pageviews and sessions", () => {
    const d = data("acme")
    const tz = spec("acme").timezone
    for (const day of d.traffic.days!.slice(-40)) {
      const hours = d.traffic.hours!.filter((h) => localTimeIn(tz, Date.parse(h.hour)).day === day.day)
      expect(sum(hours.map((h) => h.pageviews)), day.day).toBe(day.pageviews)
      expect(sum(hours.map((h) => h.sessions)), day.day).toBe(day.sessions)
      expect(sum(d.traffic.pages!.filter((p) => p.day === day.day).map((p) => p.pageviews))).toBe(day.pageviews)
      expect(sum(d.traffic.sources!.filter((s) => s.day === day.day).map((s) => s.sessions))).toBe(day.sessions)
    }
  })

  it("countries (ISO 3166-1 alpha-2) add up to each day's visitors, the profile's first country leading", () => {
    for (const p of DEMO_PROJECTS) {
      const d = data(p.key)
      for (const c of d.traffic.countries!) expect(c.country).toMatch(/^[A-Z]{2}$/)
      for (const day of d.traffic.days!.slice(-40)) {
        const rows = d.traffic.countries!.filter((c) => c.day === day.day)
        expect(sum(rows.map((c) => c.visitors)), `${p.key} ${day.day}`).toBe(day.visitors)
      }
      const total = (code: string) => sum(d.traffic.countries!.filter((c) => c.country === code).map((c) => c.visitors))
      const first = spec(p.key).traffic.countries[0]![0]
      for (const [code] of spec(p.key).traffic.countries.slice(1)) expect(total(first)).toBeGreaterThan(total(code))
    }
  })

  it("a DST day has 23 or 25 hours (Europe/Berlin, 2026-03-29 and 2026-10-25)", () => {
    const d = data("acme")
    const hoursOn = (day: string) =>
      d.traffic.hours!.filter((h) => localTimeIn("Europe/Berlin", Date.parse(h.hour)).day === day).length
    expect(hoursOn("2026-03-29")).toBe(23)
    expect(hoursOn("2026-10-25")).toBe(25)
    expect(hoursOn("2026-06-10")).toBe(24)
  })

  it("month uniques are whole months (or the month to date) and below the sum of daily uniques", () => {
    const d = data("calm")
    expect(d.traffic.uniques!.length).toBeGreaterThanOrEqual(11)
    for (const u of d.traffic.uniques!) {
      expect(u.from.endsWith("-01")).toBe(true)
      const daily = sum(d.traffic.days!.filter((r) => r.day >= u.from && r.day <= u.to).map((r) => r.visitors))
      expect(u.visitors).toBeLessThan(daily)
    }
  })

  it("subscription versions of one subscription never overlap, and trialing, past_due, unpaid and reasons all occur", () => {
    const d = data("bolt")
    const bySub = new Map<string, Array<{ from: number; to: number }>>()
    for (const v of d.payments.subscriptionVersions) {
      const list = bySub.get(v.subscriptionId) ?? []
      list.push({ from: Date.parse(v.validFrom), to: v.validTo === null ? Infinity : Date.parse(v.validTo) })
      bySub.set(v.subscriptionId, list)
    }
    for (const list of bySub.values()) {
      list.sort((a, b) => a.from - b.from)
      for (let i = 0; i < list.length; i++) {
        expect(list[i].to).toBeGreaterThan(list[i].from)
        if (i > 0) expect(list[i].from).toBe(list[i - 1].to)
      }
    }
    const statuses = new Set(d.payments.subscriptionVersions.map((v) => v.status))
    for (const s of ["trialing", "active", "past_due", "unpaid", "canceled"]) expect(statuses).toContain(s)
    expect(d.payments.subscriptionVersions.some((v) => v.cancelReason === "too_expensive")).toBe(true)
    expect(d.payments.charges.some((c) => c.status === "failed")).toBe(true)
    expect(d.payments.refunds.length).toBeGreaterThan(0)
  })

  it("Acme bills in two currencies, annual and per-seat plans, with percent and amount-off discounts", () => {
    const v = data("acme").payments.subscriptionVersions
    expect(new Set(v.map((x) => x.currency))).toEqual(new Set(["EUR", "USD"]))
    expect(v.some((x) => x.interval === "year")).toBe(true)
    expect(v.some((x) => x.quantity > 1)).toBe(true)
    expect(v.some((x) => x.discountPercentOff === 20)).toBe(true)
    expect(v.some((x) => x.discountAmountOffMinor !== null)).toBe(true)
  })

  it("plants Bolt's churn spike: cancellations 28–8 days ago run far above the usual rate", () => {
    const d = data("bolt")
    const tz = spec("bolt").timezone
    const cancelDays = d.payments.subscriptionVersions
      .filter((v) => v.status === "canceled" && v.cancelReason !== null && v.cancelReason !== "payment_failed")
      .map((v) => localTimeIn(tz, Date.parse(v.validFrom)).day)
    const inRange = (from: number, to: number) =>
      cancelDays.filter((x) => x >= addDays(d.today, -from) && x <= addDays(d.today, -to)).length
    const spike = inRange(28, 8) / 21
    const before = inRange(120, 29) / 92
    expect(spike).toBeGreaterThan(3 * before)
  })

  it("plants Bolt's traffic drop (Google) and yesterday's dip", () => {
    const d = data("bolt")
    const days = d.traffic.days!
    const yesterday = days.at(-2)!
    const sameWeekdays = [7, 14, 21, 28].map((k) => days.at(-2 - k)!.visitors)
    expect(yesterday.visitors).toBeLessThan(0.6 * median(sameWeekdays))
    const google = (from: number, to: number) =>
      sum(
        d.traffic.sources!.filter((s) =>
          s.source === "Google" && s.day >= addDays(d.today, -from) && s.day <= addDays(d.today, -to)
        ).map((s) => s.sessions)
      )
    expect(google(9, 3)).toBeLessThan(0.5 * google(23, 17))
  })

  it("plants Acme's ranking loss on its top query, and search data stops 3 days before today", () => {
    const d = data("acme")
    const q = spec("acme").search.queries[0].query
    const pos = (from: number, to: number) => {
      const rows = d.search.queries!.filter((r) =>
        r.query === q && r.day >= addDays(d.today, -from) && r.day <= addDays(d.today, -to)
      )
      return sum(rows.map((r) => r.positionWeighted)) / sum(rows.map((r) => r.impressions))
    }
    expect(pos(40, 20)).toBeLessThan(3.5)
    expect(pos(9, 3)).toBeGreaterThan(7.5)
    expect(d.search.totals!.at(-1)!.day).toBe(addDays(d.today, -SEARCH_LAG_DAYS))
    const last = d.search.totals!.at(-1)!
    const named = d.search.queries!.filter((r) => r.day === last.day)
    expect(last.clicks).toBeGreaterThan(sum(named.map((r) => r.clicks)))
  })

  it("demo EUR/USD rates cover the whole payments history, weekly", () => {
    const rates = demoFxRates(NOW)
    const first = data("acme").payments.customers[0].createdAt.slice(0, 10)
    expect(rates[0].day <= first).toBe(true)
    for (const r of rates) {
      expect(r.rate).toBeGreaterThan(1)
      expect(r.rate).toBeLessThan(1.2)
    }
  })
})

describe("a demo anchored at its epoch (the live demo: demo/Feeds.ts)", () => {
  const EPOCH = new Date("2026-11-01T10:00:00Z")
  const at = (days: number) => new Date(EPOCH.getTime() + days * 86_400_000)
  const byId = <T extends { readonly id: string }>(xs: ReadonlyArray<T>) => new Map(xs.map((x) => [x.id, x] as const))

  it("goes on after the epoch, and a later day changes none of the days before it (ids and figures)", () => {
    const bolt = spec("bolt")
    const earlier = generateDemoProject(bolt, at(5), { epoch: EPOCH })
    const later = generateDemoProject(bolt, at(6), { epoch: EPOCH })
    expect(later.today).toBe(addDays(earlier.today, 1))
    expect(later.traffic.days![0]!.day).toBe(earlier.traffic.days![0]!.day)
    // Every whole day served earlier is served the same later; only today (partial then) grew.
    expect(later.traffic.days!.slice(0, earlier.traffic.days!.length - 1)).toEqual(earlier.traffic.days!.slice(0, -1))
    expect(later.search.totals!.slice(0, earlier.search.totals!.length)).toEqual(earlier.search.totals)
    // Payments of whole days keep their ids and amounts.
    const dayEnd = Date.parse(`${addDays(earlier.today, 0)}T00:00:00Z`) - 86_400_000
    const laterCharges = byId(later.payments.charges)
    for (const c of earlier.payments.charges.filter((c) => Date.parse(c.at) < dayEnd)) {
      expect(laterCharges.get(c.id)).toEqual(c)
    }
    const laterCustomers = byId(later.payments.customers)
    for (const c of earlier.payments.customers.filter((c) => Date.parse(c.createdAt) < dayEnd)) {
      expect(laterCustomers.get(c.id)).toEqual(c)
    }
  })

  it("with the epoch at now, is the data the first start seeds", () => {
    expect(generateDemoProject(spec("calm"), NOW, { epoch: NOW })).toEqual(generateDemoProject(spec("calm"), NOW))
  })
})
