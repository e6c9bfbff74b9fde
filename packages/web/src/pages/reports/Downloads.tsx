/**
 * The CSV downloads of a report page: one link per table of the report (docs/api.md, "CSV export"), for the
 * period on screen. Each is the dashboard's own report endpoint with `?format=csv` — a GET behind the session
 * cookie, answered as an attachment — so the file holds the figures the page shows.
 */
import type { Period } from "@sitehealth/domain/Common"
import { DASHBOARD_PREFIX } from "@sitehealth/domain/DashboardCore"
import { PERIOD_LABELS } from "./charted.tsx"

export interface CsvTableLink {
  /** The table's name in the export (`?table=`). */
  readonly table: string
  readonly label: string
}

/** The CSV of a website's report or list (`report`: its path segment), with the page's own query. */
export const csvHref = (id: string, report: string, query: Readonly<Record<string, string>>) =>
  `${DASHBOARD_PREFIX}/websites/${encodeURIComponent(id)}/${report}?${
    new URLSearchParams({ ...query, format: "csv" }).toString()
  }`

export const CsvDownloads = ({ id, report, period, tables }: {
  readonly id: string
  /** The report's path segment: analytics, revenue, churn, seo. */
  readonly report: string
  readonly period: Period
  readonly tables: ReadonlyArray<CsvTableLink>
}) => (
  <nav className="csv-downloads" aria-label={`Download ${report} as CSV`}>
    <span className="muted">Download CSV, {PERIOD_LABELS[period].toLowerCase()}:</span>
    {tables.map((t) => (
      <a
        key={t.table}
        href={csvHref(id, report, { period, table: t.table })}
        download
        data-csv={`${report}-${t.table}`}
      >
        {t.label}
      </a>
    ))}
  </nav>
)

/** A list's one CSV download: every item of the list (not a page), with the filters on screen. */
export const ListDownload = ({ id, list, query = {}, label }: {
  readonly id: string
  readonly list: string
  readonly query?: Readonly<Record<string, string>>
  readonly label: string
}) => (
  <p className="csv-downloads">
    <a href={csvHref(id, list, query)} download data-csv={list}>{label}</a>
  </p>
)
