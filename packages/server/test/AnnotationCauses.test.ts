/**
 * Annotations as likely causes (docs/metrics.md): the latest annotation on the day a change began or up to 3 days
 * before; none from 4 days before or after the day; a deleted one never.
 */
import { describe, expect, it } from "@effect/vitest"
import type { AnnotationCategory } from "@sitehealth/domain/Annotations"
import { type AnnotationRecord } from "../src/annotations/AnnotationsRepo.ts"
import { causeRange, likelyCauseOf, withCauses } from "../src/annotations/Causes.ts"

const at = new Date("2026-11-01T12:00:00Z")
const note = (
  id: string,
  date: string,
  extra: { category?: AnnotationCategory; deletedAt?: Date; createdAt?: Date } = {}
): AnnotationRecord =>
  ({
    id: `ann_${id.padEnd(16, "0")}`,
    projectId: "prj_0000000000000000",
    date,
    note: `note ${id}`,
    category: extra.category ?? "other",
    createdAt: extra.createdAt ?? at,
    updatedAt: at,
    deletedAt: extra.deletedAt ?? null
  }) as AnnotationRecord

describe("likely causes", () => {
  const launch = note("launch", "2026-11-17", { category: "launch" })
  const price = note("price", "2026-11-19", { category: "price_change" })
  const old = note("old", "2026-11-15")
  const after = note("after", "2026-11-21")

  it("the day itself and up to 3 days before: the latest such", () => {
    expect(likelyCauseOf([launch, price, old, after], "2026-11-20")).toEqual({
      annotationId: price.id,
      date: "2026-11-19",
      note: "note price",
      category: "price_change"
    })
    expect(likelyCauseOf([launch], "2026-11-20")?.annotationId).toBe(launch.id) // 3 days before
    expect(likelyCauseOf([launch], "2026-11-17")?.annotationId).toBe(launch.id) // the day itself
  })

  it("none from 4 days before, none after the day, none deleted, none without a day", () => {
    expect(likelyCauseOf([old], "2026-11-19")).toBeNull() // 2026-11-15 is 4 days before
    expect(likelyCauseOf([after], "2026-11-20")).toBeNull()
    expect(likelyCauseOf([note("gone", "2026-11-19", { deletedAt: at })], "2026-11-20")).toBeNull()
    expect(likelyCauseOf([price], null)).toBeNull()
  })

  it("two on the same day: the one written last", () => {
    const first = note("first", "2026-11-19", { createdAt: new Date("2026-11-19T08:00:00Z") })
    const second = note("second", "2026-11-19", { createdAt: new Date("2026-11-19T09:00:00Z") })
    expect(likelyCauseOf([second, first], "2026-11-19")?.annotationId).toBe(second.id)
  })

  it("items get the key only when there is a cause; the range read covers 3 days before the first day", () => {
    const items = withCauses([{ day: "2026-11-20" }, { day: "2026-11-30" }, { day: null }], [price])
    expect(items[0]).toEqual({ day: "2026-11-20", likelyCause: expect.objectContaining({ annotationId: price.id }) })
    expect("likelyCause" in items[1]!).toBe(false)
    expect("likelyCause" in items[2]!).toBe(false)
    expect(causeRange(["2026-11-30", null, "2026-11-20"])).toEqual({ from: "2026-11-17", to: "2026-11-30" })
    expect(causeRange([null])).toBeNull()
  })
})
