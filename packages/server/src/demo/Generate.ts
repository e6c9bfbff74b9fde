/**
 * Deterministic, plausible provider data for one demo project (see Profiles.ts for what each project has
 * planted): traffic as Plausible reports it, payments as Stripe does, search as Search Console does.
 *
 * The history is anchored at the demo's EPOCH (the instant the demo account was created): it starts
 * DEMO_HISTORY_DAYS local days before the epoch's day (payments PAYMENTS_WARMUP_DAYS earlier still) and
 * runs on, day after day, to `now`; the planted events are placed relative to the epoch's day. One seeded
 * PRNG stream per kind runs through the days in order, so a day's figures (and the payments' ids) depend
 * only on the spec, the epoch and that day — never on `now` — except today's traffic, which is partial
 * (the hours begun so far). The same spec, epoch and `now` always give the same data (no clock).
 */
import type { FxRate } from "../fx/Fx.ts"
import { addDays } from "../metrics/Dates.ts"
import type { PaymentsData } from "../payments/Types.ts"
import type { SearchWrite } from "../search/Types.ts"
import type { TrafficWrite } from "../traffic/Types.ts"
import { generatePayments, PAYMENTS_WARMUP_DAYS } from "./Payments.ts"
import type { DemoProjectSpec } from "./Profiles.ts"
import { jitter, mulberry32 } from "./Random.ts"
import { generateSearch } from "./Search.ts"
import { DEMO_HISTORY_DAYS, demoTimeline } from "./Timeline.ts"
import { generateTraffic } from "./Traffic.ts"

export { DEMO_HISTORY_DAYS, type DemoTimeline, demoTimeline } from "./Timeline.ts"

export interface DemoProjectData {
  readonly today: string
  readonly traffic: TrafficWrite
  readonly payments: PaymentsData
  readonly search: SearchWrite
}

export const generateDemoProject = (
  spec: DemoProjectSpec,
  now: Date,
  options: { readonly epoch?: Date; readonly days?: number } = {}
): DemoProjectData => {
  const timeline = demoTimeline(spec, now, options.epoch ?? now, options.days)
  // Separate streams, so that changing one generator leaves the others' data as it was.
  const traffic = generateTraffic(spec, mulberry32(spec.seed), timeline, now.getTime())
  const visitorsByDay = new Map(traffic.days.map((d) => [d.day, d.visitors] as const))
  const firstVisitors = traffic.days[0]?.visitors ?? spec.traffic.baseVisitors
  const payments = generatePayments(
    spec,
    mulberry32(spec.seed * 7 + 1),
    timeline,
    now.getTime(),
    (day) => visitorsByDay.get(day) ?? firstVisitors
  )
  const search = generateSearch(spec, mulberry32(spec.seed * 13 + 2), timeline, traffic.days)
  return { today: timeline.today, traffic: traffic.write, payments, search }
}

/**
 * Demo EUR→USD rates, one a week around 1.09 (a gentle random walk), covering the whole payments history
 * from before the epoch's history to `now` (the same week always gets the same rate). They are demo
 * figures, stored like operator-supplied rates and documented as such.
 */
export const demoFxRates = (now: Date, epoch: Date = now, days = DEMO_HISTORY_DAYS): Array<FxRate> => {
  const rand = mulberry32(4242)
  const today = now.toISOString().slice(0, 10)
  const first = addDays(epoch.toISOString().slice(0, 10), -(days + PAYMENTS_WARMUP_DAYS + 7))
  const rates: Array<FxRate> = []
  let rate = 1.09
  for (let day = first; day <= today; day = addDays(day, 7)) {
    rate = Math.min(1.16, Math.max(1.02, rate * jitter(rand, 0.006)))
    rates.push({ day, base: "EUR", quote: "USD", rate: Math.round(rate * 10_000) / 10_000 })
  }
  return rates
}
