/**
 * The CSV tables of each report (@sitehealth/domain/Csv; the table names are the endpoint's `csv` declaration in
 * ApiReports.ts). Each is a table of the report's JSON answer as it stands — the same figures, computed once —:
 * days and buckets as the report labels them (local to the website's time zone), amounts in minor units beside a
 * `currency` column, rates as the JSON's ratios (0.05 = 5%), absent values as empty cells.
 */
import type { Analytics } from "@sitehealth/domain/Analytics"
import type { Expense } from "@sitehealth/domain/Expenses"
import type { Project, Signal } from "@sitehealth/domain/Projects"
import type { Churn, Revenue } from "@sitehealth/domain/Revenue"
import type { Seo } from "@sitehealth/domain/Seo"
import type { TokenMetadata } from "@sitehealth/domain/Tokens"
import type { CsvTable } from "./Csv.ts"

export const analyticsTable = (report: Analytics, table: string): CsvTable => {
  switch (table) {
    case "pages":
      return {
        header: ["path", "visitors", "pageviews", "share", "previous_pageviews", "pageviews_change"],
        rows: report.topPages.map((p) => [
          p.path,
          p.visitors,
          p.pageviews,
          p.share,
          p.previousPageviews,
          p.pageviewsChange
        ])
      }
    case "sources":
      return {
        header: ["source", "visitors", "sessions", "share", "previous_visitors", "visitors_change"],
        rows: report.topSources.map((s) => [
          s.source,
          s.visitors,
          s.sessions,
          s.share,
          s.previousVisitors,
          s.visitorsChange
        ])
      }
    case "countries":
      return {
        header: ["country", "visitors", "share", "previous_visitors", "visitors_change"],
        rows: report.topCountries.map((c) => [c.country, c.visitors, c.share, c.previousVisitors, c.visitorsChange])
      }
    default:
      return {
        header: ["bucket", "from", "to", "visitors", "pageviews", "sessions", "visitors_method"],
        rows: report.series.map((p) => [p.label, p.from, p.to, p.visitors, p.pageviews, p.sessions, p.visitorsMethod])
      }
  }
}

export const revenueTable = (report: Revenue, table: string): CsvTable => {
  switch (table) {
    case "forecast":
      return {
        header: ["months_ahead", "month", "mrr", "low", "high", "level", "currency"],
        rows: (report.forecast?.points ?? []).map((p) => [
          p.months,
          p.month,
          p.mrr.amount,
          p.low.amount,
          p.high.amount,
          report.forecast?.level ?? null,
          p.mrr.currency
        ])
      }
    case "failed_payments":
      return {
        header: ["day", "charge_id", "customer_id", "name", "email", "amount", "currency"],
        rows: report.failedPayments.recent.map((f) => [
          f.day,
          f.chargeId,
          f.customerId,
          f.name,
          f.email,
          f.amount.amount,
          f.amount.currency
        ])
      }
    default:
      return {
        header: ["month", "mrr", "currency"],
        rows: report.mrrSeries.map((point) => [point.month, point.mrr.amount, point.mrr.currency])
      }
  }
}

export const churnTable = (report: Churn): CsvTable => ({
  header: ["date", "customer_id", "name", "email", "mrr_lost", "currency", "reason"],
  rows: report.churned.map((c) => [
    c.date,
    c.customerId,
    c.name,
    c.email,
    c.mrrLost.amount,
    c.mrrLost.currency,
    c.reason
  ])
})

const SEO_ROW_HEADER = [
  "clicks",
  "impressions",
  "ctr",
  "position",
  "previous_clicks",
  "previous_impressions",
  "previous_position",
  "clicks_change",
  "position_change"
]

export const seoTable = (report: Seo, table: string): CsvTable => {
  const rowCells = (r: Seo["topQueries"][number] | Seo["topPages"][number]) => [
    r.clicks,
    r.impressions,
    r.ctr,
    r.position,
    r.previousClicks,
    r.previousImpressions,
    r.previousPosition,
    r.clicksChange,
    r.positionChange
  ]
  switch (table) {
    case "queries":
      return { header: ["query", ...SEO_ROW_HEADER], rows: report.topQueries.map((q) => [q.query, ...rowCells(q)]) }
    case "pages":
      return { header: ["page", ...SEO_ROW_HEADER], rows: report.topPages.map((p) => [p.page, ...rowCells(p)]) }
    default:
      return {
        header: ["day", "clicks", "impressions", "ctr", "average_position"],
        rows: report.series.map((p) => [p.day, p.clicks, p.impressions, p.ctr, p.averagePosition])
      }
  }
}

/** Every live expense, newest first; `incurred_on` is the local day it was entered for. */
export const expensesTable = (expenses: ReadonlyArray<Expense>): CsvTable => ({
  header: ["id", "incurred_on", "amount", "currency", "category", "description", "vendor", "recurrence", "created_at"],
  rows: expenses.map((e) => [
    e.id,
    e.incurredOn,
    e.amount,
    e.currency,
    e.category,
    e.description,
    e.vendor,
    e.recurrence,
    e.createdAt
  ])
})

/** Every signal of the filter, in the list's order; money at stake in minor units beside its currency. */
export const signalsTable = (signals: ReadonlyArray<Signal>): CsvTable => ({
  header: [
    "id",
    "day",
    "dimension",
    "severity",
    "kind",
    "subject",
    "title",
    "detail",
    "metric",
    "actual",
    "expected",
    "expected_low",
    "expected_high",
    "change",
    "money_at_stake",
    "currency",
    "active",
    "detected_at",
    "last_seen_at",
    "resolved_at"
  ],
  rows: signals.map((s) => [
    s.id,
    s.day,
    s.dimension,
    s.severity,
    s.kind,
    s.subject,
    s.title,
    s.detail,
    s.metric,
    s.actual,
    s.expected?.value ?? null,
    s.expected?.low ?? null,
    s.expected?.high ?? null,
    s.change,
    s.moneyAtStake?.amount ?? null,
    s.moneyAtStake?.currency ?? null,
    s.active,
    s.detectedAt,
    s.lastSeenAt,
    s.resolvedAt
  ])
})

/** Every project in the caller's reach, oldest first, with its health today and its score changes. */
export const projectsTable = (projects: ReadonlyArray<Project>): CsvTable => ({
  header: [
    "id",
    "name",
    "domain",
    "timezone",
    "currency",
    "created_at",
    "health_score",
    "health_status",
    "health_confidence",
    "score_change_7d",
    "score_change_30d",
    "health_computed_at"
  ],
  rows: projects.map((p) => [
    p.id,
    p.name,
    p.domain,
    p.timezone,
    p.currency,
    p.createdAt,
    p.health.score,
    p.health.status,
    p.health.confidence,
    p.trend.scoreChange7d,
    p.trend.scoreChange30d,
    p.health.computedAt
  ])
})

/** Every token the caller may list (metadata only: never a secret), newest first; lists joined by spaces. */
export const tokensTable = (tokens: ReadonlyArray<TokenMetadata>): CsvTable => ({
  header: [
    "id",
    "name",
    "prefix",
    "status",
    "projects",
    "permissions",
    "created_at",
    "last_used_at",
    "expires_at",
    "revoked_at"
  ],
  rows: tokens.map((t) => [
    t.id,
    t.name,
    t.prefix,
    t.status,
    t.projects === null ? "all" : t.projects.join(" "),
    t.permissions.join(" "),
    t.createdAt,
    t.lastUsedAt,
    t.expiresAt,
    t.revokedAt
  ])
})
