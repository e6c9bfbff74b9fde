/** A `traffic.anomaly` event: its rule facts (Outbox.ts), its Slack message and its place in a recap. */
import { describe, expect, it } from "@effect/vitest"
import type { EventData } from "@sitehealth/domain/Events"
import { eventBody, eventFacts } from "../src/webhooks/Outbox.ts"
import { composeRecap } from "../src/webhooks/Recap.ts"
import { slackMessage } from "../src/webhooks/Slack.ts"

const drop: EventData<"traffic.anomaly"> = {
  projectId: "prj_1" as any,
  hour: "2026-03-02T14:00:00.000Z",
  localHour: "2026-03-02 14:00",
  direction: "drop",
  metric: "visitors",
  severity: "critical",
  expected: 100,
  actual: 30,
  range: { low: 65, high: 135 },
  weeks: 8,
  cause: { kind: "source", name: "google", change: -0.45 },
  moneyAtStake: { amount: 3500, currency: "EUR" },
  link: "/websites/prj_1/analytics?period=today&metric=visitors"
}
const spike: EventData<"traffic.anomaly"> = {
  ...drop,
  direction: "spike",
  severity: "info",
  actual: 180,
  cause: null,
  moneyAtStake: null
}
const AT = new Date("2026-03-02T15:20:00Z")

describe("traffic.anomaly", () => {
  it("rule facts: the money at stake (none counts as 0) and the severity", () => {
    expect(eventFacts("traffic.anomaly", drop)).toEqual({ money: 3500, severity: "critical" })
    expect(eventFacts("traffic.anomaly", spike)).toEqual({ money: 0, severity: "info" })
  })

  it("a Slack line with the hour, actual vs usual, the cause and the money at stake", () => {
    const message = JSON.parse(slackMessage(eventBody("traffic.anomaly", drop, AT), "https://health.example.com"))
    expect(message.text).toBe(
      "Visitors drop at 2026-03-02 14:00: 30 against a usual 100 (65–135); likely cause: source google — €35 at stake"
    )
    expect(message.blocks[1].elements[0].url).toBe("https://health.example.com/websites/prj_1")
  })

  it("a recap: a drop is a loss with its money at stake, a spike a gain", () => {
    const { gains, losses } = composeRecap([
      { type: "traffic.anomaly", body: eventBody("traffic.anomaly", drop, AT) },
      { type: "traffic.anomaly", body: eventBody("traffic.anomaly", spike, AT) }
    ])
    expect(losses.map((l) => [l.title, l.amount?.amount])).toEqual([
      ["Visitors drop at 2026-03-02 14:00: 30 against a usual 100", 3500]
    ])
    expect(gains.map((g) => [g.title, g.amount])).toEqual([[
      "Visitors spike at 2026-03-02 14:00: 180 against a usual 100",
      null
    ]])
  })
})
