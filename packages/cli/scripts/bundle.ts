/**
 * The bundler of both executables (`sitehealth`: scripts/build.ts here; `sitehealth-mcp`: @sitehealth/mcp's
 * scripts/build.ts), by package name `@sitehealth/cli/bundle`: src/main.ts and all it imports, minified,
 * into dist/<name>.mjs, which bin/launch.js runs while it is fresher than every source. Run by `npm install`
 * (each package's prepare) and `npm run build -w <package>`; dist/ is not committed.
 */
import { build, type Metafile, type Plugin } from "esbuild"
import * as Fs from "node:fs"
import * as Path from "node:path"

export interface BundleOptions {
  /** The package's folder (holds src/main.ts and gets dist/). */
  readonly root: string
  /** dist/<name>.mjs */
  readonly name: string
  /** Dynamic imports become chunks of their own (dist/chunks/), loaded when first imported. */
  readonly splitting?: boolean
  /**
   * Packages left out of the bundle: each import of one gets a module whose default export throws when
   * called or constructed. Only for a dependency's code the program can never reach (say why at the call).
   */
  readonly leaveOut?: ReadonlyArray<string>
  /** Where to write (default: the package's dist/, emptied first). */
  readonly outdir?: string
}

const leftOut = (names: ReadonlyArray<string>): Plugin => ({
  name: "leave-out",
  setup(b) {
    const filter = new RegExp(`^(${names.map((n) => n.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&")).join("|")})$`)
    b.onResolve({ filter }, (args) => ({ path: args.path, namespace: "left-out" }))
    b.onLoad({ filter: /.*/, namespace: "left-out" }, (args) => ({
      contents: `export default function leftOut() { throw new Error(${JSON.stringify(`${args.path} is not in this bundle`)}) }`,
      loader: "js"
    }))
  }
})

/** Builds the bundle; answers esbuild's metafile (what went into which output, and what each imports). */
export const bundle = async ({ root, name, splitting = false, leaveOut = [], outdir = Path.join(root, "dist") }: BundleOptions): Promise<Metafile> => {
  const outfile = Path.join(outdir, `${name}.mjs`)
  // Old chunks would pile up: each build writes its own hashed names.
  Fs.rmSync(outdir, { recursive: true, force: true })
  const result = await build({
    entryPoints: [Path.join(root, "src/main.ts")],
    outdir,
    entryNames: name,
    chunkNames: "chunks/[name]-[hash]",
    outExtension: { ".js": ".mjs" },
    splitting,
    bundle: true,
    platform: "node",
    target: "node22",
    format: "esm",
    minify: true,
    legalComments: "none",
    metafile: true,
    plugins: leaveOut.length > 0 ? [leftOut(leaveOut)] : [],
    // Some dependencies call require() for node built-ins; an ES module has none unless given one.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    logLevel: "warning"
  })
  const bytes = Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0)
  const entryBytes = Fs.statSync(outfile).size
  const inputs = Object.keys(result.metafile.inputs).length
  const chunks = bytes > entryBytes ? `, ${(bytes / 1024).toFixed(0)} KiB with its lazy chunks` : ""
  process.stdout.write(`${name}: built ${Path.relative(process.cwd(), outfile)} (${(entryBytes / 1024).toFixed(0)} KiB${chunks}, from ${inputs} modules)\n`)
  return result.metafile
}
