/**
 * The real processes a fault starts and kills: `node <script>` children whose output is kept and watched,
 * the real server (`main.ts`) ready to serve, and the sweep that SIGKILLs whatever is still running.
 */
import { freePort } from "@sitehealth/server/test/support/Ports"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { eventually, MAIN, ROOT } from "./common.ts"

export interface Proc {
  readonly name: string
  readonly child: ChildProcess
  readonly output: () => string
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  readonly alive: () => boolean
  readonly waitFor: (text: string, timeoutMs: number) => Promise<void>
  /** Counts a text in the output (e.g. a log line). */
  readonly count: (text: string) => number
}

const spawned = new Set<Proc>()

/** `node <script>` (this Node) with exactly `env` on top of PATH and HOME: no DATABASE_URL leaks in. */
export const spawnNode = (name: string, script: string, env: Record<string, string>): Proc => {
  const child = spawn(process.execPath, [script], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? Os.tmpdir(), ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (d) => (output += d))
  child.stderr!.on("data", (d) => (output += d))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal }))
  )
  const alive = () => child.exitCode === null && child.signalCode === null
  const proc: Proc = {
    name,
    child,
    output: () => output,
    exited,
    alive,
    waitFor: async (text, timeoutMs) => {
      await eventually(`${name} to print "${text}"`, timeoutMs, () => {
        if (output.includes(text)) return true
        if (!alive()) {
          throw new Error(
            `${name} exited (${child.exitCode ?? child.signalCode}) before printing "${text}":\n${output.slice(-4000)}`
          )
        }
        return undefined
      })
    },
    count: (text) => output.split(text).length - 1
  }
  spawned.add(proc)
  child.once("exit", () => spawned.delete(proc))
  return proc
}

/** SIGKILL every child these scripts started and that still runs (by pid; nothing else). */
export const killSpawned = () => {
  for (const p of spawned) if (p.alive()) p.child.kill("SIGKILL")
  spawned.clear()
}

export interface Server {
  readonly proc: Proc
  readonly port: number
  readonly base: string
}

/** The real server (`npm start`'s main.ts) on `databaseUrl`, ready when it logs "serving". */
export const startServer = async (options: {
  readonly name: string
  readonly databaseUrl: string
  readonly secretKey: string
  readonly dataDir: string
  readonly worker: boolean
  readonly env?: Record<string, string>
}): Promise<Server> => {
  const port = await freePort()
  const proc = spawnNode(options.name, MAIN, {
    DATABASE_URL: options.databaseUrl,
    SITEHEALTH_SECRET_KEY: options.secretKey,
    SITEHEALTH_DATA_DIR: options.dataDir,
    HOST: "127.0.0.1",
    PORT: String(port),
    SITEHEALTH_WORKER: options.worker ? "1" : "0",
    // The load is the point, not the per-token budget.
    SITEHEALTH_RATE_LIMIT: "1000000",
    ...options.env
  })
  await proc.waitFor("sitehealth: serving", 60_000)
  return { proc, port, base: `http://127.0.0.1:${port}` }
}

/** Keeps a process's output for a post-mortem: a file under the temp dir, whose path is returned. */
export const saveLog = (proc: Proc): string => {
  const file = Path.join(Os.tmpdir(), `sitehealth-faults-${proc.name}-${process.pid}-${Date.now()}.log`)
  Fs.writeFileSync(file, proc.output())
  return file
}
