/**
 * Rewrites barrel imports of Effect into module imports, in the packages the server loads:
 *
 *   import { Effect, Layer, pipe } from "effect"       →  import * as Effect from "effect/Effect"
 *                                                          import * as Layer from "effect/Layer"
 *                                                          import { pipe } from "effect/Function"
 *   import { HttpRouter } from "effect/http"            →  import * as HttpRouter from "effect/http/HttpRouter"
 *   import { type Option } from "effect"               →  import type * as Option from "effect/Option"
 *
 * Why: a barrel loads every module it names, and every module loaded is heap the server holds for its life
 * (docs/benchmarks.md, "server RSS"); packages/server/test/StartupModules.test.ts fails when one is loaded.
 *
 *   node scripts/module-imports.ts            # every .ts under packages/{server,domain,mcp,fakes}/src
 *   node scripts/module-imports.ts FILE...    # these files
 */
import * as Fs from "node:fs"
import * as Path from "node:path"

const ROOT = Path.resolve(import.meta.dirname, "..")
const EFFECT_DIST = Path.join(ROOT, "node_modules", "effect", "dist")
const PACKAGES = ["server", "domain", "mcp", "fakes"]
/** Barrel specifier → its directory under effect/dist ("" for the root). */
const BARRELS: Record<string, string> = {
  "effect": "",
  "effect/http": "http",
  "effect/http-api": "http-api",
  "effect/sql": "sql",
  "effect/observability": "observability",
  "effect/cli": "cli",
  "effect/schema": "schema",
  "effect/encoding": "encoding",
  "effect/crypto": "crypto",
  "effect/persistence": "persistence",
  "effect/process": "process",
  "effect/socket": "socket"
}
/** What the root barrel re-exports from effect/Function rather than as a namespace. */
const FUNCTION_NAMES = new Set(["absurd", "cast", "flow", "hole", "identity", "pipe"])

const namespacesOf = (dir: string): Set<string> => {
  const file = Path.join(EFFECT_DIST, dir, "index.js")
  if (!Fs.existsSync(file)) return new Set()
  return new Set([...Fs.readFileSync(file, "utf8").matchAll(/export \* as (\w+) from "\.\/\w+\.js"/g)].map((m) => m[1]))
}
const NAMESPACES = new Map(Object.entries(BARRELS).map(([spec, dir]) => [spec, namespacesOf(dir)]))

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")
const IMPORT = new RegExp(
  `import\\s+(type\\s+)?\\{([^}]*)\\}\\s+from\\s+"(${Object.keys(BARRELS).map(escape).join("|")})"\\n?`,
  "g"
)

export const rewrite = (file: string, source: string): string =>
  source.replace(IMPORT, (_all, typeOnly: string | undefined, body: string, spec: string) => {
    const names = body.replace(/\/\/[^\n]*/g, "").replace(/\/\*[\s\S]*?\*\//g, "").split(",").map((s) => s.trim())
      .filter((s) => s !== "")
    const lines: Array<string> = []
    const fromFunction: Array<string> = []
    for (const raw of names) {
      const isType = typeOnly !== undefined || raw.startsWith("type ")
      const item = raw.replace(/^type\s+/, "")
      const [name, alias = name] = item.split(/\s+as\s+/).map((s) => s.trim())
      if (spec === "effect" && FUNCTION_NAMES.has(name)) {
        fromFunction.push(`${isType ? "type " : ""}${alias === name ? name : `${name} as ${alias}`}`)
        continue
      }
      if (!NAMESPACES.get(spec)!.has(name)) throw new Error(`${file}: "${name}" is not a module of ${spec}`)
      const target = spec === "effect" ? `effect/${name}` : `${spec}/${name}`
      lines.push(`import ${isType ? "type " : ""}* as ${alias} from "${target}"\n`)
    }
    if (fromFunction.length > 0) lines.unshift(`import { ${fromFunction.join(", ")} } from "effect/Function"\n`)
    return lines.join("")
  })

const sourcesOf = (dir: string): Array<string> =>
  Fs.existsSync(dir)
    ? Fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => /\.tsx?$/.test(f)).map((f) =>
      Path.join(dir, f)
    )
    : []

const files = process.argv.length > 2
  ? process.argv.slice(2).map((f) => Path.resolve(f))
  : PACKAGES.flatMap((p) => sourcesOf(Path.join(ROOT, "packages", p, "src")))
let changed = 0
for (const file of files) {
  const before = Fs.readFileSync(file, "utf8")
  const after = rewrite(file, before)
  if (after !== before) {
    Fs.writeFileSync(file, after)
    changed++
    console.log(Path.relative(ROOT, file))
  }
}
console.log(`${changed} file(s) rewritten`)
