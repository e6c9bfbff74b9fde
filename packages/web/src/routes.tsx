/**
 * The route table of the web app: the pages of a website's tabs and the overview, each its own chunk loaded
 * when first shown, and which path is which page. Imported by App.tsx alone; the navigation every page uses is
 * navigation.tsx.
 */
import type { Website } from "@sitehealth/domain/Dashboard"
import { type ComponentType, createElement, type ReactNode, useEffect, useState } from "react"
import { WEBSITE_TAB_NAMES } from "./navigation.tsx"
import { Loading } from "./ui.tsx"

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
export const lazyComponent = <P extends object>(
  load: () => Promise<{ readonly default: ComponentType<P> }>,
  fallback: ReactNode
) => {
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

/** Each tab's page module. */
const PAGES: Record<string, () => Promise<{ readonly default: WebsitePageComponent }>> = {
  "": () => import("./pages/reports/Briefing.tsx"),
  signals: () => import("./pages/reports/Signals.tsx"),
  analytics: () => import("./pages/reports/Analytics.tsx"),
  revenue: () => import("./pages/reports/Revenue.tsx"),
  seo: () => import("./pages/reports/Seo.tsx"),
  expenses: () => import("./pages/reports/Expenses.tsx"),
  integrations: () => import("./pages/reports/Integrations.tsx"),
  alerts: () => import("./pages/reports/Alerts.tsx"),
  settings: () => import("./pages/Websites.tsx").then((m) => ({ default: m.WebsiteSettings }))
}

/** The tabs of a website (navigation.tsx names them), each with its page. */
export const WEBSITE_TABS: ReadonlyArray<WebsiteTab> = WEBSITE_TAB_NAMES.map(({ label, tab }) => {
  const page = lazyComponent(PAGES[tab]!, <Loading what={`the ${label.toLowerCase()} page`} />)
  return { tab, label, page: page.Component, load: page.load }
})

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
  const whenIdle =
    () => (w.requestIdleCallback !== undefined ? w.requestIdleCallback(run, { timeout: 3000 }) : setTimeout(run, 200))
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

/** `/websites/:id[/<tab>]` → the website's id and its tab; null for any other path or an unknown tab. */
export const matchWebsite = (path: string): { readonly id: string; readonly tab: WebsiteTab } | null => {
  const m = /^\/websites\/([^/]+)(?:\/([a-z-]+))?\/?$/.exec(path)
  if (m === null) return null
  const tab = WEBSITE_TABS.find((t) => t.tab === (m[2] ?? ""))
  return tab === undefined ? null : { id: decodeURIComponent(m[1]!), tab }
}
