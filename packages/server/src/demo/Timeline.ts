/** The demo's calendar: where a project's history starts and what its planted events count from. */
import { addDays, daysBetween, localTimeIn, startOfDayIn, todayIn } from "../metrics/Dates.ts"
import type { DemoProjectSpec } from "./Profiles.ts"

export const DEMO_HISTORY_DAYS = 365

/** Where a project's history starts and what its planted events count from. */
export interface DemoTimeline {
  /** The project's local today. */
  readonly today: string
  /** The epoch's local day: "T" of Profiles.ts (the planted events' days are counted back from it). */
  readonly epochDay: string
  /** The first local day of traffic and search history. */
  readonly firstDay: string
}

export const demoTimeline = (spec: DemoProjectSpec, now: Date, epoch: Date, days = DEMO_HISTORY_DAYS): DemoTimeline => {
  const epochDay = todayIn(spec.timezone, epoch)
  return { today: todayIn(spec.timezone, now), epochDay, firstDay: addDays(epochDay, -(days - 1)) }
}

/** Whole days from `day` to the epoch's day: positive before it, 0 on it, negative after. */
export const daysBeforeEpoch = (timeline: DemoTimeline, day: string): number => daysBetween(day, timeline.epochDay)

const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000

/**
 * localTimeIn for whole-hour instants of one zone, without an Intl lookup per hour (the generator and the
 * feeds read tens of thousands of them): the zone's offset is read at both ends of each UTC day and, when
 * it is the same (every day but a DST change), applies to the day's every hour.
 */
export const localHours = (timezone: string) => {
  const offsets = new Map<number, number | null>()
  return (instantMs: number): { readonly day: string; readonly hour: number } => {
    const utcDay = Math.floor(instantMs / DAY_MS)
    let offset = offsets.get(utcDay)
    if (offset === undefined) {
      const a = localTimeIn(timezone, utcDay * DAY_MS).offsetMinutes
      const b = localTimeIn(timezone, (utcDay + 1) * DAY_MS - 1).offsetMinutes
      offsets.set(utcDay, offset = a === b ? a : null)
    }
    if (offset === null || offset % 60 !== 0) {
      const t = localTimeIn(timezone, instantMs)
      return { day: t.day, hour: t.hour }
    }
    const wall = new Date(Math.floor(instantMs / HOUR_MS) * HOUR_MS + offset * 60_000)
    return { day: wall.toISOString().slice(0, 10), hour: wall.getUTCHours() }
  }
}

const dayStarts = new Map<string, number>()

/** startOfDayIn, remembered: every generation of every hour reads the same days' starts again. */
export const dayStartIn = (day: string, timezone: string): number => {
  const key = `${timezone}|${day}`
  let start = dayStarts.get(key)
  if (start === undefined) dayStarts.set(key, start = startOfDayIn(day, timezone))
  return start
}
