/** The morning email's composition alone: priorities of all websites ranked by money at stake, text escaped in HTML. */
import { describe, expect, it } from "@effect/vitest"
import { composeBriefingEmail, rankPriorities, type WebsiteEdition } from "../src/alerts/Compose.ts"

const priority = (title: string, amount: number | null, severity = "warning", rank = 1) => ({
  rank,
  dimension: "revenue",
  severity,
  title,
  action: "Look at it",
  moneyAtStake: amount === null ? null : { amount, currency: "EUR" },
  signalId: `sig_${title}`
})

const site = (name: string, priorities: ReadonlyArray<ReturnType<typeof priority>>): WebsiteEdition => ({
  projectId: `prj_${name}`,
  name,
  domain: `${name}.example`,
  briefing: {
    headline: `${name} <headline>`,
    health: { score: 70, confidence: 1, status: "watch", computedAt: "2026-03-29T06:00:00Z" },
    priorities,
    whatChanged: []
  } as any
})

describe("composeBriefingEmail", () => {
  it("ranks every website's priorities by money at stake, then severity", () => {
    const ranked = rankPriorities([
      site("shop", [priority("Churn up", 12_000), priority("Traffic down", null, "critical")]),
      site("blog", [priority("Failed payments", 50_000), priority("Ranking lost", null, "warning")])
    ])
    expect(ranked.map((r) => r.priority.title)).toEqual(["Failed payments", "Churn up", "Traffic down", "Ranking lost"])
  })

  it("writes text and HTML, the largest stake in the subject, and escapes what it quotes", () => {
    const email = composeBriefingEmail({
      accountName: "A",
      localDate: "2026-03-29",
      websites: [site("shop", [priority("Churn <up>", 12_000)])],
      dashboardUrl: "https://health.example.com",
      unsubscribeUrl: "https://health.example.com/app/api/alerts/unsubscribe?account=acc_1&token=t"
    })
    expect(email.subject).toBe("Your morning briefing, 2026-03-29: Churn <up> (shop)")
    expect(email.text).toContain("1. [warning] shop: Churn <up> — €120 at stake")
    expect(email.text).toContain("https://health.example.com/websites/prj_shop")
    expect(email.html).toContain("Churn &lt;up&gt;")
    expect(email.html).not.toContain("<up>")
    expect(email.html).toContain("shop &lt;headline&gt;")
    expect(email.html).toContain("account=acc_1&amp;token=t")
  })
})
