/**
 * Demo search data as Google Search Console reports it: per day the property's totals and rows by query
 * and by page, ending `lagDays` before today (Search Console publishes with a lag of 2–3 days). The
 * totals exceed the sum of the query rows: Search Console leaves anonymised queries out of query rows.
 */
import { addDays } from "../metrics/Dates.ts"
import type { SearchPageDay, SearchQueryDay, SearchWrite } from "../search/Types.ts"
import type { SearchDay } from "../store/Series.ts"
import type { DemoProjectSpec } from "./Profiles.ts"
import { jitter, type Rand } from "./Random.ts"
import { daysBeforeEpoch, type DemoTimeline } from "./Timeline.ts"
import type { DemoDay } from "./Traffic.ts"

export const SEARCH_LAG_DAYS = 3
/** Share of impressions and clicks that come from queries Search Console names (the rest are anonymised). */
const NAMED_SHARE = 0.82

/** Click-through rate at an average position: the usual steep curve of organic results. */
export const ctrAt = (position: number): number => {
  if (position <= 1.5) return 0.3
  if (position <= 2.5) return 0.16
  if (position <= 3.5) return 0.11
  if (position <= 5) return 0.07
  if (position <= 10) return 0.03
  if (position <= 20) return 0.01
  return 0.003
}

const round2 = (x: number) => Math.round(x * 100) / 100

export const generateSearch = (
  spec: DemoProjectSpec,
  rand: Rand,
  timeline: DemoTimeline,
  trafficDays: ReadonlyArray<DemoDay>
): SearchWrite => {
  const s = spec.search
  const lastDay = addDays(timeline.today, -SEARCH_LAG_DAYS)
  const totals: Array<SearchDay> = []
  const queries: Array<SearchQueryDay> = []
  const pages: Array<SearchPageDay> = []
  for (const d of trafficDays) {
    if (d.day > lastDay) continue
    const daysAgo = daysBeforeEpoch(timeline, d.day)
    // Impressions follow Google's visitors (a ranking update shows in both).
    const impressions = Math.round(d.googleVisitors * s.impressionsPerVisitor * 1.6 * jitter(rand, 0.06))
    let namedClicks = 0
    let namedImpressions = 0
    let namedWeighted = 0
    const byPage = new Map<string, { clicks: number; impressions: number; weighted: number }>()
    s.queries.forEach((q, i) => {
      const lost = s.rankingLoss !== undefined && s.rankingLoss.queryIndex === i && daysAgo <= s.rankingLoss.fromDaysAgo
      const position = round2(Math.max(1, (lost ? s.rankingLoss!.position : q.position) * jitter(rand, 0.05)))
      const qImpressions = Math.round(impressions * NAMED_SHARE * q.share * jitter(rand, 0.1) * (lost ? 0.8 : 1))
      if (qImpressions === 0) return
      const clicks = Math.round(qImpressions * ctrAt(position) * jitter(rand, 0.15))
      const weighted = round2(position * qImpressions)
      queries.push({ day: d.day, query: q.query, clicks, impressions: qImpressions, positionWeighted: weighted })
      namedClicks += clicks
      namedImpressions += qImpressions
      namedWeighted += weighted
      const pg = byPage.get(q.page) ?? { clicks: 0, impressions: 0, weighted: 0 }
      pg.clicks += clicks
      pg.impressions += qImpressions
      pg.weighted += weighted
      byPage.set(q.page, pg)
    })
    for (const [page, pg] of byPage) {
      pages.push({
        day: d.day,
        page: `https://${spec.domain}${page}`,
        clicks: pg.clicks,
        impressions: pg.impressions,
        positionWeighted: round2(pg.weighted)
      })
    }
    // Anonymised queries rank like the named ones on average.
    totals.push({
      day: d.day,
      clicks: Math.round(namedClicks / NAMED_SHARE),
      impressions: Math.round(namedImpressions / NAMED_SHARE),
      positionWeighted: round2(namedWeighted / NAMED_SHARE)
    })
  }
  return { totals, queries, pages }
}
