/** What the shell draws and every page shares: failures in words, loading states (pages' own blocks: forms.tsx). */
import { type Cause } from "effect"
import { AsyncResult } from "effect/reactivity"
import {
  createContext,
  type HTMLAttributes,
  type ReactNode,
  useCallback,
  useContext,
  useLayoutEffect,
  useState
} from "react"
import { describeCause, describeError } from "./errors.ts"

export const ErrorMessage = (
  { cause, error, title }: { readonly cause?: Cause.Cause<unknown>; readonly error?: unknown; readonly title?: string }
) => {
  const d = cause !== undefined ? describeCause(cause) : describeError(error)
  return (
    <div className="alert error" role="alert">
      <strong>{title ?? d.title}</strong>
      {title !== undefined ? <p>{d.title}</p> : null}
      {d.detail !== undefined ? <p>{d.detail}</p> : null}
    </div>
  )
}

/**
 * "Usable": the page's `<main>` carries `aria-busy="true"` while anything inside it is still loading, and
 * `aria-busy="false"` once it is not — for assistive technology, and the convention the browser bench
 * (bench/web.ts) measures "usable" by. Every `<Loading>` (a page's primary data through `<Result>`, a lazy
 * page's chunk through `lazyComponent`, routes.tsx) counts as busy while shown; a page can add its own with
 * `useBusy(true)`.
 * A chart container sets `data-drawn="true"` once drawn (the bench's "charts drawn").
 */
const BusyContext = createContext<(delta: 1 | -1) => void>(() => {})

/** Marks the enclosing `<BusyMain>` busy while `active` (and this component is mounted). */
export const useBusy = (active: boolean) => {
  const change = useContext(BusyContext)
  // A layout effect: the count changes in the same commit, so `aria-busy` never shows "false" in between.
  useLayoutEffect(() => {
    if (!active) return
    change(1)
    return () => change(-1)
  }, [active, change])
}

/** The page's `<main>`: `aria-busy` true while any `<Loading>` or `useBusy(true)` inside it is. */
export const BusyMain = ({ children, ...rest }: HTMLAttributes<HTMLElement> & { readonly children: ReactNode }) => {
  const [busy, setBusy] = useState(0)
  const change = useCallback((delta: 1 | -1) => setBusy((n) => n + delta), [])
  return (
    <BusyContext.Provider value={change}>
      <main id="main" {...rest} aria-busy={busy > 0}>{children}</main>
    </BusyContext.Provider>
  )
}

export const Loading = ({ what }: { readonly what: string }) => {
  useBusy(true)
  return <p className="loading" role="status" aria-live="polite">Loading {what}…</p>
}

/** The outcome of a form's last submission, read from its mutation atom. */
export function MutationStatus<A, E>({ result }: { readonly result: AsyncResult.AsyncResult<A, E> }) {
  if (AsyncResult.isFailure(result)) return <ErrorMessage cause={result.cause} />
  return null
}
