/**
 * What a rule on modules cannot say (.dependency-cruiser.cjs says the rest): no two folders of
 * packages/server/src import each other, type-only imports included. Part of `npm run lint`; prints each
 * two-way pair with the imports that make it, and exits 1 when there is one.
 *
 *   node scripts/folders.ts
 */
import { cruise, type ICruiseResult } from "dependency-cruiser"
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options"
import * as Path from "node:path"

const ROOT = Path.resolve(import.meta.dirname, "..")
const SRC = "packages/server/src/"
process.chdir(ROOT)

// The configuration's options (resolution, tsconfig), without its rules: this is a listing, not a check.
const { ruleSet: _rules, ...options } = await extractDepcruiseOptions("./.dependency-cruiser.cjs")
const reporting = await cruise([SRC], { ...options, validate: false, outputType: "json" })
const result = (typeof reporting.output === "string" ? JSON.parse(reporting.output) : reporting.output) as ICruiseResult

/** The top folder of a module of the server, "(root)" for the root modules; null outside the server. */
const folderOf = (path: string): string | null => {
  if (!path.startsWith(SRC)) return null
  const rest = path.slice(SRC.length)
  return rest.includes("/") ? rest.slice(0, rest.indexOf("/")) : "(root)"
}

const edges = new Map<string, Map<string, Array<string>>>()
for (const module of result.modules) {
  const from = folderOf(module.source)
  if (from === null) continue
  for (const dependency of module.dependencies) {
    const to = folderOf(dependency.resolved)
    if (to === null || to === from) continue
    const byTarget = edges.get(from) ?? new Map<string, Array<string>>()
    edges.set(from, byTarget)
    byTarget.set(to, [...(byTarget.get(to) ?? []), `${module.source} → ${dependency.resolved}`])
  }
}

let pairs = 0
for (const [a, targets] of [...edges].sort(([x], [y]) => x.localeCompare(y))) {
  for (const [b, imports] of targets) {
    const back = edges.get(b)?.get(a)
    if (back === undefined || a > b) continue
    pairs++
    console.error(`two-way folders: ${a} ⇄ ${b}`)
    for (const line of [...imports, ...back]) console.error(`  ${line}`)
  }
}
const folders = new Set([...edges.keys(), ...[...edges.values()].flatMap((m) => [...m.keys()])])
console.log(`${folders.size} folders of ${SRC}: ${pairs} two-way pair${pairs === 1 ? "" : "s"}`)
process.exit(pairs === 0 ? 0 : 1)
