/**
 * Annotations as likely causes: a change that began on a day is said to follow the owner's annotation of that
 * day or of up to 3 days before (the latest such), as docs/metrics.md says. Pure: the records in, the cause out.
 */
import { CAUSE_WINDOW_DAYS, type LikelyCause } from "@sitehealth/domain/Annotations"
import type { AnnotationRecord } from "./AnnotationsRepo.ts"

const DAY_MS = 86_400_000

/** `day` (YYYY-MM-DD) moved by `days`. */
export const shiftDay = (day: string, days: number): string =>
  new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10)

/** The first day an annotation may be on to be named the cause of a change that began on `day`. */
export const causeWindowStart = (day: string): string => shiftDay(day, -CAUSE_WINDOW_DAYS)

/** The latest annotation from 3 days before `day` to `day` itself; null when there is none (or no day). */
export const likelyCauseOf = (
  annotations: ReadonlyArray<AnnotationRecord>,
  day: string | null
): LikelyCause | null => {
  if (day === null) return null
  const from = causeWindowStart(day)
  let best: AnnotationRecord | null = null
  for (const a of annotations) {
    if (a.deletedAt !== null || a.date < from || a.date > day) continue
    if (best === null || a.date > best.date || (a.date === best.date && a.createdAt > best.createdAt)) best = a
  }
  return best === null ? null : { annotationId: best.id, date: best.date, note: best.note, category: best.category }
}

/** Each item with its likely cause (the key only when there is one), from annotations read once for all. */
export const withCauses = <A extends { readonly day: string | null }>(
  items: ReadonlyArray<A>,
  annotations: ReadonlyArray<AnnotationRecord>
): Array<A & { readonly likelyCause?: LikelyCause }> =>
  items.map((item) => {
    const cause = likelyCauseOf(annotations, item.day)
    return cause === null ? item : { ...item, likelyCause: cause }
  })

/** The range of days whose annotations can be the cause of changes on `days`: null when there is no day. */
export const causeRange = (
  days: ReadonlyArray<string | null>
): { readonly from: string; readonly to: string } | null => {
  const known = days.filter((d): d is string => d !== null).sort()
  return known.length === 0 ? null : { from: causeWindowStart(known[0]!), to: known.at(-1)! }
}
