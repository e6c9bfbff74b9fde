/**
 * Search (SEO) of one website: clicks, impressions, CTR and average position per day over the period
 * (`?period=`, `?metric=`) with the previous window overlaid, the totals with their change, the top queries
 * and pages with theirs. The window ends at the last day Search Console has data for (it lags 2–3 days), and
 * the page says how far behind it is; its last days, which Google still revises (`provisionalFrom`), are drawn
 * dashed and marked provisional. Everything is the dashboard's `reports.seo`, i.e.
 * GET /api/v1/projects/{id}/seo for the same period.
 */
import type { Seo } from "@sitehealth/domain/Seo"
import { useMemo } from "react"
import { firstDayFrom } from "../../charts/partial.ts"
import { TimeSeries } from "../../charts/TimeSeries.tsx"
import { setQuery } from "../../navigation.tsx"
import { useChartAnnotations } from "./Annotations.tsx"
import {
  Change,
  Figure,
  formatInteger,
  formatPercent,
  Panel,
  PERIOD_LABELS,
  PeriodPicker,
  seoAtom,
  useMetricParam,
  usePageReport,
  usePeriod
} from "./charted.tsx"
import { CsvDownloads } from "./Downloads.tsx"
import type { WebsitePageProps } from "./shared.tsx"
import { SourceGate } from "./SourceGate.tsx"

const METRICS = [
  ["clicks", "Clicks"],
  ["impressions", "Impressions"],
  ["ctr", "CTR"],
  ["averagePosition", "Average position"]
] as const
type Metric = (typeof METRICS)[number][0]

const formatPosition = (
  p: number | null
) => (p === null ? "—" : p.toLocaleString(undefined, { minimumFractionDigits: 1, maximumFractionDigits: 2 }))
const formatOf = (metric: Metric) =>
  metric === "ctr"
    ? (v: number) => formatPercent(v, 2)
    : metric === "averagePosition"
    ? (v: number) => formatPosition(v)
    : (v: number) => formatInteger(v)

const Lag = ({ s }: { readonly s: Seo }) =>
  s.dataThrough === null
    ? null
    : (
      <p className={s.lagDays !== null && s.lagDays > 3 ? "alert warn" : "muted"} data-lag={s.lagDays ?? ""}>
        Search Console data arrives with a 2–3 day delay: data through <strong>{s.dataThrough}</strong>
        {s.lagDays !== null ? ` (${s.lagDays} day${s.lagDays === 1 ? "" : "s"} ago)` : ""}, so this window is{" "}
        {s.window.from} – {s.window.to}, compared with {s.previous.window.from} – {s.previous.window.to}.
        {s.lagDays !== null && s.lagDays > 3 ? " That is longer than usual: check the Search Console connection." : ""}
        {s.provisionalFrom !== null
          ? (
            <span data-provisional-from={s.provisionalFrom}>
              {" "}Days from {s.provisionalFrom} on are provisional: Google may still revise them.
            </span>
          )
          : null}
      </p>
    )

const Totals = ({ s }: { readonly s: Seo }) => (
  <ul className="reports-figures">
    <Figure
      name="clicks"
      raw={s.totals.clicks}
      label="Clicks"
      value={formatInteger(s.totals.clicks)}
      change={<Change value={s.change.clicks} />}
    />
    <Figure
      name="impressions"
      raw={s.totals.impressions}
      label="Impressions"
      value={formatInteger(s.totals.impressions)}
      change={<Change value={s.change.impressions} />}
    />
    <Figure
      name="ctr"
      raw={s.totals.ctr}
      label="CTR"
      value={formatPercent(s.totals.ctr, 2)}
      change={<Change value={s.change.ctr} kind="points" digits={2} />}
    />
    <Figure
      name="averagePosition"
      raw={s.totals.averagePosition}
      label="Average position"
      value={formatPosition(s.totals.averagePosition)}
      change={<Change value={s.change.averagePosition} kind="plain" betterWhen="down" />}
    />
  </ul>
)

const Series = ({ id, metric, s }: { readonly id: string; readonly metric: Metric; readonly s: Seo }) => {
  const annotations = useChartAnnotations(id)
  const label = METRICS.find(([m]) => m === metric)![1]
  const labels = useMemo(() => s.series.map((p) => p.day), [s])
  const values = useMemo(() => s.series.map((p) => p[metric]), [s, metric])
  const previous = useMemo(
    () => ({ labels: s.previous.series.map((p) => p.day), values: s.previous.series.map((p) => p[metric]) }),
    [s, metric]
  )
  const provisional = firstDayFrom(labels, s.provisionalFrom)
  const partial = provisional === null
    ? undefined
    : { from: provisional, label: "provisional", note: "dashed: provisional, Google may still revise these days" }
  return (
    <>
      {s.dataThrough === null ?
        null :
        (
          <div className="metric-picker" role="group" aria-label="Metric shown in the chart">
            {METRICS.map(([m, name]) => (
              <button
                key={m}
                type="button"
                aria-pressed={m === metric}
                onClick={() => setQuery("metric", m === "clicks" ? null : m)}
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
        format={formatOf(metric)}
        invert={metric === "averagePosition"}
        axisLabel={(l) => l.slice(5)}
        currentName={`${s.window.from} – ${s.window.to}`}
        previousName={`${s.previous.window.from} – ${s.previous.window.to}`}
        empty={s.dataThrough === null
          ? (
            <p>
              No search data yet. Connect Google Search Console on the Integrations tab; Search Console data arrives
              with a 2–3 day delay.
            </p>
          )
          : undefined}
      />
      {metric === "averagePosition"
        ? <p className="muted">Position 1 is the top of the results: the axis is drawn with 1 at the top.</p>
        : null}
    </>
  )
}

const RowTable = <R extends Seo["topQueries"][number] | Seo["topPages"][number]>({ rows, keyOf, heading, name }: {
  readonly rows: ReadonlyArray<R>
  readonly keyOf: (r: R) => string
  readonly heading: string
  readonly name: string
}) =>
  rows.length === 0
    ? <p className="muted">None in this window.</p>
    : (
      <div className="table-scroll" tabIndex={0} role="region" aria-label={`${heading}s, table`}>
        <table className="cards" data-table={name}>
          <thead>
            <tr>
              <th scope="col">{heading}</th>
              <th scope="col" className="num">Clicks</th>
              <th scope="col" className="num">Change</th>
              <th scope="col" className="num">Impressions</th>
              <th scope="col" className="num">CTR</th>
              <th scope="col" className="num">Position</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={keyOf(r)}>
                <td data-label={heading} className="key">{keyOf(r)}</td>
                <td data-label="Clicks" className="num">{formatInteger(r.clicks)}</td>
                <td data-label="Change in clicks" className="num">
                  <Change value={r.clicksChange} />
                </td>
                <td data-label="Impressions" className="num">{formatInteger(r.impressions)}</td>
                <td data-label="CTR" className="num">{formatPercent(r.ctr, 2)}</td>
                <td data-label="Position" className="num">
                  {formatPosition(r.position)} <Change value={r.positionChange} kind="plain" betterWhen="down" />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    )

export default function SeoPage({ website: w }: WebsitePageProps) {
  const id = w.id
  const period = usePeriod()
  const metric = useMetricParam(METRICS)
  const { result, retry } = usePageReport(() => seoAtom(id, period), [id, period])
  return (
    <>
      <h1>Search</h1>
      <PeriodPicker period={period} />
      <CsvDownloads
        id={id}
        report="seo"
        period={period}
        tables={[
          { table: "series", label: "Search over time" },
          { table: "queries", label: "Top queries" },
          { table: "pages", label: "Top pages" }
        ]}
      />
      <SourceGate website={w} kind="search" what="search clicks, impressions and rankings">
        <Panel
          id="search"
          title={`Google Search, ${PERIOD_LABELS[period].toLowerCase()}`}
          what="the search report"
          result={result}
          retry={retry}
        >
          {(s) => (
            <>
              <Lag s={s} />
              <Totals s={s} />
              <Series id={w.id} s={s} metric={metric} />
            </>
          )}
        </Panel>
        <Panel id="top-queries" title="Top queries" what="the top queries" result={result} retry={retry}>
          {(s) => <RowTable rows={s.topQueries} keyOf={(r) => r.query} heading="Query" name="topQueries" />}
        </Panel>
        <Panel id="top-search-pages" title="Top pages in search" what="the top pages" result={result} retry={retry}>
          {(s) => <RowTable rows={s.topPages} keyOf={(r) => r.page} heading="Page" name="topPages" />}
        </Panel>
      </SourceGate>
    </>
  )
}
