/**
 * What every report page shares: the website frame (name, the tabs, the website loaded once), panels that
 * load on their own (a failure says what failed and offers a retry; never the whole page), the page's
 * busy flag (`main[aria-busy]`, false once its primary data is in), and number formatting.
 */
import { useAtomValue } from "@effect/atom-react"
import type { Website } from "@sitehealth/domain/Dashboard"
import type { Atom } from "effect/reactivity"
import { AsyncResult } from "effect/reactivity"
import { type ReactNode, useId } from "react"
import { websitesAtom } from "../../client.ts"
import { Link, WEBSITE_TAB_NAMES, websiteHref } from "../../navigation.tsx"
import { Outcome } from "./outcome.tsx"

export { Busy, Outcome, settled, Sparkline, statusLabel, useBusy } from "./outcome.tsx"

/** The props every page of one website gets. */
export interface WebsitePageProps {
  readonly website: Website
}

/** An atom's result in a panel of its own: loading, a failure in words with "Try again", or the value. */
export function Panel<A, E>({ atom, title, what, children, className }: {
  readonly atom: Atom.Atom<AsyncResult.AsyncResult<A, E>>
  readonly title: string
  readonly what: string
  readonly children: (value: A) => ReactNode
  readonly className?: string
}) {
  const result = useAtomValue(atom)
  const id = useId()
  return (
    <section
      className={`panel ${className ?? ""}`}
      aria-labelledby={id}
      aria-busy={AsyncResult.isInitial(result) || result.waiting}
    >
      <h2 id={id}>{title}</h2>
      <Outcome atom={atom} result={result} what={what}>{children}</Outcome>
    </section>
  )
}

/** One website's frame: the way back, the website's name, and its tabs (the current one marked). */
export const WebsiteFrame = ({ id, tab, children }: {
  readonly id: string
  readonly tab: string
  readonly children: (website: Website) => ReactNode
}) => {
  const websites = useAtomValue(websitesAtom)
  return (
    <Outcome atom={websitesAtom} result={websites} what="the website">
      {({ websites }) => {
        const website = websites.find((w) => w.id === id)
        if (website === undefined) {
          return (
            <>
              <h1>Website not found</h1>
              <p>
                No website of yours has the id <code>{id}</code>; it may have been deleted.{" "}
                <Link href="/overview">All websites</Link>
              </p>
            </>
          )
        }
        return (
          <>
            <p className="site-line">
              <Link href="/overview">← Overview</Link> <span className="muted">·</span> <strong>{website.name}</strong>
              {" "}
              <span className="muted">{website.domain}</span>
            </p>
            <nav aria-label={`${website.name} reports`} className="tabs">
              <ul>
                {WEBSITE_TAB_NAMES.map((t) => (
                  <li key={t.tab}>
                    <Link href={websiteHref(website.id, t.tab)} aria-current={t.tab === tab ? "page" : undefined}>
                      {t.label}
                    </Link>
                  </li>
                ))}
              </ul>
            </nav>
            {children(website)}
          </>
        )
      }}
    </Outcome>
  )
}

const locale = undefined
export const formatNumber = (n: number | null | undefined, digits = 0) =>
  n === null || n === undefined ? "—" : new Intl.NumberFormat(locale, { maximumFractionDigits: digits }).format(n)
/** Minor units → the currency's own format (2 decimals for most, 0 for JPY…). */
export const formatMoney = (minor: number | null | undefined, currency: string) => {
  if (minor === null || minor === undefined) return "—"
  const digits = new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions().maximumFractionDigits ??
    2
  return new Intl.NumberFormat(locale, { style: "currency", currency }).format(minor / 10 ** digits)
}
/** A ratio as a signed percentage: 0.123 → "+12.3 %". */
export const formatChange = (r: number | null | undefined) =>
  r === null || r === undefined
    ? "—"
    : `${r > 0 ? "+" : r < 0 ? "−" : "±"}${
      new Intl.NumberFormat(locale, { maximumFractionDigits: 1 }).format(Math.abs(r * 100))
    } %`
export const formatPercent = (r: number | null | undefined) =>
  r === null || r === undefined
    ? "—"
    : `${new Intl.NumberFormat(locale, { maximumFractionDigits: 1 }).format(r * 100)} %`
export const formatDay = (d: string | null | undefined) =>
  d === null || d === undefined
    ? "—"
    : new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeZone: "UTC" }).format(new Date(`${d}T00:00:00Z`))
export const formatWhen = (d: string | null | undefined) =>
  d === null || d === undefined
    ? "never"
    : new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeStyle: "medium" }).format(new Date(d))

export const dimensionLabel: Record<string, string> = {
  traffic: "Traffic",
  revenue: "Revenue",
  retention: "Retention",
  seo: "SEO",
  profitability: "Profitability"
}
/** A tab's label ("SEO" for "seo"). */
export const tabLabel = (tab: string) => WEBSITE_TAB_NAMES.find((t) => t.tab === tab)?.label ?? tab

/** Which page shows a dimension's figures. */
export const dimensionTab: Record<string, string> = {
  traffic: "analytics",
  revenue: "revenue",
  retention: "revenue",
  seo: "seo",
  profitability: "expenses"
}
