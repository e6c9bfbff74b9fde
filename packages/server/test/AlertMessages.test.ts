/**
 * The money events as a Slack line and as an email (webhooks/Slack.ts, webhooks/Email.ts): what happened, to whom,
 * for how much, and the link to the website's page.
 */
import { describe, expect, it } from "@effect/vitest"
import { emailMessage } from "../src/webhooks/Email.ts"
import { slackMessage } from "../src/webhooks/Slack.ts"

const BASE = "https://health.example.com"
const body = (type: string, data: Record<string, unknown>) =>
  JSON.stringify({ type, timestamp: "2026-11-20T06:00:00Z", data: { projectId: "prj_1", ...data } })

const churn = body("revenue.movement", {
  customer: "cus_9",
  kind: "churn",
  mrrChange: { amount: -12_000, currency: "EUR" },
  day: "2026-11-19"
})
const failed = body("payment.failed", {
  customer: "cus_7",
  amount: { amount: 4_900, currency: "USD" },
  at: "2026-11-19T10:00:00Z"
})
const ending = body("entitlement.ending", { what: "trial", endsAt: "2026-11-23T00:00:00.000Z" })

describe("money events as Slack lines", () => {
  it("a churn, a failed payment, an ending trial: one line each with the amount, and the link", () => {
    const lines = [churn, failed, ending].map((b) => JSON.parse(slackMessage(b, BASE)))
    expect(lines.map((m) => m.text)).toEqual([
      "churn: customer cus_9, MRR -€120 on 2026-11-19",
      "A payment of $49 by customer cus_7 failed",
      "The account's trial ends on 2026-11-23"
    ])
    for (const m of lines) expect(m.blocks[1].elements[0].url).toBe(`${BASE}/websites/prj_1`)
  })
})

describe("events as emails", () => {
  it("the subject says what and how much, with the website's name; the body links the page and its Alerts page", () => {
    const mails = [churn, failed, ending].map((b) => emailMessage(b, BASE, "Acme Shop"))
    expect(mails.map((m) => m.subject)).toEqual([
      "Acme Shop: Churn -€120 MRR",
      "Acme Shop: a payment of $49 failed",
      "Acme Shop: your trial ends 2026-11-23"
    ])
    expect(mails[0]!.text).toContain("Churn: customer cus_9, MRR -€120 on 2026-11-19.")
    for (const m of mails) {
      expect(m.text).toContain(`${BASE}/websites/prj_1\n`)
      expect(m.text).toContain(`${BASE}/websites/prj_1/alerts`)
    }
  })
})
