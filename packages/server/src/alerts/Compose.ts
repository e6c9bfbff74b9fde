/**
 * The morning briefing email of one account, over all its websites (pure): the priorities of every website ranked
 * by money at stake, what changed since yesterday, each linking to its website's dashboard page; HTML and plain
 * text, and the unsubscribe link that works without logging in.
 */
import type { Briefing, Priority, Signal } from "@sitehealth/domain/Projects"

export interface WebsiteEdition {
  readonly projectId: string
  readonly name: string
  readonly domain: string
  /** The morning edition as written (SnapshotsRepo.morningBriefingOf); null when none was written today. */
  readonly briefing: Briefing | null
}

export interface BriefingEmail {
  readonly subject: string
  readonly text: string
  readonly html: string
}

interface Ranked {
  readonly website: WebsiteEdition
  readonly priority: Priority
}

const money = (m: { readonly amount: number; readonly currency: string } | null) =>
  m === null
    ? null
    : new Intl.NumberFormat("en", { style: "currency", currency: m.currency, maximumFractionDigits: 0 }).format(
      m.amount / 100
    )

const escape = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

const SEVERITY_RANK: Record<string, number> = { critical: 0, warning: 1, info: 2 }

/** Largest money at stake first (across currencies by amount, then severity), then each website's own rank. */
export const rankPriorities = (websites: ReadonlyArray<WebsiteEdition>): ReadonlyArray<Ranked> =>
  websites.flatMap((website) => (website.briefing?.priorities ?? []).map((priority) => ({ website, priority })))
    .sort((a, b) =>
      (b.priority.moneyAtStake?.amount ?? -1) - (a.priority.moneyAtStake?.amount ?? -1) ||
      (SEVERITY_RANK[a.priority.severity] ?? 3) - (SEVERITY_RANK[b.priority.severity] ?? 3) ||
      a.priority.rank - b.priority.rank
    )

export const composeBriefingEmail = (input: {
  readonly accountName: string
  readonly localDate: string
  readonly websites: ReadonlyArray<WebsiteEdition>
  readonly dashboardUrl: string
  readonly unsubscribeUrl: string
}): BriefingEmail => {
  const pageOf = (w: WebsiteEdition) => `${input.dashboardUrl}/websites/${encodeURIComponent(w.projectId)}`
  const ranked = rankPriorities(input.websites)
  const changed: ReadonlyArray<{ website: WebsiteEdition; signal: Signal }> = input.websites.flatMap((website) =>
    (website.briefing?.whatChanged ?? []).map((signal) => ({ website, signal }))
  )
  const top = ranked[0]
  const subject = top === undefined
    ? `Your morning briefing, ${input.localDate}: nothing needs you today`
    : `Your morning briefing, ${input.localDate}: ${top.priority.title} (${top.website.name})`

  const text = [
    `Good morning. Your websites on ${input.localDate}.`,
    "",
    "PRIORITIES (largest money at stake first)",
    ...(ranked.length === 0 ? ["  Nothing needs you today."] : ranked.map(({ priority, website }, i) => {
      const stake = money(priority.moneyAtStake)
      return `  ${i + 1}. [${priority.severity}] ${website.name}: ${priority.title}${
        stake === null ? "" : ` — ${stake} at stake`
      }\n` +
        `     ${priority.action}\n     ${pageOf(website)}`
    })),
    "",
    "WHAT CHANGED SINCE YESTERDAY",
    ...(changed.length === 0 ?
      ["  No new signal."] :
      changed.map(({ signal, website }) => `  - ${website.name}: ${signal.title}\n    ${pageOf(website)}`)),
    "",
    "YOUR WEBSITES",
    ...input.websites.map((w) =>
      `  ${w.name} (${w.domain}): ${
        w.briefing === null
          ? "no briefing yet today"
          : `health ${w.briefing.health.score ?? "not scored"} (${w.briefing.health.status}) — ${w.briefing.headline}`
      }\n  ${pageOf(w)}`
    ),
    "",
    `Stop these emails: ${input.unsubscribeUrl}`
  ].join("\n")

  const li = (body: string) => `<li style="margin:0 0 12px">${body}</li>`
  const link = (w: WebsiteEdition, label: string) => `<a href="${escape(pageOf(w))}">${escape(label)}</a>`
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(subject)}</title></head>
<body style="font-family:system-ui,sans-serif;color:#1a1a1a;max-width:640px;margin:0 auto;padding:16px">
<h1 style="font-size:20px">Good morning. Your websites on ${escape(input.localDate)}.</h1>
<h2 style="font-size:16px">Priorities</h2>
${
    ranked.length === 0
      ? "<p>Nothing needs you today.</p>"
      : `<ol>${
        ranked.map(({ priority, website }) => {
          const stake = money(priority.moneyAtStake)
          return li(
            `<strong>${escape(priority.title)}</strong> — ${link(website, website.name)}` +
              `${stake === null ? "" : ` <span>${escape(stake)} at stake</span>`}<br>` +
              `<small>${escape(priority.severity)} · ${escape(priority.action)}</small>`
          )
        }).join("")
      }</ol>`
  }
<h2 style="font-size:16px">What changed since yesterday</h2>
${
    changed.length === 0
      ? "<p>No new signal.</p>"
      : `<ul>${
        changed.map(({ signal, website }) => li(`${link(website, website.name)}: ${escape(signal.title)}`)).join("")
      }</ul>`
  }
<h2 style="font-size:16px">Your websites</h2>
<ul>${
    input.websites.map((w) =>
      li(
        `${link(w, w.name)} (${escape(w.domain)}): ${
          w.briefing === null
            ? "no briefing yet today"
            : `health ${escape(String(w.briefing.health.score ?? "not scored"))} — ${escape(w.briefing.headline)}`
        }`
      )
    ).join("")
  }</ul>
<p style="color:#555;font-size:12px"><a href="${
    escape(input.unsubscribeUrl)
  }">Stop these emails</a> (no log-in needed).</p>
</body></html>`
  return { subject, text, html }
}
