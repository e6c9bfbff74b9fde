// What both executables (`sitehealth`, this package's; `sitehealth-mcp`, @sitehealth/mcp's) do: run the
// package's bundle, dist/<name>.mjs (built by `npm install`: scripts/bundle.ts), unless a source file of the
// package or of the contract (packages/domain/src) is newer than it — then the TypeScript sources themselves
// (Node 22.18+ strips types; several times slower to start), so a stale bundle is never what answers.
// Plain JavaScript: it runs before anything is built. Imported by package name: `@sitehealth/cli/launch`.
import { existsSync, readdirSync, statSync } from "node:fs"
import * as Module from "node:module"

/** The newest modification time of a `.ts` file below these folders (0 when none). */
const newestSource = (dirs) => {
  let newest = 0
  for (const dir of dirs) {
    if (!existsSync(dir)) continue
    for (const name of readdirSync(dir, { recursive: true })) {
      if (String(name).endsWith(".ts")) newest = Math.max(newest, statSync(new URL(String(name), dir)).mtimeMs)
    }
  }
  return newest
}

/**
 * Runs the package at `root` (a file URL ending in `/`): `dist/<name>.mjs` when fresh, else `src/main.ts`.
 * V8's code cache on disk (Node 22.1+, `module.enableCompileCache`) is on for what it loads: a start after
 * the first skips compiling the bundle (measured in docs/benchmarks.md; NODE_DISABLE_COMPILE_CACHE=1 turns
 * it off).
 */
export const launch = async (root, name) => {
  Module.enableCompileCache?.()
  const bundle = new URL(`dist/${name}.mjs`, root)
  const sources = [new URL("src/", root), new URL("../domain/src/", root)]
  const useBundle = existsSync(bundle) && statSync(bundle).mtimeMs >= newestSource(sources)
  await import(useBundle ? bundle.href : new URL("src/main.ts", root).href)
}
