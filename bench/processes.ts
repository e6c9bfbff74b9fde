/** The servers under test as child processes: start, wait until they answer HTTP, sample RSS, stop. */
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"

export interface ServerProcess {
  readonly name: string
  readonly base: string
  readonly child: ChildProcess
  /** The last 64 KiB of its stdout and stderr, for error messages. */
  readonly output: () => string
  readonly stop: () => Promise<void>
}

const KEEP_OUTPUT = 64 * 1024

export const startServer = async (options: {
  readonly name: string
  readonly args: ReadonlyArray<string>
  readonly env: NodeJS.ProcessEnv
  readonly port: number
  /** A path that answers (any status) once the server is up. */
  readonly probePath: string
  readonly cwd: string
}): Promise<ServerProcess> => {
  const child = spawn(process.execPath, [...options.args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  const collect = (d: Buffer) => {
    output += d.toString("utf8")
    if (output.length > KEEP_OUTPUT * 2) output = output.slice(-KEEP_OUTPUT)
  }
  child.stdout!.on("data", collect)
  child.stderr!.on("data", collect)
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill("SIGTERM")
    // A clean exit writes the --cpu-prof profile; a server that hangs on shutdown is killed after 15 s.
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000)
    await exited
    clearTimeout(timer)
  }
  const base = `http://127.0.0.1:${options.port}`
  const started = Date.now()
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `${options.name} exited (${child.exitCode ?? child.signalCode}) before answering:\n${output.slice(-4000)}`
      )
    }
    if (Date.now() - started > 120_000) {
      await stop()
      throw new Error(`${options.name} did not answer on ${base} within 120 s:\n${output.slice(-4000)}`)
    }
    const answered = await fetch(base + options.probePath, { signal: AbortSignal.timeout(2000) }).then(
      async (r) => {
        await r.arrayBuffer()
        return true
      },
      () => false
    )
    if (answered) break
    await new Promise((r) => setTimeout(r, 100))
  }
  return { name: options.name, base, child, output: () => output, stop }
}

/** VmRSS of a process in bytes (Linux /proc), or null when it is gone or /proc is not there. */
export const rssOf = (pid: number): number | null => {
  try {
    const status = Fs.readFileSync(`/proc/${pid}/status`, "utf8")
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)
    return m === null ? null : Number(m[1]) * 1024
  } catch {
    return null
  }
}

/** Samples a process's RSS every 100 ms until stopped; returns the peak seen (bytes), null if never read. */
export const sampleRss = (pid: number | undefined) => {
  let peak: number | null = null
  const read = () => {
    if (pid === undefined) return
    const rss = rssOf(pid)
    if (rss !== null && (peak === null || rss > peak)) peak = rss
  }
  read()
  const timer = setInterval(read, 100)
  return {
    stop: (): number | null => {
      clearInterval(timer)
      read()
      return peak
    }
  }
}

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100

/** CPU time (user + system) a process has used so far, ms; null when it is gone or /proc is not there. */
export const cpuMsOf = (pid: number): number | null => {
  try {
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    // Fields after the parenthesised command name (which may contain spaces): utime is the 14th, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND
  } catch {
    return null
  }
}

/**
 * The database whose backends alone are counted as PostgreSQL's CPU (null: every postgres process). On a
 * server that other work shares (an external DATABASE_URL on a machine where others run their own clusters
 * and tests), counting every postgres process charges their queries to ours; a backend's process title
 * ("postgres: [<cluster>:] <user> <database> <client> <state>") names its database. Background processes (WAL writer,
 * checkpointer) are then left out: they are shared, and small next to the backends for reads.
 */
let onlyDatabase: string | null = null
export const countPostgresOf = (database: string | null) => {
  onlyDatabase = database
}
export const countedPostgres = () => onlyDatabase

/**
 * CPU time used so far by every PostgreSQL process on the machine (command name "postgres"), ms — the
 * database's share of a run is the difference between two readings. Processes that start or end
 * between the readings (a new backend) are counted from zero or lost: small next to the backends of
 * a pool that lives through the run.
 */
export const postgresCpuMs = (): Map<number, number> => {
  const out = new Map<number, number>()
  let pids: Array<string> = []
  try {
    pids = Fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))
  } catch {
    return out
  }
  for (const pid of pids) {
    try {
      if (Fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim() !== "postgres") continue
      if (onlyDatabase !== null) {
        // "postgres: [<cluster name>:] <user> <database> …" (Debian's clusters set cluster_name, e.g. "15/main:").
        const title = Fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").trim().split(/\s+/)
        const words = title[1]?.endsWith(":") === true ? title.slice(2) : title.slice(1)
        if (title[0] !== "postgres:" || words[1] !== onlyDatabase) continue
      }
    } catch {
      continue
    }
    const ms = cpuMsOf(Number(pid))
    if (ms !== null) out.set(Number(pid), ms)
  }
  return out
}

/** The CPU a server process and the database spent between start() and stop(), ms. */
export const sampleCpu = (pid: number | undefined) => {
  const server0 = pid === undefined ? null : cpuMsOf(pid)
  const pg0 = postgresCpuMs()
  return {
    stop: (): { readonly serverMs: number | null; readonly postgresMs: number } => {
      const server1 = pid === undefined ? null : cpuMsOf(pid)
      let postgresMs = 0
      for (const [p, ms] of postgresCpuMs()) postgresMs += ms - (pg0.get(p) ?? 0)
      return { serverMs: server0 === null || server1 === null ? null : server1 - server0, postgresMs }
    }
  }
}
