/** The search (SEO) report. */
import { Schema } from "effect"
import { DateOnly, Money, Period, ProjectId, Rate } from "./Common.ts"
import { Window } from "./Projects.ts"

export const SeoTotals = Schema.Struct({
  clicks: Schema.Int,
  impressions: Schema.Int,
  ctr: Rate.annotate({ description: "clicks / impressions" }),
  averagePosition: Schema.NullOr(Schema.Number).annotate({ description: "Impression-weighted average position (1 = top)" })
}).annotate({ identifier: "SeoTotals" })

export const Seo = Schema.Struct({
  projectId: ProjectId,
  window: Window.annotate({ description: "The last 28 days (as Search Console reports)" }),
  totals: SeoTotals,
  previous: Schema.Struct({ window: Window, totals: SeoTotals }),
  change: Schema.Struct({ clicks: Rate, impressions: Rate })
}).annotate({ identifier: "Seo" })
export type Seo = typeof Seo.Type
