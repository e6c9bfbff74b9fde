/**
 * A private Redis for a fault: a throwaway `redis-server` (no persistence) on a free port that can be killed
 * outright and started again empty; never the machine's shared one on 6379.
 */
import { canConnect, freePort } from "@sitehealth/server/test/support/Ports"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { eventually } from "./common.ts"

/** `redis-server` on PATH, or null. */
export const redisServerBinary = (): string | null => {
  for (const dir of (process.env.PATH ?? "").split(Path.delimiter)) {
    const candidate = Path.join(dir, "redis-server")
    if (dir !== "" && Fs.existsSync(candidate)) return candidate
  }
  return null
}

export interface PrivateRedis {
  readonly url: string
  readonly port: number
  /** SIGKILL: the abrupt loss, no goodbye to the clients. */
  readonly kill: () => Promise<void>
  /** A new redis-server on the same port (empty: nothing is persisted). */
  readonly start: () => Promise<void>
}

/** A throwaway `redis-server` (no persistence) on a free port; never the machine's shared one on 6379. */
export const startPrivateRedis = async (binary: string): Promise<PrivateRedis> => {
  const port = await freePort()
  let child: ChildProcess | null = null
  const start = async () => {
    if (child !== null) return
    const c = spawn(binary, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: "ignore"
    })
    child = c
    await eventually(
      `redis-server to listen on ${port}`,
      10_000,
      async () => ((await canConnect(port)) ? true : undefined)
    )
  }
  const kill = async () => {
    const c = child
    child = null
    if (c === null || c.exitCode !== null || c.signalCode !== null) return
    const gone = new Promise((r) => c.once("exit", r))
    c.kill("SIGKILL")
    await gone
  }
  await start()
  return { url: `redis://127.0.0.1:${port}`, port, kill, start }
}
