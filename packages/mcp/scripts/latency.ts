/**
 * Latency and cost of the stdio server against a real server (the app over in-memory repositories):
 * - a bare Node start (`node -e ''`, spawn to exit) — the yardstick;
 * - spawn → initialized through the bin (the bundle, dist/sitehealth-mcp.mjs, rebuilt first when stale) and
 *   through the TypeScript sources (src/main.ts), median of SPAWNS runs each, and the bundle's ratio to bare;
 * - tools/list and one tools/call (get_health): first and median of RUNS; the size of tools/list's answer.
 * Run: npx node packages/mcp/scripts/latency.ts   (or npm run latency -w @sitehealth/mcp)
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { startServer } from "@sitehealth/cli/test/support/TestServer"
import { BIN, MCP_ROOT } from "../test/support/Mcp.ts"

const RUNS = 20
const SPAWNS = 10
const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

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

const srv = await startServer({ rateLimit: 1_000_000 })
const { projects, secret } = await srv.newAccount()
const env = { PATH: process.env.PATH ?? "", SITEHEALTH_TOKEN: secret, SITEHEALTH_URL: srv.baseUrl }

const connect = async (entry: string): Promise<readonly [Client, number]> => {
  const start = performance.now()
  const client = new Client({ name: "latency", version: "0" })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [entry], env, stderr: "pipe" }))
  return [client, performance.now() - start] as const
}

const bareRuns: Array<number> = []
const bundleRuns: Array<number> = []
const sourceRuns: Array<number> = []
await bare() // warm the file cache
for (let i = 0; i < SPAWNS; i++) {
  bareRuns.push(await bare())
  const [b, tb] = await connect(BIN)
  bundleRuns.push(tb)
  await b.close()
  const [s, ts] = await connect(Path.join(MCP_ROOT, "src/main.ts"))
  sourceRuns.push(ts)
  await s.close()
}

const [client] = await connect(BIN)
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
console.log(JSON.stringify({
  bareNodeStartMedianMs: +median(bareRuns).toFixed(1),
  spawnToInitializedBundleMedianMs: +median(bundleRuns).toFixed(1),
  spawnToInitializedSourcesMedianMs: +median(sourceRuns).toFixed(1),
  bundleOverBare: +(median(bundleRuns) / median(bareRuns)).toFixed(2),
  toolsListBytes: listBytes,
  toolsListFirstMs: Math.round(list[0]!),
  toolsListMedianMs: +median(list).toFixed(2),
  toolsCallFirstMs: Math.round(call[0]!),
  toolsCallMedianMs: +median(call).toFixed(2),
  spawns: SPAWNS,
  runs: RUNS
}))
await client.close()
await srv.close()
