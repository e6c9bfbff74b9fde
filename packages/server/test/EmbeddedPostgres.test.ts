/**
 * As root, the embedded cluster runs as the user "postgres": a data directory it cannot reach (below a
 * mode-700 directory, like /root or a `mktemp -d`) is refused with a message that says what to do, instead
 * of an unhandled spawn error. The cluster runs with the shared buffers it is given (512MB unless told).
 */
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { pgLayer } from "../src/platform/Database.ts"
import { startEmbeddedPostgres } from "../src/platform/EmbeddedPostgres.ts"
import { freePort } from "./support/Ports.ts"

const root = typeof process.getuid === "function" && process.getuid() === 0

it.skipIf(!root)("as root, a data directory below a mode-700 directory is refused with what to do", async () => {
  const closed = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-closed-"))
  Fs.chmodSync(closed, 0o700)
  try {
    await expect(startEmbeddedPostgres({ dataDir: Path.join(closed, "data"), port: 1, log: () => {} }))
      .rejects.toThrow(`cannot enter ${closed} (mode 700). Let others traverse it (chmod o+x ${closed})`)
  } finally {
    Fs.rmSync(closed, { recursive: true, force: true })
  }
})

it("the cluster runs with the shared buffers it is given, 512MB by default", async () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sitehealth-buffers-"))
  const show = (url: string) =>
    Effect.runPromise(
      Effect.scoped(Effect.provide(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ readonly shared_buffers: string }>`SHOW shared_buffers`),
        pgLayer(url, { maxConnections: 1 })
      )).pipe(Effect.orDie)
    )
  try {
    const first = await startEmbeddedPostgres({ dataDir: dir, port: await freePort(), log: () => {} })
    const byDefault = await show(first.url).finally(first.stop)
    const second = await startEmbeddedPostgres({
      dataDir: dir,
      port: await freePort(),
      log: () => {},
      sharedBuffers: "144MB"
    })
    const given = await show(second.url).finally(second.stop)
    expect([byDefault[0]?.shared_buffers, given[0]?.shared_buffers]).toEqual(["512MB", "144MB"])
  } finally {
    Fs.rmSync(dir, { recursive: true, force: true })
  }
}, 120_000)
