/**
 * `what_changed`: one call for "what happened on my websites since yesterday". No single endpoint answers it,
 * so the tool is composed here from the API's own reads, sent with the caller's token like any tool call (so
 * scope, permission, entitlement and the rate limit are the API's; it costs 1 + 2 per website): the websites
 * (`GET /projects`), and for each its briefing (yesterday's traffic and revenue figures against their usual
 * values) and its active signals (traffic, revenue, retention, rankings, profitability, each with the money at
 * stake). It joins them per website, keeps the signals first detected within the period, and ranks the websites
 * by the money at stake, largest first.
 */
import { errorBody, isErrorEnvelope } from "@sitehealth/domain/Envelope"
import type { ApiAnswer, Send, ToolResult } from "./Dispatch.ts"

export const WHAT_CHANGED = "what_changed"

export const SINCE = { yesterday: 1, "7d": 7, "30d": 30 } as const
export type Since = keyof typeof SINCE

/** At most this many websites are read (their first pages of 100): the tool costs 1 + 2 per website. */
export const MAX_WEBSITES = 25

export const whatChangedDefinition = {
  name: WHAT_CHANGED,
  title: "What changed across my websites",
  description: "Every website the token may see, since yesterday (or 7d, 30d): yesterday's traffic and revenue " +
    "against their usual values, the signals first detected in the period (traffic, revenue, rankings…), and the " +
    `money at stake; websites ranked by money at stake, largest first. Reads up to ${MAX_WEBSITES} websites; costs ` +
    "1 + 2 per website of the rate limit.",
  inputSchema: {
    type: "object" as const,
    properties: {
      since: {
        type: "string",
        enum: Object.keys(SINCE),
        description: "yesterday (default): signals first detected in the last day; 7d, 30d: in the last 7 or 30 days"
      }
    },
    additionalProperties: false
  },
  /** Shallow, as the derived tools' (ToolsCost.test.ts): each website's entry is described above and in docs/mcp.md. */
  outputSchema: {
    type: "object" as const,
    properties: {
      since: { type: "string" },
      from: { type: "string", description: "The start of the period, ISO 8601" },
      websites: {
        type: "array",
        items: { type: "object" },
        description: "Per website: headline, moneyAtStake, day, traffic, revenue, rankings, changes; or error"
      },
      websitesRead: { type: "integer" },
      truncated: { type: "boolean" }
    },
    required: ["since", "from", "websites", "websitesRead", "truncated"]
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }
}

const isObject = (u: unknown): u is Record<string, any> => typeof u === "object" && u !== null && !Array.isArray(u)

const failure = (answer: ApiAnswer): ToolResult => {
  const envelope = isErrorEnvelope(answer.body)
    ? answer.body
    : errorBody(answer.status, `The API answered HTTP ${answer.status}`, "unexpected_response")
  return { content: [{ type: "text", text: JSON.stringify(envelope) }], isError: true }
}

const dataOf = (answer: ApiAnswer): Record<string, any> | null =>
  answer.status === 200 && isObject(answer.body) && isObject(answer.body.data) ? answer.body.data : null

const SEVERITY_ORDER: Record<string, number> = { critical: 0, warning: 1, info: 2 }

interface Change {
  readonly dimension: string
  readonly severity: string
  readonly title: string
  readonly kind: string
  readonly change: number | null
  readonly moneyAtStake: { readonly amount: number; readonly currency: string } | null
  readonly detectedAt: string
}

const changeOf = (s: Record<string, any>): Change => ({
  dimension: String(s.dimension),
  severity: String(s.severity),
  title: String(s.title),
  kind: String(s.kind),
  change: typeof s.change === "number" ? s.change : null,
  moneyAtStake: isObject(s.moneyAtStake) ? { amount: s.moneyAtStake.amount, currency: s.moneyAtStake.currency } : null,
  detectedAt: String(s.detectedAt)
})

/** The call's arguments; an unknown `since` (or argument) is the API's 400, named. */
export const parseSince = (args: Record<string, unknown>): Since | { readonly error: string } => {
  const unknown = Object.keys(args).filter((k) => k !== "since")
  if (unknown.length > 0) return { error: `what_changed takes no argument ${unknown.join(", ")}` }
  const since = args.since ?? "yesterday"
  return typeof since === "string" && since in SINCE
    ? since as Since
    : { error: `since must be one of ${Object.keys(SINCE).join(", ")}` }
}

export const whatChanged = async (send: Send, args: Record<string, unknown>, now: number): Promise<ToolResult> => {
  const since = parseSince(args)
  if (typeof since !== "string") {
    const body = errorBody(400, `Invalid request: ${since.error}`, "invalid_request")
    return { content: [{ type: "text", text: JSON.stringify(body) }], isError: true }
  }
  const cutoff = now - SINCE[since] * 86_400_000
  const websites: Array<Record<string, any>> = []
  let cursor: string | null = null
  do {
    const query = new URLSearchParams({ limit: "100", ...(cursor === null ? {} : { cursor }) })
    const page = await send({ method: "GET", url: `/api/v1/projects?${query}` })
    const data = dataOf(page)
    if (data === null || !Array.isArray(data.projects)) return failure(page)
    websites.push(...data.projects.filter(isObject))
    cursor = typeof data.nextCursor === "string" ? data.nextCursor : null
  } while (cursor !== null && websites.length < MAX_WEBSITES)
  const read = websites.slice(0, MAX_WEBSITES)

  const entries = []
  for (const website of read) {
    const id = encodeURIComponent(String(website.id))
    const [briefingAnswer, signalsAnswer] = await Promise.all([
      send({ method: "GET", url: `/api/v1/projects/${id}/briefing` }),
      send({ method: "GET", url: `/api/v1/projects/${id}/signals?active=true&limit=100` })
    ])
    const briefing = dataOf(briefingAnswer)
    const signals = dataOf(signalsAnswer)
    if (briefing === null || signals === null) {
      const refused = briefing === null ? briefingAnswer : signalsAnswer
      entries.push({
        id: website.id,
        name: website.name,
        domain: website.domain,
        error: isErrorEnvelope(refused.body) ? refused.body.error : { code: refused.status }
      })
      continue
    }
    const changes = (Array.isArray(signals.signals) ? signals.signals : [])
      .filter(isObject)
      .filter((s) => Date.parse(String(s.detectedAt)) >= cutoff)
      .map(changeOf)
      .sort((a, b) =>
        (b.moneyAtStake?.amount ?? -1) - (a.moneyAtStake?.amount ?? -1) ||
        (SEVERITY_ORDER[a.severity] ?? 3) - (SEVERITY_ORDER[b.severity] ?? 3)
      )
    const currency = String(website.currency ?? briefing.yesterday?.currency ?? "")
    const atStake = changes.reduce((sum, c) => sum + (c.moneyAtStake?.amount ?? 0), 0)
    const y = isObject(briefing.yesterday) ? briefing.yesterday : {}
    entries.push({
      id: website.id,
      name: website.name,
      domain: website.domain,
      headline: briefing.headline,
      moneyAtStake: changes.some((c) => c.moneyAtStake !== null) ? { amount: atStake, currency } : null,
      day: y.date ?? null,
      traffic: { visitors: y.visitors ?? null, pageviews: y.pageviews ?? null },
      revenue: {
        netRevenue: y.netRevenue ?? null,
        mrr: y.mrr ?? null,
        newCustomers: y.newCustomers ?? null,
        churnedCustomers: y.churnedCustomers ?? null
      },
      rankings: changes.filter((c) => c.dimension === "seo"),
      changes
    })
  }
  // Largest money at stake first; then the websites with the most critical changes; unreadable ones last.
  const critical = (e: Record<string, any>) =>
    Array.isArray(e.changes) ? e.changes.filter((c: Change) => c.severity === "critical").length : -1
  entries.sort((a: Record<string, any>, b: Record<string, any>) =>
    (b.moneyAtStake?.amount ?? -1) - (a.moneyAtStake?.amount ?? -1) || critical(b) - critical(a)
  )
  const data = {
    since,
    from: new Date(cutoff).toISOString(),
    websites: entries,
    websitesRead: read.length,
    truncated: websites.length > read.length || cursor !== null
  }
  const top = entries[0] as Record<string, any> | undefined
  const line = `${WHAT_CHANGED}: ${entries.length} websites since ${since}` +
    (top?.moneyAtStake
      ? `; most at stake: ${top.name} (${top.moneyAtStake.amount} ${top.moneyAtStake.currency} minor units)`
      : "; no money at stake in the period") +
    (data.truncated ? `; only the first ${MAX_WEBSITES} websites were read` : "")
  return {
    content: [{ type: "text", text: JSON.stringify(data) }, { type: "text", text: line }],
    structuredContent: data
  }
}
