/**
 * A tiny router over the History API: the page and its state (which website, which tab, a token just made
 * is NOT state — secrets never go in the URL) live in the path and query string, so reload, back/forward
 * and a pasted link all land on the same page.
 */
import { type AnchorHTMLAttributes, type ComponentType, createElement, type MouseEvent, type ReactNode, useEffect, useState, useSyncExternalStore } from "react"
import type { Website } from "@sitehealth/domain/Dashboard"
import { Loading } from "./ui.tsx"

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
export const Link = ({ href, onClick, ...rest }: AnchorHTMLAttributes<HTMLAnchorElement> & { readonly href: string }) => (
  <a
    href={href}
    onClick={(event: MouseEvent<HTMLAnchorElement>) => {
      onClick?.(event)
      if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
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

/*
 * Routes of the report pages. Each page is its own chunk, loaded when first shown (React.lazy over a dynamic
 * import): a page's code — and the chart code of the pages that draw charts — is fetched only by the pages
 * that use it. A website's page module default-exports a component taking the website.
 */

/**
 * A page's code, loaded when first shown — without Suspense. Until the module is in, the component draws
 * `fallback` (a `<Loading>`: `main` busy); once it is, it draws the page: an ordinary state update. Not
 * `React.lazy`: a component that suspends makes its Suspense boundary show its fallback, and React then holds
 * back the boundary's content until 300 ms after that fallback appeared (its FALLBACK_THROTTLE_MS) however
 * fast the chunk came — on a full load of a report page the chunks were in ~60 ms after the session, the page
 * shown ~300 ms later (docs/benchmarks.md, "The dashboard in a browser"). `load` starts (or joins) the
 * module's fetch: call it as soon as a route is known. A failed fetch is thrown to the nearest error boundary
 * (as React.lazy does) and not kept: the next visit asks again.
 */
export const lazyComponent = <P extends object>(load: () => Promise<{ readonly default: ComponentType<P> }>, fallback: ReactNode) => {
  let loaded: ComponentType<P> | undefined
  let pending: Promise<{ readonly default: ComponentType<P> }> | undefined
  const start = () => (pending ??= load().then((m) => {
    loaded = m.default
    return m
  }, (error: unknown) => {
    pending = undefined
    throw error
  }))
  const Component = (props: P) => {
    const [, arrived] = useState(0)
    const [failure, setFailure] = useState<{ readonly error: unknown }>()
    // Drawn the fallback: draw again once the module is in (also when it came between this render and the effect).
    const waiting = loaded === undefined
    useEffect(() => {
      if (!waiting) return
      let live = true
      start().then(() => live && arrived((n) => n + 1), (error: unknown) => live && setFailure({ error }))
      return () => {
        live = false
      }
    }, [waiting])
    if (failure !== undefined) throw failure.error
    return loaded === undefined ? fallback : createElement(loaded, props)
  }
  return { Component, load: start }
}

/** A page of one website (`/websites/:id/<tab>`): default export of its module. */
export type WebsitePageComponent = ComponentType<{ readonly website: Website }>

interface WebsiteTab {
  /** The path segment after /websites/:id ("" for the website's home, the briefing). */
  readonly tab: string
  readonly label: string
  readonly page: ComponentType<{ readonly website: Website }>
  /**
   * Starts fetching the page's code (the same module `page` loads: a second call costs nothing). Called as
   * soon as the route is known, so the page's chunk loads together with the website's frame, not after it.
   */
  readonly load: () => Promise<unknown>
}

const tab = (tab: string, label: string, load: () => Promise<{ readonly default: WebsitePageComponent }>): WebsiteTab => {
  const page = lazyComponent(load, <Loading what={`the ${label.toLowerCase()} page`} />)
  return { tab, label, page: page.Component, load: page.load }
}

/** The tabs of a website, in the order its navigation shows them. */
export const WEBSITE_TABS: ReadonlyArray<WebsiteTab> = [
  tab("", "Briefing", () => import("./pages/reports/Briefing.tsx")),
  tab("signals", "Signals", () => import("./pages/reports/Signals.tsx")),
  tab("analytics", "Analytics", () => import("./pages/reports/Analytics.tsx")),
  tab("revenue", "Revenue", () => import("./pages/reports/Revenue.tsx")),
  tab("seo", "SEO", () => import("./pages/reports/Seo.tsx")),
  tab("expenses", "Expenses", () => import("./pages/reports/Expenses.tsx")),
  tab("integrations", "Integrations", () => import("./pages/reports/Integrations.tsx")),
  tab("settings", "Settings", () => import("./pages/Websites.tsx").then((m) => ({ default: m.WebsiteSettings })))
]

/**
 * Fetches the code of every website tab (and whatever else `also` names) once the browser is idle after the
 * first page: a report page opened later renders at once, with no Suspense fallback and so without React's
 * 300 ms reveal throttle. It never competes with the first page (idle time only) and a failure is forgotten.
 */
export const prefetchWebsitePages = (also: ReadonlyArray<() => Promise<unknown>> = []) => {
  const run = () => {
    for (const load of [...WEBSITE_TABS.map((t) => t.load), overview.load, ...also]) load().catch(() => undefined)
  }
  const w = window as Window & { requestIdleCallback?: (f: () => void, options?: { timeout: number }) => number }
  const whenIdle = () => (w.requestIdleCallback !== undefined ? w.requestIdleCallback(run, { timeout: 3000 }) : setTimeout(run, 200))
  // Only once the page in view has loaded its data (`main` no longer busy), so it never waits behind the
  // prefetch; at the latest after 10 s. Called once logged in, as the page is drawn: a page still loading says
  // so within the same task (its `<Loading>`'s layout effect), so `main` not busy at the first check, a
  // task later, means the page is in. (It used to wait to have SEEN `main` busy, polling every 100 ms: once
  // pages stopped suspending, a page busy for less than one poll was never seen so, and the prefetch waited
  // the full 10 s — a report page opened meanwhile loaded its code then.)
  let tries = 0
  const wait = () => {
    if (document.querySelector("main")?.getAttribute("aria-busy") !== "true" || ++tries > 100) whenIdle()
    else setTimeout(wait, 100)
  }
  setTimeout(wait, 0)
}

/** The overview of every website (`/overview`, where `/` leads). */
const overview = lazyComponent(() => import("./pages/reports/Overview.tsx"), <Loading what="the page" />)
export const OverviewPage = overview.Component
export const loadOverviewPage = overview.load

/** The path of a website's tab, with optional query parameters (empty ones left out). */
export const websiteHref = (id: string, tab: string, query: Record<string, string | null | undefined> = {}) => {
  const search = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) if (v !== null && v !== undefined && v !== "") search.set(k, v)
  const qs = search.toString()
  return `/websites/${encodeURIComponent(id)}${tab === "" ? "" : `/${tab}`}${qs === "" ? "" : `?${qs}`}`
}

/** `/websites/:id[/<tab>]` → the website's id and its tab; null for any other path or an unknown tab. */
export const matchWebsite = (path: string): { readonly id: string; readonly tab: WebsiteTab } | null => {
  const m = /^\/websites\/([^/]+)(?:\/([a-z-]+))?\/?$/.exec(path)
  if (m === null) return null
  const tab = WEBSITE_TABS.find((t) => t.tab === (m[2] ?? ""))
  return tab === undefined ? null : { id: decodeURIComponent(m[1]!), tab }
}
