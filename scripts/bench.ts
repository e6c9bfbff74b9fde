/**
 * Load benchmark: starts the real server (embedded Postgres, demo data) in a separate process and drives
 * authenticated GET /api/v1/projects/{id}/health from this process with autocannon.
 *
 *   npm run bench                      # 10 s, 50 connections
 *   npm run bench -- --duration 30 --connections 100 --path health
 *
 * The per-token rate limit is lifted for the run (SITEHEALTH_RATE_LIMIT), or every request after the
 * 60th would measure the 429 path.
 */
import autocannon from "autocannon"
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback
}
const duration = Number(arg("duration", "10"))
const connections = Number(arg("connections", "50"))
const target = arg("path", "health")

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = Net.createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as Net.AddressInfo).port
      s.close(() => resolve(port))
    })
  })

const main = async () => {
  process.stderr.write("bench: starting the server…\n")
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-bench-"))
  const port = await freePort()
  const server = spawn(process.execPath, ["packages/server/src/main.ts"], {
    env: {
      ...process.env,
      PORT: String(port),
      SITEHEALTH_DATA_DIR: dataDir,
      SITEHEALTH_EMBEDDED_PG_PORT: String(await freePort()),
      SITEHEALTH_RATE_LIMIT: "1000000",
      DATABASE_URL: process.env.DATABASE_URL ?? "",
      // On an external database the server needs the credentials key; this bench stores no credentials.
      SITEHEALTH_SECRET_KEY: process.env.SITEHEALTH_SECRET_KEY ?? randomBytes(32).toString("base64")
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  server.stdout.on("data", (d) => (output += d))
  server.stderr.on("data", (d) => (output += d))
  const stop = () => new Promise<void>((resolve) => {
    if (server.exitCode !== null || server.signalCode !== null) return resolve()
    server.once("exit", () => resolve())
    server.kill("SIGTERM")
  })
  try {
    const started = Date.now()
    while (!output.includes("Listening on")) {
      if (Date.now() - started > 60_000 || server.exitCode !== null) throw new Error(`server did not start:\n${output}`)
      await new Promise((r) => setTimeout(r, 100))
    }
    const tokenFile = Path.join(dataDir, "demo-token")
    const token = process.env.SITEHEALTH_BENCH_TOKEN ?? Fs.readFileSync(tokenFile, "utf8").trim()
    const base = `http://127.0.0.1:${port}/api/v1`
    const headers = { authorization: `Bearer ${token}` }
    const projects = await (await fetch(`${base}/projects`, { headers })).json() as any
    const projectId = projects.data.projects[0].id
    const url = target === "projects" ? `${base}/projects` : `${base}/projects/${projectId}/${target}`
    // Warm up connections, prepared statements and the JIT.
    await autocannon({ url, headers, connections, duration: 2 })
    const result = await autocannon({ url, headers, connections, duration })
    const summary = {
      endpoint: `GET ${url.replace(base, "/api/v1")}`,
      connections,
      durationSeconds: duration,
      requests: result.requests.total,
      requestsPerSecond: Math.round(result.requests.average),
      latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
      non2xx: result.non2xx,
      errors: result.errors,
      node: process.version,
      cpus: Os.cpus().length
    }
    console.log(JSON.stringify(summary, null, 2))
  } finally {
    await stop()
    Fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
