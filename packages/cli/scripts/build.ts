/**
 * Bundles the CLI into one file, dist/sitehealth.mjs, so `sitehealth --help` starts in well under 300 ms
 * (loading the TypeScript sources module by module takes 500–750 ms). Run by `npm install` (prepare) and
 * `npm run build -w @sitehealth/cli`; dist/ is not committed. bin/sitehealth.js uses the bundle when
 * present, else the sources.
 */
import { build } from "esbuild"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const outfile = Path.join(root, "dist/sitehealth.mjs")

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
process.stdout.write(`@sitehealth/cli: built ${Path.relative(process.cwd(), outfile)} (${(bytes / 1024).toFixed(0)} KiB from ${inputs} modules)\n`)
