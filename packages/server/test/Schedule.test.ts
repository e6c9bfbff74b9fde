/**
 * The sync schedule's arithmetic (integrations/Schedule.ts): each provider's cadence, slots spread over the
 * interval by a hash of the connection, the same slot on every call, and the back-off's growth and cap.
 * The queue and runner that use them are tested over the router, with TestClock (contract/SyncSchedule,
 * contract/Integrations).
 */
import { describe, expect, it } from "@effect/vitest"
import {
  backoffMs,
  intervalMinutesOf,
  nextSlot,
  nextSyncAfter,
  PROVIDER_CADENCE_MINUTES,
  slotOffsetMs
} from "../src/integrations/Schedule.ts"

const MIN = 60_000
const HOUR = 60 * MIN
const AT = new Date("2026-11-20T12:00:30Z")

describe("Schedule", () => {
  it("each provider's cadence: Stripe and Plausible hourly, Search Console daily; the integration's own wins; others take the default", () => {
    expect(PROVIDER_CADENCE_MINUTES).toEqual({ stripe: 60, plausible: 60, "google-search-console": 1440 })
    expect(intervalMinutesOf("stripe", null, 45)).toBe(60)
    expect(intervalMinutesOf("plausible", undefined, 45)).toBe(60)
    expect(intervalMinutesOf("google-search-console", null, 45)).toBe(1440)
    expect(intervalMinutesOf("a-provider-without-a-cadence", null, 45)).toBe(45)
    expect(intervalMinutesOf("google-search-console", 15, 45)).toBe(15)
  })

  it("slots: the next one is within one interval, on the connection's own minute, the same on every call", () => {
    for (const [provider, minutes] of [["stripe", 60], ["google-search-console", 1440], ["plausible", 7]] as const) {
      const slot = nextSlot("prj_a", provider, minutes, AT)
      expect(slot.getTime()).toBeGreaterThan(AT.getTime())
      expect(slot.getTime()).toBeLessThanOrEqual(AT.getTime() + minutes * MIN)
      expect(slot.getTime() % (minutes * MIN)).toBe(slotOffsetMs("prj_a", provider, minutes))
      expect(nextSlot("prj_a", provider, minutes, AT)).toEqual(slot)
      // After a slot, the next one is one interval later.
      expect(nextSlot("prj_a", provider, minutes, slot).getTime()).toBe(slot.getTime() + minutes * MIN)
    }
  })

  it("1,000 hourly connections are spread over the hour instead of firing together", () => {
    const minutes = new Map<number, number>()
    for (let i = 0; i < 1000; i++) {
      const offset = slotOffsetMs(`prj_${i.toString(36).padStart(6, "0")}`, "stripe", 60) / MIN
      expect(Number.isInteger(offset) && offset >= 0 && offset < 60).toBe(true)
      minutes.set(offset, (minutes.get(offset) ?? 0) + 1)
    }
    expect(minutes.size).toBe(60) // every minute of the hour is used
    expect(Math.max(...minutes.values())).toBeLessThan(40) // about 17 a minute, never a pile-up
    // Daily connections: spread over the whole day.
    const hours = new Set<number>()
    for (let i = 0; i < 1000; i++) hours.add(Math.floor(slotOffsetMs(`prj_${i}`, "google-search-console", 1440) / HOUR))
    expect(hours.size).toBe(24)
  })

  it("back-off: interval × 2^(n−1) after n failures in a row, capped at max(24 h, 4 × interval); a success returns to the slots", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20, 1000].map((n) => backoffMs(60, n) / HOUR)).toEqual([
      1,
      2,
      4,
      8,
      16,
      24,
      24,
      24,
      24
    ])
    expect([1, 2, 3, 4].map((n) => backoffMs(1440, n) / HOUR)).toEqual([24, 48, 96, 96])
    expect(backoffMs(15, 3)).toBe(60 * MIN)
    const base = { projectId: "prj_a", provider: "stripe", intervalMinutes: 60, now: AT }
    expect(nextSyncAfter({ ...base, failures: 3 })).toEqual(new Date(AT.getTime() + 4 * HOUR))
    expect(nextSyncAfter({ ...base, failures: 0 })).toEqual(nextSlot("prj_a", "stripe", 60, AT))
  })
})
