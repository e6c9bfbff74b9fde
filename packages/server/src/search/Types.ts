/**
 * What Google Search Console gives us, stored per project and day. `SearchDay` (store/Series.ts) is the
 * property's daily totals — GSC's totals include anonymised queries, so they exceed the sum of the query
 * rows; both are kept. Query and page rows are capped per day on write (the top rows by clicks, then
 * impressions), so a read costs O(days in the window × cap).
 */
import type * as Effect from "effect/Effect"
import type { DayWindow } from "../metrics/Numbers.ts"
import type { SearchDay, SearchPageDay, SearchQueryDay } from "../store/Series.ts"

// The shapes the SEO formulas read live with them (store/Series.ts).
export type { SearchDay, SearchPageDay, SearchQueryDay }

/** One write of search data; every part optional, each row upserted by its natural key. */
export interface SearchWrite {
  readonly totals?: ReadonlyArray<SearchDay>
  readonly queries?: ReadonlyArray<SearchQueryDay>
  readonly pages?: ReadonlyArray<SearchPageDay>
}

/** Query and page rows kept per project and day (the top ones by clicks, then impressions). */
export const SEARCH_ROWS_PER_DAY = 500

export interface SearchRepoShape {
  /** Upserts the rows and bumps the project's data_version in the same transaction. */
  readonly write: (projectId: string, rows: SearchWrite) => Effect.Effect<void>
  /** Query rows of days in [fromDay, toDay], both inclusive. */
  readonly loadQueryDays: (
    projectId: string,
    fromDay: string,
    toDay: string
  ) => Effect.Effect<ReadonlyArray<SearchQueryDay>>
  /** Page rows of days in [fromDay, toDay], both inclusive. */
  readonly loadPageDays: (
    projectId: string,
    fromDay: string,
    toDay: string
  ) => Effect.Effect<ReadonlyArray<SearchPageDay>>
  /** The property's daily totals of days in [fromDay, toDay], ordered by day. */
  readonly loadTotals: (projectId: string, fromDay: string, toDay: string) => Effect.Effect<ReadonlyArray<SearchDay>>
  /**
   * The report's read, aggregated in the store: the top `limit` queries of `current` (by clicks, then
   * impressions, then query), as one row per (query, window) dated at the window's first day — the current
   * window's sums and, for the same queries, the previous window's. `topQueryChanges` (metrics/Seo.ts)
   * gives the same answer on these rows as on the raw days, at a cost bounded by `limit`.
   */
  readonly loadTopQueries: (
    projectId: string,
    current: DayWindow,
    previous: DayWindow,
    limit: number
  ) => Effect.Effect<ReadonlyArray<SearchQueryDay>>
  /** As loadTopQueries, for pages. */
  readonly loadTopPages: (
    projectId: string,
    current: DayWindow,
    previous: DayWindow,
    limit: number
  ) => Effect.Effect<ReadonlyArray<SearchPageDay>>
  /** The last day with search data (totals, queries or pages) for the project, or null when none. */
  readonly dataThrough: (projectId: string) => Effect.Effect<string | null>
}
