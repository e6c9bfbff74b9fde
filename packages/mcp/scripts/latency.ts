/**
 * Latency of the stdio server: spawn time to initialized, tools/list, and one tools/call (get_health),
 * against a real server (the app over in-memory repositories). Median of N runs each.
 * Run: npx node packages/mcp/scripts/latency.ts
 */
import { startServer } from "@sitehealth/cli/test/support/TestServer"
import { stdioClient } from "../test/support/Mcp.ts"

const RUNS = 20
const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const srv = await startServer({ rateLimit: 1_000_000 })
const { projects, secret } = await srv.newAccount()
const start = performance.now()
const client = await stdioClient({ SITEHEALTH_TOKEN: secret, SITEHEALTH_URL: srv.baseUrl })
const connect = performance.now() - start
const list: Array<number> = []
const call: Array<number> = []
for (let i = 0; i < RUNS; i++) {
  let t = performance.now()
  await client.listTools()
  list.push(performance.now() - t)
  t = performance.now()
  await client.callTool({ name: "get_health", arguments: { id: projects[0]!.id } })
  call.push(performance.now() - t)
}
console.log(JSON.stringify({
  spawnToInitializedMs: Math.round(connect),
  toolsListFirstMs: Math.round(list[0]!),
  toolsListMedianMs: +median(list).toFixed(2),
  toolsCallFirstMs: Math.round(call[0]!),
  toolsCallMedianMs: +median(call).toFixed(2),
  runs: RUNS
}))
await client.close()
await srv.close()
