/**
 * The small things every fault module leans on: where the repository and the real server / worker entry
 * points are, sleeping and polling, a fresh credentials key, and a temp dir Postgres can use.
 *
 * Everything runs on the Node that runs these files (22 under `npm run faults` / vitest): the server needs it.
 */
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

export const ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../..")
export const MAIN = Path.join(ROOT, "packages/server/bin/server.js")
export const WORKER = Path.join(ROOT, "packages/server/bin/worker.js")

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** Polls `check` every 100 ms until it returns something other than undefined; fails after `timeoutMs`. */
export const eventually = async <A>(
  what: string,
  timeoutMs: number,
  check: () => Promise<A | undefined> | A | undefined
): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(100)
  }
}

/** A fresh 32-byte credentials key, as SITEHEALTH_SECRET_KEY wants it (an external DATABASE_URL requires one). */
export const newSecretKey = () => randomBytes(32).toString("base64")

/** A directory under the system temp dir that the unprivileged "postgres" user can traverse (we may be root). */
export const tempDir = (prefix: string): string => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))
  Fs.chmodSync(dir, 0o711)
  return dir
}
