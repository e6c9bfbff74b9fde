/**
 * What the overview shares with the report pages (and so loads without the website frame and the rest of
 * shared.tsx, which re-exports all of this): the page's busy flag (`main[aria-busy]`, false once its primary
 * data is in), an atom's result shown with its failure and a retry, the health status labels, the sparkline.
 */
import { useAtomRefresh } from "@effect/atom-react"
import type { Atom } from "effect/reactivity"
import { AsyncResult } from "effect/reactivity"
import { type ReactNode, useEffect } from "react"
import { ErrorMessage, Loading } from "../../ui.tsx"

/**
 * Sets `main[aria-busy]`: true until the page's primary data has loaded (or failed: then there is nothing to wait for).
 */
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
export const settled = (result: AsyncResult.AsyncResult<unknown, unknown>) =>
  !AsyncResult.isInitial(result) && !result.waiting

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

export const statusLabel: Record<string, string> = {
  healthy: "Healthy",
  watch: "Watch",
  at_risk: "At risk",
  critical: "Critical",
  no_data: "No data"
}

/** A small inline SVG line of scores (0–100), with its values as text for screen readers. */
export const Sparkline = (
  { points, label }: { readonly points: ReadonlyArray<number | null>; readonly label: string }
) => {
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
