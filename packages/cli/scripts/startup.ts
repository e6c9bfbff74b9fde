/**
 * Start-up time of `sitehealth --help`, hyperfine style: a few warm-up runs, then N timed runs of the
 * executable users get (bin/sitehealth.js: the bundle when fresh) and of the plain sources, reporting
 * mean, median and min, and the bundle's size. `npm run startup -w @sitehealth/cli [-- N]`.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const runs = Number(process.argv[2] ?? 20)

const measure = (entry: string) => {
  const once = () => {
    const started = process.hrtime.bigint()
    const result = spawnSync(process.execPath, [entry, "--help"], { stdio: "ignore" })
    if (result.status !== 0) throw new Error(`${entry} --help exited ${result.status}`)
    return Number(process.hrtime.bigint() - started) / 1e6
  }
  for (let i = 0; i < 3; i++) once()
  const times = Array.from({ length: runs }, once).sort((a, b) => a - b)
  const mean = times.reduce((a, b) => a + b, 0) / times.length
  return { mean, median: times[Math.floor(times.length / 2)]!, min: times[0]! }
}

const show = (label: string, t: { mean: number; median: number; min: number }) =>
  `${label.padEnd(26)} mean ${t.mean.toFixed(0)} ms  median ${t.median.toFixed(0)} ms  min ${t.min.toFixed(0)} ms`

const bundle = Path.join(root, "dist/sitehealth.mjs")
const lines = [`sitehealth --help, ${runs} runs each (node ${process.version})`]
if (Fs.existsSync(bundle)) {
  lines.push(show("bin/sitehealth.js (bundle)", measure(Path.join(root, "bin/sitehealth.js"))))
  lines.push(`bundle: ${(Fs.statSync(bundle).size / 1024).toFixed(0)} KiB (dist/sitehealth.mjs)`)
} else {
  lines.push("no bundle: run `npm run build -w @sitehealth/cli` first")
}
lines.push(show("src/main.ts (sources)", measure(Path.join(root, "src/main.ts"))))
process.stdout.write(`${lines.join("\n")}\n`)
