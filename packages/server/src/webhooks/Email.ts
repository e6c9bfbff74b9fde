/**
 * An event as an email, for a destination whose format is `email` (`mailto:` one member of the account): a subject
 * that says what happened and what it is worth, a plain-text body with the figures, and the link to the website's
 * page. The address is checked again when each mail goes: a member removed since, or an address changed, is not
 * mailed (the attempt fails and says why). Without SMTP_URL the mail goes to the log like every other.
 */
import type { Priority, Signal } from "@sitehealth/domain/Projects"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { AccountMembers, type AccountMembersShape } from "../accounts/Members.ts"
import { Mailer, type MailerShape } from "../platform/Mailer.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import type { ClaimedDelivery } from "./Records.ts"
import type { Attempt } from "./Send.ts"

type Amount = { readonly amount: number; readonly currency: string }

const money = (m: Amount | null | undefined) =>
  m === null || m === undefined
    ? null
    : new Intl.NumberFormat("en", { style: "currency", currency: m.currency, maximumFractionDigits: 0 }).format(
      m.amount / 100
    )

const figure = (n: number | null) => n === null ? "—" : Number.isInteger(n) ? n.toLocaleString("en") : n.toFixed(3)

const MOVEMENT_WORDS: Record<string, string> = {
  new: "New customer",
  expansion: "Expansion",
  contraction: "Contraction",
  churn: "Churn",
  reactivation: "Reactivation"
}

export interface EmailMessage {
  readonly subject: string
  readonly text: string
}

/** The mail of an event; `eventBody` is the Standard Webhooks body `{type, timestamp, data}`. */
export const emailMessage = (eventBody: string, dashboardUrl: string, websiteName: string): EmailMessage => {
  const event = JSON.parse(eventBody) as { type: string; timestamp: string; data: Record<string, any> }
  const data = event.data
  const page = `${dashboardUrl}/websites/${encodeURIComponent(String(data.projectId ?? ""))}`
  const footer =
    `\n\nOpen it in sitehealth: ${page}\nThese alerts follow the rules of this destination: change them on ` +
    `the website's Alerts page (${page}/alerts).`
  const mail = (subject: string, lines: ReadonlyArray<string>): EmailMessage => ({
    subject: `${websiteName}: ${subject}`,
    text: `${lines.join("\n")}${footer}`
  })
  switch (event.type) {
    case "signal.opened":
    case "signal.resolved": {
      const signal = data.signal as Signal
      const stake = money(signal.moneyAtStake)
      const opened = event.type === "signal.opened"
      return mail(
        `${opened ? "" : "resolved: "}${signal.title}${opened && stake !== null ? ` (${stake} at stake)` : ""}`,
        [
          `${opened ? `A ${signal.severity} signal` : "Resolved"}: ${signal.title}`,
          signal.detail,
          "",
          `Actual: ${figure(signal.actual)}`,
          `Expected: ${signal.expected === null ? "—" : figure(signal.expected.value)}`,
          `Money at stake: ${stake ?? "—"}`
        ]
      )
    }
    case "briefing.ready": {
      const priorities = data.priorities as ReadonlyArray<Pick<Priority, "rank" | "title" | "moneyAtStake">>
      return mail(`morning briefing ${data.day}`, [
        `Morning briefing, ${data.day}`,
        ...(priorities.length === 0 ? ["Nothing needs you today."] : priorities.map((p) => {
          const stake = money(p.moneyAtStake)
          return `${p.rank}. ${p.title}${stake === null ? "" : ` (${stake} at stake)`}`
        }))
      ])
    }
    case "recap.ready": {
      type Item = { readonly title: string; readonly amount: Amount | null }
      const list = (items: ReadonlyArray<Item>) =>
        items.length === 0
          ? ["  —"]
          : items.map((i) => `  • ${i.title}${i.amount === null ? "" : ` (${money(i.amount)})`}`)
      const period = data.from === data.to ? data.from : `${data.from} – ${data.to}`
      return mail(`your ${data.cadence} recap, ${period}`, [
        `Your ${data.cadence} recap, ${period}: ${data.eventCount} events`,
        "",
        "Largest gains:",
        ...list(data.gains),
        "",
        "Largest losses:",
        ...list(data.losses)
      ])
    }
    case "revenue.movement": {
      const change = data.mrrChange as Amount
      const sign = change.amount > 0 ? "+" : ""
      return mail(`${MOVEMENT_WORDS[data.kind] ?? data.kind} ${sign}${money(change)} MRR`, [
        `${MOVEMENT_WORDS[data.kind] ?? data.kind}: customer ${data.customer}, MRR ${sign}${
          money(change)
        } on ${data.day}.`
      ])
    }
    case "payment.failed":
      return mail(`a payment of ${money(data.amount)} failed`, [
        `A payment of ${money(data.amount)} by customer ${data.customer} failed (${data.at}).`
      ])
    case "health.changed":
      return mail(`health score ${data.previousScore} → ${data.score}`, [
        `The health score moved from ${data.previousScore} to ${data.score} (${
          data.change > 0 ? "+" : ""
        }${data.change}).`
      ])
    case "integration.failed":
      return mail(`${data.provider} sync failed`, [
        `The ${data.provider} sync failed: ${data.error ?? "no reason given"}`
      ])
    case "integration.recovered":
      return mail(`${data.provider} syncs again`, [`The ${data.provider} sync works again.`])
    case "token.revoked":
      return mail(`token ${data.name} revoked`, [`The API token ${data.name} (${data.prefix}) was revoked.`])
    case "entitlement.ending":
      return mail(`your ${data.what} ends ${String(data.endsAt).slice(0, 10)}`, [
        `The account's ${data.what} ends on ${String(data.endsAt).slice(0, 10)}. After that the API answers 402 ` +
        "until you subscribe; your data is kept."
      ])
    case "traffic.anomaly": {
      const stake = money(data.moneyAtStake)
      const what = data.metric === "visitors" ? "Visitors" : "Pageviews"
      return mail(
        `${what.toLowerCase()} ${data.direction} at ${data.localHour}${stake === null ? "" : ` (${stake} at stake)`}`,
        [
          `${what} ${data.direction} at ${data.localHour}: ${data.actual} against a usual ${data.expected} ` +
          `(expected ${data.range.low}–${data.range.high}, from the same hour of the last ${data.weeks} weeks).`,
          data.cause === null ? "No likely cause in the data." : `Likely cause: ${data.cause.kind} ${data.cause.name}.`,
          `Money at stake: ${stake ?? "—"}`
        ]
      )
    }
    case "webhook.test":
      return mail("a test alert", [String(data.message)])
    default:
      return mail(event.type, [`${event.type} at ${event.timestamp}`])
  }
}

export interface EmailDeps {
  readonly mailer: MailerShape
  readonly members: AccountMembersShape
  readonly dashboardUrl: string
  /** The website's name, for the subject (its id when unknown). */
  readonly websiteName: (projectId: string) => Effect.Effect<string>
}

/** Sends a claimed delivery of an email destination: one mail, when its address is still a member's. */
export const sendEmail = (deps: EmailDeps) => (claimed: ClaimedDelivery): Effect.Effect<Attempt> =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const to = claimed.webhook.url.slice("mailto:".length).trim().toLowerCase()
    const members = yield* deps.members.emailsOfProject(claimed.webhook.projectId)
    if (!members.includes(to)) {
      return {
        ok: false,
        status: null,
        latencyMs: 0,
        excerpt: `not sent: ${to} is no longer a member of this website's account`
      } satisfies Attempt
    }
    const name = yield* deps.websiteName(claimed.webhook.projectId)
    const message = emailMessage(claimed.body, deps.dashboardUrl, name)
    yield* deps.mailer.send({ to, subject: message.subject, text: message.text })
    return {
      ok: true,
      status: null,
      latencyMs: (yield* Clock.currentTimeMillis) - started,
      excerpt: `mailed to ${to}`
    } satisfies Attempt
  })

/**
 * The email sender of this process, from its services: null without a Mailer or AccountMembers in the context
 * (then an email destination's delivery fails and says so, and the worker sends it).
 */
export const emailSenderHere = (dashboardUrl: string) =>
  Effect.gen(function*() {
    const mailer = yield* Effect.serviceOption(Mailer)
    const members = yield* Effect.serviceOption(AccountMembers)
    const projects = yield* Effect.serviceOption(ProjectsRepo)
    if (Option.isNone(mailer) || Option.isNone(members) || Option.isNone(projects)) return undefined
    return sendEmail({
      mailer: mailer.value,
      members: members.value,
      dashboardUrl,
      websiteName: (id) => Effect.map(projects.value.find(id), (p) => p?.name ?? id)
    })
  })
