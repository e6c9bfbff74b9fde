/**
 * Deterministic, plausible demo data: `days` daily rows ending at `today` for a small subscription
 * website. The same options always give the same rows (seeded mulberry32 PRNG, no clock).
 *
 * Traffic: a per-site base level × trend × weekly seasonality (weekends −25%) × ±10% noise, clamped to
 * 200–5000 visitors a day.
 *   - growing: compounding +60% per 180 days, anchored so that the last day is at the base level
 *   - declining: flat, then a linear −45% over the last 60 days
 *   - steady: flat
 * Revenue: subscriptions simulated one by one. Each day existing subscriptions churn with a small
 * probability (0.15%/day; 0.12%/day for growing; 0.4%/day in the last 60 days of declining), then
 * Poisson(visitors × 0.002) new ones start on a $19 / $49 / $99 monthly plan. Every subscription is
 * charged on its 30-day billing cycle (first charge the day it starts); each charge is refunded with a 2%
 * probability. mrr / activeSubscriptions are end-of-day states, so
 * active(today) = active(yesterday) + new − churned (the day before the first row starts at 40).
 * Search: impressions ≈ 4 × visitors, CTR 2–6%, average position 8–25.
 */
import { addDays, dayOfWeek } from "../metrics/Dates.ts"
import type { RevenueDay, SearchDay, TrafficDay } from "../metrics/Rows.ts"

export type DemoProfile = "growing" | "declining" | "steady"

export interface DemoOptions {
  readonly seed: number
  readonly days: number
  readonly today: string
  readonly profile: DemoProfile
}

export interface DemoSeries {
  readonly traffic: Array<TrafficDay>
  readonly revenue: Array<RevenueDay>
  readonly search: Array<SearchDay>
}

/** Subscriptions active the day before the first generated row. */
export const DEMO_INITIAL_SUBSCRIPTIONS = 40

const PLAN_PRICES_MINOR = [1900, 4900, 9900] as const
const PLAN_WEIGHTS = [0.55, 0.3, 0.15] as const
const BILLING_CYCLE_DAYS = 30
const NEW_SUBSCRIPTIONS_PER_VISITOR = 0.002
const DAILY_CHURN = 0.0015 // ≈ 4.4% a month
const DAILY_CHURN_GROWING = 0.0012 // ≈ 3.5% a month: keeps the growing demo under the 4% churn warning
const DAILY_CHURN_DECLINING = 0.004 // ≈ 11% a month, the last 60 days of the declining profile
const REFUND_PROBABILITY = 0.02

/** mulberry32: a tiny, fast, well-distributed 32-bit PRNG. Returns floats in [0, 1). */
export const mulberry32 = (seed: number): (() => number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x))

/** A value in [lo, hi). */
const between = (rand: () => number, lo: number, hi: number): number => lo + rand() * (hi - lo)

/** 1 ± spread, uniformly. */
const jitter = (rand: () => number, spread: number): number => 1 + (rand() * 2 - 1) * spread

/** Knuth's Poisson sampler (fine for the small λ used here). */
const poisson = (rand: () => number, lambda: number): number => {
  if (!(lambda > 0)) return 0
  const limit = Math.exp(-lambda)
  let k = 0
  let p = 1
  do {
    k++
    p *= rand()
  } while (p > limit)
  return k - 1
}

const pickPrice = (rand: () => number): number => {
  const r = rand()
  let acc = 0
  for (let i = 0; i < PLAN_PRICES_MINOR.length; i++) {
    acc += PLAN_WEIGHTS[i]
    if (r < acc) return PLAN_PRICES_MINOR[i]
  }
  return PLAN_PRICES_MINOR[PLAN_PRICES_MINOR.length - 1]
}

/** Traffic multiplier for a day `fromEnd` days before the last generated day. */
const trend = (profile: DemoProfile, fromEnd: number): number => {
  switch (profile) {
    case "growing":
      return 1.6 ** (-fromEnd / 180)
    case "declining":
      return fromEnd >= 60 ? 1 : 1 - (0.45 * (60 - fromEnd)) / 60
    case "steady":
      return 1
  }
}

interface Subscription {
  readonly priceMinor: number
  readonly billingOffset: number // charged on days whose index ≡ billingOffset (mod 30)
}

export const generateDemoSeries = (options: DemoOptions): DemoSeries => {
  const days = Math.max(0, Math.floor(options.days))
  const rand = mulberry32(options.seed)

  // Per-site character.
  const baseVisitors = between(rand, 500, 2000)
  const basePagesPerVisitor = between(rand, 2, 3)
  const baseBounce = between(rand, 0.4, 0.55)
  const baseSessionSeconds = between(rand, 80, 150)
  const baseCtr = between(rand, 0.03, 0.05)
  const basePosition = between(rand, 10, 20)

  let subscriptions: Array<Subscription> = []
  for (let i = 0; i < DEMO_INITIAL_SUBSCRIPTIONS; i++) {
    subscriptions.push({ priceMinor: pickPrice(rand), billingOffset: Math.floor(rand() * BILLING_CYCLE_DAYS) })
  }

  const traffic: Array<TrafficDay> = []
  const revenue: Array<RevenueDay> = []
  const search: Array<SearchDay> = []

  for (let i = 0; i < days; i++) {
    const fromEnd = days - 1 - i
    const day = addDays(options.today, -fromEnd)
    const weekday = dayOfWeek(day)
    const weekend = weekday === 0 || weekday === 6 ? 0.75 : 1

    // Traffic
    const visitors = Math.round(
      clamp(baseVisitors * trend(options.profile, fromEnd) * weekend * jitter(rand, 0.1), 200, 5000)
    )
    const pageviews = Math.round(visitors * clamp(basePagesPerVisitor * jitter(rand, 0.1), 1.5, 3.5))
    const sessions = Math.round(visitors * 1.2 * jitter(rand, 0.05))
    const bounces = Math.round(sessions * clamp(baseBounce * jitter(rand, 0.08), 0.35, 0.6))
    const durationSeconds = Math.round(sessions * clamp(baseSessionSeconds * jitter(rand, 0.15), 60, 180))
    traffic.push({ day, visitors, pageviews, sessions, bounces, durationSeconds })

    // Subscriptions: churn among those active at the start of the day, then new ones.
    const churnProbability = options.profile === "growing"
      ? DAILY_CHURN_GROWING
      : options.profile === "declining" && fromEnd < 60
        ? DAILY_CHURN_DECLINING
        : DAILY_CHURN
    let churnedSubscriptions = 0
    let churnedMrrMinor = 0
    const kept: Array<Subscription> = []
    for (const s of subscriptions) {
      if (rand() < churnProbability) {
        churnedSubscriptions++
        churnedMrrMinor += s.priceMinor
      } else {
        kept.push(s)
      }
    }
    const newSubscriptions = poisson(rand, visitors * NEW_SUBSCRIPTIONS_PER_VISITOR)
    for (let n = 0; n < newSubscriptions; n++) {
      kept.push({ priceMinor: pickPrice(rand), billingOffset: i % BILLING_CYCLE_DAYS })
    }
    subscriptions = kept

    let grossMinor = 0
    let refundsMinor = 0
    let mrrMinor = 0
    for (const s of subscriptions) {
      mrrMinor += s.priceMinor
      if (i % BILLING_CYCLE_DAYS === s.billingOffset) {
        grossMinor += s.priceMinor
        if (rand() < REFUND_PROBABILITY) refundsMinor += s.priceMinor
      }
    }
    revenue.push({
      day,
      grossMinor,
      refundsMinor,
      mrrMinor,
      activeSubscriptions: subscriptions.length,
      newSubscriptions,
      churnedSubscriptions,
      churnedMrrMinor
    })

    // Search
    const impressions = Math.round(visitors * 4 * jitter(rand, 0.15))
    const clicks = Math.round(impressions * clamp(baseCtr * jitter(rand, 0.2), 0.02, 0.06))
    const position = clamp(basePosition * jitter(rand, 0.1), 8, 25)
    search.push({ day, clicks, impressions, positionWeighted: Math.round(position * impressions * 100) / 100 })
  }

  return { traffic, revenue, search }
}
