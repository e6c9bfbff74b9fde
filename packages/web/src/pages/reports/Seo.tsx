/**
 * SEO (`/websites/:id/seo?period=`) — a minimal version: clicks, impressions, CTR and position against the
 * previous window, Search Console's lag, and the top queries and pages with their change, as tables, from
 * /api/v1's SEO report. (The chart version of this page is built separately and replaces this file.)
 */
import { useAtomValue } from "@effect/atom-react"
import { useMemo } from "react"
import { seoAtom } from "../../client.ts"
import { Link, websiteHref } from "../../router.tsx"
import { Busy, formatChange, formatDay, formatNumber, formatPercent, Outcome, PeriodPicker, settled, usePeriod, type WebsitePageProps } from "./shared.tsx"

export default function SeoPage({ website }: WebsitePageProps) {
  const period = usePeriod()
  const atom = useMemo(() => seoAtom(website.id, period), [website.id, period])
  const result = useAtomValue(atom)
  return (
    <>
      <h1>SEO</h1>
      <PeriodPicker period={period} />
      <Busy busy={!settled(result)} />
      <Outcome atom={atom} result={result} what="the search report">
        {(s) =>
          s.dataThrough === null
            ? <p className="panel">No search data yet. <Link href={websiteHref(website.id, "integrations")}>Connect Search Console</Link>; its data arrives with a 2–3 day delay.</p>
            : (
              <>
                <p className="muted">Search Console data runs to {formatDay(s.dataThrough)}{s.lagDays !== null ? ` (${s.lagDays} days ago; a 2–3 day delay is normal)` : ""}.</p>
                <section className="panel" aria-labelledby="seo-totals-heading">
                  <h2 id="seo-totals-heading">{formatDay(s.window.from)}–{formatDay(s.window.to)}</h2>
                  <dl className="facts">
                    <dt>Clicks</dt><dd data-testid="clicks">{formatNumber(s.totals.clicks)} ({formatChange(s.change.clicks)})</dd>
                    <dt>Impressions</dt><dd>{formatNumber(s.totals.impressions)} ({formatChange(s.change.impressions)})</dd>
                    <dt>CTR</dt><dd>{formatPercent(s.totals.ctr)}</dd>
                    <dt>Average position</dt><dd>{formatNumber(s.totals.averagePosition, 1)}</dd>
                  </dl>
                </section>
                <section className="panel" aria-labelledby="queries-heading">
                  <h2 id="queries-heading">Top queries</h2>
                  <table className="cards">
                    <thead><tr><th scope="col">Query</th><th scope="col">Clicks</th><th scope="col">Change</th><th scope="col">Position</th></tr></thead>
                    <tbody>
                      {s.topQueries.map((q) => <tr key={q.query}><th scope="row" data-label="Query">{q.query}</th><td data-label="Clicks">{formatNumber(q.clicks)}</td><td data-label="Change">{formatChange(q.clicksChange)}</td><td data-label="Position">{formatNumber(q.position, 1)}</td></tr>)}
                    </tbody>
                  </table>
                </section>
                <section className="panel" aria-labelledby="seo-pages-heading">
                  <h2 id="seo-pages-heading">Top pages</h2>
                  <table className="cards">
                    <thead><tr><th scope="col">Page</th><th scope="col">Clicks</th><th scope="col">Change</th><th scope="col">Position</th></tr></thead>
                    <tbody>
                      {s.topPages.map((p) => <tr key={p.page}><th scope="row" data-label="Page">{p.page}</th><td data-label="Clicks">{formatNumber(p.clicks)}</td><td data-label="Change">{formatChange(p.clicksChange)}</td><td data-label="Position">{formatNumber(p.position, 1)}</td></tr>)}
                    </tbody>
                  </table>
                </section>
              </>
            )}
      </Outcome>
    </>
  )
}
