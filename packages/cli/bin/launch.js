// What the executables (`sitehealth`, this package's; `sitehealth-mcp`, @sitehealth/mcp's) do: run the
// package's bundle, dist/<name>.mjs (built by `npm install`: scripts/bundle.ts), unless a source it was built
// from (dist/inputs.json) is newer than it or gone — then the TypeScript sources themselves (Node 22.18+ strips
// types; several times slower to start), so a stale bundle is never what answers. The server's launcher
// (@sitehealth/server's bin/launch.js) takes the same freshness rule from here and rebuilds instead.
// Plain JavaScript: it runs before anything is built. Imported by package name: `@sitehealth/cli/launch`.
import { existsSync, readFileSync, statSync } from "node:fs"
import * as Module from "node:module"

/**
 * True when dist/<name>.mjs under `root` (a file URL ending in `/`) exists and no source listed in
 * dist/inputs.json is newer than it or missing.
 */
export const isFresh = (root, name) => {
  const bundle = new URL(`dist/${name}.mjs`, root)
  const inputs = new URL("dist/inputs.json", root)
  if (!existsSync(bundle) || !existsSync(inputs)) return false
  const built = statSync(bundle).mtimeMs
  let sources
  try {
    sources = JSON.parse(readFileSync(inputs, "utf8"))
  } catch {
    return false
  }
  return Array.isArray(sources) && sources.length > 0 && sources.every((source) => {
    const file = new URL(source, root)
    return existsSync(file) && statSync(file).mtimeMs <= built
  })
}

/**
 * Runs the package at `root` (a file URL ending in `/`): `dist/<name>.mjs` when fresh, else `src/main.ts`.
 * V8's code cache on disk (Node 22.1+, `module.enableCompileCache`) is on for what it loads: a start after
 * the first skips compiling the bundle (measured in docs/benchmarks.md; NODE_DISABLE_COMPILE_CACHE=1 turns
 * it off).
 */
export const launch = async (root, name) => {
  Module.enableCompileCache?.()
  await import(isFresh(root, name) ? new URL(`dist/${name}.mjs`, root).href : new URL("src/main.ts", root).href)
}
