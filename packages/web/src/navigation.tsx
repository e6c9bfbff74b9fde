/**
 * A tiny router over the History API, its navigation half: the page and its state (which website, which tab, a
 * token just made is NOT state — secrets never go in the URL) live in the path and query string, so reload,
 * back/forward and a pasted link all land on the same page. Every page imports this module; the route table,
 * which imports every page, is routes.tsx (imported by App.tsx alone), so no page imports the pages.
 */
import { type AnchorHTMLAttributes, type MouseEvent, useEffect, useSyncExternalStore } from "react"

const subscribers = new Set<() => void>()
const notify = () => {
  for (const f of subscribers) f()
}
if (typeof window !== "undefined") window.addEventListener("popstate", notify)

const subscribe = (f: () => void) => {
  subscribers.add(f)
  return () => {
    subscribers.delete(f)
  }
}
const snapshot = () => window.location.pathname + window.location.search

export interface Location {
  readonly path: string
  readonly query: URLSearchParams
}

export const useLocation = (): Location => {
  const href = useSyncExternalStore(subscribe, snapshot)
  const url = new URL(href, "http://x")
  return { path: url.pathname, query: url.searchParams }
}

export const navigate = (to: string, options: { readonly replace?: boolean } = {}) => {
  if (to === snapshot()) return
  if (options.replace === true) window.history.replaceState(null, "", to)
  else window.history.pushState(null, "", to)
  window.scrollTo(0, 0)
  notify()
}

/** Sets one query parameter (or removes it when null) without adding a history entry. */
export const setQuery = (name: string, value: string | null) => {
  const url = new URL(window.location.href)
  if (value === null) url.searchParams.delete(name)
  else url.searchParams.set(name, value)
  navigate(url.pathname + url.search, { replace: true })
}

/** An ordinary link (keyboard, middle-click, copy link all work) that navigates in-app on a plain click. */
export const Link = (
  { href, onClick, ...rest }: AnchorHTMLAttributes<HTMLAnchorElement> & { readonly href: string }
) => (
  <a
    href={href}
    onClick={(event: MouseEvent<HTMLAnchorElement>) => {
      onClick?.(event)
      if (
        event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey
      ) return
      event.preventDefault()
      navigate(href)
    }}
    {...rest}
  />
)

let firstPage = true

/**
 * After an in-app navigation, moves focus to the page's heading, so screen-reader and keyboard users start
 * there (a fresh page load leaves focus at the top: the skip link comes first).
 */
export const useFocusHeading = (key: string) => {
  useEffect(() => {
    const initial = firstPage
    firstPage = false
    const arrive = (h1: HTMLElement | null) => {
      if (h1 !== null && !initial) {
        h1.tabIndex = -1
        h1.focus({ preventScroll: true })
      }
      document.title = `${h1?.textContent ?? "sitehealth"} · sitehealth`
    }
    const now = document.querySelector<HTMLElement>("main h1")
    if (now !== null) return arrive(now)
    // A lazily loaded page draws its heading once its code (and the website it is about) has arrived.
    const observer = new MutationObserver(() => {
      const h1 = document.querySelector<HTMLElement>("main h1")
      if (h1 === null) return
      observer.disconnect()
      arrive(h1)
    })
    observer.observe(document.body, { childList: true, subtree: true })
    const giveUp = setTimeout(() => observer.disconnect(), 10_000)
    return () => {
      observer.disconnect()
      clearTimeout(giveUp)
    }
  }, [key])
}

/** The tabs of a website, in the order its navigation shows them: the path segment after /websites/:id ("" for
 * the website's home, the briefing) and its label. routes.tsx gives each its page. */
export const WEBSITE_TAB_NAMES: ReadonlyArray<{ readonly tab: string; readonly label: string }> = [
  { tab: "", label: "Briefing" },
  { tab: "signals", label: "Signals" },
  { tab: "analytics", label: "Analytics" },
  { tab: "revenue", label: "Revenue" },
  { tab: "seo", label: "SEO" },
  { tab: "expenses", label: "Expenses" },
  { tab: "integrations", label: "Integrations" },
  { tab: "alerts", label: "Alerts" },
  { tab: "settings", label: "Settings" }
]

/** The path of a website's tab, with optional query parameters (empty ones left out). */
export const websiteHref = (id: string, tab: string, query: Record<string, string | null | undefined> = {}) => {
  const search = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) if (v !== null && v !== undefined && v !== "") search.set(k, v)
  const qs = search.toString()
  return `/websites/${encodeURIComponent(id)}${tab === "" ? "" : `/${tab}`}${qs === "" ? "" : `?${qs}`}`
}
