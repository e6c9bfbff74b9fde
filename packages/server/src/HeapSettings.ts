/**
 * V8 settings of a process that runs the integrations' syncs: the standalone worker (worker/main.ts) applies
 * them at start, and `npm run bench:stripe` applies the same to its syncing process, so that the bench
 * measures what the worker runs with.
 *
 * A sync's listing allocates a page's response text, its parsed JSON, the decoded objects and the batch's
 * JSON parameter per page, and most of it dies within the page — but enough survives two scavenges to be
 * promoted, and V8 lets the old space grow to up to ~4× its live size before the next mark-compact: a 100k
 * subscription sync peaked at 299–327 MB of RSS with 156–160 MB of heap used, most of it garbage.
 * `--heap-growing-percent=N` fixes that factor at 1 + N/100 (V8 reads the flag each time it sets the next
 * limit, so setting it at start takes effect); figures in docs/benchmarks.md ("Stripe sync (issue 18)").
 */
import * as V8 from "node:v8"

/** The old space's growing factor of a syncing process: the next mark-compact at 1.75× the live size. */
export const SYNC_HEAP_GROWING_PERCENT = 75

/** Applies the syncing process's V8 settings; call once, at the process's start. */
export const applySyncHeapSettings = (): void => {
  V8.setFlagsFromString(`--heap-growing-percent=${SYNC_HEAP_GROWING_PERCENT}`)
}
