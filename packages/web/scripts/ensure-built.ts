/**
 * `npm start` runs this first: builds the dashboard (packages/web/dist) when it is missing, so a fresh
 * clone serves it without a separate step. A failed build does not stop the API from starting: the server
 * answers the pages with a 503 saying how to build them.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
if (!Fs.existsSync(Path.join(root, "dist/index.html"))) {
  process.stderr.write("sitehealth: building the web dashboard (packages/web/dist)…\n")
  const vite = Path.resolve(root, "../../node_modules/vite/bin/vite.js")
  const result = spawnSync(process.execPath, [vite, "build", "--logLevel", "warn"], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, NODE_ENV: "production" }
  })
  if (result.status !== 0) process.stderr.write("sitehealth: the dashboard build failed; the API starts without it\n")
}
