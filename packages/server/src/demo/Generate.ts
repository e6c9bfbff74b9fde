/**
 * A year of deterministic, plausible provider data for one demo project (see Profiles.ts for what each
 * project has planted): traffic as Plausible reports it, payments as Stripe does, search as Search
 * Console does. The same spec and `now` always give the same data (seeded PRNG, no clock).
 */
import { addDays, todayIn } from "../metrics/Dates.ts"
import type { FxRate } from "../fx/Fx.ts"
import type { PaymentsData } from "../payments/Types.ts"
import type { SearchWrite } from "../search/Types.ts"
import type { TrafficWrite } from "../traffic/Types.ts"
import { generatePayments, PAYMENTS_WARMUP_DAYS } from "./Payments.ts"
import type { DemoProjectSpec } from "./Profiles.ts"
import { jitter, mulberry32 } from "./Random.ts"
import { generateSearch } from "./Search.ts"
import { generateTraffic } from "./Traffic.ts"

export const DEMO_HISTORY_DAYS = 365

export interface DemoProjectData {
  readonly today: string
  readonly traffic: TrafficWrite
  readonly payments: PaymentsData
  readonly search: SearchWrite
}

export const generateDemoProject = (spec: DemoProjectSpec, now: Date, days = DEMO_HISTORY_DAYS): DemoProjectData => {
  const today = todayIn(spec.timezone, now)
  // Separate streams, so that changing one generator leaves the others' data as it was.
  const traffic = generateTraffic(spec, mulberry32(spec.seed), today, now.getTime(), days)
  const visitorsByDaysAgo = new Map(traffic.days.map((d, i) => [traffic.days.length - 1 - i, d.visitors] as const))
  const firstVisitors = traffic.days[0]?.visitors ?? spec.traffic.baseVisitors
  const payments = generatePayments(spec, mulberry32(spec.seed * 7 + 1), today, now.getTime(), days,
    (daysAgo) => visitorsByDaysAgo.get(daysAgo) ?? firstVisitors)
  const search = generateSearch(spec, mulberry32(spec.seed * 13 + 2), today, traffic.days)
  return { today, traffic: traffic.write, payments, search }
}

/**
 * Demo EUR→USD rates, one a week around 1.09 (a gentle random walk), covering the whole payments history.
 * They are demo figures, stored like operator-supplied rates and documented as such.
 */
export const demoFxRates = (now: Date, days = DEMO_HISTORY_DAYS): Array<FxRate> => {
  const rand = mulberry32(4242)
  const today = now.toISOString().slice(0, 10)
  const rates: Array<FxRate> = []
  let rate = 1.09
  for (let back = days + PAYMENTS_WARMUP_DAYS + 7; back >= 0; back -= 7) {
    rate = Math.min(1.16, Math.max(1.02, rate * jitter(rand, 0.006)))
    rates.push({ day: addDays(today, -back), base: "EUR", quote: "USD", rate: Math.round(rate * 10_000) / 10_000 })
  }
  return rates
}
