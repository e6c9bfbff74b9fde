/**
 * The demo projects and what is planted in each, so that a new user of `npm start` sees every report and
 * signal light up with something meaningful. "T" is the project's local today; days are counted back
 * from it.
 *
 * - Acme Analytics (Europe/Berlin, EUR): a growing SaaS (+70% traffic over the year). A quarter of its
 *   customers pay in USD (two currencies, converted with the demo EUR/USD rates). Its top search query
 *   loses its ranking 9 days ago (position ~2.8 → ~8.5).
 * - Bolt Recipes (America/New_York, USD): a content site with subscriptions. Google traffic falls away 12
 *   days ago (a core update: Google visitors −65%), yesterday is hit harder still, and cancellations
 *   spike between 28 and 8 days ago, with more failed payments in the last month.
 * - Calm Notes (Europe/London, GBP): a steady, small business whose spend outgrows its revenue (a
 *   contractor hired 60 days ago, a large one-off purchase) and whose Search Console connection fails:
 *   its grant is revoked right after the first sync.
 *
 * "T" is the demo's epoch day (when the demo account was created): the planted events stay on those days
 * while new days keep coming (Generate.ts), as events age on a real account.
 */
import type { ExpenseCategory } from "@sitehealth/domain/Expenses"

export interface PlanPrice {
  readonly name: string
  readonly unitAmountMinor: number
  readonly interval: "month" | "year"
  readonly seats?: readonly [number, number] // quantity range for per-seat plans
}

export interface DemoProjectSpec {
  readonly key: "acme" | "bolt" | "calm"
  readonly name: string
  readonly domain: string
  readonly timezone: string
  readonly currency: string
  readonly seed: number
  readonly traffic: {
    readonly baseVisitors: number // a weekday's visitors at T
    readonly yearGrowth: number // visitors(T) / visitors(T − 365)
    readonly pagesPerVisitor: number
    readonly bounceRate: number
    readonly sessionSeconds: number
    readonly pages: ReadonlyArray<readonly [string, number]> // path, weight
    readonly sources: ReadonlyArray<readonly [string, number]> // source, weight
    readonly countries: ReadonlyArray<readonly [string, number]> // ISO 3166-1 alpha-2, weight
    /** Days back from T from which Google visitors are multiplied by `factor` (a ranking update). */
    readonly googleDrop?: { readonly fromDaysAgo: number; readonly factor: number }
    /** One day (days back from T) at a fraction of its usual level: the anomaly the signals must find. */
    readonly dip?: { readonly daysAgo: number; readonly factor: number }
  }
  readonly payments: {
    readonly secondCurrency?: { readonly currency: string; readonly share: number; readonly priceFactor: number }
    readonly trialsPerThousandVisitors: number
    readonly trialConversion: number
    readonly plans: ReadonlyArray<readonly [PlanPrice, number]>
    readonly dailyChurn: number
    readonly churnSpike?: { readonly fromDaysAgo: number; readonly toDaysAgo: number; readonly dailyChurn: number }
    readonly failedChargeRate: number
    readonly recentFailedChargeRate?: number // the last 30 days
  }
  readonly search: {
    readonly impressionsPerVisitor: number
    readonly queries: ReadonlyArray<
      { readonly query: string; readonly page: string; readonly share: number; readonly position: number }
    >
    /** From `fromDaysAgo` on, query #index ranks at `position`. */
    readonly rankingLoss?: { readonly queryIndex: number; readonly fromDaysAgo: number; readonly position: number }
  }
  readonly expenses: ReadonlyArray<{
    readonly amountMinor: number
    readonly currency?: string // default: the project's
    readonly category: ExpenseCategory
    readonly description: string
    readonly vendor: string | null
    readonly recurrence: "one_off" | "monthly" | "yearly"
    readonly daysAgo: number
  }>
  /**
   * The project's connections, each to the demo's local server of that provider (Providers.ts), synced like
   * any connection. `breaksAfterFirstSync`: the grant is revoked once the seed's first sync is done, so every
   * later sync fails (Google answers invalid_grant) and the integration shows the error.
   */
  readonly integrations: ReadonlyArray<{ readonly provider: DemoProvider; readonly breaksAfterFirstSync?: true }>
}

/** The providers a demo project connects to. */
export type DemoProvider = "stripe" | "plausible" | "google-search-console"

const ALL_PROVIDERS: DemoProjectSpec["integrations"] = [{ provider: "stripe" }, { provider: "plausible" }, {
  provider: "google-search-console"
}]

const SAAS_PLANS = (k: number): ReadonlyArray<readonly [PlanPrice, number]> => [
  [{ name: "basic", unitAmountMinor: 1900 * k, interval: "month" }, 0.42],
  [{ name: "pro", unitAmountMinor: 4900 * k, interval: "month" }, 0.25],
  [{ name: "business", unitAmountMinor: 9900 * k, interval: "month" }, 0.08],
  [{ name: "basic-annual", unitAmountMinor: 19000 * k, interval: "year" }, 0.1],
  [{ name: "pro-annual", unitAmountMinor: 49000 * k, interval: "year" }, 0.06],
  [{ name: "team", unitAmountMinor: 1200 * k, interval: "month", seats: [3, 12] }, 0.09]
]

export const DEMO_PROJECTS: ReadonlyArray<DemoProjectSpec> = [
  {
    key: "acme",
    name: "Acme Analytics",
    domain: "acme-analytics.example",
    timezone: "Europe/Berlin",
    currency: "EUR",
    seed: 11,
    traffic: {
      baseVisitors: 1800,
      yearGrowth: 1.7,
      pagesPerVisitor: 2.6,
      bounceRate: 0.44,
      sessionSeconds: 142,
      pages: [
        ["/", 30],
        ["/pricing", 14],
        ["/features", 10],
        ["/blog/privacy-first-analytics", 9],
        ["/docs/getting-started", 8],
        ["/blog/cookie-banners", 6],
        ["/compare/google-analytics", 6],
        ["/signup", 5]
      ],
      sources: [["Google", 46], ["Direct", 24], ["Hacker News", 6], ["Twitter", 7], ["Newsletter", 8], ["Bing", 4], [
        "DuckDuckGo",
        5
      ]],
      countries: [["DE", 38], ["US", 16], ["AT", 9], ["CH", 8], ["GB", 7], ["NL", 6], ["FR", 5], ["PL", 4], ["SE", 3], [
        "ES",
        2
      ], ["IT", 2]]
    },
    payments: {
      secondCurrency: { currency: "USD", share: 0.25, priceFactor: 1.1 },
      trialsPerThousandVisitors: 1.6,
      trialConversion: 0.55,
      plans: SAAS_PLANS(1),
      dailyChurn: 0.0007,
      failedChargeRate: 0.015
    },
    search: {
      impressionsPerVisitor: 3.2,
      queries: [
        { query: "privacy friendly analytics", page: "/blog/privacy-first-analytics", share: 0.16, position: 2.8 },
        { query: "google analytics alternative", page: "/compare/google-analytics", share: 0.14, position: 6.5 },
        { query: "acme analytics", page: "/", share: 0.1, position: 1.1 },
        { query: "cookie banner free analytics", page: "/blog/cookie-banners", share: 0.09, position: 4.2 },
        { query: "website analytics pricing", page: "/pricing", share: 0.07, position: 9.4 },
        { query: "gdpr analytics", page: "/blog/privacy-first-analytics", share: 0.08, position: 7.1 },
        { query: "simple web analytics", page: "/features", share: 0.07, position: 11.5 },
        { query: "analytics setup guide", page: "/docs/getting-started", share: 0.05, position: 5.3 },
        { query: "self hosted analytics", page: "/features", share: 0.06, position: 14.2 },
        { query: "open source analytics", page: "/", share: 0.05, position: 18.7 }
      ],
      rankingLoss: { queryIndex: 0, fromDaysAgo: 9, position: 8.5 }
    },
    expenses: [
      {
        amountMinor: 8_900,
        category: "hosting",
        description: "Cloud servers",
        vendor: "Hetzner",
        recurrence: "monthly",
        daysAgo: 340
      },
      {
        amountMinor: 4_900,
        currency: "USD",
        category: "software",
        description: "Error tracking",
        vendor: "Sentry",
        recurrence: "monthly",
        daysAgo: 300
      },
      {
        amountMinor: 2_400,
        category: "domains",
        description: "Domains",
        vendor: "INWX",
        recurrence: "yearly",
        daysAgo: 200
      },
      {
        amountMinor: 180_000,
        category: "marketing",
        description: "Conference booth",
        vendor: null,
        recurrence: "one_off",
        daysAgo: 45
      }
    ],
    integrations: ALL_PROVIDERS
  },
  {
    key: "bolt",
    name: "Bolt Recipes",
    domain: "boltrecipes.example",
    timezone: "America/New_York",
    currency: "USD",
    seed: 23,
    traffic: {
      baseVisitors: 4200,
      yearGrowth: 1.15,
      pagesPerVisitor: 3.1,
      bounceRate: 0.52,
      sessionSeconds: 118,
      pages: [
        ["/", 18],
        ["/recipes/one-pot-pasta", 12],
        ["/recipes/sheet-pan-chicken", 10],
        ["/recipes/overnight-oats", 8],
        ["/collections/30-minute-dinners", 9],
        ["/premium", 5],
        ["/recipes/banana-bread", 7],
        ["/meal-planner", 6]
      ],
      sources: [["Google", 62], ["Pinterest", 14], ["Direct", 12], ["Facebook", 6], ["Newsletter", 6]],
      countries: [["US", 64], ["CA", 11], ["GB", 8], ["AU", 6], ["IN", 4], ["DE", 2], ["NZ", 2], ["IE", 2], ["PH", 1]],
      googleDrop: { fromDaysAgo: 12, factor: 0.35 },
      dip: { daysAgo: 1, factor: 0.55 }
    },
    payments: {
      trialsPerThousandVisitors: 0.45,
      trialConversion: 0.5,
      plans: [
        [{ name: "premium", unitAmountMinor: 699, interval: "month" }, 0.7],
        [{ name: "premium-annual", unitAmountMinor: 5900, interval: "year" }, 0.3]
      ],
      dailyChurn: 0.0016,
      churnSpike: { fromDaysAgo: 28, toDaysAgo: 8, dailyChurn: 0.009 },
      failedChargeRate: 0.03,
      recentFailedChargeRate: 0.1
    },
    search: {
      impressionsPerVisitor: 5.5,
      queries: [
        { query: "one pot pasta", page: "/recipes/one-pot-pasta", share: 0.15, position: 3.1 },
        { query: "sheet pan chicken", page: "/recipes/sheet-pan-chicken", share: 0.13, position: 4.4 },
        { query: "overnight oats recipe", page: "/recipes/overnight-oats", share: 0.12, position: 5.2 },
        { query: "30 minute dinners", page: "/collections/30-minute-dinners", share: 0.1, position: 6.8 },
        { query: "easy banana bread", page: "/recipes/banana-bread", share: 0.09, position: 7.5 },
        { query: "meal planner app", page: "/meal-planner", share: 0.06, position: 12.4 },
        { query: "bolt recipes", page: "/", share: 0.05, position: 1.2 }
      ]
    },
    expenses: [
      {
        amountMinor: 12_900,
        category: "hosting",
        description: "Hosting and CDN",
        vendor: "Vercel",
        recurrence: "monthly",
        daysAgo: 350
      },
      {
        amountMinor: 2_900,
        category: "software",
        description: "Newsletter",
        vendor: "Buttondown",
        recurrence: "monthly",
        daysAgo: 250
      },
      {
        amountMinor: 60_000,
        category: "advertising",
        description: "Pinterest campaign",
        vendor: "Pinterest",
        recurrence: "one_off",
        daysAgo: 20
      }
    ],
    integrations: ALL_PROVIDERS
  },
  {
    key: "calm",
    name: "Calm Notes",
    domain: "calmnotes.example",
    timezone: "Europe/London",
    currency: "GBP",
    seed: 37,
    traffic: {
      baseVisitors: 650,
      yearGrowth: 1.05,
      pagesPerVisitor: 2.2,
      bounceRate: 0.48,
      sessionSeconds: 96,
      pages: [["/", 35], ["/download", 18], ["/pricing", 12], ["/journal-prompts", 15], ["/blog/gratitude", 10], [
        "/changelog",
        4
      ]],
      sources: [["Google", 40], ["Direct", 30], ["Reddit", 12], ["Product Hunt", 6], ["Newsletter", 12]],
      countries: [["GB", 41], ["US", 22], ["IE", 6], ["CA", 6], ["AU", 5], ["DE", 5], ["NL", 4], ["SE", 3], ["IN", 3]]
    },
    payments: {
      trialsPerThousandVisitors: 2.2,
      trialConversion: 0.45,
      plans: [
        [{ name: "plus", unitAmountMinor: 499, interval: "month" }, 0.75],
        [{ name: "plus-annual", unitAmountMinor: 3900, interval: "year" }, 0.25]
      ],
      dailyChurn: 0.0006,
      failedChargeRate: 0.012
    },
    search: {
      impressionsPerVisitor: 2.4,
      queries: [
        { query: "journal prompts", page: "/journal-prompts", share: 0.22, position: 6.1 },
        { query: "gratitude journal app", page: "/blog/gratitude", share: 0.15, position: 8.9 },
        { query: "calm notes", page: "/", share: 0.1, position: 1.0 },
        { query: "minimal notes app", page: "/download", share: 0.09, position: 13.5 }
      ]
    },
    expenses: [
      {
        amountMinor: 1_500,
        category: "hosting",
        description: "App hosting",
        vendor: "Fly.io",
        recurrence: "monthly",
        daysAgo: 330
      },
      {
        amountMinor: 320_000,
        category: "contractors",
        description: "iOS contractor",
        vendor: "Northwind Dev",
        recurrence: "monthly",
        daysAgo: 60
      },
      {
        amountMinor: 240_000,
        category: "other",
        description: "Test devices",
        vendor: null,
        recurrence: "one_off",
        daysAgo: 25
      },
      {
        amountMinor: 9_900,
        category: "software",
        description: "Design tools",
        vendor: "Figma",
        recurrence: "yearly",
        daysAgo: 150
      }
    ],
    // Search Console's grant is revoked after the first sync: its data stops there, and every sync fails since.
    integrations: [{ provider: "stripe" }, { provider: "plausible" }, {
      provider: "google-search-console",
      breaksAfterFirstSync: true
    }]
  }
]
