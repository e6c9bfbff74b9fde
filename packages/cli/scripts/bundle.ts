/**
 * The bundler of the executables (`sitehealth`: scripts/build.ts here; `sitehealth-mcp`: @sitehealth/mcp's
 * scripts/build.ts; the server and the worker: @sitehealth/server's scripts/build.ts), by package name
 * `@sitehealth/cli/bundle`: each entry (src/main.ts unless told) and all it imports, minified, into
 * dist/<name>.mjs, which the package's launcher runs while it is fresher than every source it was built from
 * (dist/inputs.json, written here; bin/launch.js). Run by `npm install`
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
  /** More entries, built together with the first: dist/<key>.mjs from the file (relative to root). */
  readonly moreEntries?: Readonly<Record<string, string>>
  /** The first entry's source, relative to root (default src/main.ts). */
  readonly entry?: string
  /** Dynamic imports become chunks of their own (dist/chunks/), loaded when first imported. */
  readonly splitting?: boolean
  /**
   * Packages left out of the bundle: each import of one gets a module whose default export throws when
   * called or constructed. Only for a dependency's code the program can never reach (say why at the call).
   */
  readonly leaveOut?: ReadonlyArray<string>
  /** Packages imported at run time from node_modules instead of bundled (native binaries, say). */
  readonly external?: ReadonlyArray<string>
  /** Where to write (default: the package's dist/). */
  readonly outdir?: string
  /**
   * Empty outdir first (default true). Off for a build beside running processes: the chunks are named by
   * their content, so the ones a running process may still load are left where they are.
   */
  readonly clean?: boolean
}

const leftOut = (names: ReadonlyArray<string>): Plugin => ({
  name: "leave-out",
  setup(b) {
    const filter = new RegExp(`^(${names.map((n) => n.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&")).join("|")})$`)
    b.onResolve({ filter }, (args) => ({ path: args.path, namespace: "left-out" }))
    b.onLoad({ filter: /.*/, namespace: "left-out" }, (args) => ({
      contents: `export default function leftOut() { throw new Error(${
        JSON.stringify(`${args.path} is not in this bundle`)
      }) }`,
      loader: "js"
    }))
  }
})

/** In outdir: the list of the sources a build was made from (bin/launch.js reads it). */
export const INPUTS_FILE = "inputs.json"

/** Writes a file whole or not at all (a rename), so a process starting meanwhile never reads half of one. */
const writeAtomically = (file: string, contents: Uint8Array) => {
  Fs.mkdirSync(Path.dirname(file), { recursive: true })
  const tmp = `${file}.${process.pid}.tmp`
  Fs.writeFileSync(tmp, contents)
  Fs.renameSync(tmp, file)
}

/** Builds the bundle; answers esbuild's metafile (what went into which output, and what each imports). */
export const bundle = async ({
  root,
  name,
  moreEntries = {},
  entry = "src/main.ts",
  splitting = false,
  leaveOut = [],
  external = [],
  outdir = Path.join(root, "dist"),
  clean = true
}: BundleOptions): Promise<Metafile> => {
  const outfile = Path.join(outdir, `${name}.mjs`)
  // Old chunks would pile up: each build writes its own hashed names.
  if (clean) Fs.rmSync(outdir, { recursive: true, force: true })
  const entryPoints = Object.fromEntries(
    [[name, entry] as const, ...Object.entries(moreEntries)].map(([n, file]) => [n, Path.join(root, file)])
  )
  const result = await build({
    entryPoints,
    outdir,
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
    write: false,
    external: [...external],
    plugins: leaveOut.length > 0 ? [leftOut(leaveOut)] : [],
    // Some dependencies call require() for node built-ins; an ES module has none unless given one.
    banner: {
      js:
        "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"
    },
    logLevel: "warning"
  })
  // Chunks first, entries last: an entry on disk always finds the chunks it names.
  const entryFiles = new Set(Object.keys(entryPoints).map((n) => Path.join(outdir, `${n}.mjs`)))
  const ordered = [...result.outputFiles].sort((a, b) =>
    Number(entryFiles.has(a.path)) - Number(entryFiles.has(b.path))
  )
  for (const file of ordered) writeAtomically(file.path, file.contents)
  // The sources it was built from (not node_modules': `npm install` rebuilds), relative to the package: what
  // the launchers (bin/launch.js) compare the bundle with.
  const sources = Object.keys(result.metafile.inputs)
    .filter((input) => !input.includes("node_modules/") && !input.includes(":"))
    .map((input) => Path.relative(root, Path.resolve(input)))
    .sort()
  writeAtomically(Path.join(outdir, INPUTS_FILE), new TextEncoder().encode(JSON.stringify(sources, null, 1) + "\n"))
  const bytes = Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0)
  const entryBytes = Fs.statSync(outfile).size
  const inputs = Object.keys(result.metafile.inputs).length
  const chunks = bytes > entryBytes ? `, ${(bytes / 1024).toFixed(0)} KiB with its chunks` : ""
  process.stdout.write(
    `${name}: built ${Path.relative(process.cwd(), outfile)} (${
      (entryBytes / 1024).toFixed(0)
    } KiB${chunks}, from ${inputs} modules)\n`
  )
  return result.metafile
}

/** An output of a build and every output it imports statically: what loads before its first line runs. */
export const loadedAtStart = (meta: Metafile, entry: string): ReadonlyArray<string> => {
  const seen = new Set<string>()
  const visit = (output: string) => {
    if (seen.has(output)) return
    seen.add(output)
    for (const imported of meta.outputs[output]!.imports) {
      if (imported.kind === "import-statement" && imported.path in meta.outputs) visit(imported.path)
    }
  }
  visit(entry)
  return [...seen]
}
