import { SourceMapConsumer } from "source-map-js"
import * as fs from "node:fs"
import * as zlib from "node:zlib"
const dir = process.argv[2] ?? "/tmp/dash16-dist/assets/"
const f = fs.readdirSync(dir).find((n) => n.startsWith("index-") && n.endsWith(".js"))
const code = fs.readFileSync(dir + f, "utf8")
const map = new SourceMapConsumer(JSON.parse(fs.readFileSync(dir + f + ".map", "utf8")))
const lines = code.split("\n")
const segs = []; map.eachMapping((m) => segs.push(m))
const groups = {}
const group = (s) => s == null ? "?" : s.includes("react") || s.includes("scheduler") ? (s.includes("atom-react") ? "atom-react" : "react") : s.includes("effect/dist/reactivity") ? "effect/reactivity" : s.includes("effect/dist/http-api") ? "effect/http-api" : s.includes("effect/dist/http/") ? "effect/http" : /effect\/dist\/(Schema|internal\/schema|JsonSchema)/.test(s) ? "effect/schema" : s.includes("effect/dist") ? "effect/core" : s.includes("domain/src") ? "domain" : "web"
for (let i = 0; i < segs.length; i++) {
  const m = segs[i], n = segs[i + 1]
  const line = lines[m.generatedLine - 1]
  const end = n && n.generatedLine === m.generatedLine ? n.generatedColumn : line.length
  const g = group(m.source); (groups[g] ??= []).push(line.slice(m.generatedColumn, end))
}
console.log("whole", zlib.gzipSync(code, { level: 9 }).length)
for (const [g, parts] of Object.entries(groups)) { const s = parts.join(""); console.log(g.padEnd(20), s.length, zlib.gzipSync(s, { level: 9 }).length) }
