/**
 * Readable text for each endpoint's data. `--json` bypasses all of this and prints the data itself.
 */
import type { Annotation } from "@sitehealth/domain/Annotations"
import type { Expense } from "@sitehealth/domain/Expenses"
import type { Integration, SyncRun } from "@sitehealth/domain/Integrations"
import type { Briefing, Health, Project, Signal } from "@sitehealth/domain/Projects"
import type { Analytics, Churn, Revenue, Seo } from "@sitehealth/domain/Reports"
import type { TokenMetadata } from "@sitehealth/domain/Tokens"
import {
  change,
  customerLabel,
  decimal,
  fields,
  integer,
  money,
  orDash,
  percent,
  printable,
  severity,
  sparkline,
  status,
  type Style,
  table
} from "./Format.ts"

const cursorHint = (
  style: Style,
  next: string | null
) => (next === null ? "" : `\n${style.dim(`more: --cursor ${next}`)}`)

export const projects = (
  s: Style,
  data: { readonly projects: ReadonlyArray<Project>; readonly nextCursor: string | null }
) =>
  table(
    s,
    ["ID", "NAME", "DOMAIN", "SCORE", "STATUS", "7D", "TREND 30D"],
    data.projects.map((p) => [
      p.id,
      p.name,
      p.domain,
      p.health.score === null ? "—" : String(p.health.score),
      status(s, p.health.status),
      p.trend.scoreChange7d === null ? "—" : `${p.trend.scoreChange7d > 0 ? "+" : ""}${p.trend.scoreChange7d}`,
      sparkline(p.trend.points.map((t) => t.score))
    ]),
    ["l", "l", "l", "r", "l", "r", "l"]
  ) + cursorHint(s, data.nextCursor)

export const health = (s: Style, h: Health) =>
  [
    `${s.bold(`Health of ${h.projectId}`)}  ${h.score === null ? "no score" : `${h.score}/100`}  ${
      status(s, h.status)
    }  confidence ${decimal(h.confidence)}`,
    s.dim(
      `window ${h.window.current.from} … ${h.window.current.to}, compared with ${h.window.previous.from} … ` +
        `${h.window.previous.to}`
    ),
    "",
    table(
      s,
      ["DIMENSION", "SCORE", "WEIGHT", "STATUS", "STALE", "REASON"],
      h.dimensions.map((d) => [
        d.name,
        d.score === null ? "—" : String(d.score),
        percent(d.weight),
        status(s, d.status),
        d.stale ? s.yellow("stale") : "",
        d.reason
      ]),
      ["l", "r", "r", "l", "l", "l"]
    )
  ].join("\n")

type Figure = Briefing["yesterday"]["visitors"]
/** What a figure that is not data says: its source is not connected, or still on its first sync (no data ≠ 0). */
const NOT_DATA: Record<Figure["state"], string> = {
  connected: "—",
  syncing: "syncing…",
  not_connected: "not connected"
}

export const briefing = (s: Style, b: Briefing) => {
  const y = b.yesterday
  const asMoney = (n: number | null) => (n === null ? "—" : money({ amount: n, currency: y.currency }))
  const rows: Array<[string, Figure, (n: number | null) => string]> = [
    ["visitors", y.visitors, integer],
    ["pageviews", y.pageviews, integer],
    ["net revenue", y.netRevenue, asMoney],
    ["new customers", y.newCustomers, integer],
    ["churned customers", y.churnedCustomers, integer],
    ["MRR", y.mrr, asMoney]
  ]
  const keyFigure = (f: Figure, format: (n: number | null) => string) =>
    f.state === "connected" ? [format(f.value), format(f.usual)] : [s.dim(NOT_DATA[f.state]), ""]
  return [
    s.bold(b.headline),
    `health ${b.health.score ?? "—"} ${status(s, b.health.status)}  (${b.date}${
      b.updatedAt === null ? "" : `, updated ${b.updatedAt.slice(11, 16)} UTC`
    })`,
    "",
    s.bold(`Yesterday, ${y.date}`),
    table(
      s,
      ["FIGURE", "VALUE", "USUAL", "CHANGE"],
      rows.map(([name, f, fmt]) => [name, ...keyFigure(f, fmt), change(s, f.change)]),
      ["l", "r", "r", "r"]
    ),
    "",
    s.bold("Priorities"),
    b.priorities.length === 0
      ? s.dim("(none)")
      : b.priorities
        .map((p) =>
          `${p.rank}. [${severity(s, p.severity)}] ${p.title}${
            p.moneyAtStake ? ` (${money(p.moneyAtStake)} at stake)` : ""
          }\n   ${s.dim(p.action)}`
        )
        .join("\n"),
    "",
    s.bold("What changed"),
    b.whatChanged.length === 0
      ? s.dim("(nothing new)")
      : b.whatChanged.map((x) => `- [${severity(s, x.severity)}] ${x.title}`).join("\n")
  ].join("\n")
}

export const signals = (
  s: Style,
  data: { readonly signals: ReadonlyArray<Signal>; readonly nextCursor: string | null }
) =>
  table(
    s,
    ["SEVERITY", "DIMENSION", "DAY", "CHANGE", "AT STAKE", "ACTIVE", "TITLE"],
    data.signals.map((x) => [
      severity(s, x.severity),
      x.dimension,
      orDash(x.day),
      change(s, x.change),
      money(x.moneyAtStake),
      x.active ? "yes" : "no",
      x.title
    ]),
    ["l", "l", "l", "r", "r", "l", "l"]
  ) + cursorHint(s, data.nextCursor)

export const analytics = (s: Style, a: Analytics) => {
  const t = a.totals
  const rows: Array<[string, string, number | null]> = [
    ["visitors", integer(t.visitors), a.change.visitors],
    ["pageviews", integer(t.pageviews), a.change.pageviews],
    ["sessions", integer(t.sessions), a.change.sessions],
    ["bounce rate", percent(t.bounceRate), a.change.bounceRate],
    ["avg session (s)", decimal(t.avgSessionSeconds, 1), a.change.avgSessionSeconds],
    ["pages / session", decimal(t.pagesPerSession), a.change.pagesPerSession]
  ]
  return [
    `${s.bold(`Analytics of ${a.projectId}`)}  ${a.period}: ${a.range.from} … ${a.range.to} (${a.range.timezone})`,
    "",
    table(s, ["FIGURE", "VALUE", "VS PREVIOUS"], rows.map(([k, v, c]) => [k, v, change(s, c)]), ["l", "r", "r"]),
    "",
    `visitors by ${a.granularity}  ${sparkline(a.series.map((p) => p.visitors))}`,
    "",
    s.bold("Top pages"),
    table(s, ["PATH", "PAGEVIEWS", "SHARE"], a.topPages.map((p) => [p.path, integer(p.pageviews), percent(p.share)]), [
      "l",
      "r",
      "r"
    ]),
    "",
    s.bold("Top sources"),
    table(
      s,
      ["SOURCE", "VISITORS", "SHARE"],
      a.topSources.map((p) => [p.source, integer(p.visitors), percent(p.share)]),
      ["l", "r", "r"]
    )
  ].join("\n")
}

export const revenue = (s: Style, r: Revenue) => {
  const m = r.movements
  return [
    `${
      s.bold(`Revenue of ${r.projectId}`)
    }  ${r.period}: ${r.window.from} … ${r.window.to}, as of ${r.asOf} (${r.timezone})`,
    "",
    fields(s, [
      ["MRR", money(r.mrr)],
      ["ARR", money(r.arr)],
      ["customers", integer(r.customers)],
      ["ARPU", money(r.arpu)],
      ["LTV", money(r.ltv)],
      ["monthly churn", percent(r.monthlyChurnRate)],
      ["NRR / GRR", `${percent(r.nrr)} / ${percent(r.grr)}`],
      ["quick ratio", decimal(r.quickRatio)],
      ["net, last 30 days", `${money(r.last30Days.net)}  ${change(s, r.change.net)}`],
      ["failed payments", `${r.failedPayments.count} (${money(r.failedPayments.amount)})`],
      ["profit", `${money(r.profitability.profit)}  margin ${percent(r.profitability.margin)}`]
    ]),
    "",
    `MRR, 12 months  ${sparkline(r.mrrSeries.map((p) => p.mrr.amount))}  ${r.mrrSeries[0]?.month ?? ""} … ${
      r.mrrSeries.at(-1)?.month ?? ""
    }`,
    "",
    s.bold("MRR movements"),
    table(
      s,
      ["START", "NEW", "EXPANSION", "CONTRACTION", "CHURNED", "REACTIVATION", "END"],
      [[m.start, m.new, m.expansion, m.contraction, m.churned, m.reactivation, m.end].map(money)],
      ["r", "r", "r", "r", "r", "r", "r"]
    ),
    ...(r.unconverted.length === 0
      ? []
      : ["", s.yellow(`not converted (no FX rate): ${r.unconverted.map((u) => u.currency).join(", ")}`)]),
    ...(r.failedPayments.recent.length === 0 ? [] : [
      "",
      s.bold(
        r.failedPayments.recent.length < r.failedPayments.count
          ? `Failed payments, the newest ${r.failedPayments.recent.length}`
          : "Failed payments"
      ),
      table(
        s,
        ["DAY", "CUSTOMER", "ID", "AMOUNT"],
        r.failedPayments.recent.map((f) => [f.day, customerLabel(f), idBeside(s, f), money(f.amount)]),
        ["l", "l", "l", "r"]
      )
    ])
  ].join("\n")
}

/** The customer's id beside its name or email address (dim); nothing when the id is what CUSTOMER shows. */
const idBeside = (
  s: Style,
  c: { readonly customerId: string | null; readonly name: string | null; readonly email: string | null }
) => (c.customerId === null || (c.name ?? c.email) === null ? "" : s.dim(printable(c.customerId)))

export const churn = (s: Style, c: Churn) =>
  [
    `${s.bold(`Churn of ${c.projectId}`)}  ${c.period}: ${c.window.from} … ${c.window.to} (${c.timezone})`,
    "",
    table(
      s,
      ["FIGURE", "NOW", "PREVIOUS"],
      [
        ["customers at start", integer(c.customersAtStart), integer(c.previous.customersAtStart)],
        ["churned customers", integer(c.churnedCustomers), integer(c.previous.churnedCustomers)],
        ["customer churn rate", percent(c.customerChurnRate), percent(c.previous.customerChurnRate)],
        ["churned MRR", money(c.churnedMrr), money(c.previous.churnedMrr)],
        ["gross MRR churn", percent(c.grossMrrChurnRate), percent(c.previous.grossMrrChurnRate)],
        ["net MRR churn", percent(c.netMrrChurnRate), percent(c.previous.netMrrChurnRate)]
      ],
      ["l", "r", "r"]
    ),
    "",
    s.bold("Churned customers"),
    table(
      s,
      ["DATE", "CUSTOMER", "ID", "MRR LOST", "REASON"],
      c.churned.map((x) => [x.date, customerLabel(x), idBeside(s, x), money(x.mrrLost), orDash(x.reason)]),
      ["l", "l", "l", "r", "l"]
    )
  ].join("\n")

export const seo = (s: Style, r: Seo) =>
  [
    `${s.bold(`Search of ${r.projectId}`)}  ${r.period}: ${r.window.from} … ${r.window.to}${
      r.lagDays === null ? "" : `, data ${r.lagDays} days behind`
    }${
      r.provisionalFrom === null || r.dataThrough === null
        ? ""
        : `\n${s.dim(`${r.provisionalFrom} … ${r.dataThrough} are provisional: Google still revises them`)}`
    }`,
    "",
    table(
      s,
      ["FIGURE", "VALUE", "CHANGE"],
      [
        ["clicks", integer(r.totals.clicks), change(s, r.change.clicks)],
        ["impressions", integer(r.totals.impressions), change(s, r.change.impressions)],
        ["CTR", percent(r.totals.ctr), r.change.ctr === null ? "—" : `${(r.change.ctr * 100).toFixed(2)} pt`],
        ["avg position", decimal(r.totals.averagePosition), decimal(r.change.averagePosition)]
      ],
      ["l", "r", "r"]
    ),
    "",
    s.bold("Top queries"),
    table(
      s,
      ["QUERY", "CLICKS", "IMPRESSIONS", "CTR", "POSITION", "Δ POSITION"],
      r.topQueries.map((
        q
      ) => [
        q.query,
        integer(q.clicks),
        integer(q.impressions),
        percent(q.ctr),
        decimal(q.position),
        decimal(q.positionChange)
      ]),
      ["l", "r", "r", "r", "r", "r"]
    )
  ].join("\n")

const runSummary = (run: SyncRun | null) =>
  run === null
    ? "—"
    : `${run.status} ${run.finishedAt ?? run.startedAt ?? run.requestedAt}${run.error ? ` (${run.error})` : ""}`

export const integrations = (
  s: Style,
  data: { readonly projectId: string; readonly integrations: ReadonlyArray<Integration> }
) =>
  table(
    s,
    ["PROVIDER", "KIND", "STATUS", "LAST SUCCESS", "LAST RUN"],
    data.integrations.map((
      i
    ) => [i.provider, i.kind, status(s, i.status), orDash(i.lastSuccessAt), runSummary(i.lastRun)])
  )

export const syncRun = (s: Style, run: SyncRun) =>
  fields(s, [
    ["run", run.id],
    ["provider", run.provider],
    ["mode", run.mode],
    ["status", status(s, run.status)],
    ["requested", run.requestedAt],
    ["finished", orDash(run.finishedAt)],
    ...(run.counts === null
      ? []
      : [["counts", Object.entries(run.counts).map(([k, v]) => `${k} ${v}`).join(", ")] as const]),
    ...(run.error === null ? [] : [["error", s.red(run.error)] as const])
  ])

const expenseRow = (e: Expense) => [
  e.id,
  e.incurredOn,
  money({ amount: e.amount, currency: e.currency }),
  e.category,
  e.recurrence,
  orDash(e.vendor),
  e.description
]

export const expenses = (
  s: Style,
  data: { readonly expenses: ReadonlyArray<Expense>; readonly nextCursor: string | null }
) =>
  table(s, ["ID", "DATE", "AMOUNT", "CATEGORY", "RECURRENCE", "VENDOR", "DESCRIPTION"], data.expenses.map(expenseRow), [
    "l",
    "l",
    "r"
  ]) +
  cursorHint(s, data.nextCursor)

export const expense = (s: Style, e: Expense) =>
  fields(s, [
    ["id", e.id],
    ["amount", money({ amount: e.amount, currency: e.currency })],
    ["category", e.category],
    ["date", e.incurredOn],
    ["recurrence", e.recurrence],
    ["vendor", orDash(e.vendor)],
    ["description", e.description],
    ...(e.deletedAt === null ? [] : [["deleted", e.deletedAt] as const])
  ])

export const annotations = (
  s: Style,
  data: { readonly annotations: ReadonlyArray<Annotation>; readonly truncated: boolean }
) =>
  table(s, ["ID", "DATE", "CATEGORY", "NOTE"], data.annotations.map((a) => [a.id, a.date, a.category, a.note])) +
  (data.truncated ? "\n(more in this range: narrow it with --from/--to)" : "")

export const annotation = (s: Style, a: Annotation) =>
  fields(s, [["id", a.id], ["date", a.date], ["category", a.category], ["note", a.note]])

const scope = (projects: ReadonlyArray<string> | null) => (projects === null ? "all projects" : projects.join(", "))

export const tokens = (
  s: Style,
  data: { readonly tokens: ReadonlyArray<TokenMetadata>; readonly nextCursor: string | null }
) =>
  table(
    s,
    ["ID", "NAME", "SECRET", "STATUS", "PROJECTS", "PERMISSIONS", "EXPIRES", "LAST USED"],
    data.tokens.map((t) => [
      t.id,
      t.name,
      t.prefix,
      status(s, t.status),
      scope(t.projects),
      t.permissions.length === 10 ? "all" : t.permissions.join(","),
      orDash(t.expiresAt),
      orDash(t.lastUsedAt)
    ])
  ) + cursorHint(s, data.nextCursor)

export const tokenDraft = (
  s: Style,
  t: {
    readonly name: string
    readonly projects: ReadonlyArray<string> | null
    readonly permissions: ReadonlyArray<string>
    readonly expiresAt: string | null
  }
) =>
  fields(s, [
    ["name", t.name],
    ["projects", scope(t.projects)],
    ["permissions", t.permissions.join(", ")],
    ["expires", t.expiresAt ?? "never"]
  ])

export type StyleOf = Style
