/**
 * What ScaleOut.test.ts needs to run the service as deployed: a database of its own (a new database on the
 * server in DATABASE_URL, else a private embedded cluster), a Redis (REDIS_URL, else a private
 * `redis-server`), real `main.ts` / `WorkerMain.ts` processes, a Plausible stand-in that tells which
 * process called it, and an HTTP request whose body arrives late (a request in flight on demand).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { pgLayer } from "../../src/platform/Database.ts"
import { startEmbeddedPostgres } from "../../src/platform/EmbeddedPostgres.ts"
import { freePort } from "./postgresGlobalSetup.ts"

export { freePort }

// The general helpers and the Plausible stand-in are the fault scripts' (scripts/faults/lib/): one copy.
export { eventually, sleep } from "@sitehealth/faults/lib/common"
export {
  type FakePlausible as FakeProvider,
  type PlausibleCall as ProviderCall,
  startFakePlausible as startFakeProvider
} from "@sitehealth/faults/lib/fake-plausible"
import { eventually } from "@sitehealth/faults/lib/common"
import { redisServerBinary, startPrivateRedis } from "@sitehealth/faults/lib/redis"
import { canConnect } from "./Ports.ts"

// ---------------------------------------------------------------------------------------------------------
// Postgres and Redis

export interface PrivateDatabase {
  readonly url: string
  readonly description: string
  readonly drop: () => Promise<void>
}

const runStatement = (url: string, statement: string) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(Effect.provide(pgLayer(url)))
    ) as Effect.Effect<unknown>
  )

/**
 * An empty database nobody else uses: the instances' workers claim every queued job in their database, so on
 * a database shared with other test files they would take those files' runs (and the other way round).
 * Empty also means the instances start on an unmigrated schema, all at once, as a first deploy does.
 */
export const privateDatabase = async (): Promise<PrivateDatabase> => {
  const external = process.env.DATABASE_URL
  if (external) {
    const name = `sitehealth_scaleout_${process.pid}_${Date.now().toString(36)}`
    try {
      await runStatement(external, `CREATE DATABASE ${name}`)
    } catch (e) {
      throw new Error(
        `cannot create a private database on DATABASE_URL's server (the role needs CREATEDB): ${String(e)}`
      )
    }
    const url = new URL(external)
    url.pathname = `/${name}`
    return {
      url: url.toString(),
      description: `a new database ${name} on DATABASE_URL's server`,
      drop: () => runStatement(external, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).then(() => undefined)
    }
  }
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-scaleout-"))
  const handle = await startEmbeddedPostgres({ dataDir: dir, port: await freePort(), log: () => {} })
  return {
    url: handle.url,
    description: `a private embedded cluster in ${dir}`,
    drop: async () => {
      await handle.stop()
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}

export type PrivateRedis =
  | { readonly url: string; readonly description: string; readonly stop: () => void }
  | { readonly url: null; readonly description: string; readonly stop: () => void }

/** REDIS_URL; else a throwaway `redis-server` (no persistence) on a free port; else none, saying why. */
export const privateRedis = async (): Promise<PrivateRedis> => {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, description: "REDIS_URL", stop: () => {} }
  const binary = redisServerBinary()
  if (binary === null) {
    return { url: null, description: "REDIS_URL is unset and there is no redis-server on PATH", stop: () => {} }
  }
  const redis = await startPrivateRedis(binary)
  return { url: redis.url, description: `a private redis-server on port ${redis.port}`, stop: () => void redis.kill() }
}

// ---------------------------------------------------------------------------------------------------------
// Processes

export interface Exited {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly at: number
}

export interface Proc {
  readonly name: string
  readonly child: ChildProcess
  readonly output: () => string
  readonly exited: Promise<Exited>
  readonly waitFor: (text: string, timeoutMs: number) => Promise<void>
}

const spawned = new Set<Proc>()

/** `node <script>` (this Node: 22 under vitest) with exactly `env` on top of PATH and HOME. */
export const spawnNode = (name: string, script: string, cwd: string, env: Record<string, string>): Proc => {
  const child = spawn(process.execPath, [script], {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? Os.tmpdir(), ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (d) => (output += d))
  child.stderr!.on("data", (d) => (output += d))
  const exited = new Promise<Exited>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal, at: Date.now() }))
  )
  const proc: Proc = {
    name,
    child,
    output: () => output,
    exited,
    waitFor: async (text, timeoutMs) => {
      await eventually(`${name} to print "${text}"`, timeoutMs, () => {
        if (output.includes(text)) return true
        if (child.exitCode !== null) {
          throw new Error(`${name} exited (${child.exitCode}) before printing "${text}":\n${output}`)
        }
        return undefined
      })
    }
  }
  spawned.add(proc)
  return proc
}

/** afterAll: SIGKILL every process still running, by its pid. */
export const killAllSpawned = () => {
  for (const p of spawned) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL")
  spawned.clear()
}

/** Listening TCP sockets held by `pid` (Linux /proc), or null where /proc cannot tell. */
export const listeningSocketsOf = (pid: number): number | null => {
  const fdDir = `/proc/${pid}/fd`
  if (!Fs.existsSync(fdDir) || !Fs.existsSync("/proc/net/tcp")) return null
  const inodes = new Set<string>()
  for (const fd of Fs.readdirSync(fdDir)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(Fs.readlinkSync(Path.join(fdDir, fd)))
      if (m) inodes.add(m[1])
    } catch {
      // closed meanwhile
    }
  }
  let listening = 0
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    if (!Fs.existsSync(table)) continue
    for (const line of Fs.readFileSync(table, "utf8").split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/)
      if (cols.length > 9 && cols[3] === "0A" && inodes.has(cols[9])) listening++ // 0A = LISTEN
    }
  }
  return listening
}

export { canConnect }

// ---------------------------------------------------------------------------------------------------------
// A request in flight on demand

export interface RawResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export interface SlowRequest {
  /** Sends the rest of the body. */
  readonly finish: () => void
  readonly response: Promise<RawResponse>
}

/**
 * An HTTP/1.1 POST whose headers and first half of the body are sent now and the rest on `finish()`: the
 * server has the request (its handler is waiting for the body) for as long as the test likes.
 */
export const slowPost = async (
  port: number,
  path: string,
  headers: Record<string, string>,
  body: string
): Promise<SlowRequest> => {
  const socket = Net.connect(port, "127.0.0.1")
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve)
    socket.once("error", reject)
  })
  const bytes = Buffer.from(body)
  const half = Math.floor(bytes.length / 2)
  const head = [
    `POST ${path} HTTP/1.1`,
    `host: 127.0.0.1:${port}`,
    "content-type: application/json",
    `content-length: ${bytes.length}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)
  ].join("\r\n") + "\r\n\r\n"
  socket.write(head)
  socket.write(bytes.subarray(0, half))
  const response = new Promise<RawResponse>((resolve, reject) => {
    let raw = Buffer.alloc(0)
    const tryParse = (final: boolean) => {
      const text = raw.toString("latin1")
      const end = text.indexOf("\r\n\r\n")
      if (end < 0) {
        if (final) reject(new Error(`the connection closed without a response (got ${JSON.stringify(text)})`))
        return
      }
      const [statusLine, ...lines] = text.slice(0, end).split("\r\n")
      const parsed: Record<string, string> = {}
      for (const line of lines) {
        const i = line.indexOf(":")
        parsed[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim()
      }
      const rest = raw.subarray(Buffer.byteLength(text.slice(0, end + 4), "latin1"))
      const length = parsed["content-length"] === undefined ? null : Number(parsed["content-length"])
      if (final || (length !== null && rest.length >= length)) {
        resolve({ status: Number(statusLine.split(" ")[1]), headers: parsed, body: rest.toString("utf8") })
      }
    }
    socket.on("data", (d) => {
      raw = Buffer.concat([raw, d])
      tryParse(false)
    })
    socket.once("close", () => tryParse(true))
    socket.once("error", reject)
  })
  // Handled here too: a test that fails before awaiting it must not also report an unhandled rejection.
  response.catch(() => undefined)
  // write, not end: a client that half-closes may get its request aborted by the server.
  return { finish: () => void socket.write(bytes.subarray(half)), response }
}

/** Whether a Redis can be had (decided when the test file loads, for `it.skipIf`), and if not, why. */
export const redisAvailability = (): { readonly available: boolean; readonly reason: string } =>
  process.env.REDIS_URL
    ? { available: true, reason: "REDIS_URL" }
    : redisServerBinary() !== null
    ? { available: true, reason: "a private redis-server" }
    : { available: false, reason: "REDIS_URL is unset and there is no redis-server on PATH" }
