// What `npm start` (bin/server.js) and `npm run worker` (bin/worker.js) run: the bundle, dist/<name>.mjs
// (scripts/build.ts, built by `npm install`), rebuilt first when a source it was built from (dist/inputs.json)
// is newer than it or gone — the CLI's freshness rule (@sitehealth/cli/launch) — so a stale bundle is never
// what serves. Should the build fail, the TypeScript sources themselves run (Node 22.18+ strips types), at
// ~70 MB more memory. Plain JavaScript: it runs before anything is built, and it loads neither esbuild nor
// the type stripper into the server's process.
import { isFresh as isFreshIn } from "@sitehealth/cli/launch"
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

const packageRoot = new URL("../", import.meta.url)

/** True when this package's dist/<name>.mjs is fresh (or the one under `root`, a file URL ending in `/`). */
export const isFresh = (name, root = packageRoot) => isFreshIn(root, name)

/** Runs dist/<name>.mjs, building it first when stale; `source` (relative to the package) when it cannot be built. */
export const launch = async (name, source) => {
  if (!isFresh(name)) {
    process.stderr.write(`sitehealth: building the ${name} (packages/server/dist)…\n`)
    // The build's own report goes to stderr: stdout stays the program's.
    spawnSync(process.execPath, [fileURLToPath(new URL("scripts/build.ts", packageRoot)), "--keep"], {
      stdio: ["ignore", 2, 2]
    })
  }
  if (isFresh(name)) {
    await import(new URL(`dist/${name}.mjs`, packageRoot).href)
  } else {
    process.stderr.write(`sitehealth: the ${name} bundle could not be built; running the TypeScript sources\n`)
    await import(new URL(source, packageRoot).href)
  }
}
