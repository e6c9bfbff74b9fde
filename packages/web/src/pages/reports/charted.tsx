/**
 * What the report pages share: their queries (the dashboard's `reports` group, answered by the same services
 * as /api/v1), the period in the URL, a panel that loads and fails on its own (with a retry), the page's
 * `aria-busy`, and how figures are written. Nothing here computes a figure: every number shown is one the
 * API returned, only formatted.
 */
import { useAtomRefresh, useAtomValue } from "@effect/atom-react"
import type { Period } from "@sitehealth/domain/Common"
import { PERIODS } from "@sitehealth/domain/Common"
import type { Money } from "@sitehealth/domain/Common"
import { AsyncResult, type Atom } from "effect/reactivity"
import { type ReactNode, useEffect, useMemo } from "react"
import { Link, useLocation } from "../../navigation.tsx"
import { DashboardReports } from "../../reportsClient.ts"
import { ErrorMessage, Loading } from "../../ui.tsx"
import "../../charts/charts.css"

// The queries: one atom per (website, period), shared by every component asking for the same one.
export const analyticsAtom = (id: string, period: Period) =>
  DashboardReports.query("reports", "getAnalytics", { params: { id }, query: { period } })
export const revenueAtom = (id: string, period: Period) =>
  DashboardReports.query("reports", "getRevenue", { params: { id }, query: { period } })
export const churnAtom = (id: string, period: Period) =>
  DashboardReports.query("reports", "getChurn", { params: { id }, query: { period } })
export const seoAtom = (id: string, period: Period) =>
  DashboardReports.query("reports", "getSeo", { params: { id }, query: { period } })

/** An atom's result with its retry; the atom is made once per argument set. */
export const useReport = <A, E>(make: () => Atom.Atom<AsyncResult.AsyncResult<A, E>>, deps: ReadonlyArray<unknown>) => {
  // deps are the arguments `make` closes over.
  const atom = useMemo(make, deps)
  return { result: useAtomValue(atom), retry: useAtomRefresh(atom) }
}

export const PERIOD_LABELS: Record<Period, string> = {
  today: "Today",
  yesterday: "Yesterday",
  "7d": "7 days",
  "30d": "30 days",
  "3m": "3 months",
  "12m": "12 months",
  all: "All time"
}

const isPeriod = (s: string | null): s is Period => s !== null && (PERIODS as ReadonlyArray<string>).includes(s)

/** The period of the URL's `?period=` (the API's default, 30d, when absent or not a period). */
export const usePeriod = (fallback: Period = "30d"): Period => {
  const { query } = useLocation()
  const p = query.get("period")
  return isPeriod(p) ? p : fallback
}

/** Links (not buttons): each period is a URL, so reload, back and a pasted link show the same report. */
export const PeriodPicker = (
  { period, periods = PERIODS }: { readonly period: Period; readonly periods?: ReadonlyArray<Period> }
) => {
  const { path, query } = useLocation()
  const href = (p: Period) => {
    const q = new URLSearchParams(query)
    q.set("period", p)
    return `${path}?${q.toString()}`
  }
  return (
    <nav aria-label="Period" className="period-picker">
      {periods.map((p) => (
        <Link key={p} href={href(p)} aria-current={p === period ? "true" : undefined} data-period={p}>
          {PERIOD_LABELS[p]}
        </Link>
      ))}
    </nav>
  )
}

/** The page's primary report (its result and retry); `main[aria-busy]` while it loads. */
export const usePageReport = <A, E>(
  make: () => Atom.Atom<AsyncResult.AsyncResult<A, E>>,
  deps: ReadonlyArray<unknown>
) => {
  const report = useReport(make, deps)
  useMainBusy(AsyncResult.isInitial(report.result) || report.result.waiting)
  return report
}

/** The chart's metric from `?metric=`: one of `metrics`' keys, the first when absent or unknown. */
export const useMetricParam = <M extends string>(metrics: ReadonlyArray<readonly [M, string]>): M => {
  const asked = useLocation().query.get("metric")
  return (metrics.find(([key]) => key === asked) ?? metrics[0])[0]
}

/** `main[aria-busy]`: true until the page's primary data has loaded (or failed), then false. */
export const useMainBusy = (busy: boolean) => {
  useEffect(() => {
    const main = document.querySelector("main")
    main?.setAttribute("aria-busy", busy ? "true" : "false")
  }, [busy])
  useEffect(() => () => document.querySelector("main")?.removeAttribute("aria-busy"), [])
}

/** A section that loads, fails (saying what, with a retry) or shows its content, independently of the others. */
export function Panel<A, E>({ title, what, result, retry, children, id }: {
  readonly title: string
  readonly what: string
  readonly result: AsyncResult.AsyncResult<A, E>
  readonly retry: () => void
  readonly children: (value: A) => ReactNode
  readonly id: string
}) {
  const headingId = `${id}-heading`
  return (
    <section className="panel" aria-labelledby={headingId} data-panel={id}>
      <h2 id={headingId}>{title}</h2>
      {AsyncResult.isSuccess(result)
        ? children(result.value)
        : AsyncResult.isFailure(result)
        ? (
          <>
            <ErrorMessage cause={result.cause} title={`Could not load ${what}.`} />
            <button type="button" className="secondary" onClick={retry}>Try again</button>
          </>
        )
        : <Loading what={what} />}
    </section>
  )
}

// ---------------------------------------------------------------------------------------------------
// Writing figures (never computing them)
// ---------------------------------------------------------------------------------------------------

export const formatInteger = (n: number) => n.toLocaleString()

const digitsOf = (currency: string) => {
  try {
    return new Intl.NumberFormat(undefined, { style: "currency", currency }).resolvedOptions().maximumFractionDigits ??
      2
  } catch {
    return 2
  }
}

/** Minor units in the currency's own decimals (cents → dollars, yen as they are). */
export const majorUnits = (minor: number, currency: string) => minor / 10 ** digitsOf(currency)

export const formatMoney = (m: Money) => {
  try {
    return new Intl.NumberFormat(undefined, { style: "currency", currency: m.currency }).format(
      majorUnits(m.amount, m.currency)
    )
  } catch {
    return `${(m.amount / 100).toFixed(2)} ${m.currency}`
  }
}

export const formatMoneyIn = (currency: string) => (major: number) => {
  try {
    return new Intl.NumberFormat(undefined, { style: "currency", currency, maximumFractionDigits: 0 }).format(major)
  } catch {
    return `${major} ${currency}`
  }
}

export const formatPercent = (r: number | null, digits = 1) =>
  r === null
    ? "—"
    : new Intl.NumberFormat(undefined, {
      style: "percent",
      minimumFractionDigits: digits,
      maximumFractionDigits: digits
    }).format(r)

/** A relative change (0.25 = +25 %) with its direction in words for screen readers; "—" when the API gives none. */
export const Change = ({ value, betterWhen = "up", kind = "relative", digits = 1 }: {
  readonly value: number | null
  readonly betterWhen?: "up" | "down"
  /** relative: a ratio shown as %; points: a rate difference in percentage points; plain: a number as is. */
  readonly kind?: "relative" | "points" | "plain"
  readonly digits?: number
}) => {
  if (value === null) return <span className="change muted" title="No previous figure to compare with">—</span>
  const sign = value > 0 ? "+" : value < 0 ? "−" : "±"
  const abs = Math.abs(value)
  const text = kind === "relative"
    ? `${sign}${formatPercent(abs, digits)}`
    : kind === "points"
    ? `${sign}${(abs * 100).toFixed(digits)} pt`
    : `${sign}${abs.toLocaleString(undefined, { maximumFractionDigits: 2 })}`
  const good = value === 0 ? null : (value > 0) === (betterWhen === "up")
  return (
    <span className={`change ${good === null ? "" : good ? "up" : "down"}`} data-change={value}>
      {text}
      <span className="sr-only">{value === 0 ? " unchanged" : good ? " (better)" : " (worse)"}</span>
    </span>
  )
}

export const Figure = ({ label, value, raw, change, before, name }: {
  readonly label: string
  readonly value: string
  /** The API's value as is (JSON), for the tests comparing with /api/v1. */
  readonly raw: unknown
  readonly change?: ReactNode
  /** The previous window's figure, as the API gives it, where the API gives no change. */
  readonly before?: string
  /** The test's handle: which API field this figure is. */
  readonly name: string
}) => (
  <li data-figure={name} data-value={JSON.stringify(raw)}>
    <span className="label">{label}</span>
    <span className="figure">{value}</span>
    {change !== undefined
      ? (
        <span>
          {change} <span className="muted">vs previous</span>
        </span>
      )
      : null}
    {before !== undefined ? <span className="muted before">previous: {before}</span> : null}
  </li>
)
