/** Events as Slack Block Kit messages (webhooks/Slack.ts): a signal with expected vs actual and money at stake, the briefing's priorities. */
import { describe, expect, it } from "@effect/vitest"
import { slackMessage } from "../src/webhooks/Slack.ts"

const PAGE = "https://health.example.com/websites/prj_1"

describe("slackMessage", () => {
  it("a signal: title, expected vs actual, money at stake, a link to the website's page; mrkdwn escaped", () => {
    const body = JSON.stringify({
      type: "signal.opened",
      timestamp: "2026-11-20T06:00:00Z",
      data: {
        projectId: "prj_1",
        signal: {
          title: "Visitors down <40 %>",
          detail: "From Google & co",
          severity: "critical",
          actual: 600,
          expected: { value: 1000, low: 800, high: 1200 },
          moneyAtStake: { amount: 48_000, currency: "EUR" }
        }
      }
    })
    const message = JSON.parse(slackMessage(body, "https://health.example.com"))
    expect(message.text).toBe("New signal: Visitors down <40 %>")
    expect(message.blocks[0].text.text).toBe(":red_circle: *Visitors down &lt;40 %&gt;*\nFrom Google &amp; co")
    expect(message.blocks[1].fields.map((f: any) => f.text)).toEqual([
      "*Actual*\n600",
      "*Expected*\n1,000",
      "*Money at stake*\n€480",
      "*Severity*\ncritical"
    ])
    expect(message.blocks[2].elements[0].url).toBe(PAGE)
  })

  it("the briefing: its priorities in rank order with their money at stake", () => {
    const body = JSON.stringify({
      type: "briefing.ready",
      timestamp: "2026-11-20T06:00:00Z",
      data: {
        projectId: "prj_1",
        day: "2026-11-20",
        score: 61,
        priorities: [
          { rank: 1, severity: "critical", title: "Churn at 10 %", moneyAtStake: { amount: 184_000, currency: "EUR" } },
          { rank: 2, severity: "warning", title: "Ranking lost", moneyAtStake: null }
        ]
      }
    })
    const message = JSON.parse(slackMessage(body, "https://health.example.com"))
    expect(message.text).toBe("Morning briefing 2026-11-20: Churn at 10 %")
    expect(message.blocks[0]).toEqual({
      type: "header",
      text: { type: "plain_text", text: "Morning briefing, 2026-11-20" }
    })
    expect(message.blocks[1].text.text).toBe(
      "1. :red_circle: Churn at 10 % — *€1,840* at stake\n2. :large_orange_circle: Ranking lost"
    )
    expect(message.blocks[2].elements[0].url).toBe(PAGE)
  })
})
