/**
 * V8's old-space growing factor, set at a process's start (V8 reads `--heap-growing-percent` each time it sets
 * the next limit, so setting it then takes effect; one in `NODE_OPTIONS` is overridden). By default V8 lets
 * the old space grow to up to ~4× its live size before the next mark-compact, and what fills it is garbage:
 * a serving process's requests still in flight at two scavenges, a sync's pages (response text, parsed JSON,
 * decoded objects, the batch's parameter). A factor of 1 + N/100 keeps the peak near the live size.
 *
 * - Serving only (`main.ts` with the worker off): 2×. Under the bench's saturating load the peak RSS was
 *   ~210 MB against 270–300 MB without it, in the same runs; 1.75× gave no lower peak (206–213 MB) and a
 *   third more mark-compacts, 1.5× ~195 MB for ~+16 % CPU (docs/benchmarks.md, "Where the server's memory goes").
 * - Syncing (`WorkerMain.ts`, `main.ts` with the worker in-process, and `npm run bench:stripe`, so that the
 *   bench measures what the worker runs with): 1.75×. A 100k-subscription Stripe sync then peaks at 83–90 MB
 *   of heap used and 210–224 MB of RSS instead of 307–320 MB (docs/benchmarks.md, "Stripe sync (issue 18)").
 */
import * as V8 from "node:v8"

/** Serving only: the next mark-compact at 2× the live size. */
export const SERVING_HEAP_GROWING_PERCENT = 100
/** A process that syncs: the next mark-compact at 1.75× the live size. */
export const SYNC_HEAP_GROWING_PERCENT = 75

/** Applies the process's V8 settings; call once, at its start. `syncs`: the process runs integration syncs. */
export const applyHeapSettings = (options: { readonly syncs: boolean }): void => {
  V8.setFlagsFromString(
    `--heap-growing-percent=${options.syncs ? SYNC_HEAP_GROWING_PERCENT : SERVING_HEAP_GROWING_PERCENT}`
  )
}
