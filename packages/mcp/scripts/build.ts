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
const outdir = Path.join(root, "dist")
const outfile = Path.join(outdir, "sitehealth-mcp.mjs")
// Old chunks would pile up: each build writes its own hashed names.
Fs.rmSync(outdir, { recursive: true, force: true })

const result = await build({
  entryPoints: [Path.join(root, "src/main.ts")],
  outdir,
  entryNames: "sitehealth-mcp",
  chunkNames: "chunks/[name]-[hash]",
  outExtension: { ".js": ".mjs" },
  // The contract and the tool table are imported dynamically (Server.ts, main.ts): their own chunks, loaded
  // after `initialize` has been answered.
  splitting: true,
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
const bytes = Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0)
const entryBytes = Fs.statSync(outfile).size
const inputs = Object.keys(result.metafile.inputs).length
process.stdout.write(`@sitehealth/mcp: built ${Path.relative(process.cwd(), outfile)} (${(entryBytes / 1024).toFixed(0)} KiB, ${(bytes / 1024).toFixed(0)} KiB with its lazy chunks, from ${inputs} modules)\n`)
