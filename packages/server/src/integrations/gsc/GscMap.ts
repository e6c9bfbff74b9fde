/**
 * Search Console rows → the search store's rows. Pure. GSC gives a row's average position; the store
 * keeps Σ position × impressions so any window re-aggregates exactly (average = Σ / impressions).
 * Days are Search Console's own dates (Google reports them in Pacific Time); the connector moves them to
 * the website's days (GscConnector.ts pacificDayShift) when it writes them.
 */
import type { SearchDay, SearchPageDay, SearchQueryDay } from "../../search/Types.ts"
import { SEARCH_ROWS_PER_DAY } from "../../search/Types.ts"

/** One row of searchAnalytics.query: `keys` in the order of the asked dimensions. */
export interface GscRow {
  readonly keys: ReadonlyArray<string>
  readonly clicks: number
  readonly impressions: number
  readonly position: number
}

interface Keyed {
  readonly day: string
  readonly key: string
  readonly clicks: number
  readonly impressions: number
  readonly positionWeighted: number
}

export const weighted = (r: GscRow): Omit<Keyed, "day" | "key"> => ({
  clicks: Math.round(r.clicks),
  impressions: Math.round(r.impressions),
  positionWeighted: r.position * r.impressions
})

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
/** The store's order of a day's rows (SearchRepo trims with the same one): clicks, impressions, key. */
const rank = (a: Keyed, b: Keyed) => b.clicks - a.clicks || b.impressions - a.impressions || byText(a.key, b.key)

/**
 * The top SEARCH_ROWS_PER_DAY rows of each day, kept while pages stream in: a day's list is trimmed
 * whenever it doubles the cap, so memory stays O(days × cap) however many rows GSC returns.
 */
export const makeTopPerDay = (cap: number = SEARCH_ROWS_PER_DAY) => {
  const days = new Map<string, Array<Keyed>>()
  const trim = (list: Array<Keyed>) => list.sort(rank).splice(cap)
  return {
    add: (row: Keyed) => {
      let list = days.get(row.day)
      if (list === undefined) days.set(row.day, list = [])
      list.push(row)
      if (list.length >= 2 * cap) trim(list)
    },
    rows: (): Array<Keyed> => {
      const out: Array<Keyed> = []
      for (const list of days.values()) {
        trim(list)
        out.push(...list)
      }
      return out
    }
  }
}

/** A ["date", X] row as a keyed day row. */
export const keyedOf = (r: GscRow): Keyed => ({ day: r.keys[0], key: r.keys[1], ...weighted(r) })

export const queryRows = (rows: ReadonlyArray<Keyed>): Array<SearchQueryDay> =>
  rows.map((r) => ({
    day: r.day,
    query: r.key,
    clicks: r.clicks,
    impressions: r.impressions,
    positionWeighted: r.positionWeighted
  }))

export const pageRows = (rows: ReadonlyArray<Keyed>): Array<SearchPageDay> =>
  rows.map((r) => ({
    day: r.day,
    page: r.key,
    clicks: r.clicks,
    impressions: r.impressions,
    positionWeighted: r.positionWeighted
  }))

/** The property's daily totals from ["date"] rows. Days GSC has no data for yet are absent, not zero. */
export const totalRows = (rows: ReadonlyArray<GscRow>): Array<SearchDay> =>
  rows.map((r) => ({ day: r.keys[0], ...weighted(r) })).sort((a, b) => byText(a.day, b.day))

/** The last day with data, or null. */
export const lastDay = (totals: ReadonlyArray<SearchDay>): string | null =>
  totals.reduce<string | null>((last, t) => (last === null || t.day > last ? t.day : last), null)
