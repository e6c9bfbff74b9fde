/**
 * The demo's provider data as the providers' APIs serve it, for the local fake servers of
 * @sitehealth/fakes the demo runs (demo/Providers.ts): the generator's output (Generate.ts) for the
 * demo's epoch and the current time, turned into Plausible Stats rows, Search Console fact rows and Stripe
 * objects. The demo projects' connections sync from these exactly as a real account syncs from the real
 * APIs, so every day brings the new day's traffic, search data and payments.
 *
 * What a fake serves is a pure function of (spec, epoch, the current UTC hour):
 * - traffic and search: generated up to the start of the current hour (today is partial: the hours begun);
 * - payments: the whole local day generated, then cut at the start of the current hour. A day's customers,
 *   subscriptions and charges are drawn in one go for the whole day, so what was served earlier that day
 *   is never contradicted later (ids and amounts never change once served; a re-sync is stable).
 * Each is computed at most once per hour per project (cached), so a sync's many requests are cheap.
 */
import type { GscFactRow, GscTotals } from "@sitehealth/fakes/FakeGsc"
import type { Metrics5, PlausibleData } from "@sitehealth/fakes/FakePlausible"
import {
  charge,
  customer,
  event,
  type FakeStripeData,
  fromArray,
  invoice,
  line,
  type Obj,
  price,
  refund,
  subscription,
  ts
} from "@sitehealth/fakes/FakeStripe"
import { addDays, startOfDayIn, todayIn } from "../metrics/Dates.ts"
import type { PaymentsData, SubscriptionVersion } from "../payments/Types.ts"
import type { SearchWrite } from "../search/Types.ts"
import type { TrafficWrite } from "../traffic/Types.ts"
import { generateDemoProject } from "./Generate.ts"
import type { DemoProjectSpec } from "./Profiles.ts"
import { localHours } from "./Timeline.ts"

const HOUR_MS = 3_600_000
const TRIAL_MS = 14 * 86_400_000

/** The Search Console property of a demo project (a domain property). */

const FIRST_NAMES = [
  "Ada",
  "Grace",
  "Alan",
  "Edsger",
  "Barbara",
  "Donald",
  "Frances",
  "Radia",
  "Ken",
  "Margaret",
  "Linus"
]
const LAST_NAMES = [
  "Lovelace",
  "Hopper",
  "Turing",
  "Dijkstra",
  "Liskov",
  "Knuth",
  "Allen",
  "Perlman",
  "Thompson",
  "Hamilton"
]
/**
 * A demo customer's name and email as the account would hold them, from its id (deterministic): so the demo's
 * churned customers and failed payments read as people, as a real account's do. One in ten has no name (an email
 * only), as many real Stripe customers do.
 */
export const contactOf = (id: string): { readonly name: string | null; readonly email: string } => {
  let hash = 0
  for (let i = 0; i < id.length; i++) hash = (hash * 31 + id.charCodeAt(i)) >>> 0
  const first = FIRST_NAMES[hash % FIRST_NAMES.length]!
  const last = LAST_NAMES[(hash >>> 8) % LAST_NAMES.length]!
  const email = `${first}.${last}.${hash % 1000}@example.com`.toLowerCase()
  return { name: hash % 10 === 0 ? null : `${first} ${last}`, email }
}

export const demoSiteUrl = (spec: DemoProjectSpec) => `sc-domain:${spec.domain}`

const round2 = (x: number) => Math.round(x * 100) / 100

/** Plausible's answer data: local days and hours, pages, sources ("Direct / None"), countries, month uniques. */
export const plausibleDataOf = (spec: DemoProjectSpec, traffic: TrafficWrite): PlausibleData => {
  const days: Record<string, Metrics5> = {}
  for (const d of traffic.days ?? []) {
    days[d.day] = [
      d.visitors,
      d.sessions,
      d.pageviews,
      d.sessions === 0 ? 0 : round2((d.bounces * 100) / d.sessions),
      d.sessions === 0 ? 0 : round2(d.durationSeconds / d.sessions)
    ]
  }
  // Hour labels are the site's local time; the repeated hour of an autumn DST change is one label (summed).
  const localHour = localHours(spec.timezone)
  const sums = new Map<string, { v: number; s: number; p: number; b: number; d: number }>()
  for (const h of traffic.hours ?? []) {
    const local = localHour(Date.parse(h.hour))
    const label = `${local.day} ${String(local.hour).padStart(2, "0")}:00:00`
    const sum = sums.get(label) ?? { v: 0, s: 0, p: 0, b: 0, d: 0 }
    sum.v += h.visitors
    sum.s += h.sessions
    sum.p += h.pageviews
    sum.b += h.bounces
    sum.d += h.durationSeconds
    sums.set(label, sum)
  }
  const hours: Record<string, Metrics5> = {}
  for (const [label, x] of sums) {
    hours[label] = [x.v, x.s, x.p, x.s === 0 ? 0 : round2((x.b * 100) / x.s), x.s === 0 ? 0 : round2(x.d / x.s)]
  }
  const uniques: Record<string, number> = {}
  for (const u of traffic.uniques ?? []) uniques[`${u.from}|${u.to}`] = u.visitors
  return {
    days,
    hours,
    pages: (traffic.pages ?? []).map((p) => [p.day, p.path, p.visitors, p.pageviews] as const),
    sources: (traffic.sources ?? []).map((s) =>
      [s.day, s.source === "Direct" ? "Direct / None" : s.source, s.visitors, s.sessions] as const
    ),
    countries: (traffic.countries ?? []).map((c) => [c.day, c.country, c.visitors] as const),
    uniques
  }
}

/** Search Console's data: one fact row per (day, query) on the query's page, and the property's daily totals. */
export const gscDataOf = (
  spec: DemoProjectSpec,
  search: SearchWrite
): { rows: Array<GscFactRow>; totals: Record<string, GscTotals> } => {
  const pageOf = new Map(spec.search.queries.map((q) => [q.query, `https://${spec.domain}${q.page}`] as const))
  const rows: Array<GscFactRow> = (search.queries ?? []).map((q) => ({
    date: q.day,
    query: q.query,
    page: pageOf.get(q.query) ?? `https://${spec.domain}/`,
    clicks: q.clicks,
    impressions: q.impressions,
    position: q.impressions === 0 ? 0 : q.positionWeighted / q.impressions
  }))
  const totals: Record<string, GscTotals> = {}
  for (const t of search.totals ?? []) {
    totals[t.day] = {
      clicks: t.clicks,
      impressions: t.impressions,
      position: t.impressions === 0 ? 0 : t.positionWeighted / t.impressions
    }
  }
  return { rows, totals }
}

const discountMinorOf = (v: SubscriptionVersion) => {
  const gross = v.unitAmountMinor * v.quantity
  if (v.discountPercentOff !== null) return Math.round((gross * v.discountPercentOff) / 100)
  if (v.discountAmountOffMinor !== null) return Math.min(gross, v.discountAmountOffMinor)
  return 0
}

/**
 * Stripe's objects for the payments that happened before `cutMs`: customers, subscriptions as they stand
 * at the cut (status, items, coupon, trial, cancellation), one invoice per priced period the subscription
 * went through (its line says the price and quantity in force from then: what the connector rebuilds the
 * versions from), charges and refunds.
 */
export const stripeDataOf = (spec: DemoProjectSpec, payments: PaymentsData, cutMs: number): FakeStripeData => {
  const before = (iso: string) => Date.parse(iso) < cutMs
  const priceOf = (v: SubscriptionVersion): Obj =>
    price(
      `price_${spec.key}_${v.currency.toLowerCase()}_${v.interval}_${v.unitAmountMinor}`,
      v.unitAmountMinor,
      v.interval,
      v.intervalCount,
      v.currency.toLowerCase()
    )
  const bySubscription = new Map<string, Array<SubscriptionVersion>>()
  for (const v of payments.subscriptionVersions) {
    if (!before(v.validFrom)) continue
    const list = bySubscription.get(v.subscriptionId)
    if (list === undefined) bySubscription.set(v.subscriptionId, [v])
    else list.push(v)
  }
  const subscriptions: Array<Obj> = []
  const invoices: Array<Obj> = []
  for (const [id, all] of bySubscription) {
    const versions = [...all].sort((a, b) => (a.validFrom < b.validFrom ? -1 : a.validFrom > b.validFrom ? 1 : 0))
    const first = versions[0]!
    const current = versions.at(-1)!
    const priced = versions.filter((v) => v.status !== "trialing" && v.status !== "canceled")
    const lastPriced = priced.at(-1) ?? first
    let periodStart = ts(first.validFrom)
    priced.forEach((v, n) => {
      const start = ts(v.validFrom)
      periodStart = start
      const end = start + (v.interval === "year" ? 365 : 30) * 86_400
      const discount = discountMinorOf(v)
      const item = {
        id: `il_${id.slice(4)}_${n}`,
        subscription: id,
        price: priceOf(v),
        start,
        end,
        quantity: v.quantity
      }
      invoices.push(invoice(`in_${id.slice(4)}_${n}`, id, start, [line(discount > 0 ? { ...item, discount } : item)]))
    })
    const trialing = first.status === "trialing"
    const trialOver = versions.find((v) => v.status !== "trialing")
    const canceled = current.status === "canceled"
    const shown = canceled ? lastPriced : current
    const coupon = shown.discountPercentOff !== null ?
      { percent_off: shown.discountPercentOff }
      : shown.discountAmountOffMinor !== null
      ? { amount_off: shown.discountAmountOffMinor }
      : null
    subscriptions.push(subscription({
      id,
      customer: current.customerId,
      status: current.status,
      created: ts(first.validFrom),
      currentPeriodStart: periodStart,
      items: [{ price: priceOf(shown), quantity: shown.quantity }],
      ...(trialing
        ? {
          trialStart: ts(first.validFrom),
          trialEnd: trialOver === undefined ? ts(first.validFrom) + TRIAL_MS / 1000 : ts(trialOver.validFrom)
        }
        : {}),
      ...(canceled
        ? {
          endedAt: ts(current.validFrom),
          cancellation: current.cancelReason === "payment_failed" ?
            { reason: "payment_failed" }
            : current.cancelReason === null
            ? {}
            : { reason: "cancellation_requested", feedback: current.cancelReason }
        }
        : {}),
      ...(coupon === null ? {} : { coupon })
    }))
  }
  const customers = payments.customers.filter((c) => before(c.createdAt)).map((c) =>
    customer(c.id, ts(c.createdAt), contactOf(c.id))
  )
  const charges = payments.charges.filter((c) => before(c.at)).map((c) =>
    charge(c.id, c.customerId, ts(c.at), c.amountMinor, c.status, c.currency.toLowerCase())
  )
  const refunds = payments.refunds.filter((r) => before(r.at)).map((r) =>
    refund(r.id, r.chargeId, ts(r.at), r.amountMinor, r.currency.toLowerCase())
  )
  return {
    customers: fromArray(customers),
    subscriptions: fromArray(subscriptions),
    invoices: fromArray(invoices),
    charges: fromArray(charges),
    refunds: fromArray(refunds),
    events: fromArray(stripeEventsOf(customers, subscriptions, bySubscription, invoices, charges, refunds))
  }
}

/**
 * The events a Stripe account would have logged for these objects (what an incremental sync reads): each
 * object's creation, a subscription's every later change of price, quantity or status (`updated`) and its
 * end (`deleted`), each charge's outcome, each refund. Like Stripe's, an event carries the object as it
 * stands now (the demo keeps no older renderings); ids are stable, so a re-served hour lists the same events.
 */
const stripeEventsOf = (
  customers: ReadonlyArray<Obj>,
  subscriptions: ReadonlyArray<Obj>,
  versionsBySubscription: ReadonlyMap<string, ReadonlyArray<SubscriptionVersion>>,
  invoices: ReadonlyArray<Obj>,
  charges: ReadonlyArray<Obj>,
  refunds: ReadonlyArray<Obj>
): Array<Obj> => {
  const events: Array<Obj> = []
  const add = (type: string, created: number, object: Obj) =>
    events.push(event(`evt_${object.id}_${type}_${created}`, type, created, object))
  for (const c of customers) add("customer.created", c.created, c)
  for (const sub of subscriptions) {
    add("customer.subscription.created", sub.created, sub)
    const versions = versionsBySubscription.get(sub.id) ?? []
    for (const v of versions) {
      const at = ts(v.validFrom)
      if (at <= sub.created) continue
      add(v.status === "canceled" ? "customer.subscription.deleted" : "customer.subscription.updated", at, sub)
    }
  }
  for (const inv of invoices) add("invoice.created", inv.created, inv)
  for (const ch of charges) add(ch.status === "failed" ? "charge.failed" : "charge.succeeded", ch.created, ch)
  for (const r of refunds) add("refund.created", r.created, r)
  return events
}

/** A project's feed: what each fake serves at a given instant, computed once per hour (and payments once per day). */
export interface DemoFeed {
  readonly plausible: (nowMs: number) => PlausibleData
  readonly gsc: (nowMs: number) => { rows: Array<GscFactRow>; totals: Record<string, GscTotals> }
  readonly stripe: (nowMs: number) => FakeStripeData
}

export const makeDemoFeed = (spec: DemoProjectSpec, epoch: Date): DemoFeed => {
  let hourly: { hour: number; plausible: PlausibleData; gsc: ReturnType<typeof gscDataOf> } | null = null
  let daily: { day: string; payments: PaymentsData } | null = null
  let served: { hour: number; data: FakeStripeData } | null = null
  const hourOf = (nowMs: number) => Math.floor(nowMs / HOUR_MS) * HOUR_MS
  const trafficAt = (nowMs: number) => {
    const hour = hourOf(nowMs)
    if (hourly === null || hourly.hour !== hour) {
      const data = generateDemoProject(spec, new Date(hour), { epoch })
      hourly = { hour, plausible: plausibleDataOf(spec, data.traffic), gsc: gscDataOf(spec, data.search) }
    }
    return hourly
  }
  return {
    plausible: (nowMs) => trafficAt(nowMs).plausible,
    gsc: (nowMs) => trafficAt(nowMs).gsc,
    stripe: (nowMs) => {
      const hour = hourOf(nowMs)
      if (served !== null && served.hour === hour) return served.data
      const day = todayIn(spec.timezone, new Date(hour))
      if (daily === null || daily.day !== day) {
        // The whole local day, drawn at once (see above); served up to the cut only.
        const dayEnd = startOfDayIn(addDays(day, 1), spec.timezone)
        daily = { day, payments: generateDemoProject(spec, new Date(dayEnd), { epoch }).payments }
      }
      served = { hour, data: stripeDataOf(spec, daily.payments, hour) }
      return served.data
    }
  }
}
