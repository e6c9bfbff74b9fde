/** The search (SEO) report: Google Search Console figures for a period ending at the last day with data. */
import * as Schema from "effect/Schema"
import { DateOnly, Integer, Period, ProjectId, Rate } from "./Common.ts"
import { Window } from "./Projects.ts"

const Position = Schema.NullOr(Schema.Finite).annotate({
  description:
    "Impression-weighted average position, Σ(position × impressions) ÷ Σ impressions, rounded to 2 decimals (1 = " +
    "top); null without impressions"
})

export const SeoTotals = Schema.Struct({
  clicks: Integer.annotate({
    description: "Clicks from Google Search in the window (the property's totals, anonymised queries included)"
  }),
  impressions: Integer.annotate({ description: "Impressions in Google Search in the window" }),
  ctr: Rate.annotate({
    description: "Click-through rate, clicks ÷ impressions (4 decimals); null without impressions"
  }),
  averagePosition: Position
}).annotate({ identifier: "SeoTotals" })

export const SeoChange = Schema.Struct({
  clicks: Rate.annotate({ description: "(clicks − previous) ÷ |previous|; null when the previous window had none" }),
  impressions: Rate.annotate({
    description: "(impressions − previous) ÷ |previous|; null when the previous window had none"
  }),
  ctr: Schema.NullOr(Schema.Finite).annotate({
    description: "CTR minus the previous CTR, in absolute terms (0.01 = one percentage point); null when either is null"
  }),
  averagePosition: Schema.NullOr(Schema.Finite).annotate({
    description:
      "Average position minus the previous one (2 decimals); positive = ranking worse (further down); null when " +
      "either is null"
  })
}).annotate({ identifier: "SeoChange" })

const rowFields = {
  clicks: Integer.annotate({ description: "Clicks in the window" }),
  impressions: Integer.annotate({ description: "Impressions in the window" }),
  ctr: Rate.annotate({ description: "clicks ÷ impressions; null without impressions" }),
  position: Position,
  previousClicks: Integer.annotate({
    description: "Clicks in the previous window (0 when the row was not in the stored top rows then)"
  }),
  previousImpressions: Integer.annotate({ description: "Impressions in the previous window" }),
  previousPosition: Schema.NullOr(Schema.Finite).annotate({
    description: "Average position in the previous window; null without impressions"
  }),
  clicksChange: Rate.annotate({
    description: "(clicks − previousClicks) ÷ previousClicks; null when previousClicks is 0"
  }),
  positionChange: Schema.NullOr(Schema.Finite).annotate({
    description: "position − previousPosition (2 decimals); positive = ranking dropped; null when either is null"
  })
}

export const SeoQuery = Schema.Struct({
  query: Schema.String.annotate({ description: "The search query, as Search Console reports it" }),
  ...rowFields
}).annotate({ identifier: "SeoQuery" })

export const SeoPage = Schema.Struct({
  page: Schema.String.annotate({ description: "The landing page URL, as Search Console reports it" }),
  ...rowFields
}).annotate({ identifier: "SeoPage" })

export const SeoPoint = Schema.Struct({
  day: DateOnly.annotate({ description: "The day, as Search Console dates its rows" }),
  ...SeoTotals.fields
}).annotate({ identifier: "SeoPoint", description: "One day's totals, computed as `totals` is for the window" })

/**
 * Search Console revises its recent days: each sync asks again for the days from the last day with data − 3 on
 * (integrations/gsc/GscConnector.ts), so those days' figures may still change, and the report marks them
 * provisional (`provisionalFrom`).
 */
export const SEARCH_REVISED_DAYS = 3

export const Seo = Schema.Struct({
  projectId: ProjectId,
  period: Period,
  window: Window.annotateKey({
    description:
      "The period's days, ending at dataThrough (not today: search data lags), or today when there is no data yet"
  }),
  dataThrough: Schema.NullOr(DateOnly).annotate({
    description:
      "The last day with search data; Search Console lags 2–3 days, so the window ends here. Null when none is stored"
  }),
  lagDays: Schema.NullOr(Integer).annotate({
    description: "Days between dataThrough and today in the project's time zone (2–3 is normal); null without data"
  }),
  provisionalFrom: Schema.NullOr(DateOnly).annotate({
    description:
      "The first provisional day: the days from here through dataThrough (dataThrough − 3 … dataThrough) are ones " +
      "Google still revises, and the next sync fetches them again, so their figures may change. Null without data"
  }),
  totals: SeoTotals,
  previous: Schema.Struct({
    window: Window,
    totals: SeoTotals,
    series: Schema.Array(SeoPoint).annotate({
      description: "One point per day of the previous window, to overlay day by day"
    })
  }).annotate({
    description: "The window of equal length just before `window`"
  }),
  change: SeoChange,
  series: Schema.Array(SeoPoint).annotate({ description: "One point per day of `window`, oldest first, zero-filled" }),
  topQueries: Schema.Array(SeoQuery).annotate({
    description: "Up to 10 queries with the most clicks in the window (then impressions, then query), with their " +
      "previous-window figures"
  }),
  topPages: Schema.Array(SeoPage).annotate({
    description: "Up to 10 pages with the most clicks in the window, with their previous-window figures"
  })
}).annotate({ identifier: "Seo" })
export type Seo = typeof Seo.Type
