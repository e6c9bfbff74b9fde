/**
 * Calendar helpers on "YYYY-MM-DD" strings. All arithmetic is done on UTC midnights, so a "day" is
 * always exactly one calendar day whatever the host's time zone (no DST surprises). The only function
 * that knows about time zones is `todayIn`, which turns an instant into the calendar day of a zone.
 */

const MS_PER_DAY = 86_400_000
const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n))
const pad4 = (n: number): string => String(n).padStart(4, "0")

/** Days since 1970-01-01 of a "YYYY-MM-DD" string. Throws on a malformed day. */
export const toEpochDay = (day: string): number => {
  const m = DAY_PATTERN.exec(day)
  if (m === null) throw new Error(`Invalid day "${day}", expected YYYY-MM-DD`)
  return Math.round(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) / MS_PER_DAY)
}

/** The "YYYY-MM-DD" of a number of days since 1970-01-01. */
export const fromEpochDay = (epochDay: number): string => {
  const d = new Date(epochDay * MS_PER_DAY)
  return `${pad4(d.getUTCFullYear())}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}`
}

export const isDay = (value: string): boolean => {
  if (!DAY_PATTERN.test(value)) return false
  return fromEpochDay(toEpochDay(value)) === value // rejects 2024-02-30 and friends
}

/** `day` moved by `n` days (n may be negative). */
export const addDays = (day: string, n: number): string => fromEpochDay(toEpochDay(day) + n)

/** Whole days from `from` to `to`: daysBetween("2024-01-01", "2024-01-03") === 2 (negative when to < from). */
export const daysBetween = (from: string, to: string): number => toEpochDay(to) - toEpochDay(from)

/** Every day from `from` to `to`, both inclusive, in order; empty when to < from. */
export const eachDay = (from: string, to: string): Array<string> => {
  const start = toEpochDay(from)
  const end = toEpochDay(to)
  const out: Array<string> = []
  for (let d = start; d <= end; d++) out.push(fromEpochDay(d))
  return out
}

/** The first day of `day`'s month. */
export const startOfMonth = (day: string): string => `${day.slice(0, 7)}-01`

/**
 * `day` moved by `n` calendar months; the day of month is clamped to the target month's length
 * (addMonths("2024-03-31", -1) === "2024-02-29").
 */
export const addMonths = (day: string, n: number): string => {
  const m = DAY_PATTERN.exec(day)
  if (m === null) throw new Error(`Invalid day "${day}", expected YYYY-MM-DD`)
  const monthIndex = Number(m[1]) * 12 + (Number(m[2]) - 1) + n
  const year = Math.floor(monthIndex / 12)
  const month = monthIndex - year * 12 // 0-based
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate()
  return `${pad4(year)}-${pad2(month + 1)}-${pad2(Math.min(Number(m[3]), lastDay))}`
}

/** 0 = Sunday … 6 = Saturday. */
export const dayOfWeek = (day: string): number => new Date(toEpochDay(day) * MS_PER_DAY).getUTCDay()

const dayFormats = new Map<string, Intl.DateTimeFormat>()
const dayOfMinute = new Map<string, { readonly minute: number; readonly day: string }>()

/** The calendar day ("YYYY-MM-DD") that the instant `now` falls on in the IANA zone `timezone`. */
export const todayIn = (timezone: string, now: Date): string => {
  // Formatting costs microseconds and every request asks: remember the answer for the current minute
  // (every zone in use today is offset from UTC by whole minutes, so a day never starts mid-minute).
  const minute = Math.floor(now.getTime() / 60_000)
  const last = dayOfMinute.get(timezone)
  if (last !== undefined && last.minute === minute) return last.day
  const day = formatDay(timezone, now)
  dayOfMinute.set(timezone, { minute, day })
  return day
}

const formatDay = (timezone: string, now: Date): string => {
  // Building a DateTimeFormat costs far more than using one: keep one per zone.
  let format = dayFormats.get(timezone)
  if (format === undefined) {
    format = new Intl.DateTimeFormat("en-CA", { timeZone: timezone, year: "numeric", month: "2-digit", day: "2-digit" })
    dayFormats.set(timezone, format)
  }
  const parts = format.formatToParts(now)
  const get = (type: "year" | "month" | "day"): string => parts.find((p) => p.type === type)?.value ?? ""
  return `${get("year").padStart(4, "0")}-${get("month")}-${get("day")}`
}

// ---------------------------------------------------------------------------------------------------
// Instants in a time zone (the analytics report's hour buckets and range boundaries)
// ---------------------------------------------------------------------------------------------------

const MS_PER_MINUTE = 60_000
const wallFormats = new Map<string, Intl.DateTimeFormat>()

/** The wall clock of an instant in an IANA zone, with the zone's UTC offset at that instant. */
export interface LocalTime {
  readonly day: string // YYYY-MM-DD
  readonly hour: number // 0–23
  readonly minute: number
  readonly offsetMinutes: number // local − UTC, e.g. +120 for CEST
}

export const localTimeIn = (timezone: string, instantMs: number): LocalTime => {
  let format = wallFormats.get(timezone)
  if (format === undefined) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: timezone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit"
    })
    wallFormats.set(timezone, format)
  }
  const parts = format.formatToParts(new Date(instantMs))
  const get = (type: Intl.DateTimeFormatPartTypes): number => Number(parts.find((p) => p.type === type)?.value ?? 0)
  const [y, mo, d, h, mi, s] = [get("year"), get("month"), get("day"), get("hour"), get("minute"), get("second")]
  const wallMs = Date.UTC(y, mo - 1, d, h, mi, s)
  const wholeSecond = Math.floor(instantMs / 1000) * 1000
  return {
    day: `${pad4(y)}-${pad2(mo)}-${pad2(d)}`,
    hour: h,
    minute: mi,
    offsetMinutes: Math.round((wallMs - wholeSecond) / MS_PER_MINUTE)
  }
}

/**
 * The instant at which the wall clock of `timezone` shows `day` plus `minutesOfDay`. In a DST gap (a
 * wall time that does not exist) this is the wall time read with the offset in force before the gap,
 * which lands the same distance after the gap (Berlin 02:30 on 2026-03-29 → 03:30+02:00), so a day whose
 * midnight is skipped starts at its first existing instant; in an overlap (fall back), the earlier instant.
 */
export const zonedInstant = (day: string, minutesOfDay: number, timezone: string): number => {
  const wall = toEpochDay(day) * MS_PER_DAY + minutesOfDay * MS_PER_MINUTE
  // The offsets a day either side bracket any single transition near this wall time.
  const before = wall - localTimeIn(timezone, wall - MS_PER_DAY).offsetMinutes * MS_PER_MINUTE
  const after = wall - localTimeIn(timezone, wall + MS_PER_DAY).offsetMinutes * MS_PER_MINUTE
  const shows = (t: number) => {
    const l = localTimeIn(timezone, t)
    return toEpochDay(l.day) * MS_PER_DAY + (l.hour * 60 + l.minute) * MS_PER_MINUTE === wall - (wall % MS_PER_MINUTE)
  }
  const valid = [before, after].filter(shows)
  // Overlap: both exist, take the earlier. Gap: neither exists; the pre-transition offset lands after the gap.
  return valid.length > 0 ? Math.min(...valid) : before
}

/** The first instant of the local calendar day `day` in `timezone`. */
export const startOfDayIn = (day: string, timezone: string): number => zonedInstant(day, 0, timezone)

/** "+02:00" / "-03:30" for an offset in minutes. */
export const formatOffset = (offsetMinutes: number): string => {
  const sign = offsetMinutes < 0 ? "-" : "+"
  const abs = Math.abs(offsetMinutes)
  return `${sign}${pad2(Math.floor(abs / 60))}:${pad2(abs % 60)}`
}

/** "2026-03-29T03:00+02:00": the local wall time of an instant with its offset (minute precision). */
export const localLabel = (instantMs: number, timezone: string): string => {
  const t = localTimeIn(timezone, instantMs)
  return `${t.day}T${pad2(t.hour)}:${pad2(t.minute)}${formatOffset(t.offsetMinutes)}`
}
