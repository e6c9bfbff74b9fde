/**
 * No data is not zero, in the text output (docs/first-five-minutes.md): a briefing figure whose source is not
 * connected or still on its first sync says so instead of a 0, and a recomposed briefing says when it was
 * updated; the search report names its provisional days.
 */
import { describe, expect, it } from "@effect/vitest"
import type { ProjectId } from "@sitehealth/domain/Common"
import type { Briefing, KeyFigure } from "@sitehealth/domain/Projects"
import { makeStyle } from "../src/Format.ts"
import * as Render from "../src/Render.ts"

const s = makeStyle(false)
const figure = (state: KeyFigure["state"], value = 0): KeyFigure =>
  state === "connected" ? { value, usual: value, change: 0, state } : { value: 0, usual: null, change: null, state }

const briefing: Briefing = {
  projectId: "prj_3kTMd9qXyVbN2LwP" as ProjectId,
  date: "2026-11-20",
  generatedAt: "2026-11-20T06:00:00.000Z",
  updatedAt: "2026-11-20T10:42:00.000Z",
  headline: "Importing your data: Stripe is still on its first sync; this briefing is rewritten as soon as it lands.",
  health: { score: null, confidence: 0, status: "no_data", computedAt: "2026-11-20T10:42:00.000Z" },
  sources: { analytics: "not_connected", payments: "syncing", search: "not_connected" },
  yesterday: {
    date: "2026-11-19",
    currency: "USD",
    visitors: figure("not_connected"),
    pageviews: figure("not_connected"),
    netRevenue: figure("syncing"),
    newCustomers: figure("syncing"),
    churnedCustomers: figure("syncing"),
    mrr: figure("syncing")
  },
  whatChanged: [],
  priorities: []
}

const row = (text: string, name: string) =>
  text.split("\n").find((l) => l.startsWith(`${name} `))?.split(/ {2,}/).map((c) => c.trim())

describe("briefing", () => {
  it("a figure that is not data says why, not 0; a recomposed briefing says when it was updated", () => {
    const text = Render.briefing(s, briefing)
    expect(row(text, "visitors")?.[1]).toBe("not connected")
    expect(row(text, "MRR")?.[1]).toBe("syncing…")
    expect(text).not.toMatch(/\$0\.00/)
    expect(text).toContain("(2026-11-20, updated 10:42 UTC)")
    const data = Render.briefing(s, {
      ...briefing,
      updatedAt: null,
      sources: { ...briefing.sources, payments: "connected" },
      yesterday: { ...briefing.yesterday, newCustomers: figure("connected", 3) }
    })
    expect(row(data, "new customers")?.[1]).toBe("3")
    expect(data).toContain("(2026-11-20)")
  })
})
