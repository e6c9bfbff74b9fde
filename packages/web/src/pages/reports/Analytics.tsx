/**
 * Analytics: traffic of one website for a period (in the URL: `?period=`, `?metric=`), the series with the
 * previous period overlaid bucket by bucket, the totals with their change, top pages, sources and countries
 * with their change against the previous period (computed by the server, shown as is). Everything
 * is the dashboard's `reports.analytics`, i.e. GET /api/v1/projects/{id}/analytics for the same period.
 */
import type { Analytics } from "@sitehealth/domain/Analytics"
import { Fragment, useMemo } from "react"
import { ongoingFrom } from "../../charts/partial.ts"
import { TimeSeries } from "../../charts/TimeSeries.tsx"
import { setQuery } from "../../navigation.tsx"
import { AnnotationsPanel, useChartAnnotations } from "./Annotations.tsx"
import {
  analyticsAtom,
  Change,
  Figure,
  formatInteger,
  formatPercent,
  Panel,
  PERIOD_LABELS,
  PeriodPicker,
  useMetricParam,
  usePageReport,
  usePeriod
} from "./charted.tsx"
import { CsvDownloads } from "./Downloads.tsx"
import type { WebsitePageProps } from "./shared.tsx"
import { SourceGate } from "./SourceGate.tsx"

const METRICS = [
  ["visitors", "Visitors"],
  ["pageviews", "Page views"],
  ["sessions", "Sessions"]
] as const
type Metric = (typeof METRICS)[number][0]

/** The axis label of a bucket: an hour "2026-03-29T03:00+02:00" → "03:00", a day "2026-03-29" → "03-29". */
const shortLabel = (label: string) => {
  const hour = /T(\d\d:\d\d)/.exec(label)
  if (hour !== null) return hour[1]!
  return /^\d{4}-\d\d-\d\d$/.test(label) ? label.slice(5) : label
}

const ONGOING_WORDS = { hour: "this hour", day: "today", month: "this month" } as const

const formatSeconds = (s: number | null) => {
  if (s === null) return "—"
  const m = Math.floor(s / 60)
  return m > 0 ? `${m} min ${Math.round(s - m * 60)} s` : `${s} s`
}

const hasTraffic = (a: Analytics) =>
  a.totals.pageviews > 0 || a.totals.sessions > 0 || (a.previous?.totals.pageviews ?? 0) > 0

const Totals = ({ a }: { readonly a: Analytics }) => (
  <ul className="reports-figures">
    <Figure
      name="visitors"
      raw={a.totals.visitors}
      label="Visitors"
      value={formatInteger(a.totals.visitors)}
      change={<Change value={a.change.visitors} />}
    />
    <Figure
      name="pageviews"
      raw={a.totals.pageviews}
      label="Page views"
      value={formatInteger(a.totals.pageviews)}
      change={<Change value={a.change.pageviews} />}
    />
    <Figure
      name="sessions"
      raw={a.totals.sessions}
      label="Sessions"
      value={formatInteger(a.totals.sessions)}
      change={<Change value={a.change.sessions} />}
    />
    <Figure
      name="bounceRate"
      raw={a.totals.bounceRate}
      label="Bounce rate"
      value={formatPercent(a.totals.bounceRate)}
      change={<Change value={a.change.bounceRate} betterWhen="down" />}
    />
    <Figure
      name="avgSessionSeconds"
      raw={a.totals.avgSessionSeconds}
      label="Session length"
      value={formatSeconds(a.totals.avgSessionSeconds)}
      change={<Change value={a.change.avgSessionSeconds} />}
    />
    <Figure
      name="pagesPerSession"
      raw={a.totals.pagesPerSession}
      label="Pages per session"
      value={a.totals.pagesPerSession === null
        ? "—"
        : a.totals.pagesPerSession.toLocaleString(undefined, { maximumFractionDigits: 2 })}
      change={<Change value={a.change.pagesPerSession} />}
    />
  </ul>
)

const Series = ({ a, id, metric }: { readonly a: Analytics; readonly id: string; readonly metric: Metric }) => {
  const annotations = useChartAnnotations(id)
  const label = METRICS.find(([m]) => m === metric)![1]
  const labels = useMemo(() => a.series.map((p) => p.label), [a])
  const values = useMemo(() => a.series.map((p) => p[metric]), [a, metric])
  const previous = useMemo(
    () =>
      a.previous === null
        ? undefined
        : { labels: a.previous.series.map((p) => p.label), values: a.previous.series.map((p) => p[metric]) },
    [a, metric]
  )
  // The bucket holding now (today, this hour, this month) is still filling: drawn as "so far", not as a drop.
  const ongoing = ongoingFrom(a.series, a.granularity, a.range.timezone)
  const partial = ongoing === null ? undefined : {
    from: ongoing,
    label: "so far",
    note: `dashed: ${ONGOING_WORDS[a.granularity]} so far, not over yet`
  }
  return (
    <>
      {!hasTraffic(a) ? null : (
        <div className="metric-picker" role="group" aria-label="Metric shown in the chart">
          {METRICS.map(([m, name]) => (
            <button
              key={m}
              type="button"
              aria-pressed={m === metric}
              onClick={() => setQuery("metric", m === "visitors" ? null : m)}
            >
              {name}
            </button>
          ))}
        </div>
      )}
      <TimeSeries
        annotations={annotations}
        title={label}
        labels={labels}
        values={values}
        previous={previous}
        partial={partial}
        axisLabel={shortLabel}
        currentName={`${PERIOD_LABELS[a.period]} (${a.range.from}${
          a.range.to !== a.range.from ? ` – ${a.range.to}` : ""
        })`}
        previousName={a.previous === null
          ? undefined
          : `Previous (${a.previous.range.from}${
            a.previous.range.to !== a.previous.range.from ? ` – ${a.previous.range.to}` : ""
          })`}
        empty={hasTraffic(a)
          ? undefined
          : (
            <p>
              No traffic in this period. Connect Plausible on the Integrations tab to see traffic, or pick a longer
              period.
            </p>
          )}
      />
      <p className="muted">
        Granularity: {a.granularity}; days in {a.range.timezone}. {a.totals.visitorsMethod !== "range_uniques"
          ? "Visitors are summed per bucket (a visitor on two days counts twice)."
          : ""}
      </p>
    </>
  )
}

/**
 * The change of a top row, its previous figure in the tooltip; "—" when the API gives none (no previous period, or 0
 * then).
 */
const TopChange = ({ value, previous }: { readonly value: number | null; readonly previous: number | null }) => (
  <span title={previous === null ? "No previous period" : `Previous period: ${formatInteger(previous)}`}>
    <Change value={value} />
  </span>
)

/** A page's path, with a line-break opportunity after each "/": a long one wraps between its segments. */
const PathText = ({ path }: { readonly path: string }) => (
  <code>
    {path.split(/(?<=\/)/).map((part, i) => (
      <Fragment key={i}>
        {i > 0 ? <wbr /> : null}
        {part}
      </Fragment>
    ))}
  </code>
)

const TopPages = ({ a }: { readonly a: Analytics }) =>
  a.topPages.length === 0
    ? <p className="muted">No page views in this period.</p>
    : (
      <div className="table-scroll" tabIndex={0} role="region" aria-label="Top pages, table">
        <table className="cards" data-table="topPages">
          <thead>
            <tr>
              <th scope="col">Page</th>
              <th scope="col" className="num">Page views</th>
              <th scope="col" className="num">Change</th>
              <th scope="col" className="num">Visitors</th>
              <th scope="col" className="num">Share</th>
            </tr>
          </thead>
          <tbody>
            {a.topPages.map((p) => (
              <tr key={p.path}>
                <td data-label="Page" className="path">
                  <PathText path={p.path} />
                </td>
                <td data-label="Page views" className="num">{formatInteger(p.pageviews)}</td>
                <td data-label="Change in page views" className="num">
                  <TopChange value={p.pageviewsChange} previous={p.previousPageviews} />
                </td>
                <td data-label="Visitors" className="num">{formatInteger(p.visitors)}</td>
                <td data-label="Share" className="num">{formatPercent(p.share)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    )

const TopSources = ({ a }: { readonly a: Analytics }) =>
  a.topSources.length === 0
    ? <p className="muted">No visits in this period.</p>
    : (
      <div className="table-scroll" tabIndex={0} role="region" aria-label="Top sources, table">
        <table className="cards" data-table="topSources">
          <thead>
            <tr>
              <th scope="col">Source</th>
              <th scope="col" className="num">Visitors</th>
              <th scope="col" className="num">Change</th>
              <th scope="col" className="num">Sessions</th>
              <th scope="col" className="num">Share</th>
            </tr>
          </thead>
          <tbody>
            {a.topSources.map((s) => (
              <tr key={s.source}>
                <td data-label="Source">{s.source}</td>
                <td data-label="Visitors" className="num">{formatInteger(s.visitors)}</td>
                <td data-label="Change in visitors" className="num">
                  <TopChange value={s.visitorsChange} previous={s.previousVisitors} />
                </td>
                <td data-label="Sessions" className="num">{formatInteger(s.sessions)}</td>
                <td data-label="Share" className="num">{formatPercent(s.share)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    )

const regionNames = (() => {
  try {
    return new Intl.DisplayNames(undefined, { type: "region" })
  } catch {
    return null
  }
})()

/** "Germany" for "DE", in the browser's language; the code itself where the browser knows no name. */
const countryName = (code: string) => {
  try {
    return regionNames?.of(code) ?? code
  } catch {
    return code
  }
}

const TopCountries = ({ a }: { readonly a: Analytics }) =>
  a.topCountries.length === 0
    ? (
      <p className="muted">
        No countries in this period. Countries come from Plausible; self-collected events carry none.
      </p>
    )
    : (
      <div className="table-scroll" tabIndex={0} role="region" aria-label="Top countries, table">
        <table className="cards" data-table="topCountries">
          <thead>
            <tr>
              <th scope="col">Country</th>
              <th scope="col" className="num">Visitors</th>
              <th scope="col" className="num">Change</th>
              <th scope="col" className="num">Share</th>
            </tr>
          </thead>
          <tbody>
            {a.topCountries.map((c) => (
              <tr key={c.country}>
                <td data-label="Country" data-country={c.country}>
                  {countryName(c.country)} <span className="muted">({c.country})</span>
                </td>
                <td data-label="Visitors" className="num">{formatInteger(c.visitors)}</td>
                <td data-label="Change in visitors" className="num">
                  <TopChange value={c.visitorsChange} previous={c.previousVisitors} />
                </td>
                <td data-label="Share" className="num">{formatPercent(c.share)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    )

export default function AnalyticsPage({ website: w }: WebsitePageProps) {
  const id = w.id
  const period = usePeriod()
  const metric = useMetricParam(METRICS)
  const { result, retry } = usePageReport(() => analyticsAtom(id, period), [id, period])
  return (
    <>
      <h1>Analytics</h1>
      <PeriodPicker period={period} />
      <CsvDownloads
        id={id}
        report="analytics"
        period={period}
        tables={[
          { table: "series", label: "Traffic over time" },
          { table: "pages", label: "Top pages" },
          { table: "sources", label: "Top sources" },
          { table: "countries", label: "Top countries" }
        ]}
      />
      <SourceGate website={w} kind="analytics" what="traffic">
        <Panel
          id="traffic"
          title={`Traffic, ${PERIOD_LABELS[period].toLowerCase()}`}
          what="the traffic"
          result={result}
          retry={retry}
        >
          {(a) => (
            <>
              <Totals a={a} />
              <Series a={a} id={id} metric={metric} />
            </>
          )}
        </Panel>
        <div className="reports-grid tops">
          <Panel id="top-pages" title="Top pages" what="the top pages" result={result} retry={retry}>
            {(a) => <TopPages a={a} />}
          </Panel>
          <Panel id="top-sources" title="Top sources" what="the top sources" result={result} retry={retry}>
            {(a) => <TopSources a={a} />}
          </Panel>
          <Panel id="top-countries" title="Top countries" what="the top countries" result={result} retry={retry}>
            {(a) => <TopCountries a={a} />}
          </Panel>
        </div>
      </SourceGate>
      <AnnotationsPanel website={w} />
    </>
  )
}
