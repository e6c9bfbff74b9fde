/**
 * Analytics (`/websites/:id/analytics?period=`) — a minimal version: the totals against the previous period,
 * each bucket of the series and the top pages and sources, as tables, from /api/v1's analytics report.
 * (The chart version of this page is built separately and replaces this file.)
 */
import { useAtomValue } from "@effect/atom-react"
import { useMemo } from "react"
import { analyticsAtom } from "../../client.ts"
import { Link, websiteHref } from "../../router.tsx"
import { Busy, formatChange, formatNumber, formatPercent, Outcome, PeriodPicker, settled, usePeriod, type WebsitePageProps } from "./shared.tsx"

export default function AnalyticsPage({ website }: WebsitePageProps) {
  const period = usePeriod()
  const atom = useMemo(() => analyticsAtom(website.id, period), [website.id, period])
  const result = useAtomValue(atom)
  return (
    <>
      <h1>Analytics</h1>
      <PeriodPicker period={period} />
      <Busy busy={!settled(result)} />
      <Outcome atom={atom} result={result} what="the analytics">
        {(a) =>
          a.totals.visitors === 0 && a.totals.pageviews === 0
            ? <p className="panel">No traffic in this period. <Link href={websiteHref(website.id, "integrations")}>Connect Plausible</Link> to see traffic.</p>
            : (
              <>
                <section className="panel" aria-labelledby="totals-heading">
                  <h2 id="totals-heading">Totals, {a.range.from} to {a.range.to}</h2>
                  <table className="cards">
                    <thead><tr><th scope="col">Figure</th><th scope="col">This period</th><th scope="col">Previous period</th><th scope="col">Change</th></tr></thead>
                    <tbody>
                      {([["visitors", "Visitors"], ["pageviews", "Page views"], ["sessions", "Sessions"]] as const).map(([k, label]) => (
                        <tr key={k} data-figure={k}>
                          <th scope="row" data-label="Figure">{label}</th>
                          <td data-label="This period" data-testid="value">{formatNumber(a.totals[k])}</td>
                          <td data-label="Previous period">{formatNumber(a.previous?.totals[k])}</td>
                          <td data-label="Change">{formatChange(a.change[k])}</td>
                        </tr>
                      ))}
                      <tr data-figure="bounceRate">
                        <th scope="row" data-label="Figure">Bounce rate</th>
                        <td data-label="This period">{formatPercent(a.totals.bounceRate)}</td>
                        <td data-label="Previous period">{formatPercent(a.previous?.totals.bounceRate)}</td>
                        <td data-label="Change">{formatChange(a.change.bounceRate)}</td>
                      </tr>
                    </tbody>
                  </table>
                </section>
                <section className="panel" aria-labelledby="series-heading">
                  <h2 id="series-heading">By {a.granularity}</h2>
                  <div className="scroll">
                    <table>
                      <thead><tr><th scope="col">{a.granularity}</th><th scope="col">Visitors</th><th scope="col">Page views</th><th scope="col">Sessions</th></tr></thead>
                      <tbody>
                        {a.series.map((p) => (
                          <tr key={p.start}><th scope="row">{p.label}</th><td>{formatNumber(p.visitors)}</td><td>{formatNumber(p.pageviews)}</td><td>{formatNumber(p.sessions)}</td></tr>
                        ))}
                      </tbody>
                    </table>
                  </div>
                </section>
                <section className="panel" aria-labelledby="pages-heading">
                  <h2 id="pages-heading">Top pages</h2>
                  <table className="cards">
                    <thead><tr><th scope="col">Page</th><th scope="col">Page views</th><th scope="col">Share</th></tr></thead>
                    <tbody>
                      {a.topPages.map((p) => <tr key={p.path}><th scope="row" data-label="Page">{p.path}</th><td data-label="Page views">{formatNumber(p.pageviews)}</td><td data-label="Share">{formatPercent(p.share)}</td></tr>)}
                    </tbody>
                  </table>
                </section>
                <section className="panel" aria-labelledby="sources-heading">
                  <h2 id="sources-heading">Top sources</h2>
                  <table className="cards">
                    <thead><tr><th scope="col">Source</th><th scope="col">Visitors</th><th scope="col">Share</th></tr></thead>
                    <tbody>
                      {a.topSources.map((s) => <tr key={s.source}><th scope="row" data-label="Source">{s.source}</th><td data-label="Visitors">{formatNumber(s.visitors)}</td><td data-label="Share">{formatPercent(s.share)}</td></tr>)}
                    </tbody>
                  </table>
                </section>
              </>
            )}
      </Outcome>
    </>
  )
}
