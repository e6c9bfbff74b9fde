/**
 * A fault's setting: its private Postgres, data dir and credentials key, the servers it starts on them, and
 * the teardown that takes all of it down afterwards whatever happened.
 */
import * as Fs from "node:fs"
import { newSecretKey, sleep, tempDir } from "./common.ts"
import { type PrivatePostgres, startPrivatePostgres } from "./postgres.ts"
import { killSpawned, type Proc, type Server, startServer } from "./processes.ts"
import type { FaultResult } from "./results.ts"

export interface FaultSetting {
  /** Its private Postgres, migrated. */
  readonly db: PrivatePostgres
  /** SITEHEALTH_DATA_DIR of every process it starts. */
  readonly dataDir: string
  /** One credentials key for every process it starts: a second process reads what the first stored. */
  readonly secretKey: string
  /** The real server on `db`, stopped when the fault ends. */
  readonly startServer: (
    options: { readonly name: string; readonly worker: boolean; readonly env?: Record<string, string> }
  ) => Promise<Server>
  /** Stops `proc` when the fault ends (SIGTERM, then up to 20 s for every such process to exit). */
  readonly stopAtEnd: (proc: Proc) => Proc
  /** Runs `release` when the fault ends: after its processes are gone, before its Postgres is. */
  readonly releaseAtEnd: (release: () => Promise<unknown>) => void
}

/**
 * Runs a fault in a setting of its own and takes it down afterwards whatever happened: its processes (then
 * anything else still spawned), what it asked to release (latest first), its Postgres and its data dir.
 */
export const withFaultSetting = async (use: (setting: FaultSetting) => Promise<FaultResult>): Promise<FaultResult> => {
  const dataDir = tempDir("sitehealth-faults-data-")
  const secretKey = newSecretKey()
  const procs: Array<Proc> = []
  const releases: Array<() => Promise<unknown>> = []
  const stopAtEnd = (proc: Proc) => {
    procs.push(proc)
    return proc
  }
  let db: PrivatePostgres | undefined
  try {
    db = await startPrivatePostgres()
    const databaseUrl = db.url
    return await use({
      db,
      dataDir,
      secretKey,
      startServer: async (options) => {
        const server = await startServer({ ...options, databaseUrl, secretKey, dataDir })
        stopAtEnd(server.proc)
        return server
      },
      stopAtEnd,
      releaseAtEnd: (release) => {
        releases.push(release)
      }
    })
  } finally {
    for (const p of procs) if (p.alive()) p.child.kill("SIGTERM")
    if (procs.length > 0) await Promise.race([Promise.all(procs.map((p) => p.exited)), sleep(20_000)])
    killSpawned()
    for (const release of releases.reverse()) await release()
    await db?.destroy()
    Fs.rmSync(dataDir, { recursive: true, force: true })
  }
}
