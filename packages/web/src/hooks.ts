/** Running a mutation from a form: its current result (for the failure message) and a runner giving the Exit. */
import { useAtom } from "@effect/atom-react"
import type { AsyncResult, Atom } from "effect/reactivity"

export const useMutation = <A, E, W>(atom: Atom.Writable<AsyncResult.AsyncResult<A, E>, W>) =>
  useAtom(atom, { mode: "promiseExit" })
