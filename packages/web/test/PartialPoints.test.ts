/**
 * Which chart points are not final yet (packages/web/src/charts/partial.ts): the bucket holding now, in the
 * website's time zone, and the days from the SEO report's `provisionalFrom` on. Pure: no browser.
 */
import { describe, expect, it } from "vitest"
import { firstDayFrom, ongoingFrom, todayIn } from "../src/charts/partial.ts"

const day = (d: string) => ({ start: `${d}T00:00:00Z`, from: d, to: d })

describe("the points still filling", () => {
  it("today is the website's date, not the browser's", () => {
    const now = new Date("2026-11-27T23:30:00Z")
    expect(todayIn("UTC", now)).toBe("2026-11-27")
    expect(todayIn("Europe/Berlin", now)).toBe("2026-11-28")
    expect(todayIn("America/Los_Angeles", now)).toBe("2026-11-27")
  })

  it("a daily series ending today: its last point; one that ended (yesterday, a past range): none", () => {
    const days = ["2026-11-26", "2026-11-27", "2026-11-28"].map(day)
    const now = new Date("2026-11-28T10:00:00Z")
    expect(ongoingFrom(days, "day", "Europe/Berlin", now)).toBe(2)
    // At 23:30 UTC on the 27th it is already the 28th in Berlin, still the 27th in Los Angeles.
    expect(ongoingFrom(days, "day", "Europe/Berlin", new Date("2026-11-27T23:30:00Z"))).toBe(2)
    expect(ongoingFrom(days, "day", "America/Los_Angeles", new Date("2026-11-27T23:30:00Z"))).toBe(1)
    expect(ongoingFrom(days.slice(0, 2), "day", "Europe/Berlin", now)).toBeNull()
  })

  it("a month bucket holding today, and the hour holding now", () => {
    const months = [{ start: "2026-10-01T00:00:00Z", from: "2026-10-01", to: "2026-10-31" }, {
      start: "2026-11-01T00:00:00Z",
      from: "2026-11-01",
      to: "2026-11-28"
    }]
    expect(ongoingFrom(months, "month", "UTC", new Date("2026-11-28T10:00:00Z"))).toBe(1)
    const hours = ["09", "10", "11"].map((h) => ({
      start: `2026-11-28T${h}:00:00Z`,
      from: "2026-11-28",
      to: "2026-11-28"
    }))
    expect(ongoingFrom(hours, "hour", "UTC", new Date("2026-11-28T11:59:59Z"))).toBe(2)
    expect(ongoingFrom(hours, "hour", "UTC", new Date("2026-11-28T10:00:00Z"))).toBe(1)
    // Yesterday's hours, seen today: all over.
    expect(ongoingFrom(hours, "hour", "UTC", new Date("2026-11-29T10:00:00Z"))).toBeNull()
  })

  it("Search Console's provisional days: from provisionalFrom on; none without it", () => {
    const days = ["2026-11-20", "2026-11-21", "2026-11-22", "2026-11-23", "2026-11-24", "2026-11-25"]
    expect(firstDayFrom(days, "2026-11-22")).toBe(2)
    expect(firstDayFrom(days, "2026-11-01")).toBe(0)
    expect(firstDayFrom(days, "2026-11-26")).toBeNull()
    expect(firstDayFrom(days, null)).toBeNull()
  })
})
