/**
 * An event as a Slack message (Block Kit) for an endpoint whose format is `slack` (a Slack incoming-webhook URL):
 * the briefing's priorities ranked with their money at stake, a signal with expected vs actual and money at stake,
 * the other kinds in a line — each with a link to the website's page in the dashboard. Pure.
 */
import type { Priority, Signal } from "@sitehealth/domain/Projects"

type Block = Record<string, unknown>

const money = (m: { readonly amount: number; readonly currency: string } | null | undefined) =>
  m === null || m === undefined
    ? null
    : new Intl.NumberFormat("en", { style: "currency", currency: m.currency, maximumFractionDigits: 0 }).format(
      m.amount / 100
    )

/** Slack's mrkdwn treats &, < and > as markup. */
const escape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

const figure = (n: number | null) => n === null ? "—" : Number.isInteger(n) ? n.toLocaleString("en") : n.toFixed(3)

const SEVERITY_MARK: Record<string, string> = { critical: ":red_circle:", warning: ":large_orange_circle:" }

const section = (text: string): Block => ({ type: "section", text: { type: "mrkdwn", text } })

const link = (url: string): Block => ({
  type: "actions",
  elements: [{ type: "button", text: { type: "plain_text", text: "Open in sitehealth" }, url }]
})

/** The message's JSON body; `event` is the Standard Webhooks body `{type, timestamp, data}`. */
export const slackMessage = (eventBody: string, dashboardUrl: string): string => {
  const event = JSON.parse(eventBody) as { type: string; timestamp: string; data: Record<string, any> }
  const data = event.data
  const page = `${dashboardUrl}/websites/${encodeURIComponent(String(data.projectId ?? ""))}`
  let text: string
  let blocks: Array<Block>
  if (event.type === "signal.opened" || event.type === "signal.resolved") {
    const signal = data.signal as Signal
    const stake = money(signal.moneyAtStake)
    const opened = event.type === "signal.opened"
    text = `${opened ? "New signal" : "Resolved"}: ${signal.title}`
    blocks = [
      section(
        `${opened ? (SEVERITY_MARK[signal.severity] ?? ":white_circle:") : ":white_check_mark:"} *${
          escape(opened ? signal.title : `Resolved: ${signal.title}`)
        }*\n${escape(signal.detail)}`
      ),
      {
        type: "section",
        fields: [
          { type: "mrkdwn", text: `*Actual*\n${figure(signal.actual)}` },
          { type: "mrkdwn", text: `*Expected*\n${signal.expected === null ? "—" : figure(signal.expected.value)}` },
          { type: "mrkdwn", text: `*Money at stake*\n${stake ?? "—"}` },
          { type: "mrkdwn", text: `*Severity*\n${signal.severity}` }
        ]
      },
      link(page)
    ]
  } else if (event.type === "briefing.ready") {
    const priorities = data.priorities as ReadonlyArray<Pick<Priority, "rank" | "severity" | "title" | "moneyAtStake">>
    text = `Morning briefing ${data.day}: ${priorities[0]?.title ?? "nothing needs you today"}`
    blocks = [
      { type: "header", text: { type: "plain_text", text: `Morning briefing, ${data.day}` } },
      section(
        priorities.length === 0
          ? "Nothing needs you today."
          : priorities.map((p) => {
            const stake = money(p.moneyAtStake)
            return `${p.rank}. ${SEVERITY_MARK[p.severity] ?? ""} ${escape(p.title)}${
              stake === null ? "" : ` — *${stake}* at stake`
            }`
          }).join("\n")
      ),
      link(page)
    ]
  } else if (event.type === "recap.ready") {
    type Item = { readonly title: string; readonly amount: { amount: number; currency: string } | null }
    const list = (items: ReadonlyArray<Item>) =>
      items.length === 0
        ? "—"
        : items.map((i) => `• ${escape(i.title)}${i.amount === null ? "" : ` — *${money(i.amount)}*`}`).join("\n")
    const period = data.from === data.to ? data.from : `${data.from} – ${data.to}`
    text = `Your ${data.cadence} recap, ${period}: ${data.eventCount} events`
    blocks = [
      { type: "header", text: { type: "plain_text", text: `Your ${data.cadence} recap, ${period}` } },
      section(`*Largest gains*\n${list(data.gains)}`),
      section(`*Largest losses*\n${list(data.losses)}`),
      link(page)
    ]
  } else {
    const summary: Record<string, () => string> = {
      "health.changed": () =>
        `Health score ${data.previousScore} → *${data.score}* (${data.change > 0 ? "+" : ""}${data.change})`,
      "integration.failed": () =>
        `:warning: ${escape(String(data.provider))} sync failed: ${escape(String(data.error))}`,
      "integration.recovered": () => `:white_check_mark: ${escape(String(data.provider))} syncs again`,
      "token.revoked": () => `Token ${escape(String(data.name))} (${escape(String(data.prefix))}) revoked`,
      "webhook.test": () => `:wave: ${escape(String(data.message))}`,
      "revenue.movement": () =>
        `${data.mrrChange.amount < 0 ? ":small_red_triangle_down:" : ":small_blue_diamond:"} ${
          escape(String(data.kind))
        }: customer ${escape(String(data.customer))}, MRR *${data.mrrChange.amount > 0 ? "+" : ""}${
          money(data.mrrChange)
        }* on ${escape(String(data.day))}`,
      "payment.failed": () =>
        `:x: A payment of *${money(data.amount)}* by customer ${escape(String(data.customer))} failed`,
      "entitlement.ending": () =>
        `:hourglass: The account's ${escape(String(data.what))} ends on ${escape(String(data.endsAt).slice(0, 10))}`,
      "traffic.anomaly": () => {
        const stake = money(data.moneyAtStake)
        const cause = data.cause === null ? "" : `; likely cause: ${escape(`${data.cause.kind} ${data.cause.name}`)}`
        return `${data.direction === "drop" ? ":chart_with_downwards_trend:" : ":chart_with_upwards_trend:"} ` +
          `${data.metric === "visitors" ? "Visitors" : "Pageviews"} ${data.direction} at ${
            escape(String(data.localHour))
          }: ` +
          `*${data.actual}* against a usual ${data.expected} (${data.range.low}–${data.range.high})${cause}` +
          `${stake === null ? "" : ` — *${stake}* at stake`}`
      }
    }
    // The notification's plain text: no emoji codes, no bold marks.
    text = (summary[event.type]?.() ?? event.type).replace(/:[a-z_]+:\s*/g, "").replace(/\*/g, "")
    blocks = [section(summary[event.type]?.() ?? `*${escape(event.type)}*`), link(page)]
  }
  return JSON.stringify({ text, blocks })
}
