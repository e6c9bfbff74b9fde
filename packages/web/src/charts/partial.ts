/**
 * Which points of a series are not final yet, for `TimeSeries`' `partial`: the bucket that holds now (today so
 * far, this hour, this month) is still filling, so a chart ending there would read as a crash. Worked out from
 * the API's own bucket fields and the browser's clock; nothing is re-bucketed.
 */

/** Today's date in an IANA time zone ("2026-11-28"), by the browser's clock. */
export const todayIn = (timezone: string, now: Date = new Date()): string => {
  const parts = new Intl.DateTimeFormat("en-CA", {
    timeZone: timezone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit"
  }).formatToParts(now)
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? ""
  return `${part("year")}-${part("month")}-${part("day")}`
}

/** A bucket as the analytics series gives it: its first instant and the local days it covers. */
export interface Bucket {
  readonly start: string
  readonly from: string
  readonly to: string
}

const HOUR_MS = 3_600_000

/**
 * The index of the bucket that holds now (an hour: now within its 60 minutes; a day or a month: today within its
 * days, in the project's time zone), or null when the series is over (yesterday, a period that ended). Every
 * point from there on is "so far".
 */
export const ongoingFrom = (
  buckets: ReadonlyArray<Bucket>,
  granularity: "hour" | "day" | "month",
  timezone: string,
  now: Date = new Date()
): number | null => {
  const today = todayIn(timezone, now)
  const at = now.getTime()
  const i = buckets.findIndex((b) =>
    granularity === "hour"
      ? Date.parse(b.start) <= at && at < Date.parse(b.start) + HOUR_MS
      : b.from <= today && today <= b.to
  )
  return i === -1 ? null : i
}

/** The index of the first day on or after `fromDay` (the first provisional day), or null when there is none. */
export const firstDayFrom = (days: ReadonlyArray<string>, fromDay: string | null): number | null => {
  if (fromDay === null) return null
  const i = days.findIndex((d) => d >= fromDay)
  return i === -1 ? null : i
}
