/**
 * The stdio server's start-up and call latency against a real server (the app over in-memory
 * repositories), every variant timed in the same rounds (interleaved, so the machine's load falls on all):
 * - bare: `node -e ''`, spawn → exit — the yardstick of the issue's bar (spawn → initialize ≤ 3× bare);
 * - floor: a Node process that answers `initialize` with a fixed line (no SDK), spawn → initialized through
 *   the SDK client — what any Node stdio server pays before its own code;
 * - the bin (the bundle, rebuilt first when stale) with V8's compile cache (the bin's default) and without
 *   (NODE_DISABLE_COMPILE_CACHE=1), and the TypeScript sources (src/main.ts): spawn → initialized;
 * - the bin, spawn → the first `tools/list` answered (the handlers and the contract load after initialize);
 * - tools/list and one tools/call (get_health) on one session: first and median of RUNS; tools/list's size.
 * Medians of SPAWNS rounds (default 15) and their minimum; the ratios are to bare's median (and minimum).
 * Run: npm run bench:mcp [-- SPAWNS]   (or npx node packages/mcp/scripts/latency.ts [SPAWNS])
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { startServer } from "@sitehealth/cli/test/support/TestServer"
import { execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { BIN, MCP_ROOT } from "../test/support/Mcp.ts"

const SPAWNS = Number(process.argv[2] ?? 15)
const RUNS = 20
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const min = (xs: ReadonlyArray<number>) => Math.min(...xs)

// The bin runs the bundle only when it is fresher than every source: build it if it is not.
execFileSync(process.execPath, [Path.join(MCP_ROOT, "scripts/build.ts")], { stdio: "ignore" })
if (!Fs.existsSync(Path.join(MCP_ROOT, "dist/sitehealth-mcp.mjs"))) throw new Error("the bundle was not built")

const bare = async (): Promise<number> => {
  const start = performance.now()
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" })
    child.on("error", reject)
    child.on("exit", () => resolve())
  })
  return performance.now() - start
}

/** A stdio "server" that answers the first line (initialize) with a fixed result and nothing else. */
const FLOOR =
  `process.stdin.once("data", (d) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: JSON.parse(String(d).split("\\n")[0]).id, ` +
  `result: { protocolVersion: "2025-06-18", capabilities: {}, serverInfo: { name: "floor", version: "0" } } }) + "\\n"))`

const srv = await startServer({ rateLimit: 1_000_000 })
const { projects, secret } = await srv.newAccount()
const env = { PATH: process.env.PATH ?? "", SITEHEALTH_TOKEN: secret, SITEHEALTH_URL: srv.baseUrl }

const connect = async (
  args: ReadonlyArray<string>,
  extraEnv: Record<string, string> = {}
): Promise<readonly [Client, number]> => {
  const start = performance.now()
  const client = new Client({ name: "latency", version: "0" })
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [...args],
      env: { ...env, ...extraEnv },
      stderr: "pipe"
    })
  )
  return [client, performance.now() - start] as const
}
const initialized = async (args: ReadonlyArray<string>, extraEnv: Record<string, string> = {}) => {
  const [client, ms] = await connect(args, extraEnv)
  await client.close()
  return ms
}
const firstList = async () => {
  const start = performance.now()
  const [client] = await connect([BIN])
  await client.listTools()
  const ms = performance.now() - start
  await client.close()
  return ms
}

const variants = {
  bare,
  floor: () => initialized(["-e", FLOOR]),
  bundle: () => initialized([BIN]),
  bundleNoCompileCache: () => initialized([BIN], { NODE_DISABLE_COMPILE_CACHE: "1" }),
  sources: () => initialized([Path.join(MCP_ROOT, "src/main.ts")]),
  bundleFirstToolsList: firstList
}
const times: Record<keyof typeof variants, Array<number>> = {
  bare: [],
  floor: [],
  bundle: [],
  bundleNoCompileCache: [],
  sources: [],
  bundleFirstToolsList: []
}
const loadBefore = Os.loadavg()[0]!
// Warm the file cache and the compile cache once; not counted.
await bare()
await initialized([BIN])
for (let i = 0; i < SPAWNS; i++) {
  for (const [name, run] of Object.entries(variants)) times[name as keyof typeof variants].push(await run())
}
const loadAfter = Os.loadavg()[0]!

const [client] = await connect([BIN])
const list: Array<number> = []
const call: Array<number> = []
let listBytes = 0
for (let i = 0; i < RUNS; i++) {
  let t = performance.now()
  const listed = await client.listTools()
  list.push(performance.now() - t)
  listBytes = JSON.stringify(listed).length
  t = performance.now()
  await client.callTool({ name: "get_health", arguments: { id: projects[0]!.id } })
  call.push(performance.now() - t)
}
await client.close()
await srv.close()

const bareMedian = median(times.bare)
const bareMin = min(times.bare)
const labels: Record<keyof typeof variants, string> = {
  bare: "bare node -e '' (spawn → exit)",
  floor: "floor: fixed initialize answer, no SDK",
  bundle: "bin, bundle, compile cache on",
  bundleNoCompileCache: "bin, bundle, compile cache off",
  sources: "src/main.ts (TypeScript sources)",
  bundleFirstToolsList: "bin, spawn → first tools/list"
}
const lines = [
  `sitehealth-mcp over stdio, ${SPAWNS} rounds (node ${process.version}, ${Os.cpus().length} CPUs, load ${
    loadBefore.toFixed(1)
  } → ${loadAfter.toFixed(1)})`,
  `${"".padEnd(40)} ${"median".padStart(8)} ${"× bare".padStart(7)} ${"min".padStart(8)} ${"× bare".padStart(7)}`
]
for (const name of Object.keys(variants) as Array<keyof typeof variants>) {
  const m = median(times[name])
  const lo = min(times[name])
  lines.push(
    `${labels[name].padEnd(40)} ${m.toFixed(1).padStart(5)} ms ${(m / bareMedian).toFixed(2).padStart(6)}× ${
      lo.toFixed(1).padStart(5)
    } ms ${(lo / bareMin).toFixed(2).padStart(6)}×`
  )
}
lines.push(
  `tools/list: ${listBytes} bytes; first ${list[0]!.toFixed(0)} ms, median of ${RUNS} ${median(list).toFixed(1)} ms`
)
lines.push(`tools/call get_health: first ${call[0]!.toFixed(0)} ms, median of ${RUNS} ${median(call).toFixed(1)} ms`)
lines.push(
  `bar (spawn → initialized ≤ 3× bare, medians): ${median(times.bundle) / bareMedian <= 3 ? "met" : "NOT met"} (${
    (median(times.bundle) / bareMedian).toFixed(2)
  }×)`
)
process.stdout.write(`${lines.join("\n")}\n`)
process.stdout.write(`${
  JSON.stringify({
    spawns: SPAWNS,
    loadAverage: [+loadBefore.toFixed(2), +loadAfter.toFixed(2)],
    medianMs: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, +median(v).toFixed(1)])),
    minMs: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, +min(v).toFixed(1)])),
    bundleOverBare: +(median(times.bundle) / bareMedian).toFixed(2),
    toolsListBytes: listBytes,
    toolsListFirstMs: Math.round(list[0]!),
    toolsListMedianMs: +median(list).toFixed(2),
    toolsCallFirstMs: Math.round(call[0]!),
    toolsCallMedianMs: +median(call).toFixed(2)
  })
}\n`)
