/** True when dist/<name>.mjs (under `root`, the package's folder as a file URL ending in `/`) exists and no source listed in dist/inputs.json is newer or missing. */
export declare const isFresh: (name: string, root?: URL) => boolean
/** Runs dist/<name>.mjs, building it first when stale; `source` (relative to the package) when it cannot be built. */
export declare const launch: (name: string, source: string) => Promise<void>
