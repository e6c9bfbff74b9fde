/**
 * What every report page shares: the website frame (name, the tabs, the website loaded once), panels that
 * load on their own (a failure says what failed and offers a retry; never the whole page), the page's
 * busy flag (`main[aria-busy]`, false once its primary data is in), and number formatting.
 */
import { useAtomRefresh, useAtomValue } from "@effect/atom-react"
import type { Atom } from "effect/reactivity"
import { AsyncResult } from "effect/reactivity"
import { type ReactNode, useEffect, useId } from "react"
import type { Website } from "@sitehealth/domain/Dashboard"
import { websitesAtom } from "../../client.ts"
import { Link, WEBSITE_TABS, websiteHref } from "../../router.tsx"
import { ErrorMessage, Loading } from "../../ui.tsx"

/** The props every page of one website gets. */
export interface WebsitePageProps {
  readonly website: Website
}

/** Sets `main[aria-busy]`: true until the page's primary data has loaded (or failed: then there is nothing to wait for). */
export const useBusy = (busy: boolean) => {
  useEffect(() => {
    const main = document.getElementById("main")
    main?.setAttribute("aria-busy", String(busy))
  }, [busy])
  useEffect(() => () => document.getElementById("main")?.removeAttribute("aria-busy"), [])
}

/** `useBusy` as an element, for a page whose busy state depends on what it renders. */
export const Busy = ({ busy }: { readonly busy: boolean }) => {
  useBusy(busy)
  return null
}

/** True once the result has settled (a value or a failure): what `useBusy` waits for. */
export const settled = (result: AsyncResult.AsyncResult<unknown, unknown>) => !AsyncResult.isInitial(result) && !result.waiting

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
    <section className={`panel ${className ?? ""}`} aria-labelledby={id} aria-busy={AsyncResult.isInitial(result) || result.waiting}>
      <h2 id={id}>{title}</h2>
      <Outcome atom={atom} result={result} what={what}>{children}</Outcome>
    </section>
  )
}

/** Loading / failure with a retry / the value of an atom's result (no frame). */
export function Outcome<A, E>({ atom, result, what, children }: {
  readonly atom: Atom.Atom<AsyncResult.AsyncResult<A, E>>
  readonly result: AsyncResult.AsyncResult<A, E>
  readonly what: string
  readonly children: (value: A) => ReactNode
}) {
  const retry = useAtomRefresh(atom)
  if (AsyncResult.isSuccess(result)) return <>{children(result.value)}</>
  if (AsyncResult.isFailure(result)) {
    return (
      <>
        <ErrorMessage cause={result.cause} title={`Could not load ${what}.`} />
        <button type="button" className="secondary" onClick={retry}>Try again</button>
      </>
    )
  }
  return <Loading what={what} />
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
              <p>No website of yours has the id <code>{id}</code>; it may have been deleted. <Link href="/overview">All websites</Link></p>
            </>
          )
        }
        return (
          <>
            <p className="site-line"><Link href="/overview">← Overview</Link> <span className="muted">·</span> <strong>{website.name}</strong> <span className="muted">{website.domain}</span></p>
            <nav aria-label={`${website.name} reports`} className="tabs">
              <ul>
                {WEBSITE_TABS.map((t) => (
                  <li key={t.tab}>
                    <Link href={websiteHref(website.id, t.tab)} aria-current={t.tab === tab ? "page" : undefined}>{t.label}</Link>
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
  const digits = new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions().maximumFractionDigits ?? 2
  return new Intl.NumberFormat(locale, { style: "currency", currency }).format(minor / 10 ** digits)
}
/** A ratio as a signed percentage: 0.123 → "+12.3 %". */
export const formatChange = (r: number | null | undefined) =>
  r === null || r === undefined ? "—" : `${r > 0 ? "+" : r < 0 ? "−" : "±"}${new Intl.NumberFormat(locale, { maximumFractionDigits: 1 }).format(Math.abs(r * 100))} %`
export const formatPercent = (r: number | null | undefined) =>
  r === null || r === undefined ? "—" : `${new Intl.NumberFormat(locale, { maximumFractionDigits: 1 }).format(r * 100)} %`
export const formatDay = (d: string | null | undefined) =>
  d === null || d === undefined ? "—" : new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeZone: "UTC" }).format(new Date(`${d}T00:00:00Z`))
export const formatWhen = (d: string | null | undefined) =>
  d === null || d === undefined ? "never" : new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeStyle: "medium" }).format(new Date(d))

export const statusLabel: Record<string, string> = {
  healthy: "Healthy", watch: "Watch", at_risk: "At risk", critical: "Critical", no_data: "No data"
}
export const dimensionLabel: Record<string, string> = {
  traffic: "Traffic", revenue: "Revenue", retention: "Retention", seo: "SEO", profitability: "Profitability"
}
/** A tab's label ("SEO" for "seo"). */
export const tabLabel = (tab: string) => WEBSITE_TABS.find((t) => t.tab === tab)?.label ?? tab

/** Which page shows a dimension's figures. */
export const dimensionTab: Record<string, string> = {
  traffic: "analytics", revenue: "revenue", retention: "revenue", seo: "seo", profitability: "expenses"
}

/** A small inline SVG line of scores (0–100), with its values as text for screen readers. */
export const Sparkline = ({ points, label }: { readonly points: ReadonlyArray<number | null>; readonly label: string }) => {
  const w = 96
  const h = 24
  const values = points.map((p, i) => [i, p] as const).filter((p): p is readonly [number, number] => p[1] !== null)
  if (values.length < 2) return <span className="muted">no trend yet</span>
  // The line spans the scores' own range (at least 10 points), so a week's movement shows.
  const lo = Math.min(...values.map(([, v]) => v))
  const hi = Math.max(lo + 10, ...values.map(([, v]) => v))
  const x = (i: number) => (points.length === 1 ? 0 : (i / (points.length - 1)) * (w - 2) + 1)
  const y = (v: number) => h - 2 - ((v - lo) / (hi - lo)) * (h - 4)
  const d = values.map(([i, v], k) => `${k === 0 ? "M" : "L"}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ")
  return (
    <svg className="spark" width={w} height={h} viewBox={`0 0 ${w} ${h}`} role="img" aria-label={label}>
      <path d={d} fill="none" stroke="currentColor" strokeWidth="1.5" />
    </svg>
  )
}
