/**
 * Row shapes of the traffic store (migration 0003_traffic). Daily rows reuse `TrafficDay` from
 * store/Series.ts: one row per project and LOCAL calendar day. Hours are UTC instants, so a local DST
 * day naturally covers 23 or 25 of them.
 */
import type { TrafficDay, TrafficHour, TrafficUniques } from "../store/Series.ts"

// The shapes the analytics formulas read live with them (store/Series.ts).
export type { TrafficDay, TrafficHour, TrafficQuery, TrafficUniques, TrafficWindow } from "../store/Series.ts"

/** One page on one local day (top pages; at most TOP_PER_DAY stored per day). */
export interface TrafficPageDay {
  readonly day: string // YYYY-MM-DD, project time zone
  readonly path: string
  readonly visitors: number
  readonly pageviews: number
}

/** One referrer source on one local day (at most TOP_PER_DAY stored per day). */
export interface TrafficSourceDay {
  readonly day: string // YYYY-MM-DD, project time zone
  readonly source: string // "direct" when the event had no source
  readonly visitors: number
  readonly sessions: number
}

/**
 * Visitors from one country on one local day (at most TOP_PER_DAY stored per day). Only providers fill it
 * (Plausible's `visit:country` breakdown, the demo data): self-collected events carry no country.
 */
export interface TrafficCountryDay {
  readonly day: string // YYYY-MM-DD, project time zone
  readonly country: string // ISO 3166-1 alpha-2, upper case
  readonly visitors: number
}

/** One raw pageview of self-collected traffic. */
export interface TrafficEvent {
  readonly at: string // ISO instant
  readonly visitorId: string
  readonly sessionId: string
  readonly path: string
  readonly source: string | null
  readonly durationSeconds?: number // time spent on this page; the session's duration is their sum
}

/** What `TrafficRepo.write` upserts; each row replaces the stored row with the same key. */
export interface TrafficWrite {
  readonly hours?: ReadonlyArray<TrafficHour>
  readonly days?: ReadonlyArray<TrafficDay>
  readonly pages?: ReadonlyArray<TrafficPageDay>
  readonly sources?: ReadonlyArray<TrafficSourceDay>
  readonly countries?: ReadonlyArray<TrafficCountryDay>
  readonly uniques?: ReadonlyArray<TrafficUniques>
}

/** How many pages / sources are stored per project and local day (bounds every read). */
export const TOP_PER_DAY = 100
