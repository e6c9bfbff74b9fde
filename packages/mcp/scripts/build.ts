/**
 * Bundles the stdio MCP server into one file, dist/sitehealth-mcp.mjs, so a client's spawn reaches
 * `initialize` in a fraction of the time loading the TypeScript sources module by module takes (~1 s).
 * Run by `npm install` (prepare) and `npm run build -w @sitehealth/mcp`; dist/ is not committed.
 * bin/sitehealth-mcp.js uses the bundle when it is fresher than every source, else the sources.
 */
import { build } from "esbuild"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const outfile = Path.join(root, "dist/sitehealth-mcp.mjs")

const result = await build({
  entryPoints: [Path.join(root, "src/main.ts")],
  outfile,
  bundle: true,
  platform: "node",
  target: "node22",
  format: "esm",
  minify: true,
  legalComments: "none",
  metafile: true,
  // Some dependencies call require() for node built-ins; an ES module has none unless given one.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  logLevel: "warning"
})
const bytes = Fs.statSync(outfile).size
const inputs = Object.keys(result.metafile.inputs).length
process.stdout.write(`@sitehealth/mcp: built ${Path.relative(process.cwd(), outfile)} (${(bytes / 1024).toFixed(0)} KiB from ${inputs} modules)\n`)
