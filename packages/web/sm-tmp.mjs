import { SourceMapConsumer } from "source-map-js"
import * as fs from "node:fs"
const dir = "/tmp/dash16-dist/assets/"
const f = fs.readdirSync(dir).find((n) => n.startsWith("index-") && n.endsWith(".js"))
const code = fs.readFileSync(dir + f, "utf8")
const map = new SourceMapConsumer(JSON.parse(fs.readFileSync(dir + f + ".map", "utf8")))
const lines = code.split("\n")
const sizes = {}
let last = null
// attribute each generated char segment to source
map.eachMapping((m) => { (m.__list ??= 0) })
const segs = []
map.eachMapping((m) => segs.push(m))
for (let i = 0; i < segs.length; i++) {
  const m = segs[i], n = segs[i + 1]
  let len
  if (n && n.generatedLine === m.generatedLine) len = n.generatedColumn - m.generatedColumn
  else len = lines[m.generatedLine - 1].length - m.generatedColumn
  const src = (m.source ?? "?").replace(/^.*node_modules\//, "")
  const key = src.split("/").slice(0, src.startsWith("effect/dist/") ? 3 : 2).join("/")
  sizes[src] = (sizes[src] ?? 0) + len
}
const total = Object.values(sizes).reduce((a, b) => a + b, 0)
console.log("total", total, code.length)
for (const [k, v] of Object.entries(sizes).sort((a, b) => b[1] - a[1]).slice(0, Number(process.argv[2] ?? 70))) console.log(String(v).padStart(8), k)
