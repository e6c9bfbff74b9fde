// What `npm start` (bin/server.js) and `npm run worker` (bin/worker.js) run: the bundle, dist/<name>.mjs
// (scripts/build.ts, built by `npm install`), rebuilt first when a source it was built from (dist/inputs.json)
// is newer than it or gone, so a stale bundle is never what serves. Should the build fail, the TypeScript
// sources themselves run (Node 22.18+ strips types), at ~50 MB more memory. Plain JavaScript: it runs before
// anything is built, and it loads neither esbuild nor the type stripper into the server's process.
import { spawnSync } from "node:child_process"
import { existsSync, readFileSync, statSync } from "node:fs"
import { fileURLToPath } from "node:url"

const packageRoot = new URL("../", import.meta.url)

/** True when dist/<name>.mjs exists and no source listed in dist/inputs.json is newer or missing. */
export const isFresh = (name, root = packageRoot) => {
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

/** Runs dist/<name>.mjs, building it first when stale; `source` (relative to the package) when it cannot be built. */
export const launch = async (name, source) => {
  const root = packageRoot
  if (!isFresh(name)) {
    process.stderr.write(`sitehealth: building the ${name} (packages/server/dist)…\n`)
    // The build's own report goes to stderr: stdout stays the program's.
    spawnSync(process.execPath, [fileURLToPath(new URL("scripts/build.ts", root)), "--keep"], { stdio: ["ignore", 2, 2] })
  }
  if (isFresh(name)) {
    await import(new URL(`dist/${name}.mjs`, root).href)
  } else {
    process.stderr.write(`sitehealth: the ${name} bundle could not be built; running the TypeScript sources\n`)
    await import(new URL(source, root).href)
  }
}
