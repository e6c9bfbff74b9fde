/**
 * Row shapes of the traffic store (migration 0003_traffic). Daily rows reuse `TrafficDay` from
 * metrics/Rows.ts: one row per project and LOCAL calendar day. Hours are UTC instants, so a local DST
 * day naturally covers 23 or 25 of them.
 */
import type { TrafficDay } from "../metrics/Rows.ts"

export type { TrafficDay }

/** One UTC hour of traffic. */
export interface TrafficHour {
  readonly hour: string // ISO instant of the UTC hour start, e.g. "2026-03-29T01:00:00.000Z"
  readonly visitors: number // unique visitors in that hour
  readonly pageviews: number
  readonly sessions: number // sessions that started in that hour
  readonly bounces: number // single-page sessions among them
  readonly durationSeconds: number // total seconds of those sessions
}

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

/** Unique visitors over a whole inclusive range of local days, as the provider reported them. */
export interface TrafficUniques {
  readonly from: string // YYYY-MM-DD
  readonly to: string // YYYY-MM-DD, inclusive
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
  readonly uniques?: ReadonlyArray<TrafficUniques>
}

/** Everything the analytics report reads for one window, in one round trip. */
export interface TrafficWindow {
  readonly hours: ReadonlyArray<TrafficHour> // UTC hours in [hoursFrom, hoursTo)
  readonly days: ReadonlyArray<TrafficDay> // local days in [from, to]
  readonly pages: ReadonlyArray<{ readonly path: string; readonly visitors: number; readonly pageviews: number }>
  readonly sources: ReadonlyArray<{ readonly source: string; readonly visitors: number; readonly sessions: number }>
  readonly uniques: ReadonlyArray<TrafficUniques> // stored ranges inside [from, to]
}

/** How many pages / sources are stored per project and local day (bounds every read). */
export const TOP_PER_DAY = 100
